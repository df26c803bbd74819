"""The extension's lines in a real `jupyter server` log: no warning about
`open_browser` at start, and the package's own loggers written with the server's format
and their names."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from test_server_support import jupyter_process

from jupyter_gns3_copilot.llm_config import KEY_FILE_NAME, LLMConfigStore, UserLLMSettings


@pytest.mark.slow
def test_package_loggers_write_through_the_server_log(tmp_path: Path) -> None:
    # Given a user whose stored settings the key file no longer opens (llm_config logs it)
    data_dir = tmp_path / "copilot-data"
    LLMConfigStore(data_dir).put("tester", UserLLMSettings(model="m"))
    (data_dir / KEY_FILE_NAME).write_bytes(Fernet.generate_key())
    # When a server started as `jupyter server --no-browser` reads them
    args = (
        "--no-browser",
        f"--GNS3Copilot.data_dir={data_dir}",
        "--GNS3Copilot.owner_user_id=tester",
    )
    with jupyter_process(tmp_path, *args) as (url, headers, log_path):
        reply = httpx.get(url + "copilot/llm-config", headers=headers, timeout=30)
        assert reply.status_code == 200 and reply.json()["model"] == ""
    log = log_path.read_text()
    # Then the package's warning has the server's prefix and the logger's name
    [line] = [line for line in log.splitlines() if "cannot be decrypted" in line]
    assert re.match(r"\[W \d{4}-\d\d-\d\d [\d:.]+ jupyter_gns3_copilot\.llm_config\] ", line)
    # And nothing complains about open_browser
    assert "open_browser" not in log
