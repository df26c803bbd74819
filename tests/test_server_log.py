"""The extension's lines in a real `jupyter server` log: no warning about `open_browser`
at start, the package's own loggers written with the server's format and their names,
and what an administrator needs to follow up a failed model call."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from support.server import jupyter_process

from jupyter_gns3_copilot.notebook.copilot import Copilot
from jupyter_gns3_copilot.server.llm_config import UserLLMSettings
from jupyter_gns3_copilot.server.llm_store import KEY_FILE_NAME, LLMConfigStore
from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.scripted_llm import error


@pytest.mark.slow
def test_package_loggers_write_through_the_server_log(tmp_path: Path) -> None:
    # Given a user whose stored settings the key file no longer opens (llm_store logs it)
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
    assert re.match(r"\[W \d{4}-\d\d-\d\d [\d:.]+ jupyter_gns3_copilot\.server\.llm_store\] ", line)
    # And nothing complains about open_browser
    assert "open_browser" not in log


@pytest.mark.lab
@pytest.mark.slow
def test_a_failed_model_call_is_logged_with_the_endpoints_status_and_request_id(
    gns3_lab: Any, gns3_project: Any, scripted_llm: Any, tmp_path: Path
) -> None:
    """Given a model endpoint answering HTTP 500 with a request id; when a student's turn
    fails on it; then the student reads the failure in the turn, and the real server's
    log has one line naming the endpoint, the status and the request id."""
    scripted_llm.add(error(500, "upstream exploded", headers={"x-request-id": "req_8f2c61"}))
    model = ModelEndpoint.scripted_model(scripted_llm)
    with (
        JupyterServer(gns3_lab, model, tmp_path) as server,
        Copilot(server=server.server_info) as copilot,
    ):
        copilot.use(gns3_project.project_id)
        turn = copilot.ask("Why can't PC1 ping PC2?")
    assert turn.status == "error"
    [shown] = turn.errors
    assert "HTTP 500" in shown and "req_8f2c61" not in shown
    [line] = [line for line in server.log_path.read_text().splitlines() if "req_8f2c61" in line]
    logged = r"\[W [\d\-: .]+ jupyter_gns3_copilot\.agent\.model_node\] Model call at "
    assert re.match(logged, line)
    assert scripted_llm.base_url in line and "HTTP 500" in line
    assert "request id req_8f2c61" in line and "upstream exploded" in line
