"""Pings and traces judged on the real lab: every failure wording each dialect's device
produces here is a failed check, in the tools' results, on the card and in the kernel's
`Turn.tool_results`.

- VPCS: REAL VPCS nodes in the local GNS3 lab (`gns3_project`), every byte through
  GNS3's console proxy; a lost probe is produced by suspending the link in GNS3.
- Linux: a REAL `/bin/sh` on a pseudo-terminal behind a telnet server, in a network
  namespace of its own (`unshare -rn`: a veth pair, nothing of the host changes), running
  the real iputils `ping` and BusyBox `ping` / `traceroute`.
- IOS: no IOS image can run here; the IOS TEST DOUBLE prints IOS's wordings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from support.consoles import linux_shell
from support.tools import by_device, call, client_for, offline_context

from jupyter_gns3_copilot.chat.stream_events import tool_end_event
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.events import parse_event
from jupyter_gns3_copilot.notebook.turn import TurnRecorder
from jupyter_gns3_copilot.testing.ios_double import IOSDouble
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, ToolContext

NETWORK = """\
ip link set lo up
ip link add v0 type veth peer name v1
ip addr add 10.9.0.1/24 dev v0
ip link set v0 up
ip link set v1 up
ip neigh add 10.9.0.3 lladdr 02:00:00:00:00:03 dev v0 nud permanent"""
"""The Linux shell's network: 10.9.0.2 answers no ARP (the kernel says the host is
unreachable), 10.9.0.3 has a fixed MAC nobody owns (probes go out and are lost), and there
is no route to anything else."""
PC1_PC2 = {"a": "PC1", "a_port": "e0", "b": "PC2", "b_port": "e0"}


def checks(entry: Mapping[str, Any]) -> list[tuple[str, str, str | None]]:
    """Each check of a device entry: (command, outcome, problem)."""
    return [(c["command"], c["outcome"], c.get("problem")) for c in entry.get("checks", [])]


def kernel_turn(tool: str, result: Any, arguments: Mapping[str, Any]) -> Any:
    """The kernel's `Turn` of one tool call, from the `tool_end` event the server sends."""
    recorder = TurnRecorder("check", "s1")
    event = tool_end_event(
        "s1",
        {
            "tool_name": tool,
            "tool_call_id": "c1",
            "tool_output": json.dumps(result),
            "arguments": arguments,
        },
        mode=LAB_AUTOMATION,
    )
    recorder.add(parse_event(event.model_dump_json(exclude_none=True)))
    return recorder.finish()


@pytest.mark.slow
async def test_every_linux_ping_and_traceroute_failure_is_failed() -> None:
    expected = [
        ("ping -c 1 -W 1 127.0.0.1", "ok", None),
        ("ping -c 1 -W 1 10.9.0.3", "failed", "timeout"),
        ("ping -c 1 10.9.0.2", "failed", "destination unreachable"),
        ("ping -c 1 192.0.2.9", "failed", "network unreachable"),
        ("ping -c 1 nosuch.invalid", "failed", "host not found"),
        ("ping6 -c 1 ::1", "ok", None),
        ("busybox ping -c 1 127.0.0.1", "ok", None),
        ("busybox ping -c 1 -W 1 10.9.0.3", "failed", "timeout"),
        ("busybox ping -c 1 192.0.2.9", "failed", "network unreachable"),
        ("busybox ping -c 1 nosuch.invalid", "failed", "host not found"),
        ("busybox traceroute -n -m 1 -w 1 127.0.0.1", "ok", None),
        ("busybox traceroute -n -m 2 -w 1 10.9.0.3", "failed", "timeout"),
        ("busybox traceroute -n -m 1 -q 1 -w 5 10.9.0.2", "failed", "destination unreachable"),
        ("busybox traceroute -n -m 2 -w 1 192.0.2.9", "failed", "network unreachable"),
        ("busybox traceroute -n -m 2 -w 1 nosuch.invalid", "failed", "host not found"),
    ]
    async with linux_shell(NETWORK) as target, ConsolePool() as pool:
        ctx = offline_context(consoles=pool, mode=LAB_AUTOMATION, console_targets={"host1": target})
        commands = [command for command, _, _ in expected]
        for command in commands:
            arguments = {"devices": [{"device": "host1", "commands": [command]}]}
            outcome = await call(ctx, "run_show_commands", arguments)
            [entry] = outcome.result
            assert entry["status"] == "success", entry
            assert checks(entry) == [e for e in expected if e[0] == command], entry["output"]
            turn = kernel_turn("run_show_commands", outcome.result, arguments)
            [(_, want, _)] = [e for e in expected if e[0] == command]
            assert turn.tool_results["host1"].status == want
            assert turn.tool_calls[0].outcome == want
            assert turn.tool_results["host1"].ok is (want == "ok")


