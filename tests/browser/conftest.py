"""Fixtures for real-browser tests: a JupyterLab 4 / Notebook 7 server on 127.0.0.1 and
Debian's chromium driven by Playwright (see ../shared/reference/jupyter.md for the flags).

Every test here is marked `slow` and `browser`. They skip, saying what to install, when
chromium, JupyterLab or Notebook 7 is missing.
"""

from __future__ import annotations

import contextlib
import importlib.util
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
import jupyter_ui
import pytest

CHROMIUM = Path(os.environ.get("GNS3_COPILOT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SERVER_START_TIMEOUT = 60.0
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "build" / "screenshots"

# User settings of the test server: widget state saved with the notebook (what the
# saved-state test needs), no news pop-up over the screenshots.
USER_SETTINGS = {
    "@jupyter-widgets/jupyterlab-manager/plugin.jupyterlab-settings": {"saveState": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
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
        return httpx.Client(base_url=self.url, headers={"Authorization": f"token {self.token}"},
                            timeout=10.0)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _require(module: str, what: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{what} is not installed: pip install jupyterlab notebook playwright")


@contextlib.contextmanager
def _jupyter_lab(*options: str) -> Iterator[JupyterServer]:
    """A `jupyter lab` (Notebook 7 pages included) with this checkout's front end and the
    extension's data in a temporary directory; `options` go to its command line."""
    _require("jupyterlab", "JupyterLab")
    _require("notebook", "Notebook 7")
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
            sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
            f"--port={port}", "--ServerApp.port_retries=0", "--allow-root",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True", *options,
        ]
        with log_path.open("wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                       start_new_session=True)
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
    raise TimeoutError(f"jupyter lab did not answer within {SERVER_START_TIMEOUT:.0f} s:\n"
                       f"{server.log()}")


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


@pytest.fixture(scope="module")
def browser_context() -> Iterator[object]:
    """A headless chromium with a fresh user-data directory, per test module: Playwright's
    sync API marks its event loop as running between calls, and pytest-jupyter's per-test
    loop fixture of the other test modules would pick that loop up (and close it)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium")
    _require("playwright", "Playwright")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="gns3c-chromium-") as profile, \
            sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.when == "call":
        item.call_failed = report.failed  # type: ignore[attr-defined]
    return report


@pytest.fixture
def page(browser_context: object, request: pytest.FixtureRequest) -> Iterator[object]:
    """A new tab; `page.page_errors` collects uncaught page errors (message and stack). When
    the test fails,
    a screenshot and the browser console go to build/screenshots/failed-<test>.*"""
    page = browser_context.new_page()  # type: ignore[attr-defined]
    errors: list[str] = []
    console: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{error}\n{error.stack or ''}"))
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.page_errors = errors
    try:
        yield page
    finally:
        if getattr(request.node, "call_failed", False):
            name = "failed-" + "".join(c if c.isalnum() else "-" for c in request.node.name)
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(Exception):
                page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)
            (SCREENSHOTS / f"{name}.console.txt").write_text("\n".join(console + errors))
        page.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


# pytest-jupyter's autouse fixtures make and close an event loop per test, which would
# close Playwright's (sync API) loop; these tests run no in-process server: no-ops here.
@pytest.fixture(autouse=True)
def jp_asyncio_loop() -> None:
    return None


@pytest.fixture(autouse=True)
def jp_server_cleanup() -> None:
    return None
