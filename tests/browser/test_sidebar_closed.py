"""The Copilot sidebar while the copilot is closed by its configuration, in JupyterLab 4
and Notebook 7: a real `jupyter lab` whose `allowed_modes` names a mode that does not
exist answers every copilot route with 503; the sidebar says why once (a sentence for the
student, the server's message folded away for the administrator), disables New chat,
Send, To notebook and the other controls that need the server, and reads in both themes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import jupyter_ui

SIDEBAR = "#jp-gns3-copilot-sidebar"
NOTEBOOK = "closed.ipynb"
CLOSED = "The copilot is closed: its configuration has a problem that the administrator must fix."
DISABLED = [
    "button.jp-gns3-copilot-sidebar-new",
    "button.jp-gns3-copilot-sidebar-send",
    "button.jp-gns3-copilot-sidebar-export-notebook",
    "textarea.jp-gns3-copilot-sidebar-input",
    "button.jp-gns3-copilot-sidebar-export-markdown",
    "button.jp-gns3-copilot-sidebar-set-key",
    "select.jp-gns3-copilot-sidebar-project",
]
READABLE = [
    ".jp-gns3-copilot-sidebar-closed-text",
    ".jp-gns3-copilot-sidebar-closed summary",
    ".jp-gns3-copilot-sidebar-closed-details p",
]


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_a_closed_copilot_says_why_once_and_disables_its_controls(
    closed_jupyter_server: Any, page: Any, screenshots: Path, ui: str
) -> None:
    server = closed_jupyter_server
    jupyter_ui.write_notebook(server.root_dir / NOTEBOOK, ["print('hello')"])
    page.goto(jupyter_ui.notebook_url(server.url, server.token, NOTEBOOK, ui))
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    page.evaluate("() => window.jupyterapp.commands.execute('gns3-copilot:open')")
    sidebar = page.locator(SIDEBAR)
    closed = sidebar.locator(".jp-gns3-copilot-sidebar-closed")
    closed.wait_for(state="visible")

    assert closed.locator(".jp-gns3-copilot-sidebar-closed-text").inner_text().startswith(CLOSED)
    summary = closed.locator("summary")
    assert summary.inner_text() == "Details for the administrator"
    summary.click()
    details = closed.locator(".jp-gns3-copilot-sidebar-closed-details p").inner_text()
    assert "allowed_modes" in details and "'tutor'" in details, details
    # Said once: not again in the status line, the notice or a turn.
    text = sidebar.inner_text()
    assert text.count("The copilot is closed") == 1, text
    assert text.count("its configuration is invalid") == 1, text  # the server's message
    assert sidebar.locator(".jp-gns3-copilot-sidebar-status").inner_text() == ""
    assert sidebar.locator(".jp-gns3-copilot-sidebar-notice").inner_text() == ""
    for selector in DISABLED:
        assert sidebar.locator(selector).is_disabled(), f"{selector} is enabled"

    # The palette's New Chat asks nothing of the server either.
    page.evaluate("() => window.jupyterapp.commands.execute('gns3-copilot:new-chat')")
    assert sidebar.inner_text().count("The copilot is closed") == 1

    jupyter_ui.set_theme(page, dark=False)
    jupyter_ui.assert_readable(page, SIDEBAR, "light", len(READABLE), READABLE)
    jupyter_ui.screenshot(page, sidebar, screenshots / f"sidebar-closed-{ui}-light.png")
    jupyter_ui.set_theme(page, dark=True)
    try:
        jupyter_ui.assert_readable(page, SIDEBAR, "dark", len(READABLE), READABLE)
        jupyter_ui.screenshot(page, sidebar, screenshots / f"sidebar-closed-{ui}-dark.png")
    finally:
        jupyter_ui.set_theme(page, dark=False)
    assert [e for e in page.page_errors if "gns3-copilot" in e] == []
