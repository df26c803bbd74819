"""A real `%copilot` conversation in JupyterLab 4 and Notebook 7, end to end: kernel ->
server extension (SSE) -> chat widget -> saved answer, against the local GNS3 lab (real
gns3-server and VPCS) and the scripted model (a TEST DOUBLE replaying
`tests/notebook_scripts/browser-real-chat.json`).

Asserted in one notebook: `%copilot show topology` draws the diagram inline (HTML with an
<svg> that follows the theme); a question's tool card reads its arguments as they stream in
the live widget, and once the turn ended the cell holds the saved answer whose card opens
onto the real PC1's result as a table row; Stop, pressed while a long turn streams, makes
the browser POST the server's real abort route, the server stops the turn (it leaves the
model's stream early) and the cell ends; the next `%copilot` cell continues the same
conversation. In JupyterLab also: the saved answer's "Continue in the Copilot sidebar"
opens the sidebar on that session, and after saving, a kernel restart and a reload every
answer, tool card and device table is still rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import jupyter_ui
from support.jupyter_ui import WATCH_WIDGET, LabStack, cell, live, saved

from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

SCRIPT = Path(__file__).resolve().parents[1] / "notebook_scripts" / "browser-real-chat.json"
PROJECT = ProjectRecipe("Copilot browser chat", {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"})
NOTEBOOK = "real-chat.ipynb"
QUESTION = "Which address does PC1 have?"
LONG = "Tell me the long history of the lab"
FOLLOW_UP = "What about PC2 now"
CELLS = [
    "%load_ext jupyter_gns3_copilot\nprint('LOADED')",
    f'%copilot use "{PROJECT.name}"',
    "%copilot show topology",
    f"first = %copilot {QUESTION}",
    f"long = %copilot {LONG}",
    "print('LONG', long.status, long.session_id)",
    f"%copilot {FOLLOW_UP}",
]
SIDEBAR = "#jp-gns3-copilot-sidebar"
_KERNEL_IDLE = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  return kernel.status === "idle";
}"""


def _off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in another thread: it runs its own event loop, and Playwright's
    sync API keeps one marked as running in this thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


@pytest.fixture
def real_stack(gns3_lab: Any, tmp_path: Path) -> Iterator[LabStack]:
    """`jupyter lab` (Notebook 7 pages included) with the copilot extension on the lab and
    the scripted model, and the project PC1 (10.0.0.1/24) + PC2 (10.0.0.2/24) on a switch,
    started. Both front ends expose the app as `window.jupyterapp` (what jupyter_ui drives)."""
    work = tmp_path / "server"
    jupyter_ui.configure_front_end(work)
    root = work / "notebooks"
    root.mkdir()
    jupyter_ui.write_notebook(root / NOTEBOOK, CELLS)
    project_ids = _off_loop(prepare_projects, gns3_lab, [PROJECT])
    try:
        with (
            jupyter_ui.checkout_front_end(work),
            ScriptedLLM(SCRIPT, models=["scripted-model"]) as llm,
            JupyterServer(
                gns3_lab, ModelEndpoint.scripted_model(llm), work, app="lab", root_dir=root
            ) as server,
        ):
            yield LabStack(server, llm, project_ids[PROJECT.name])
    finally:
        _off_loop(delete_projects, gns3_lab, project_ids.values())


def _saved_answer(page: Any, index: int, timeout_ms: int = 60_000) -> Any:
    """Cell `index`'s saved answer, once its turn has ended."""
    answer = saved(page, index)
    answer.wait_for(timeout=timeout_ms)
    return answer


def _show_topology(page: Any, ui: str, screenshots: Path) -> None:
    """The diagram is inline HTML (an <svg> whose colours follow the theme) with the lab's
    node names; the text table is printed under it."""
    jupyter_ui.run_cell(page, 1)
    assert "Using project 'Copilot browser chat'" in jupyter_ui.wait_for_output(
        page, 1, "Using project"
    )
    jupyter_ui.run_cell(page, 2)
    assert "PC1 e0 <-> Switch1 e0" in jupyter_ui.wait_for_output(page, 2, "<->")
    html = cell(page, 2).locator(".jp-RenderedHTMLCommon")
    svg = html.locator("svg").first
    svg.wait_for()
    names = svg.locator("text").all_text_contents()
    for name in ("PC1", "PC2", "Switch1"):
        assert name in names, f"{name} is not in the diagram: {names}"
    fill = "(el) => getComputedStyle(el).fill"
    label = svg.locator("text", has_text="Switch1").first
    light = label.evaluate(fill)
    jupyter_ui.set_theme(page, dark=True)
    dark = label.evaluate(fill)
    jupyter_ui.screenshot(page, html, screenshots / f"real-chat-{ui}-topology-dark.png")
    jupyter_ui.set_theme(page, dark=False)
    assert light != dark, f"the diagram does not follow the theme ({light})"
    jupyter_ui.screenshot(page, html, screenshots / f"real-chat-{ui}-topology.png")


