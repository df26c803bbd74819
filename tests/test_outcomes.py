"""Tool results read for people (`tools/outcomes.py`): summary, outcome of the check, note.

The outputs are the tools' result shapes with device text as VPCS and IOS print it
(the real-lab versions of these turns are in tests/test_turn_fixtures.py)."""

from __future__ import annotations

import json
from typing import Any

from jupyter_gns3_copilot.devices.hidden import HIDDEN_COMMAND
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


def ping_entry(output: str, command: str = "ping 10.0.1.2 -c 1") -> dict[str, Any]:
    """PC1's entry for a delivered ping, as the VPCS tool writes it (checks read from the
    output in the VPCS dialect, the device's outcome judged from them)."""
    from jupyter_gns3_copilot.device_outcome import judge_device
    from jupyter_gns3_copilot.devices.reachability import read_check

    check = read_check("vpcs", command, output)
    assert check is not None
    outcome = judge_device("success", [check.outcome], refused=False)
    return device(
        "PC1",
        f"PC1> {command}\n{output}",
        commands=[command],
        checks=[check.as_dict()],
        outcome=outcome,
    )


def test_a_delivered_ping_without_a_gateway_is_a_failed_check() -> None:
    """The console delivered the command (status success); the check is what counts."""
    reading = read("run_vpcs_commands", [ping_entry("No gateway found")])
    assert reading == ToolReading(
        "ran `ping 10.0.1.2 -c 1` on PC1 · 1 failed · PC1: No gateway found", "failed"
    )


def test_a_ping_answered_in_part_is_partial() -> None:
    output = "10.0.0.2 icmp_seq=1 timeout\n10.0.0.2 icmp_seq=2 ttl=64 time=0.3 ms"
    reading = read("run_vpcs_commands", [ping_entry(output, "ping 10.0.0.2 -c 2")])
    assert reading == ToolReading(
        "ran `ping 10.0.0.2 -c 2` on PC1 · 1 partial · PC1: 10.0.0.2 icmp_seq=1 timeout",
        "partial",
    )


def test_a_result_saved_before_checks_is_read_by_its_delivery() -> None:
    """Entries stored before they carried `outcome` and `checks` (older histories) are not
    searched for phrases: their delivery status is what they say."""
    assert read("run_vpcs_commands", [device("PC1", "No gateway found")]).outcome == "ok"
    failed = device("PC1", status="failed", error="Connection refused")
    assert read("run_vpcs_commands", [failed]).outcome == "failed"


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
    assert reading == ToolReading(
        "not run: teaching mode · `ip 10.0.0.2/24` on PC2",
        "refused",
        "Teaching mode: I can't change PC2's address; here is how you would do it: "
        "on PC2's console, type `ip 10.0.0.2/24`.",
    )
    assert read("run_vpcs_commands", [entry], mode=None) == reading, (
        "read back without its mode (an older history), the policy's reason names it"
    )


def test_a_tool_the_mode_does_not_allow_is_refused_without_the_models_text() -> None:
    arguments = {"devices": [{"device": "R1", "commands": ["router ospf 1"]}]}
    reading = read(
        "run_config_commands",
        refusal(TEACHING, "run_config_commands"),
        mode=TEACHING,
        arguments=arguments,
    )
    assert reading == ToolReading(
        "not run: teaching mode · `router ospf 1` on R1",
        "refused",
        "Teaching mode: I can't change the configuration of R1; here is how you would do it: "
        "on R1's console, type `configure terminal`, then `router ospf 1`, then `end`.",
    )
    assert "Explain" not in (reading.note or "") + reading.summary
    assert (
        read(
            "run_config_commands",
            refusal(TEACHING, "run_config_commands"),
            mode=None,
            arguments=arguments,
        )
        == reading
    ), "the refusal names its mode itself"
    stop = read("stop_nodes", refusal(TEACHING, "stop_nodes"), arguments={"nodes": ["PC1"]})
    assert stop == ToolReading(
        "not run: teaching mode · stop nodes",
        "refused",
        "Teaching mode: I can't stop nodes; here is how you would do it: in GNS3, right-click "
        "PC1 and choose Stop.",
    )


