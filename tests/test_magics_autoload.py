"""`%copilot` without `%load_ext`: the package's IPython kernel configuration loads the
magics in kernels started by a Jupyter server running the extension, and only there; a
notebook's own `%load_ext jupyter_gns3_copilot` then prints nothing.

The wheel installs `jupyter-config/ipython/ipython_kernel_config.py` as
`<environment>/etc/ipython/ipython_kernel_config.py` (checked below from pyproject.toml).
The shared test environment is not changed: the tests hand the same file to REAL kernels,
started by a REAL Jupyter server's kernel manager, through their IPython profile
directory (`IPYTHONDIR`), which IPython reads the same way.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.server import copilot_app, server_config

from jupyter_gns3_copilot.server.kernel_env import SERVER_TOKEN_ENV, SERVER_URL_ENV

ROOT = Path(__file__).parent.parent
SHIPPED = ROOT / "jupyter-config" / "ipython" / "ipython_kernel_config.py"
PROBE = "ip = get_ipython()\nprint('loaded' if ip.find_line_magic('copilot') else 'missing')"
FIRST_CELL = "%load_ext jupyter_gns3_copilot"
"""What the example notebooks (and the exported ones) start with."""
AFTER_FIRST_CELL = (
    "ip = get_ipython()\n"
    "print(ip.find_line_magic('copilot').__self__ is magics,"
    " 'jupyter_gns3_copilot' in ip.extension_manager.loaded)"
)


def test_the_wheel_installs_the_kernel_configuration_into_the_environment() -> None:
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    shared = project.split("[tool.hatch.build.targets.wheel.shared-data]", 1)[1].split("\n[")[0]
    assert '"jupyter-config/ipython" = "etc/ipython"' in shared
    assert SHIPPED.is_file()


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path / "data")


@pytest.fixture
def ipython_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A profile directory holding the shipped configuration, for the kernels started next."""
    directory = tmp_path / "ipython"
    (directory / "profile_default").mkdir(parents=True)
    shutil.copy(SHIPPED, directory / "profile_default" / "ipython_kernel_config.py")
    monkeypatch.setenv("IPYTHONDIR", str(directory))
    monkeypatch.delenv(SERVER_URL_ENV, raising=False)
    monkeypatch.setenv(SERVER_TOKEN_ENV, "unset")
    return directory


async def probe_kernel(serverapp: Any) -> str:
    """What a fresh kernel of `serverapp` says about the magics, then what a notebook's
    first cell `%load_ext jupyter_gns3_copilot` prints and whether the magics it found
    are those loaded at start."""
    manager = serverapp.kernel_manager
    kernel_id = await manager.start_kernel(kernel_name="python3")
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    out: list[str] = []

    def collect(message: dict[str, Any]) -> None:
        if message["msg_type"] == "stream":
            out.append(message["content"]["text"])

    try:
        await asyncio.wait_for(client.wait_for_ready(), 60)
        reply = await client.execute_interactive(PROBE, timeout=60, output_hook=collect)
        assert reply["content"]["status"] == "ok"
        remember = "magics = get_ipython().find_line_magic('copilot')"
        remember += ".__self__ if get_ipython().find_line_magic('copilot') else None"
        await client.execute_interactive(remember, timeout=60)
        for cell in (FIRST_CELL, AFTER_FIRST_CELL):
            out.append(" | ")
            reply = await client.execute_interactive(cell, timeout=60, output_hook=collect)
            assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(kernel_id, now=True)
    return "".join(out).strip()


@pytest.mark.slow
async def test_kernels_of_a_server_with_the_extension_have_the_magics(
    jp_fetch, jp_serverapp, ipython_dir
) -> None:
    # Before the server published itself, a kernel is an ordinary one: the notebook's
    # first cell loads the magics (new ones), silently
    assert await probe_kernel(jp_serverapp) == "missing\n |  | False True"
    # Once the extension's start hook ran (as jupyter_server does when it listens), the
    # magics are there at start, and the first cell prints nothing and keeps them
    await copilot_app(jp_serverapp)._start_jupyter_server_extension(jp_serverapp)
    assert await probe_kernel(jp_serverapp) == "loaded\n |  | True True"