def _question_with_a_tool(page: Any, ui: str, screenshots: Path) -> None:
    """The live widget's tool card reads the arguments as they stream (seen partial at
    least once); the saved answer's card then opens onto PC1's real `show ip` output as a
    table row."""
    page.evaluate(WATCH_WIDGET)
    jupyter_ui.run_cell(page, 3)
    widget = live(page, 3)
    widget.locator(".gns3c-tool-title", has_text="PC1:").first.wait_for()
    jupyter_ui.screenshot(page, widget, screenshots / f"real-chat-{ui}-streaming.png")
    answer = _saved_answer(page, 3)
    assert answer.locator(".gns3c-turn").get_attribute("data-status") == "done"

    seen = page.evaluate("() => window.__gns3cSeen")
    growing = [text for text in seen if text.startswith("PC1:")]
    assert "PC1: show ip" in growing, seen
    assert len(growing) >= 2, f"arguments did not stream progressively: {seen}"
    assert not any("{" in text for text in seen), seen
    _device_table(answer)


def _device_table(answer: Any) -> None:
    """The first question's card in its saved answer opens onto PC1's `show ip` row."""
    card = answer.locator(".gns3c-tool").first
    head = card.locator(".gns3c-tool-head")
    # Done: the server's summary is the one line; the tool's name stays in its tooltip.
    summary = head.locator(".gns3c-tool-title").inner_text()
    assert "show ip" in summary and "PC1" in summary, summary
    assert head.get_attribute("title").startswith("run show commands: ")
    assert card.locator(".gns3c-badge").inner_text() == "ok"
    assert head.get_attribute("aria-expanded") == "false"
    head.click()
    rows = card.locator(".gns3c-devices tbody tr")
    assert rows.count() == 1
    row = rows.first
    assert row.get_attribute("data-status") == "success"
    assert "PC1" in row.inner_text()
    assert "10.0.0.1/24" in row.locator("pre").inner_text()
    assert "10.0.0.1/24" in answer.locator(".gns3c-md").last.inner_text()


def _stop_long_turn(page: Any, stack: LabStack, ui: str, screenshots: Path) -> str:
    """Stop while the long answer streams: the browser POSTs the real abort route, the
    server leaves the model's stream, the saved answer shows the turn as stopped and the
    cell ends."""
    aborts: list[Any] = []
    page.on("response", lambda r: aborts.append(r) if r.url.endswith("/abort") else None)
    jupyter_ui.run_cell(page, 4)
    widget = live(page, 4)
    running = widget.locator(".gns3c-turn").first
    running.locator(".gns3c-md", has_text="Chapter 2").wait_for()
    assert running.get_attribute("data-status") == "running"
    stop = widget.locator("button.gns3c-stop")
    assert stop.is_visible() and stop.is_enabled()
    jupyter_ui.screenshot(page, widget, screenshots / f"real-chat-{ui}-running.png")
    stop.click()

    stopped = _saved_answer(page, 4, timeout_ms=20_000).locator(".gns3c-turn")
    page.wait_for_function(_KERNEL_IDLE, timeout=20_000, polling=100)
    assert stopped.get_attribute("data-status") == "aborted"
    assert "Stopped" in stopped.locator(".gns3c-note").inner_text()
    assert "Chapter 80" not in stopped.inner_text(), "the whole answer streamed: not stopped"
    assert cell(page, 4).locator("button.gns3c-stop").count() == 0
    jupyter_ui.screenshot(page, saved(page, 4), screenshots / f"real-chat-{ui}-stopped.png")

    jupyter_ui.run_cell(page, 5)
    output = jupyter_ui.wait_for_output(page, 5, "LONG")
    status, session_id = output.split()[1:3]
    assert status == "aborted", output

    assert len(aborts) == 1, [r.url for r in aborts]
    response = aborts[0]
    assert response.request.method == "POST"
    assert response.url == (
        f"{stack.server.url}copilot/projects/{stack.project_id}/chat/sessions/{session_id}/abort"
    )
    assert response.status == 200 and response.json()["status"] == "ok", response.text()
    [long_request] = [
        r for r in stack.llm.chat_requests if r.body["messages"][-1].get("content") == LONG
    ]
    assert long_request.disconnected, "the server kept reading the model after Stop"
    return session_id


