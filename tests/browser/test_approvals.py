"""Changes that wait for the student's decision in the browser, end to end:
browser -> server extension (REST + SSE) against the local GNS3 lab (real gns3-server) with
`require_approval = "changes"` and the scripted model (a TEST DOUBLE replaying
`tests/notebook_scripts/browser-approvals.json`).

In JupyterLab: the sidebar shows the plan of a `create_nodes` call with Approve / Reject
(readable in the dark theme) before the card of that call, and no "Working" spinner while
it waits; nothing is created until Approve, then PC3 is in GNS3 and the answer streams
on; a change asked in the sidebar still waits after the page is reloaded (its stream
gone), shows again when the chat is chosen, and Reject with a comment answers with the
rest of the turn in the same view (PC4 never created, its card "not done: you declined",
the model read the decline and the comment); the approved chat chosen again reads as it
streamed (the history's readings); in a notebook, the chat widget of a `%copilot --mode
lab` cell shows the plan with Approve, which POSTs the approval route while the cell
waits, and the cell ends with PC5 created; a `%copilot run` that sets PC1's address asks
the same way in its cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import jupyter_ui
from support.jupyter_ui import LabStack
from support.sidebar import SIDEBAR, ask, off_loop, open_sidebar, session_row, wait_idle

from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

SCRIPT = Path(__file__).resolve().parents[1] / "notebook_scripts" / "browser-approvals.json"
PROJECT = ProjectRecipe("Copilot approvals", {"PC1": "ip 10.0.0.1/24"})
NOTEBOOK = "approvals.ipynb"
TURN_MIME = "application/vnd.gns3-copilot.turns+json"
COMMENT = "one PC is enough"
CELLS = [
    "%load_ext jupyter_gns3_copilot\nprint('LOADED')",
    f'%copilot use "{PROJECT.name}"',
    "%copilot --mode lab Add PC5",
    "%copilot run --mode lab --tool vpcs PC1: ip 10.0.0.11/24",
]


@dataclass
class ApprovalStack(LabStack):
    def node_names(self) -> set[str]:
        with self.api() as api:
            response = api.get(f"copilot/projects/{self.project_id}/topology")
            response.raise_for_status()
            return {node["name"] for node in response.json()["nodes"]}

    def session(self, session_id: str, *tail: str) -> Any:
        with self.api() as api:
            response = api.get(
                "/".join(["copilot/projects", self.project_id, "chat/sessions", session_id, *tail])
            )
            response.raise_for_status()
            return response.json()


@pytest.fixture(scope="module")
def stack(gns3_lab: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApprovalStack]:
    """`jupyter lab` with the copilot on the lab and the scripted model, changes asking
    first (the server's default; the test helpers default to "none") and automation mode the
    default; the project PC1 on a switch, and the notebook."""
    work = tmp_path_factory.mktemp("approvals-server")
    jupyter_ui.configure_front_end(work)
    root = work / "notebooks"
    root.mkdir()
    jupyter_ui.write_notebook(root / NOTEBOOK, CELLS)
    project_ids = off_loop(prepare_projects, gns3_lab, [PROJECT])
    traits = {"require_approval": "changes", "default_mode": "lab_automation_assistant"}
    try:
        with (
            ScriptedLLM(SCRIPT, models=["scripted-model"]) as llm,
            JupyterServer(
                gns3_lab,
                ModelEndpoint.scripted_model(llm),
                work,
                app="lab",
                root_dir=root,
                traits=traits,
            ) as server,
        ):
            yield ApprovalStack(server, llm, project_ids[PROJECT.name])
    finally:
        off_loop(delete_projects, gns3_lab, project_ids.values())


def _approval(turn: Any) -> Any:
    approval = turn.locator(".gns3c-approval")
    approval.locator(".gns3c-approval-summary", has_text="create").wait_for()
    return approval


def _approve_in_the_sidebar(
    page: Any, sidebar: Any, stack: ApprovalStack, screenshots: Path
) -> None:
    """The plan shows with both buttons and nothing is created; Approve: PC3 is created
    and the answer streams on in the same turn."""
    turn = ask(page, sidebar, "Add PC3 to the lab")
    approval = _approval(turn)
    assert approval.locator(".gns3c-approval-summary").inner_text() == "create PC3 (VPCS)"
    assert approval.locator("button.gns3c-reject").is_visible()
    assert approval.locator("textarea.gns3c-approval-comment").is_visible()
    assert turn.get_attribute("data-status") == "running"
    # The plan comes before the card of the call it plans; nothing spins while it waits.
    assert approval.evaluate(
        "(plan) => !!(plan.compareDocumentPosition(plan.parentElement.querySelector("
        "'.gns3c-tool')) & Node.DOCUMENT_POSITION_FOLLOWING)"
    )
    assert turn.locator(".gns3c-spinner").count() == 0
    assert "PC3" not in stack.node_names()
    jupyter_ui.screenshot(page, sidebar, screenshots / "approvals-sidebar-pending.png")
    _readable_in_the_dark(page, sidebar, screenshots)

    approval.locator("button.gns3c-approve").click()
    wait_idle(page)
    assert turn.get_attribute("data-status") == "done"
    assert approval.locator(".gns3c-approval-state").inner_text() == "Approved"
    assert not approval.locator(".gns3c-approval-buttons").is_visible()
    assert "PC3 is in the lab now." in turn.inner_text()
    assert "PC3" in stack.node_names()


def _readable_in_the_dark(page: Any, sidebar: Any, screenshots: Path) -> None:
    """The plan, its state line and both buttons read in JupyterLab's dark theme."""
    parts = [
        ".gns3c-approval-summary",
        ".gns3c-approval-state",
        "button.gns3c-approve",
        "button.gns3c-reject",
    ]
    jupyter_ui.set_theme(page, dark=True)
    try:
        jupyter_ui.assert_readable(page, SIDEBAR, "dark", len(parts), parts)
        jupyter_ui.screenshot(page, sidebar, screenshots / "approvals-sidebar-dark.png")
    finally:
        jupyter_ui.set_theme(page, dark=False)


def _reject_after_a_reload(page: Any, stack: ApprovalStack, screenshots: Path) -> None:
    """Asked, then the page reloads (the sidebar's stream is gone): the change still waits
    on the server; choosing the chat again shows the turn with the plan, and Reject
    answers with the rest of the turn, streamed into that view."""
    sidebar = page.locator(SIDEBAR)
    sidebar.locator("button.jp-gns3-copilot-sidebar-new").click()
    turn = ask(page, sidebar, "Add PC4 to the lab")
    _approval(turn)
    page.wait_for_function(
        "(sel) => document.querySelector(sel + ' .jp-mod-selected')", arg=SIDEBAR, polling=100
    )
    session_id = sidebar.locator(".jp-gns3-copilot-sidebar-session.jp-mod-selected").get_attribute(
        "data-session-id"
    )

    # Loading the page again: the old page and its stream are gone.
    sidebar = open_sidebar(page, stack, "lab", NOTEBOOK)
    [pending] = stack.session(session_id, "approvals")
    assert pending["summary"] == "create PC4 (VPCS)"

    # The approved chat, chosen again, reads as it streamed (the history's readings).
    sidebar.locator(".jp-gns3-copilot-sidebar-session-title", has_text="Adding PC3").click()
    stored = sidebar.locator(".jp-gns3-copilot-sidebar-turn", has_text="PC3 is in the lab now.")
    stored.wait_for()
    assert stored.locator(".gns3c-tool-title").inner_text() == "created PC3 (vpcs)"
    assert stored.locator(".gns3c-badge").inner_text() == "ok"

    session_row(sidebar, session_id).locator(".jp-gns3-copilot-sidebar-session-title").click()
    turn = sidebar.locator(".jp-gns3-copilot-sidebar-turn").last
    approval = _approval(turn)
    assert turn.locator(".gns3c-user-text").inner_text() == "Add PC4 to the lab"
    assert turn.get_attribute("data-status") == "running"
    jupyter_ui.screenshot(page, sidebar, screenshots / "approvals-sidebar-resumed.png")

    approval.locator("textarea.gns3c-approval-comment").fill(COMMENT)
    approval.locator("button.gns3c-reject").click()
    wait_idle(page)
    assert turn.get_attribute("data-status") == "done"
    assert approval.locator(".gns3c-approval-state").inner_text() == f"Rejected: {COMMENT}"
    assert "Understood: I did not add PC4." in turn.inner_text()
    # One view: the resumed turn's tool card is the one the history showed.
    assert turn.locator(".gns3c-tool").count() == 1
    # What happened to the change: not done, never a green "ok".
    assert "not done: you declined" in turn.locator(".gns3c-tool-head").inner_text()
    assert turn.locator(".gns3c-badge").inner_text() == "refused"
    assert "PC4" not in stack.node_names()
    assert stack.session(session_id, "approvals") == []
    tool_results = [
        m["content"]
        for m in stack.session(session_id, "history")["messages"]
        if m["role"] == "tool"
    ]
    assert len(tool_results) == 1 and "declined" in tool_results[0], tool_results
    assert COMMENT in tool_results[0], "the model reads the student's comment"


def _approve_in_the_widget(page: Any, stack: ApprovalStack, screenshots: Path) -> None:
    """A `%copilot --mode lab` cell waits on the plan; the widget's Approve POSTs the
    approval route (the kernel is busy) and the cell goes on to its end."""
    decisions: list[Any] = []
    page.on("response", lambda r: decisions.append(r) if "/approvals/" in r.url else None)
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "LOADED")
    jupyter_ui.run_cell(page, 1)
    jupyter_ui.wait_for_output(page, 1, "Using project")
    jupyter_ui.run_cell(page, 2)
    widget = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".gns3c")
    approval = _approval(widget)
    assert approval.locator(".gns3c-approval-summary").inner_text() == "create PC5 (VPCS)"
    assert "PC5" not in stack.node_names()
    jupyter_ui.screenshot(page, widget, screenshots / "approvals-widget-pending.png")

    approval.locator("button.gns3c-approve").click()
    page.wait_for_function(
        """(mime) => {
          const outputs = window.jupyterapp.shell.currentWidget.content.widgets[2]
            .model.outputs.toJSON();
          return outputs.some((o) => o.data && o.data[mime]);
        }""",
        arg=TURN_MIME,
        timeout=60_000,
        polling=100,
    )
    [decision] = decisions
    assert decision.request.method == "POST" and decision.status == 200, decision.text()
    assert decision.json()["status"] == "ok"  # the cell's stream was waiting for it
    [bundle] = [
        o["data"][TURN_MIME]
        for o in jupyter_ui.cell_outputs(page, 2)
        if TURN_MIME in o.get("data", {})
    ]
    [turn] = bundle["turns"]
    assert turn["status"] == "done"
    assert [i["state"] for i in turn["items"] if i["kind"] == "approval"] == ["approve"]
    assert "PC5 is in the lab now." in [i.get("text") for i in turn["items"]]
    assert "PC5" in stack.node_names()