def test_configuration_held_back_by_a_nudge_stage_is_named_by_no_card() -> None:
    """In a `nudge` stage the tools get `HIDDEN_COMMAND` for each configuration line: the
    card says how many were left out and where to type them, never a line."""
    vpcs = {
        "devices": [
            {"device": name, "commands": [HIDDEN_COMMAND]} for name in ("PC1", "PC2", "PC3")
        ]
    }
    reading = read(
        "run_vpcs_commands", refusal(TEACHING, "run_vpcs_commands"), TEACHING, arguments=vpcs
    )
    assert reading == ToolReading(
        "not run: teaching mode · configuration of PC1, PC2, PC3",
        "refused",
        "Teaching mode: I can't configure PC1, PC2, PC3, and in this stage the commands are "
        "yours to work out: I left out 3 configuration lines. Type them on the consoles of "
        "PC1, PC2, PC3; the stage's objectives say what they must achieve.",
    )
    router = {"devices": [{"device": "R1", "commands": [HIDDEN_COMMAND, HIDDEN_COMMAND]}]}
    reading = read(
        "run_config_commands", refusal(TEACHING, "run_config_commands"), TEACHING, arguments=router
    )
    assert reading.summary == "not run: teaching mode · configuration of R1"
    assert reading.note == (
        "Teaching mode: I can't configure R1, and in this stage the commands are yours to "
        "work out: I left out 2 configuration lines. Type them on R1's console in "
        "configuration mode; the stage's objectives say what they must achieve."
    )
    blocked = [{"command": HIDDEN_COMMAND, "reason": "teaching_assistant mode only runs..."}]
    mixed = device(
        "PC1",
        "PC1> show ip\nGATEWAY     : 0.0.0.0",
        status="partial_success",
        commands=["show ip", HIDDEN_COMMAND],
        blocked_commands=blocked,
    )
    reading = read("run_show_commands", [mixed], TEACHING)
    assert reading == ToolReading(
        "ran `show ip` on PC1 · 1 partial",
        "partial",
        "Teaching mode: I can't configure PC1, and in this stage the commands are yours to "
        "work out: I left out 1 configuration line. Type it on PC1's console; the stage's "
        "objectives say what they must achieve.",
    )
    only = device("PC1", status="failed", commands=[HIDDEN_COMMAND], blocked_commands=blocked)
    reading = read("run_show_commands", [only], TEACHING)
    assert reading.summary == "not run: teaching mode · configuration of PC1"


def test_setting_addresses_reads_as_what_was_set() -> None:
    entries = [
        device("PC1", commands=["ip 10.0.0.1/24"], outcome="ok"),
        device("PC2", commands=["ip 10.0.0.2 255.255.255.0 10.0.0.254", "save"], outcome="ok"),
    ]
    assert read("run_vpcs_commands", entries) == ToolReading(
        "set PC1 10.0.0.1/24, PC2 10.0.0.2/24 gateway 10.0.0.254", "ok"
    )
    failed = device("PC2", status="failed", error="Connection refused", commands=["ip 10.0.0.2/24"])
    assert read("run_vpcs_commands", [entries[0], failed]) == ToolReading(
        "set PC1 10.0.0.1/24 · not set: PC2 10.0.0.2/24", "partial"
    )
    interfaces = ["interface g0/0", "ip address 10.0.0.254 255.255.255.0", "no shutdown"]
    assert read("run_config_commands", [device("R1", commands=interfaces)]).summary == (
        "set R1 g0/0 10.0.0.254/24"
    )
    mixed = [device("PC1", commands=["ip 10.0.0.1/24", "show ip"])]
    assert read("run_vpcs_commands", mixed).summary == (
        "ran `ip 10.0.0.1/24`; `show ip` on PC1 · 1 ok"
    )


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
        "create nodes · not done: you declined", "refused"
    )
    timeout = declined_result(ApprovalDecision(decision="timeout"), 600)
    assert read_result("run_config_commands", timeout, mode=LAB) == ToolReading(
        "run config commands · not done: not approved in time", "refused"
    )


def test_a_stored_history_carries_each_results_reading() -> None:
    """The history route's tool results carry the reading their `tool_end` gave, so the
    sidebar's stored conversations read as they streamed (a failed ping is not green)."""
    from jupyter_gns3_copilot.agent.history import OpenAIMessage, with_readings

    ping = {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.99 -c 2"]}]}
    call = {"id": "c1", "function": {"name": "run_vpcs_commands", "arguments": json.dumps(ping)}}
    output = json.dumps([ping_entry("host (10.0.0.99) not reachable", "ping 10.0.0.99 -c 2")])
    messages = [
        OpenAIMessage(id="u", role="user", content="ping"),
        OpenAIMessage(id="a", role="assistant", content="", tool_calls=[call]),
        OpenAIMessage(
            id="t",
            role="tool",
            content=output,
            name="run_vpcs_commands",
            tool_call_id="c1",
            metadata={"at": 1},
        ),
    ]
    read = with_readings(messages)
    assert read[:2] == messages[:2]
    expected = read_result("run_vpcs_commands", output, arguments=ping)
    assert expected.outcome == "failed"
    assert read[2].metadata == {
        "at": 1,
        "reading": {"summary": expected.summary, "outcome": "failed", "note": None},
    }
    assert messages[2].metadata == {"at": 1}  # the stored messages are not changed


def test_a_check_of_the_objectives_says_how_many_passed() -> None:
    objectives = [{"id": "a", "status": "pass"}, {"id": "b", "status": "fail"}]
    reading = read("check_objectives", {"objectives": objectives, "score": 1, "max_score": 2})
    assert reading == ToolReading("checked 2 objectives · 1 passed", "ok")
