"""A real `%copilot` conversation in JupyterLab 4 and Notebook 7, end to end: kernel ->
server extension (SSE) -> chat widget, against the local GNS3 lab (real gns3-server and
VPCS) and the scripted model (a TEST DOUBLE replaying
`tests/notebook_scripts/browser-real-chat.json`).

Asserted in one notebook: `%copilot show topology` draws the diagram; a question's tool
card reads its arguments as they stream and, opened, its result on the real PC1 as a table
row;
Stop, pressed while a long turn streams, makes the browser POST the server's real abort
route, the server stops the turn (it leaves the model's stream early) and the cell ends;
Enter in the widget's input box continues the same conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import jupyter_ui
import pytest
from test_chat_widget import WATCH_WIDGET

from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

SCRIPT = Path(__file__).resolve().parents[1] / "notebook_scripts" / "browser-real-chat.json"
PROJECT = ProjectRecipe("Copilot browser chat",
                        {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"})
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
]
# Front-end settings of the test server: no news pop-up over the screenshots.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}
_KERNEL_IDLE = """() => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  return kernel.status === "idle";
}"""
_TURN_STATUS = """([widget, turn, status]) => {
  const el = document.querySelectorAll(".gns3c")[widget];
  const turns = el ? el.querySelectorAll(".gns3c-turn") : [];
  return turns.length > turn && turns[turn].dataset.status === status;
}"""


@dataclass
class RealStack:
    server: JupyterServer
    llm: ScriptedLLM
    project_id: str

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.server.url, timeout=10.0,
                            headers={"Authorization": f"token {self.server.token}"})


def _off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in another thread: it runs its own event loop, and Playwright's
    sync API keeps one marked as running in this thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


@pytest.fixture
def real_stack(gns3_lab: Any, tmp_path: Path) -> Iterator[RealStack]:
    """`jupyter lab` (Notebook 7 pages included) with the copilot extension on the lab and
    the scripted model, and the project PC1 (10.0.0.1/24) + PC2 (10.0.0.2/24) on a switch,
    started. Both front ends expose the app as `window.jupyterapp` (what jupyter_ui drives)."""
    work = tmp_path / "server"
    (work / "config").mkdir(parents=True)
    front_end = {"expose_app_in_browser": True, "user_settings_dir": str(work / "user-settings"),
                 "workspaces_dir": str(work / "workspaces")}
    (work / "config" / "jupyter_lab_config.json").write_text(json.dumps({
        "LabApp": front_end, "JupyterNotebookApp": front_end}))
    for name, values in USER_SETTINGS.items():
        path = work / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    root = work / "notebooks"
    root.mkdir()
    jupyter_ui.write_notebook(root / NOTEBOOK, CELLS)
    project_ids = _off_loop(prepare_projects, gns3_lab, [PROJECT])
    try:
        with ScriptedLLM(SCRIPT, models=["scripted-model"]) as llm, JupyterServer(
            gns3_lab, ModelEndpoint.scripted_model(llm), work, app="lab", root_dir=root
        ) as server:
            yield RealStack(server, llm, project_ids[PROJECT.name])
    finally:
        _off_loop(delete_projects, gns3_lab, project_ids.values())


def _wait_turn(page: Any, widget: int, turn: int, status: str, timeout_ms: int = 60_000) -> None:
    page.wait_for_function(_TURN_STATUS, arg=[widget, turn, status], timeout=timeout_ms,
                           polling=100)


def _show_topology(page: Any, ui: str, screenshots: Path) -> None:
    jupyter_ui.run_cell(page, 1)
    assert "Using project 'Copilot browser chat'" in jupyter_ui.wait_for_output(
        page, 1, "Using project")
    jupyter_ui.run_cell(page, 2)
    assert "PC1 e0 <-> Switch1 e0" in jupyter_ui.wait_for_output(page, 2, "<->")
    cell = page.locator(".jp-Notebook .jp-Cell").nth(2)
    # JupyterLab 4 and Notebook 7 show SVG outputs as an <img> of a data: URL of the SVG document.
    image = cell.locator(".jp-RenderedSVG img")
    image.wait_for()
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0",
                           arg=image.element_handle())
    svg = unquote(image.get_attribute("src").split(",", 1)[1])
    assert svg.lstrip().startswith("<svg") or "<svg " in svg, svg[:200]
    for name in ("PC1", "PC2", "Switch1"):
        assert f">{name}</text>" in svg, f"{name} is not in the diagram"
    jupyter_ui.screenshot(page, cell.locator(".jp-RenderedSVG"),
                          screenshots / f"real-chat-{ui}-topology.png")


def _question_with_a_tool(page: Any, ui: str, screenshots: Path) -> Any:
    """The tool card's one line reads the arguments as they stream (seen partial at least
    once), then, opened, PC1's real `show ip` output as a table row."""
    page.evaluate(WATCH_WIDGET)
    jupyter_ui.run_cell(page, 3)
    widget = page.locator(".gns3c").nth(0)
    widget.locator(".gns3c-tool-title", has_text="PC1:").first.wait_for()
    jupyter_ui.screenshot(page, widget, screenshots / f"real-chat-{ui}-streaming.png")
    _wait_turn(page, 0, 0, "done")

    seen = page.evaluate("() => window.__gns3cSeen")
    growing = [text for text in seen if text.startswith("PC1:")]
    assert "PC1: show ip" in growing, seen
    assert len(growing) >= 2, f"arguments did not stream progressively: {seen}"
    assert not any("{" in text for text in seen), seen

    card = widget.locator(".gns3c-tool").first
    assert card.locator(".gns3c-tool-name").text_content() == "run show commands"
    card.locator(".gns3c-tool-head").click()
    rows = card.locator(".gns3c-devices tbody tr")
    assert rows.count() == 1
    row = rows.first
    assert row.get_attribute("data-status") == "success"
    assert "PC1" in row.inner_text()
    assert "10.0.0.1/24" in row.locator("pre").inner_text()
    assert "10.0.0.1/24" in widget.locator(".gns3c-md").last.inner_text()
    return widget