async def test_ios_pings_and_traceroutes_on_the_ios_double() -> None:
    async with IOSDouble() as device, ConsolePool() as pool:
        ctx = offline_context(
            consoles=pool, mode=LAB_AUTOMATION, console_targets={"R1": device.target()}
        )
        lines = ["interface g0/0", "ip address 10.0.0.254 255.255.255.0", "no shutdown"]
        configured = await call(
            ctx, "run_config_commands", {"devices": [{"device": "R1", "commands": lines}]}
        )
        assert configured.result[0]["outcome"] == "ok"
        commands = [
            "ping 10.0.0.1",
            "ping 10.0.0.1",
            "ping 10.0.9.9",
            "ping nosuch",
            "traceroute 10.0.0.1",
            "traceroute 10.0.9.9",
            "traceroute nosuch",
        ]
        arguments = {"devices": [{"device": "R1", "commands": commands}]}
        outcome = await call(ctx, "run_show_commands", arguments)
    [entry] = outcome.result
    assert entry["status"] == "success"
    assert checks(entry) == [
        ("ping 10.0.0.1", "partial", "timeout"),
        ("ping 10.0.0.1", "ok", None),
        ("ping 10.0.9.9", "failed", "timeout"),
        ("ping nosuch", "failed", "host not found"),
        ("traceroute 10.0.0.1", "ok", None),
        ("traceroute 10.0.9.9", "failed", "timeout"),
        ("traceroute nosuch", "failed", "host not found"),
    ]
    assert entry["outcome"] == "partial"
    turn = kernel_turn("run_show_commands", outcome.result, arguments)
    assert turn.tool_results["R1"].status == "partial"
    summary = turn.tool_calls[0].summary or ""
    assert summary.endswith(
        " · 1 partial · R1: Success rate is 80 percent (4/5) · R1: Success rate is 0 percent (0/5)"
    )