def _approve_a_run_in_the_widget(page: Any, screenshots: Path) -> None:
    """`%copilot run --tool vpcs PC1: ip ...` changes a device: its widget shows the plan
    with Approve, which POSTs the approval route with the run's id, and the run goes on."""
    jupyter_ui.run_cell(page, 3)
    widget = page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".gns3c")
    approval = widget.locator(".gns3c-approval")
    approval.locator(".gns3c-approval-summary", has_text="PC1").wait_for()
    assert approval.locator(".gns3c-approval-summary").inner_text() == ("on PC1: ip 10.0.0.11/24")
    jupyter_ui.screenshot(page, widget, screenshots / "approvals-run-pending.png")
    approval.locator("button.gns3c-approve").click()
    page.wait_for_function(
        """(mime) => {
          const outputs = window.jupyterapp.shell.currentWidget.content.widgets[3]
            .model.outputs.toJSON();
          return outputs.some((o) => o.data && o.data[mime]);
        }""",
        arg=TURN_MIME,
        timeout=60_000,
        polling=100,
    )
    [bundle] = [
        o["data"][TURN_MIME]
        for o in jupyter_ui.cell_outputs(page, 3)
        if TURN_MIME in o.get("data", {})
    ]
    [turn] = bundle["turns"]
    assert [i["state"] for i in turn["items"] if i["kind"] == "approval"] == ["approve"]
    [tool] = [i for i in turn["items"] if i["kind"] == "tool"]
    assert (tool["summary"], tool["outcome"]) == ("set PC1 10.0.0.11/24", "ok")
    assert "PC1 : 10.0.0.11 255.255.255.0" in tool["output"]


def test_changes_wait_for_the_students_decision(
    stack: ApprovalStack, page: Any, screenshots: Path
) -> None:
    """Given JupyterLab with changes asking first, the lab project and the scripted model;
    when the student approves in the sidebar, rejects there after a reload, and approves
    in a notebook's chat widget; then nothing changes before the decision and GNS3 shows
    exactly the approved nodes."""
    sidebar = open_sidebar(page, stack, "lab", NOTEBOOK)
    _approve_in_the_sidebar(page, sidebar, stack, screenshots)
    _reject_after_a_reload(page, stack, screenshots)
    _approve_in_the_widget(page, stack, screenshots)
    _approve_a_run_in_the_widget(page, screenshots)
    assert stack.llm.remaining == 0, "every scripted reply was used"
    assert [e for e in page.page_errors if "gns3" in e.lower()] == []