def _stop_long_turn(page: Any, stack: RealStack, ui: str, screenshots: Path) -> str:
    """Stop while the long answer streams: the browser POSTs the real abort route, the
    server leaves the model's stream, the turn shows as stopped and the cell ends."""
    aborts: list[Any] = []
    page.on("response", lambda r: aborts.append(r) if r.url.endswith("/abort") else None)
    jupyter_ui.run_cell(page, 4)
    widget = page.locator(".gns3c").nth(1)
    running = widget.locator(".gns3c-turn").first
    running.locator(".gns3c-md", has_text="Chapter 2").wait_for()
    assert running.get_attribute("data-status") == "running"
    stop = widget.locator("button.gns3c-stop")
    assert stop.is_visible() and stop.is_enabled()
    jupyter_ui.screenshot(page, widget, screenshots / f"real-chat-{ui}-running.png")
    stop.click()

    _wait_turn(page, 1, 0, "aborted", timeout_ms=20_000)
    page.wait_for_function(_KERNEL_IDLE, timeout=20_000, polling=100)
    assert "Stopped" in running.locator(".gns3c-note").inner_text()
    assert "Chapter 80" not in running.inner_text(), "the whole answer streamed: not stopped"
    assert not stop.is_visible()
    jupyter_ui.screenshot(page, widget, screenshots / f"real-chat-{ui}-stopped.png")

    jupyter_ui.run_cell(page, 5)
    output = jupyter_ui.wait_for_output(page, 5, "LONG")
    status, session_id = output.split()[1:3]
    assert status == "aborted", output

    assert len(aborts) == 1, [r.url for r in aborts]
    response = aborts[0]
    assert response.request.method == "POST"
    assert response.url == (f"{stack.server.url}copilot/projects/{stack.project_id}"
                            f"/chat/sessions/{session_id}/abort")
    assert response.status == 200 and response.json()["status"] == "ok", response.text()
    [long_request] = [r for r in stack.llm.chat_requests
                      if r.body["messages"][-1].get("content") == LONG]
    assert long_request.disconnected, "the server kept reading the model after Stop"
    return session_id


def _continue_from_input_box(page: Any, widget: Any, stack: RealStack,
                             session_id: str, ui: str, screenshots: Path) -> None:
    """Enter in the first widget's input box asks the next turn of the same session."""
    box = widget.locator("textarea.gns3c-input")
    assert box.is_enabled()
    box.fill(FOLLOW_UP)
    box.press("Enter")
    second = widget.locator(".gns3c-turn").nth(1)
    second.locator(".gns3c-user-text", has_text=FOLLOW_UP).wait_for()
    _wait_turn(page, 0, 1, "done")
    assert "10.0.0.2/24" in second.locator(".gns3c-md").inner_text()
    assert box.input_value() == ""
    jupyter_ui.screenshot(page, widget, screenshots / f"real-chat-{ui}-continued.png")

    with stack.api() as api:
        response = api.get(f"copilot/projects/{stack.project_id}/chat/sessions/"
                           f"{session_id}/history")
        response.raise_for_status()
    users = [m["content"] for m in response.json()["messages"] if m["role"] == "user"]
    assert users == [QUESTION, LONG, FOLLOW_UP], users


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_real_chat_streams_stops_and_continues(
    real_stack: RealStack, page: Any, screenshots: Path, ui: str
) -> None:
    """Given JupyterLab or Notebook 7 with the extension, the lab project and the scripted
    model; when a notebook shows the topology, asks, stops a long turn and continues from
    the input box; then each step shows in the browser as it happens, and the server did it."""
    server = real_stack.server
    jupyter_ui.open_notebook(page, server.url, server.token, NOTEBOOK, ui)
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "LOADED")

    _show_topology(page, ui, screenshots)
    widget = _question_with_a_tool(page, ui, screenshots)
    session_id = _stop_long_turn(page, real_stack, ui, screenshots)
    _continue_from_input_box(page, widget, real_stack, session_id, ui, screenshots)

    assert real_stack.llm.remaining == 0, "every scripted reply was used"
    assert [e for e in page.page_errors if "blob:" in e or "gns3c" in e] == []