@pytest.mark.lab
@pytest.mark.slow
async def test_every_vpcs_ping_and_trace_failure_is_failed(gns3_project: Any) -> None:
    """Given PC1 - PC2 linked in GNS3; PC1's `ping 10.0.1.2 -c 1` answering "No gateway
    found" (the troubleshooting notebook's fault) is a failed check, red on the card and
    "failed" in `Turn.tool_results`, and so is every other way VPCS reports that nothing
    got through; answered pings and traces are ok."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        nodes = [{"template": "VPCS", "name": name} for name in ("PC1", "PC2")]
        assert (await call(ctx, "create_nodes", {"nodes": nodes})).ok
        assert (await call(ctx, "create_links", {"links": [PC1_PC2]})).ok
        assert (await call(ctx, "start_nodes", {"nodes": ["*"]})).ok

        async def on_pc1(*commands: str, **pc2: list[str]) -> dict[str, Any]:
            devices = [{"device": "PC1", "commands": list(commands)}]
            devices += [{"device": "PC2", "commands": c} for c in pc2.values()]
            arguments = {"devices": devices}
            outcome = await call(ctx, "run_vpcs_commands", arguments)
            entry = by_device(outcome.result)["PC1"]
            assert entry["status"] == "success", entry
            turn = kernel_turn("run_vpcs_commands", outcome.result, arguments)
            assert turn.tool_results["PC1"].status == entry["outcome"]
            entry["summary"] = turn.tool_calls[0].summary
            entry["card"] = turn.tool_calls[0].outcome
            return entry

        unaddressed = await on_pc1("ping 10.0.0.2 -c 1")
        assert checks(unaddressed) == [("ping 10.0.0.2 -c 1", "failed", "address not reachable")]

        addressed = await on_pc1("ip 10.0.0.1/24", pc2=["ip 10.0.0.2/24"])
        assert addressed["outcome"] == "ok"
        assert addressed["summary"] == "set PC1 10.0.0.1/24, PC2 10.0.0.2/24"

        no_gateway = await on_pc1("ping 10.0.1.2 -c 1")
        assert no_gateway["output"].endswith("No gateway found")
        assert checks(no_gateway) == [("ping 10.0.1.2 -c 1", "failed", "no gateway")]
        assert (no_gateway["outcome"], no_gateway["card"]) == ("failed", "failed")
        assert no_gateway["summary"] == (
            "ran `ping 10.0.1.2 -c 1` on PC1 · 1 failed · PC1: No gateway found"
        )

        others = await on_pc1(
            "ping 10.0.0.9 -c 1",
            "ping nosuch -c 1",
            "trace 10.0.1.2",
            "trace 10.0.0.2 -m 2",
            "ping 10.0.0.2 -c 2",
        )
        assert checks(others) == [
            ("ping 10.0.0.9 -c 1", "failed", "address not reachable"),
            ("ping nosuch -c 1", "failed", "host not found"),
            ("trace 10.0.1.2", "failed", "no gateway"),
            ("trace 10.0.0.2 -m 2", "ok", None),
            ("ping 10.0.0.2 -c 2", "ok", None),
        ]
        assert others["outcome"] == "partial"

        down = await call(ctx, "set_link_state", {"links": [PC1_PC2], "state": "down"})
        assert down.ok, down.result
        lost = await on_pc1(
            "ping 10.0.0.2 -c 2",
            "ping 10.0.0.2 -c 1 -P 17",
            "ping 10.0.0.2 -c 1 -P 6",
            "trace 10.0.0.2 -m 2",
        )
        assert checks(lost) == [
            ("ping 10.0.0.2 -c 2", "failed", "timeout"),
            ("ping 10.0.0.2 -c 1 -P 17", "failed", "timeout"),
            ("ping 10.0.0.2 -c 1 -P 6", "failed", "timeout"),
            ("trace 10.0.0.2 -m 2", "failed", "timeout"),
        ]
        assert lost["outcome"] == "failed"

        gateway = await on_pc1("ip 10.0.0.1/24 10.0.0.9", "ping 10.0.1.2 -c 1")
        assert checks(gateway) == [("ping 10.0.1.2 -c 1", "failed", "address not reachable")]
        assert "host (10.0.0.9) not reachable" in gateway["output"]


@pytest.mark.lab
async def test_a_device_type_tag_the_copilot_does_not_know_gives_way_to_the_node_type(
    gns3_project: Any, gns3_http: Any
) -> None:
    """Given a VPCS template whose notes carry GNS3 3.1's built-in VPCS tag
    `device_type:gns3_vpcs_telnet` (GNS3 3.0 keeps no notes on a VPCS node itself), a node
    made from it reads as a VPCS in the topology and takes VPCS commands."""
    usage = "Built-in VPCS.\ndevice_type:gns3_vpcs_telnet"
    created = gns3_http.post(
        "/v3/templates",
        json={
            "name": f"VPCS {gns3_project.name}",
            "template_type": "vpcs",
            "compute_id": "local",
            "usage": usage,
        },
    )
    assert created.status_code == 201, created.text
    template = created.json()
    try:
        async with client_for(gns3_project) as gns3, ConsolePool() as pool:
            ctx = ToolContext(
                gns3=gns3,
                project_id=gns3_project.project_id,
                consoles=pool,
                mode=LAB_AUTOMATION,
            )
            nodes = {"nodes": [{"template": template["name"], "name": "PC1"}]}
            made = await call(ctx, "create_nodes", nodes)
            assert made.result["nodes"][0]["dialect"] == "vpcs", made.result
            assert (await call(ctx, "start_nodes", {"nodes": ["PC1"]})).ok
            topology = await call(ctx, "get_topology", {})
            assert topology.result["nodes"][0]["dialect"] == "vpcs"
            arguments = {"devices": [{"device": "PC1", "commands": ["show ip"]}]}
            shown = await call(ctx, "run_vpcs_commands", arguments)
    finally:
        gns3_http.delete(f"/v3/templates/{template['template_id']}")
    [entry] = shown.result
    assert entry["outcome"] == "ok", entry
    assert "IP/MASK" in entry["output"]
