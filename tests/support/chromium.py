"""Debian's chromium driven by Playwright, as pytest fixtures: `browser_context` (one
headless chromium per test module), `page` (a tab; on failure a screenshot and the browser
console go to build/screenshots/), `screenshots`; and no-op stand-ins for pytest-jupyter's
per-test event loop fixtures, which would close Playwright's. A test module (or conftest)
imports the fixtures it uses; `require` skips a test, saying what to install.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("GNS3_COPILOT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "build" / "screenshots"


def require(module: str, what: str) -> None:
    """Skip the test, saying what to install, when `module` is missing."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{what} is not installed: pip install jupyterlab notebook playwright")


@pytest.fixture(scope="module")
def browser_context() -> Iterator[object]:
    """A headless chromium with a fresh user-data directory, per test module: Playwright's
    sync API marks its event loop as running between calls, and pytest-jupyter's per-test
    loop fixture of the other test modules would pick that loop up (and close it)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium")
    require("playwright", "Playwright")
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="gns3c-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()


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
