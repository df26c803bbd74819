"""Approving from a notebook: the `Copilot` API and `%copilot approve` in a
real IPython shell against a real Jupyter server subprocess with `require_approval`
"changes", the REAL local GNS3 lab and the scripted model server (a TEST DOUBLE of the
OpenAI API).

A waiting cell blocks the kernel; the student interrupts it (here: the event callback
raises `KeyboardInterrupt` when the approval arrives, as the kernel's interrupt would
inside the read loop), which leaves the change waiting instead of aborting the turn, and
`%copilot approve` then shows the rest of the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.server import magics_shell

from jupyter_gns3_copilot.events import ApprovalRequiredEvent
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.notebook.turn import Turn
from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.scripted_llm import text, tool_call

pytestmark = [pytest.mark.lab, pytest.mark.slow]

TITLE_REPLY = {"tools": False}


@pytest.fixture
def server(gns3_lab: Any, scripted_llm: Any, tmp_path: Path) -> Iterator[JupyterServer]:
    stack = JupyterServer(
        gns3_lab,
        ModelEndpoint.scripted_model(scripted_llm),
        tmp_path,
        traits={"require_approval": "changes"},
    )
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def shell(server: JupyterServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    with magics_shell(server, monkeypatch) as ip:
        yield ip


def test_an_interrupted_waiting_cell_leaves_the_change_waiting_and_the_magic_approves_it(
    shell: InteractiveShell, gns3_project: Any, scripted_llm: Any, capsys: Any
) -> None:
    """Given a turn that waits to create PC3; when the waiting read is interrupted; then
    the turn is not aborted (the change is listed as waiting, nothing created); when
    `%copilot approve fine` runs; then the rest of the turn is shown in that cell
    (approved, the tool's output, the answer) and PC3 exists."""
    scripted_llm.add(
        tool_call("create_nodes", {"nodes": [{"template": "VPCS", "name": "PC3"}]}, id="c1"),
        text("PC3 added.", when={"last_message": "PC3"}),
        text("Add PC3", when=TITLE_REPLY),
    )
    magics = shell.magics_manager.registry["CopilotMagics"]
    copilot = magics.api
    copilot.use(gns3_project.project_id)
    seen: list[str] = []

    def interrupt_at_approval(event: Any) -> None:
        if isinstance(event, ApprovalRequiredEvent):
            seen.append(event.summary)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copilot.ask("Add PC3", mode="lab", on_event=interrupt_at_approval)
    assert seen == ["create PC3 (VPCS)"]
    assert copilot.waiting_approval is not None
    assert copilot.waiting_approval.summary == "create PC3 (VPCS)"
    [waiting] = copilot.approvals()
    assert waiting["summary"] == "create PC3 (VPCS)"
    assert "PC3" not in asyncio.run(_node_names(gns3_project))

    capsys.readouterr()
    result = shell.run_cell("%copilot approve fine", store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    out = capsys.readouterr().out
    assert "approved (fine)" in out and "PC3 added." in out
    assert isinstance(result.result, Turn) and result.result.status == "done"
    assert copilot.approvals() == [] and copilot.waiting_approval is None
    assert "PC3" in asyncio.run(_node_names(gns3_project))

    nothing = shell.run_cell("%copilot reject", store_history=True)
    assert "waits for an approval" in str(nothing.error_in_exec)


async def _node_names(project: Any) -> set[str]:
    async with GNS3Client(project.url, token=project.token) as gns3:
        return {node.name for node in await gns3.list_nodes(project.project_id)}


def pc3_address(copilot: Any) -> str:
    shown = copilot.run("PC3", "show ip", tool="vpcs", mode="lab")
    return next(
        line for line in shown.tool_results["PC3"].output.splitlines() if line.startswith("IP/MASK")
    )


def test_a_direct_run_that_configures_waits_for_the_decision(
    shell: InteractiveShell, gns3_project: Any, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given PC3; when `Copilot.run` sets its address, then the run waits with the plan and
    goes on once approved (the widget's button POSTs that decision; here the event
    callback does); interrupting a waiting run ends it with nothing changed; with text
    output the magic asks on the console (the person's answer is the only stand-in)."""
    asyncio.run(_add_pc3(gns3_project))
    copilot = shell.magics_manager.registry["CopilotMagics"].api
    copilot.use(gns3_project.project_id)
    assert "10.0.0.73" not in pc3_address(copilot)
    plans: list[str] = []

    def approve_when_asked(event: Any) -> None:
        if isinstance(event, ApprovalRequiredEvent):
            plans.append(event.summary)
            assert copilot.approvals(event.session_id)[0]["summary"] == event.summary
            answer = copilot.approve(session=event.session_id)
            assert answer == {
                "status": "ok",
                "approval_id": event.approval_id,
                "decision": "approve",
            }

    turn = copilot.run(
        "PC3", "ip 10.0.0.73/24", tool="vpcs", mode="lab", on_event=approve_when_asked
    )
    assert plans == ["on PC3: ip 10.0.0.73/24"]
    assert turn.tool_results["PC3"].status == "ok" and turn.tool_results["PC3"].ok
    assert [item["state"] for item in turn.record["items"] if item["kind"] == "approval"] == [
        "approve"
    ]
    assert "10.0.0.73/24" in pc3_address(copilot)

    def interrupt_at_approval(event: Any) -> None:
        if isinstance(event, ApprovalRequiredEvent):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copilot.run(
            "PC3", "ip 10.0.0.99/24", tool="vpcs", mode="lab", on_event=interrupt_at_approval
        )
    assert copilot.waiting_approval is None, "a run does not outlive its cell"
    assert "10.0.0.73/24" in pc3_address(copilot)

    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    capsys.readouterr()
    refused = shell.run_cell("%copilot run --mode lab --tool vpcs PC3: ip 10.0.0.98/24")
    out = capsys.readouterr().out
    assert "[waiting for your approval] on PC3: ip 10.0.0.98/24" in out
    assert "Answer y to approve it" in out and "rejected: not executed" in out
    assert refused.result.tool_calls[0].outcome == "refused"
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    approved = shell.run_cell("%copilot run --mode lab --tool vpcs PC3: ip 10.0.0.98/24")
    assert approved.result.tool_results["PC3"].status == "ok"
    assert "10.0.0.98/24" in pc3_address(copilot)


async def _add_pc3(project: Any) -> None:
    from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget

    async with GNS3Client(project.url, token=project.token) as gns3:
        await gns3.create_node_from_template(project.project_id, "VPCS", "PC3")
        await gns3.start_all(project.project_id)
        async with ConsolePool() as pool:
            for node in await gns3.list_nodes(project.project_id):
                await pool.wait_ready(ConsoleTarget.from_node(node, server_host="127.0.0.1"))
