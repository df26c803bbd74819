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


async def _statuses_and_snapshots(project: Any) -> tuple[dict[str, str], list[str]]:
    async with GNS3Client(project.url, token=project.token) as gns3:
        nodes = await gns3.list_nodes(project.project_id)
        snapshots = await gns3.list_snapshots(project.project_id)
    return {n.name: n.status for n in nodes}, [s.name for s in snapshots]


def test_a_snapshot_of_the_running_lab_asks_to_stop_and_restart_it(
    shell: InteractiveShell,
    gns3_project: Any,
    scripted_llm: Any,
    capsys: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Given PC3 running; when `%copilot snapshot create` runs, then nothing is saved and
    the card says PC3 runs and what to do (no approval asked: it changes nothing); with
    `--stop` in automation mode the run asks first with a plan saying the lab stops and starts
    again, and a rejection changes nothing; approved (on the console, then through the
    model's call and the approval event), PC3 is stopped, the snapshot taken and PC3
    running again."""
    asyncio.run(_add_pc3(gns3_project))
    copilot = shell.magics_manager.registry["CopilotMagics"].api
    copilot.use(gns3_project.project_id)
    plan = (
        "stop PC3 (the lab stops; what was not saved on a device (VPCS `save`, IOS `write "
        "memory`) is lost when it stops), save snapshot '{}', then start PC3 again"
    )

    capsys.readouterr()
    held = shell.run_cell('%copilot snapshot create "before" --mode lab --quiet')
    out = capsys.readouterr().out
    [call] = held.result.tool_calls
    assert (call.outcome, call.output["running"]) == ("refused", ["PC3"])
    assert "<- snapshot not saved · PC3 running" in out and "waiting for your approval" not in out
    assert "`%copilot snapshot create before --stop --mode automation`" in out

    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    rejected = shell.run_cell('%copilot snapshot create "before" --stop --mode lab --quiet')
    out = capsys.readouterr().out
    assert f"[waiting for your approval] {plan.format('before')}" in out
    assert rejected.result.tool_calls[0].outcome == "refused"
    assert asyncio.run(_statuses_and_snapshots(gns3_project)) == ({"PC3": "started"}, [])

    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    approved = shell.run_cell('%copilot snapshot create "before" --stop --mode lab --quiet')
    out = capsys.readouterr().out
    [call] = approved.result.tool_calls
    assert call.outcome == "ok" and call.arguments == {"name": "before", "stop_running": True}
    assert "<- saved snapshot 'before' · PC3 stopped for it and started again" in out
    assert asyncio.run(_statuses_and_snapshots(gns3_project)) == ({"PC3": "started"}, ["before"])

    scripted_llm.add(
        tool_call("create_snapshot", {"name": "by the model", "stop_running": True}, id="s1"),
        text("Saved.", when={"last_message": "started_again"}),
        text("Snapshot", when=TITLE_REPLY),
    )
    plans: list[str] = []

    def approve_when_asked(event: Any) -> None:
        if isinstance(event, ApprovalRequiredEvent):
            plans.append(event.summary)
            copilot.approve(session=event.session_id)

    turn = copilot.ask("Save the lab as 'by the model'", mode="lab", on_event=approve_when_asked)
    assert plans == [plan.format("by the model")]
    assert turn.status == "done" and turn.tool_calls[0].outcome == "ok"
    statuses, snapshots = asyncio.run(_statuses_and_snapshots(gns3_project))
    assert statuses == {"PC3": "started"} and snapshots == ["before", "by the model"]
    shown = copilot.run("PC3", "show ip", tool="show", mode="lab")
    assert shown.tool_results["PC3"].ok
