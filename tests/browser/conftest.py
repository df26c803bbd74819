"""Fixtures for real-browser tests: a JupyterLab 4 / Notebook 7 server on 127.0.0.1 and
Debian's chromium driven by Playwright (see ../shared/reference/jupyter.md for the flags).

Every test here is marked `slow` and `browser`. They skip, saying what to install, when
chromium, JupyterLab or Notebook 7 is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from support import jupyter_ui

# Chromium and its page for every test here, and the no-op stand-ins for pytest-jupyter's
# per-test event loop (support/chromium.py).
from support.chromium import (  # noqa: F401
    browser_context,
    jp_asyncio_loop,
    jp_server_cleanup,
    page,
    require,
    screenshots,
)

SERVER_START_TIMEOUT = 60.0

# User settings of the test server: widget state saved with the notebook (what the
# saved-state test needs), no news pop-up over the screenshots.
USER_SETTINGS = {
    "@jupyter-widgets/jupyterlab-manager/plugin.jupyterlab-settings": {"saveState": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.browser)


@dataclass
class JupyterServer:
    url: str  # ends with "/"
    token: str
    root_dir: Path
    log_path: Path

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"token {self.token}"}, timeout=10.0
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _jupyter_lab(*options: str) -> Iterator[JupyterServer]:
    """A `jupyter lab` (Notebook 7 pages included) with this checkout's front end and the
    extension's data in a temporary directory; `options` go to its command line."""
    require("jupyterlab", "JupyterLab")
    require("notebook", "Notebook 7")
    with tempfile.TemporaryDirectory(prefix="gns3c-browser-") as tmp:
        base = Path(tmp)
        root = base / "notebooks"
        settings = base / "user-settings"
        root.mkdir()
        for name, values in USER_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = {
            **os.environ,
            "JUPYTER_PATH": jupyter_ui.checkout_jupyter_path(base),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
            "GNS3_COPILOT_DATA_DIR": str(base / "copilot-data"),
        }
        port, token = _free_port(), secrets.token_hex(16)
        log_path = base / "server.log"
        command = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--allow-root",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
            *options,
        ]
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        server = JupyterServer(f"http://127.0.0.1:{port}/", token, root, log_path)
        try:
            _wait_until_up(server, process)
            yield server
        finally:
            _stop(server, process)


@pytest.fixture(scope="session")
def jupyter_server() -> Iterator[JupyterServer]:
    """One `jupyter lab` (Notebook 7 pages included) for the whole session."""
    with _jupyter_lab() as server:
        yield server


@pytest.fixture(scope="module")
def closed_jupyter_server() -> Iterator[JupyterServer]:
    """A `jupyter lab` whose copilot is closed by its configuration: `allowed_modes` names
    a mode that does not exist, so every copilot route answers 503."""
    with _jupyter_lab("--GNS3Copilot.allowed_modes=tutor") as server:
        yield server


def _wait_until_up(server: JupyterServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    with server.api() as api:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited ({process.returncode}):\n{server.log()}")
            with contextlib.suppress(httpx.HTTPError):
                if api.get("api/status").status_code == 200:
                    return
            time.sleep(0.25)
    raise TimeoutError(
        f"jupyter lab did not answer within {SERVER_START_TIMEOUT:.0f} s:\n{server.log()}"
    )


def _stop(server: JupyterServer, process: subprocess.Popen[bytes]) -> None:
    """Shut kernels down through the API, then stop the server (its process group)."""
    with contextlib.suppress(httpx.HTTPError), server.api() as api:
        for kernel in api.get("api/kernels").json():
            api.delete(f"api/kernels/{kernel['id']}")
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.when == "call":
        item.call_failed = report.failed  # type: ignore[attr-defined]
    return report
