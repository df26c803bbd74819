"""The approval policy, the plans a person reads and what the model is told:
pure functions, no server."""

from __future__ import annotations

import json

import pytest
from support.tools import offline_context

from jupyter_gns3_copilot.agent.approval import (
    ApprovalDecision,
    ApprovalRequest,
    approval_id_for,
    declined_result,
    new_request,
    summarize,
)
from jupyter_gns3_copilot.agent.approval_policy import ApprovalPolicy
from jupyter_gns3_copilot.agent.clock import RESUME_FLOOR, TurnClock
from jupyter_gns3_copilot.server.app import GNS3Copilot
from jupyter_gns3_copilot.tools.changes import planned_change


@pytest.mark.parametrize(
    ("tool", "args", "plan"),
    [
        ("create_nodes", {"nodes": [{"template": "vpcs", "name": "PC3"}]}, "create PC3 (vpcs)"),
        (
            "create_links",
            {"links": [{"a": "PC3", "a_port": "e0", "b": "Switch1", "b_port": "e2"}]},
            "link PC3 e0 - Switch1 e2",
        ),
        (
            "run_config_commands",
            {
                "devices": [
                    {
                        "device": "R1",
                        "commands": ["interface g0/0", "ip address 10.0.0.1 255.255.255.0"],
                    }
                ]
            },
            "on R1: interface g0/0, ip address 10.0.0.1 255.255.255.0",
        ),
        ("start_nodes", {"nodes": ["PC1", "PC2"]}, "start PC1; start PC2"),
        ("rename_nodes", {"nodes": [{"name": "PC1", "new_name": "Alice"}]}, "rename PC1 -> Alice"),
        ("set_link_state", {"state": "down"}, 'set_link_state {"state":"down"}'),
    ],
)
def test_the_plan_is_written_for_a_person(tool: str, args: dict, plan: str) -> None:
    assert summarize(tool, args) == plan


def test_a_long_plan_is_cut_with_an_ellipsis() -> None:
    plan = summarize("start_nodes", {"nodes": [f"PC{i}" for i in range(200)]})
    assert len(plan) == 600 and plan.endswith("…")


def vpcs_call(*commands: str) -> dict:
    return {"devices": [{"device": "PC3", "commands": list(commands)}]}


@pytest.mark.parametrize(
    ("tool", "args", "changing"),
    [
        ("run_vpcs_commands", vpcs_call("ip 10.0.0.73/24"), {"PC3": ["ip 10.0.0.73/24"]}),
        ("run_vpcs_commands", vpcs_call("set pcname PC9"), {"PC3": ["set pcname PC9"]}),
        ("run_vpcs_commands", vpcs_call("clear ip"), {"PC3": ["clear ip"]}),
        ("run_vpcs_commands", vpcs_call("save"), {"PC3": ["save"]}),
        ("run_vpcs_commands", vpcs_call("load startup.vpc"), {"PC3": ["load startup.vpc"]}),
        ("run_vpcs_commands", vpcs_call("dhcp"), {"PC3": ["dhcp"]}),
        ("run_vpcs_commands", vpcs_call("show ip", "ping 10.0.0.1 -c 2", "trace 10.0.0.1"), {}),
        ("run_vpcs_commands", vpcs_call("arp", "show ip"), {}),
        (
            "run_config_commands",
            {"devices": [{"device": "R1", "commands": ["router ospf 1", "do show ip route"]}]},
            {"R1": ["router ospf 1", "do show ip route"]},
        ),
    ],
)
async def test_a_command_call_changes_a_device_when_a_line_is_no_diagnostic(
    tool: str, args: dict, changing: dict
) -> None:
    """Judged by the command policy in the device's dialect (here GNS3 cannot be asked
    which devices they are: a VPCS call's lines are judged as VPCS commands)."""
    ctx = offline_context(mode="lab_automation_assistant")
    change = await planned_change(ctx, tool, args)
    assert change is not None
    assert (dict(change.devices), change.changes, change.lab) == (changing, bool(changing), False)


async def test_calls_that_would_not_run_change_nothing() -> None:
    teaching = offline_context(mode="teaching_assistant")
    assert await planned_change(teaching, "run_vpcs_commands", vpcs_call("ip 1.1.1.1/8")) is None
    lab = offline_context(mode="lab_automation_assistant")
    assert await planned_change(lab, "run_vpcs_commands", {"devices": "PC3"}) is None
    assert await planned_change(lab, "no_such_tool", {}) is None
    created = await planned_change(lab, "create_nodes", {"nodes": [{"template": "VPCS"}]})
    assert created is not None and created.changes and created.lab