def _continue_in_the_next_cell(
    page: Any, stack: LabStack, session_id: str, ui: str, screenshots: Path
) -> None:
    """The next `%copilot` cell asks the next turn of the same session."""
    jupyter_ui.run_cell(page, 6)
    answer = _saved_answer(page, 6)
    turn = answer.locator(".gns3c-turn")
    assert turn.get_attribute("data-status") == "done"
    assert turn.locator(".gns3c-user-text").inner_text() == FOLLOW_UP
    assert "10.0.0.2/24" in turn.locator(".gns3c-md").inner_text()
    assert f"session {session_id[:8]}" in answer.locator(".gns3c-saved-footer").inner_text()
    jupyter_ui.screenshot(page, answer, screenshots / f"real-chat-{ui}-continued.png")

    with stack.api() as api:
        response = api.get(
            f"copilot/projects/{stack.project_id}/chat/sessions/{session_id}/history"
        )
        response.raise_for_status()
    users = [m["content"] for m in response.json()["messages"] if m["role"] == "user"]
    assert users == [QUESTION, LONG, FOLLOW_UP], users


def _continue_in_the_sidebar(
    page: Any, stack: LabStack, session_id: str, screenshots: Path
) -> None:
    """The saved answer's button opens the Copilot sidebar on its project and session."""
    sidebar = page.locator(SIDEBAR)
    button = saved(page, 3).locator("button.gns3c-continue")
    assert button.inner_text() == "Continue in the Copilot sidebar"
    button.click()
    sidebar.wait_for(state="visible")
    # A locator, not an element handle: the list may be drawn again while it loads.
    sidebar.locator(
        f".jp-gns3-copilot-sidebar-session[data-session-id='{session_id}'].jp-mod-selected"
    ).wait_for()
    assert sidebar.locator(".jp-gns3-copilot-sidebar-project").input_value() == stack.project_id
    turns = sidebar.locator(".jp-gns3-copilot-sidebar-turn")
    turns.filter(has_text=FOLLOW_UP).wait_for()
    users = turns.locator(".gns3c-user-text").all_inner_texts()
    assert users == [QUESTION, LONG, FOLLOW_UP], users
    assert saved(page, 3).locator(".gns3c-continue-note").inner_text() == ""
    jupyter_ui.screenshot(page, sidebar, screenshots / "real-chat-lab-sidebar.png")


def _answers_survive_restart_and_reload(page: Any) -> None:
    """Saved, kernel restarted, page reloaded: every answer, tool card and device table is
    still rendered, from the notebook alone (no "model not found")."""
    jupyter_ui.save_notebook(page)
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    jupyter_ui.wait_kernel_ready(page)
    page.reload()
    jupyter_ui.wait_kernel_ready(page)
    for index in (3, 4, 6):
        _saved_answer(page, index)
    answers = page.locator(".jp-gns3-copilot-saved .gns3c-turn")
    assert [answers.nth(i).get_attribute("data-status") for i in range(3)] == [
        "done",
        "aborted",
        "done",
    ]
    assert page.locator(".jp-gns3-copilot-saved .gns3c-tool").count() == 1
    _device_table(saved(page, 3))
    assert "Stopped" in saved(page, 4).locator(".gns3c-note").inner_text()
    assert "10.0.0.2/24" in saved(page, 6).locator(".gns3c-md").inner_text()
    assert cell(page, 2).locator(".jp-RenderedHTMLCommon svg").count() == 1
    notebook_text = page.locator(".jp-Notebook").inner_text()
    assert "model not found" not in notebook_text and "Error displaying widget" not in (
        notebook_text
    )
    assert page.locator(".jp-Notebook .gns3c").count() == 0, "no live widget is left"


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_real_chat_streams_stops_and_continues(
    real_stack: LabStack, page: Any, screenshots: Path, ui: str
) -> None:
    """Given JupyterLab or Notebook 7 with the extension, the lab project and the scripted
    model; when a notebook shows the topology, asks, stops a long turn and continues in
    the next cell (and, in JupyterLab, in the sidebar from the saved answer, then is saved,
    restarted and reloaded); then each step shows in the browser as it happens, the
    answers stay, and the server did it."""
    server = real_stack.server
    jupyter_ui.open_notebook(page, server.url, server.token, NOTEBOOK, ui)
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "LOADED")

    _show_topology(page, ui, screenshots)
    _question_with_a_tool(page, ui, screenshots)
    session_id = _stop_long_turn(page, real_stack, ui, screenshots)
    _continue_in_the_next_cell(page, real_stack, session_id, ui, screenshots)
    if ui == "lab":
        _continue_in_the_sidebar(page, real_stack, session_id, screenshots)
        _answers_survive_restart_and_reload(page)

    assert real_stack.llm.remaining == 0, "every scripted reply was used"
    assert [e for e in page.page_errors if "blob:" in e or "gns3c" in e] == []
