"""Tool results read for people (`tools/outcomes.py`): summary, outcome of the check, note.

The outputs are the tools' result shapes with device text as VPCS and IOS print it
(the real-lab versions of these turns are in tests/test_turn_fixtures.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jupyter_gns3_copilot.tools.modes import refusal
from jupyter_gns3_copilot.tools.outcomes import ToolReading, read_result

TEACHING = "teaching_assistant"
LAB = "lab_automation_assistant"


def device(name: str, output: str = "", status: str = "success", **extra: Any) -> dict[str, Any]:
    return {
        "device_name": name,
        "status": status,
        "output": output,
        "commands": extra.pop("commands", ["show ip"]),
        **extra,
    }


def read(tool: str, result: Any, mode: str = LAB, **kwargs: Any) -> ToolReading:
    return read_result(tool, json.dumps(result), mode=mode, **kwargs)


def test_a_show_command_on_two_devices() -> None:
    reading = read("run_show_commands", [device("PC1", "IP/MASK : 10.0.0.1/24"), device("PC2")])
    assert reading == ToolReading("ran `show ip` on PC1, PC2 · 2 ok", "ok")


@pytest.mark.parametrize(
    ("output", "outcome"),
    [
        ("host (10.0.0.99) not reachable", "failed"),
        ("10.0.0.2 icmp_seq=1 timeout\n10.0.0.2 icmp_seq=2 timeout", "failed"),
        ("From 10.0.0.1 icmp_seq=1 Destination host unreachable", "failed"),
        ("Success rate is 0 percent (0/5)", "failed"),
        ("2 packets transmitted, 0 received, 100% packet loss", "failed"),
        ("84 bytes from 10.0.0.2 icmp_seq=1 ttl=64 time=0.3 ms", "ok"),
        ("10.0.0.2 icmp_seq=1 timeout\n84 bytes from 10.0.0.2 icmp_seq=2 ttl=64", "partial"),
        ("Success rate is 60 percent (3/5)\n.!!!.", "partial"),
        ("Success rate is 100 percent (5/5)\n!!!!!", "ok"),
    ],
)
def test_a_delivered_ping_is_judged_by_its_answer(output: str, outcome: str) -> None:
    """The console delivered the command (status success); the check is what counts."""
    commands = ["ping 10.0.0.2 -c 2"]
    reading = read("run_vpcs_commands", [device("PC1", output, commands=commands)])
    assert reading.outcome == outcome


def test_devices_mixing_ok_and_failed_are_partial() -> None:
    reading = read(
        "run_show_commands",
        [device("PC1", "ok"), device("PC3", status="failed", error="Connection timeout")],
    )
    assert reading == ToolReading("ran `show ip` on PC1, PC3 · 1 ok, 1 failed", "partial")


def test_a_teaching_mode_refusal_of_an_address_is_a_friendly_note() -> None:
    blocked = [{"command": "ip 10.0.0.2/24", "reason": "teaching_assistant mode only runs..."}]
    entry = device(
        "PC2",
        status="failed",
        error="Every command was blocked by the command policy; nothing was sent.",
        commands=["ip 10.0.0.2/24"],
        blocked_commands=blocked,
        blocked_info="1 of 1 commands were not sent: ...",
    )
    reading = read("run_vpcs_commands", [entry], mode=TEACHING)
    assert reading.outcome == "refused"
    assert reading.note == (
        "Teaching mode: I can't change PC2's address; here is how you would do it."
    )


def test_a_tool_the_mode_does_not_allow_is_refused_without_the_models_text() -> None:
    arguments = {"devices": [{"device": "R1", "commands": ["router ospf 1"]}]}
    reading = read(
        "run_config_commands",
        refusal(TEACHING, "run_config_commands"),
        mode=TEACHING,
        arguments=arguments,
    )
    assert reading.outcome == "refused"
    assert reading.note == (
        "Teaching mode: I can't change the configuration of R1; here is how you would do it."
    )
    assert "Explain" not in (reading.note or "") + reading.summary


def test_lab_changes_read_as_one_line() -> None:
    created = {
        "status": "success",
        "nodes": [{"name": "PC3", "template": "VPCS", "status": "success"}],
    }
    assert read("create_nodes", created).summary == "created PC3 (vpcs)"
    linked = {
        "status": "success",
        "links": [
            {"a": "PC3", "a_port": "e0", "b": "Switch1", "b_port": "e2", "status": "success"}
        ],
    }
    assert read("create_links", linked) == ToolReading("linked PC3 e0 - Switch1 e2", "ok")
    started = {
        "status": "partial_success",
        "nodes": [
            {"name": "PC1", "status": "success"},
            {"name": "PC2", "status": "success"},
            {"name": "PC9", "status": "failed", "error": "no node PC9"},
        ],
    }
    assert read("start_nodes", started) == ToolReading("started PC1, PC2 · PC9 failed", "partial")


def test_errors_aborts_and_limits_are_failed() -> None:
    error = {"status": "error", "tool": "get_topology", "error": "GNS3 is unreachable. Check it."}
    assert read("get_topology", error) == ToolReading(
        "get topology failed: GNS3 is unreachable.", "failed"
    )
    assert read("start_nodes", {"status": "aborted"}).summary == "start nodes · stopped"
    limit = "Tool call limit reached (3 calls). Please simplify your request."
    assert read_result("get_topology", limit).outcome == "failed"


def test_a_change_not_approved_was_not_done() -> None:
    """A declined or timed-out approval (`agent.approval.declined_result`) is nothing done,
    never a green "ok"."""
    from jupyter_gns3_copilot.agent.approval import ApprovalDecision, declined_result

    declined = declined_result(ApprovalDecision(decision="reject", comment="no"), 600)
    assert read_result("create_nodes", declined, mode=LAB) == ToolReading(
        "create nodes · not done: you declined", "refused")
    timeout = declined_result(ApprovalDecision(decision="timeout"), 600)
    assert read_result("run_config_commands", timeout, mode=LAB) == ToolReading(
        "run config commands · not done: not approved in time", "refused")


def test_a_stored_history_carries_each_results_reading() -> None:
    """The history route's tool results carry the reading their `tool_end` gave, so the
    sidebar's stored conversations read as they streamed (a failed ping is not green)."""
    from jupyter_gns3_copilot.agent.history import OpenAIMessage, with_readings

    ping = {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.99 -c 2"]}]}
    call = {"id": "c1", "function": {"name": "run_vpcs_commands", "arguments": json.dumps(ping)}}
    output = json.dumps([device("PC1", "host (10.0.0.99) not reachable",
                                commands=["ping 10.0.0.99 -c 2"])])
    messages = [
        OpenAIMessage(id="u", role="user", content="ping"),
        OpenAIMessage(id="a", role="assistant", content="", tool_calls=[call]),
        OpenAIMessage(id="t", role="tool", content=output, name="run_vpcs_commands",
                      tool_call_id="c1", metadata={"at": 1}),
    ]
    read = with_readings(messages)
    assert read[:2] == messages[:2]
    expected = read_result("run_vpcs_commands", output, arguments=ping)
    assert expected.outcome == "failed"
    assert read[2].metadata == {"at": 1, "reading": {
        "summary": expected.summary, "outcome": "failed", "note": None}}
    assert messages[2].metadata == {"at": 1}  # the stored messages are not changed