def test_the_policy_asks_for_changes_or_the_named_tools() -> None:
    changes = ApprovalPolicy.parse("changes")
    assert changes.considers("run_show_commands")
    assert changes.needs("run_vpcs_commands", True)
    assert not changes.needs("run_vpcs_commands", False)
    none = ApprovalPolicy.parse("none")
    assert not none.considers("create_nodes") and not none.needs("create_nodes", True)
    named = ApprovalPolicy.parse(["run_vpcs_commands"])
    assert named.considers("run_vpcs_commands") and not named.considers("create_nodes")
    assert named.needs("run_vpcs_commands", False) and not named.needs("create_nodes", True)
    for bad in ("sometimes", ["ok", " "]):
        with pytest.raises(ValueError):
            ApprovalPolicy.parse(bad)


def test_a_mixed_call_plans_its_configuring_lines() -> None:
    args = vpcs_call("show ip", "ip 10.0.0.73/24", "ping 10.0.0.1 -c 1")
    plan = summarize("run_vpcs_commands", args, {"PC3": ["ip 10.0.0.73/24"]})
    assert plan == "on PC3: ip 10.0.0.73/24 (also runs: show ip, ping 10.0.0.1 -c 1)"
    two = {"devices": [*args["devices"], {"device": "PC4", "commands": ["show ip"]}]}
    assert summarize("run_vpcs_commands", two, {"PC3": ["ip 10.0.0.73/24"]}) == plan


def test_the_model_reads_who_declined_and_why() -> None:
    rejected = json.loads(declined_result(ApprovalDecision(decision="reject", comment="no"), 600))
    assert rejected["status"] == "declined" and rejected["comment"] == "no"
    assert "declined" in rejected["message"] and "no" in rejected["message"]
    late = json.loads(declined_result(ApprovalDecision(decision="timeout"), 600))
    assert late["decision"] == "timeout" and "600 seconds" in late["message"]


def test_approval_ids_are_stable_per_call_and_differ_between_sessions() -> None:
    assert approval_id_for("s1", "c1") == approval_id_for("s1", "c1")
    assert approval_id_for("s1", "c1") != approval_id_for("s2", "c1")


def test_a_request_keeps_the_turns_time_limit_and_an_old_one_still_loads() -> None:
    """A request records the turn's limit and the seconds used (JSON, as checkpointed);
    one saved before those fields existed loads with None: its turn resumes unlimited."""
    asked = new_request(
        "s1",
        "call_1",
        "create_nodes",
        {},
        timeout=600,
        mode="lab",
        temperature=None,
        time_limit=60,
        time_used=12.5,
    )
    stored = asked.model_dump(mode="json")
    again = ApprovalRequest.model_validate(stored)
    assert (again.time_limit, again.time_used) == (60, 12.5)

    old = {key: value for key, value in stored.items() if key not in {"time_limit", "time_used"}}
    loaded = ApprovalRequest.model_validate(old)
    assert (loaded.time_limit, loaded.time_used) == (None, None)
    assert loaded.approval_id == asked.approval_id


async def test_the_clock_gives_the_time_left_and_a_floor_after_a_wait() -> None:
    """A paused clock keeps its time used; a turn that had used (nearly) all of its limit
    before the wait gets `RESUME_FLOOR` seconds, not a stop before the approved change."""
    clock = TurnClock(60, lambda: None, used=12.5)
    assert (clock.used(), clock.left()) == (12.5, 47.5)
    clock.start()
    clock.pause()
    paused = clock.used()
    assert paused >= 12.5
    assert (clock.used(), clock.left()) == (paused, 60 - paused), "paused: not counting"
    assert TurnClock(60, lambda: None, used=59.9).left() == RESUME_FLOOR
    assert TurnClock(60, lambda: None, used=75).left() == RESUME_FLOOR


def test_auto_approval_is_off_by_default_under_jupyterhub(monkeypatch) -> None:
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    assert GNS3Copilot().allow_auto_approval is True
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hub-token")
    assert GNS3Copilot().allow_auto_approval is False
    assert GNS3Copilot().require_approval == "changes"
    assert GNS3Copilot().approval_timeout == 600.0


def test_a_waiting_cell_shows_the_plan_and_how_to_decide() -> None:
    """The text transcript of a waiting turn names the plan, the widget's buttons and the
    magics (a cell waiting blocks the kernel: it must be interrupted first)."""
    from jupyter_gns3_copilot.events import ApprovalRequiredEvent, ApprovalResolvedEvent
    from jupyter_gns3_copilot.notebook.transcript import TextStream

    written: list[str] = []
    printer = TextStream(written.append)
    printer(
        ApprovalRequiredEvent(
            session_id="s",
            approval_id="a",
            tool_call_id="c",
            tool_name="create_nodes",
            tool_input={},
            summary="create PC3 (VPCS)",
        )
    )
    printer(
        ApprovalResolvedEvent(
            session_id="s", approval_id="a", tool_call_id="c", decision="reject", comment="no"
        )
    )
    out = "".join(written)
    assert "[waiting for your approval] create PC3 (VPCS)" in out
    assert "interrupt this cell" in out and "%copilot approve [comment]" in out
    assert "rejected: not executed (no)" in out
