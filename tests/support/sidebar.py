"""The Copilot sidebar in a JupyterLab or Notebook 7 page (Playwright): open it on a
notebook, ask, wait until it is idle, find a session's row."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from support import jupyter_ui
from support.jupyter_ui import LabStack

SIDEBAR = "#jp-gns3-copilot-sidebar"


def off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in another thread: it runs its own event loop, and Playwright's
    sync API keeps one marked as running in this thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


def open_sidebar(page: Any, stack: LabStack, ui: str, notebook: str) -> Any:
    """Open the notebook, then the sidebar through its command; choose the project."""
    jupyter_ui.open_notebook(page, stack.server.url, stack.server.token, notebook, ui)
    page.evaluate("() => window.jupyterapp.commands.execute('gns3-copilot:open')")
    sidebar = page.locator(SIDEBAR)
    sidebar.wait_for(state="visible")
    # the status line's parts (the key's state is a part of the row below, read in parallel)
    status = sidebar.locator(
        ".jp-gns3-copilot-sidebar-status .jp-gns3-copilot-sidebar-status-part"
    ).first
    status.wait_for()
    assert "reachable" in status.inner_text() and status.get_attribute("data-ok") == "true"
    sidebar.locator(".jp-gns3-copilot-sidebar-project").select_option(stack.project_id)
    return sidebar


def ask(page: Any, sidebar: Any, question: str) -> Any:
    """Send `question` with Enter; the new turn's block."""
    turns = sidebar.locator(".jp-gns3-copilot-sidebar-turn")
    before = turns.count()
    box = sidebar.locator("textarea.jp-gns3-copilot-sidebar-input")
    box.fill(question)
    box.press("Enter")
    turns.nth(before).wait_for()
    assert box.input_value() == ""
    return turns.nth(before)


def wait_idle(page: Any, timeout_ms: int = 60_000) -> None:
    page.wait_for_function(
        "(sel) => document.querySelector(sel).dataset.running === 'false'",
        arg=SIDEBAR,
        timeout=timeout_ms,
        polling=100,
    )


def session_row(sidebar: Any, session_id: str) -> Any:
    return sidebar.locator(f".jp-gns3-copilot-sidebar-session[data-session-id='{session_id}']")
