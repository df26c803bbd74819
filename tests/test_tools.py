"""The copilot's tools.

Lab tests (`@pytest.mark.lab`) drive REAL VPCS nodes through the real gns3-server of the
`gns3_lab`/`gns3_project` fixtures: every console byte goes through GNS3's telnet proxy.
Cisco IOS cannot run here, so the IOS tests use the scripted telnet TEST DOUBLE
(`jupyter_gns3_copilot.testing.ios_double`), reached through the context's
`console_targets` hook. The rest is pure: catalogue, schemas, argument errors, modes,
placement and skills lookup.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.tools import by_device, call, client_for, offline_context

from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget
from jupyter_gns3_copilot.gns3.layout import SPACING as LAYOUT_SPACING
from jupyter_gns3_copilot.testing.ios_double import IOSDouble
from jupyter_gns3_copilot.tools import (
    LAB_AUTOMATION,
    TEACHING,
    TOOLS,
    SkillsLibrary,
    ToolContext,
    openai_tool_schema,
    tools_for_mode,
)
from jupyter_gns3_copilot.tools.command_tools import split_commands
from jupyter_gns3_copilot.tools.node_tools import SPACING, free_spot
from jupyter_gns3_copilot.tools.placement import follows_layout
from jupyter_gns3_copilot.tools.registry import call_changes_lab, changes_lab_with, unallowed_work

CATALOGUE = [
    "get_topology",
    "list_templates",
    "create_nodes",
    "create_links",
    "start_nodes",
    "stop_nodes",
    "suspend_nodes",
    "reload_nodes",
    "rename_nodes",
    "run_show_commands",
    "run_config_commands",
    "run_vpcs_commands",
    "device_skills",
    "check_objectives",
    "start_capture",
    "stop_capture",
    "analyze_capture",
    "list_snapshots",
    "create_snapshot",
    "restore_snapshot",
    "delete_nodes",
    "delete_links",
    "set_link_state",
    "set_link_filter",
]
TEACHING_TOOLS = [
    "get_topology",
    "list_templates",
    "create_nodes",
    "create_links",
    "start_nodes",
    "rename_nodes",
    "run_show_commands",
    "device_skills",
    "check_objectives",
    "start_capture",
    "stop_capture",
    "analyze_capture",
    "list_snapshots",
    "create_snapshot",
]
ADDRESSES = {"PC1": "10.0.0.1", "PC2": "10.0.0.2", "PC3": "10.0.0.3"}


# -- pure -------------------------------------------------------------------------------


def test_the_catalogue_and_its_modes() -> None:
    assert list(TOOLS) == CATALOGUE
    assert [spec.name for spec in tools_for_mode(TEACHING)] == TEACHING_TOOLS
    assert [spec.name for spec in tools_for_mode(LAB_AUTOMATION)] == CATALOGUE
    with pytest.raises(ValueError, match="Unknown copilot mode 'expert'"):
        tools_for_mode("expert")
    changing = {name for name, spec in TOOLS.items() if spec.changes_lab}
    assert changing == {
        "create_nodes",
        "create_links",
        "start_nodes",
        "stop_nodes",
        "suspend_nodes",
        "reload_nodes",
        "rename_nodes",
        "restore_snapshot",
        "delete_nodes",
        "delete_links",
        "set_link_state",
        "set_link_filter",
    }


def test_a_snapshot_that_stops_the_lab_is_a_lab_change_of_lab_mode() -> None:
    """`create_snapshot` changes nothing, unless it may stop and restart running nodes:
    then it does what stop_nodes and start_nodes do (a lab change, run alone in its
    reply), which teaching mode does not allow."""
    spec = TOOLS["create_snapshot"]
    plain = spec.args_model.model_validate({"name": "before"})
    stopping = spec.args_model.model_validate({"name": "before", "stop_running": True})
    assert not changes_lab_with(spec, plain) and changes_lab_with(spec, stopping)
    assert unallowed_work(TEACHING, spec, plain) is None
    assert unallowed_work(TEACHING, spec, stopping) == "stop_nodes"
    assert unallowed_work(LAB_AUTOMATION, spec, stopping) is None
    assert not call_changes_lab("create_snapshot", {"name": "before"})
    assert call_changes_lab("create_snapshot", '{"name": "before", "stop_running": true}')
    assert not call_changes_lab("create_snapshot", {"name": "before", "stop_running": "x"})
    assert call_changes_lab("start_nodes", {}) and call_changes_lab("no_such_tool", {})
    assert not call_changes_lab("run_show_commands", {})


def _undescribed(schema: dict[str, Any], where: str) -> list[str]:
    missing = []
    for name, prop in schema.get("properties", {}).items():
        if not prop.get("description"):
            missing.append(f"{where}.{name}")
        items = prop.get("items", {})
        if items.get("type") == "object":
            missing += _undescribed(items, f"{where}.{name}[]")
    return missing


@pytest.mark.parametrize("name", CATALOGUE)
def test_every_tool_has_a_described_openai_schema(name: str) -> None:
    schema = openai_tool_schema(TOOLS[name])
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == name and len(function["description"]) > 30
    parameters = function["parameters"]
    assert parameters["type"] == "object" and parameters["additionalProperties"] is False
    assert _undescribed(parameters, name) == []
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and '"title"' not in text
    assert '"anyOf"' not in text
    # The model's schema leaves the length and count bounds to the argument model.
    assert not {"minLength", "maxLength", "minItems", "maxItems"} & set(
        re.findall(r'"(\w+)":', text)
    )


def test_fixed_argument_shapes() -> None:
    def properties(name: str) -> dict[str, Any]:
        return openai_tool_schema(TOOLS[name])["function"]["parameters"]["properties"]

    assert properties("get_topology") == {}
    assert set(properties("create_nodes")["nodes"]["items"]["properties"]) == {
        "template",
        "name",
        "x",
        "y",
        "compute",
    }
    assert set(properties("create_links")["links"]["items"]["properties"]) == {
        "a",
        "a_port",
        "b",
        "b_port",
    }
    for name in ("start_nodes", "stop_nodes", "suspend_nodes", "reload_nodes"):
        assert properties(name)["nodes"]["items"] == {"type": "string"}
    assert set(properties("rename_nodes")["nodes"]["items"]["properties"]) == {"name", "new_name"}
    for name in ("run_show_commands", "run_config_commands", "run_vpcs_commands"):
        item = properties(name)["devices"]["items"]
        assert set(item["properties"]) == {"device", "commands"}
        assert item["required"] == ["device", "commands"]


@pytest.mark.parametrize("tool", ["run_show_commands", "run_config_commands"])
async def test_oversized_command_arguments_never_reach_a_console(tool: str) -> None:
    """Given a reachable console; when a call carries a 100,000-character command, 101
    lines for one device or 65 devices, then it is refused naming the limit, and the
    device receives nothing."""
    async with IOSDouble() as router:
        ctx = offline_context(mode=LAB_AUTOMATION, console_targets={"R1": router.target()})
        async with ctx.gns3, ctx.consoles:
            huge = await call(
                ctx, tool, {"devices": [{"device": "R1", "commands": ["x" * 100_000]}]}
            )
            many = await call(
                ctx, tool, {"devices": [{"device": "R1", "commands": ["show clock\n" * 101]}]}
            )
            wide = await call(
                ctx, tool, {"devices": [{"device": "R1", "commands": ["show clock"]}] * 65}
            )
        assert router.commands == []
    assert not (huge.ok or many.ok or wide.ok)
    assert huge.result["error"] == (
        f"Invalid arguments for {tool}: devices.0.commands: Value error, command 1 has a line "
        "of 100000 characters; a console command may have at most 512."
    )
    assert many.result["error"] == (
        f"Invalid arguments for {tool}: devices.0.commands: Value error, 101 command lines for "
        "one device; at most 100 per call (split the work into several calls)."
    )
    assert wide.result["error"] == (
        f"Invalid arguments for {tool}: devices: List should have at most 64 items after "
        "validation, not 65."
    )


async def test_execute_tool_answers_every_expected_problem_without_raising() -> None:
    ctx = offline_context(mode=TEACHING)
    async with ctx.gns3, ctx.consoles:
        unknown = await call(ctx, "fly", {})
        assert not unknown.ok and "Unknown tool 'fly'" in unknown.result["error"]

        for name in ("stop_nodes", "run_config_commands", "run_vpcs_commands"):
            refused = await call(ctx, name, {"nodes": ["PC1"]})
            assert not refused.ok and not refused.changed_lab
            assert refused.result["status"] == "refused"
            assert f"{name} is not allowed in teaching_assistant mode" in refused.result["error"]
            assert "lab_automation_assistant" in refused.result["error"]

        invalid = await call(ctx, "create_links", {"links": [{"a": "PC1", "a_port": "e0"}]})
        assert invalid.result["error"] == (
            "Invalid arguments for create_links: links.0.b: Field required; "
            "links.0.b_port: Field required."
        )
        extra = await call(ctx, "start_nodes", {"nodes": ["PC1"], "project_id": "x"})
        assert "project_id: Extra inputs are not permitted" in extra.result["error"]
        empty = await call(ctx, "start_nodes", {"nodes": []})
        assert "nodes: List should have at least 1 item" in empty.result["error"]
        broken = await call(ctx, "start_nodes", '{"nodes": [')
        assert "not valid JSON" in broken.result["error"]

        unreachable = await call(ctx, "start_nodes", '{"nodes": ["PC1"]}')
        assert not unreachable.ok and unreachable.changed_lab
        assert unreachable.result["status"] == "error"
        assert "Cannot reach the GNS3 server" in unreachable.result["error"]

    with pytest.raises(ValueError, match="Unknown copilot mode"):
        offline_context(mode="root")


def test_configuration_batches_drop_blank_and_comment_lines_on_ios_like_dialects() -> None:
    """A pasted configuration is split into its lines; blank lines go everywhere, `!`
    comment lines on IOS and FRR (both write them in `show running-config`), but not on
    VPCS or Linux, where `!` means something else."""
    pasted = ["!\nrouter ospf\n ospf router-id 1.1.1.1\n!\n\n", "  ! a note", "end"]
    expected = ["router ospf", "ospf router-id 1.1.1.1", "end"]
    assert split_commands(pasted, "frr") == expected
    assert split_commands(pasted, "cisco_ios") == expected
    for dialect in ("vpcs", "linux", None):
        assert split_commands(pasted, dialect)[:2] == ["!", "router ospf"]
        assert "" not in split_commands(pasted, dialect)


def test_free_spots_keep_their_distance() -> None:
    taken = [(-500, -250), (-250, -250), (10, -240)]
    spots: list[tuple[int, int]] = []
    for _ in range(8):
        spot = free_spot(taken + spots)
        assert all(
            abs(spot[0] - x) >= SPACING or abs(spot[1] - y) >= SPACING for x, y in taken + spots
        )
        spots.append(spot)
    assert len(set(spots)) == 8
    assert free_spot(taken, x=-500)[0] == -500
    assert free_spot(taken, y=-250)[1] == -250
    assert free_spot(taken, 3, 4) == (3, 4)


def test_skills_lookup_goes_index_topics_text(tmp_path: Path) -> None:
    skills = SkillsLibrary()
    index = skills.lookup(None, None)
    topics = {entry["device_type"]: entry["topics"] for entry in index["device_types"]}
    assert topics == {
        "cisco_ios": ["addressing", "ospf", "troubleshooting", "vlans"],
        "frr": ["addressing", "ospf"],
        "vpcs": ["addressing", "troubleshooting"],
    }

    listing = skills.lookup("VPCS", None)
    assert listing["device_type"] == "vpcs"
    assert [t["topic"] for t in listing["topics"]] == ["addressing", "troubleshooting"]
    assert all(t["title"] and t["summary"] for t in listing["topics"])

    ospf = skills.lookup("ios", "OSPF")
    assert ospf["title"] == "OSPF on Cisco IOS"
    assert "router ospf 1" in ospf["content"] and not ospf["content"].startswith("---")
    assert skills.lookup("cisco_ios", "vlan")["topic"] == "vlans"
    assert skills.lookup("cisco_ios", "ip address")["topic"] == "addressing"
    assert skills.lookup(None, "vlans")["device_type"] == "cisco_ios"
    frr_ospf = skills.lookup("frr_vtysh", "ospf")["content"]
    assert "router ospf\n" in frr_ospf and "network 10.0.12.0/24 area 0" in frr_ospf
    frr_addresses = skills.lookup("frr", "ip address")["content"]
    assert "ip address 10.0.12.1/24" in frr_addresses and "show interface brief" in frr_addresses

    missing = skills.lookup("vpcs", "bgp")
    assert missing["status"] == "failed" and [t["topic"] for t in missing["topics"]] == [
        "addressing",
        "troubleshooting",
    ]
    assert skills.lookup("juniper", None)["device_types"] == ["cisco_ios", "frr", "vpcs"]

    (tmp_path / "vpcs").mkdir()
    (tmp_path / "vpcs" / "addressing.md").write_text(
        "---\ntitle: Our class's addressing plan\nsummary: 10.CLASS.ROW.0/24\n---\nUse it.\n"
    )
    extended = SkillsLibrary([tmp_path])
    assert extended.lookup("vpcs", "addressing")["content"] == "Use it."
    (tmp_path / "arista_eos").mkdir()
    (tmp_path / "arista_eos" / "mlag.md").write_text("No header at all.\n")
    assert extended.reload() == 9
    assert extended.lookup("arista-eos", "mlag") == {
        "device_type": "arista_eos",
        "topic": "mlag",
        "title": "Mlag",
        "content": "No header at all.",
    }


async def test_ios_show_and_config_commands_on_the_ios_test_double() -> None:
    """Given R1 (the IOS test double); teaching mode runs diagnostics and blocks the rest;
    automation mode configures it with one `configure terminal` and one `end`, whatever the
    model wrote around its lines, and refuses an `exit` that would log out."""
    async with IOSDouble(hostname="R1") as router:
        ctx = offline_context(mode=TEACHING, console_targets={"R1": router.target()})
        async with ctx.gns3, ctx.consoles:
            shown = await call(
                ctx,
                "run_show_commands",
                {
                    "devices": [
                        {
                            "device": "R1",
                            "commands": [
                                "show ip interface brief",
                                "conf t",
                                "show running-config | redirect flash:x",
                            ],
                        }
                    ]
                },
            )
            [entry] = shown.result
            assert entry["status"] == "partial_success"
            assert "GigabitEthernet0/0" in entry["output"]
            assert [b["command"] for b in entry["blocked_commands"]] == [
                "conf t",
                "show running-config | redirect flash:x",
            ]
            assert "would enter configuration mode" in entry["blocked_commands"][0]["reason"]
            assert "2 of 3 commands were not sent" in entry["blocked_info"]
            assert "conf t" not in router.commands and "configure terminal" not in router.commands

            ctx.mode = LAB_AUTOMATION
            before = len(router.commands)
            configured = await call(
                ctx,
                "run_config_commands",
                {
                    "devices": [
                        {
                            "device": "R1",
                            "commands": [
                                "configure terminal",
                                "interface GigabitEthernet0/0\n"
                                " ip address 10.0.0.1 255.255.255.0\n"
                                " no shutdown\n"
                                " exit",
                                "!",
                                "enable secret hunter2",
                                "exit",
                                "exit",
                                "end",
                                "write memory",
                                "exit",
                            ],
                        }
                    ]
                },
            )
            [entry] = configured.result
            assert router.commands[before:] == [
                "configure terminal",
                "interface GigabitEthernet0/0",
                "ip address 10.0.0.1 255.255.255.0",
                "no shutdown",
                "exit",
                "end",
                "write memory",
            ]
            assert entry["status"] == "partial_success", entry
            assert [b["command"] for b in entry["blocked_commands"]] == [
                "enable secret hunter2",
                "exit",
            ]
            assert "enable password is managed" in entry["blocked_commands"][0]["reason"]
            assert "would end the console session" in entry["blocked_commands"][1]["reason"]
            assert (
                "[handled by the tool: already at the top of configuration mode" in entry["output"]
            )
            assert "[OK]" in entry["output"]
            assert "error" not in entry

            ctx.mode = TEACHING
            ctx.max_output_chars = 300
            checked = await call(
                ctx,
                "run_show_commands",
                {
                    "devices": [
                        {"device": "R1", "commands": ["show ip interface brief", "show version"]}
                    ]
                },
            )
            [entry] = checked.result
            assert entry["status"] == "success"
            assert "GigabitEthernet0/0         10.0.0.1        YES manual up" in entry["output"]
            assert "characters cut; narrow the command" in entry["output"]
            assert len(entry["output"]) < 500


# -- real lab ----------------------------------------------------------------------------


@pytest.mark.lab
async def test_created_nodes_get_the_drawings_layout_in_gns3_unless_a_person_moved_one(
    gns3_project: Any,
) -> None:
    """Given an empty project; when create_nodes makes PC1, PC2 and Switch1 and create_links
    links both PCs to the switch; then GNS3 holds the drawing's layout at each step (the
    links turn the row into a star: the PCs below the switch, left and right of it). When
    a person then moves PC1, the next create_nodes / create_links leave every node where
    it is and put PC3 on a free spot."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        names = ["PC1", "PC2", "Switch1"]
        templates = {"PC1": "VPCS", "PC2": "VPCS", "Switch1": "Ethernet switch"}
        created = await call(
            ctx, "create_nodes", {"nodes": [{"template": templates[n], "name": n} for n in names]}
        )
        assert created.result["status"] == "success", created.result
        topology = await gns3.get_topology(gns3_project.project_id)
        assert follows_layout(topology)
        reported = {n["name"]: (n["x"], n["y"]) for n in created.result["nodes"]}
        assert reported == {n.name: (n.x, n.y) for n in topology.nodes}

        linked = await call(
            ctx,
            "create_links",
            {
                "links": [
                    {"a": pc, "a_port": "e0", "b": "Switch1", "b_port": f"e{i}"}
                    for i, pc in enumerate(["PC1", "PC2"])
                ]
            },
        )
        assert linked.result["status"] == "success", linked.result
        assert linked.result["moved"]
        topology = await gns3.get_topology(gns3_project.project_id)
        assert follows_layout(topology)
        at = {n.name: (n.x, n.y) for n in topology.nodes}
        assert at["PC1"][1] > at["Switch1"][1] and at["PC2"][1] > at["Switch1"][1]
        assert at["PC1"][0] < at["Switch1"][0] < at["PC2"][0]

        pc1 = next(n for n in topology.nodes if n.name == "PC1")
        await gns3.update_node(gns3_project.project_id, pc1.node_id, x=900, y=-400)
        more = await call(ctx, "create_nodes", {"nodes": [{"template": "VPCS", "name": "PC3"}]})
        assert more.result["status"] == "success", more.result
        relinked = await call(
            ctx,
            "create_links",
            {"links": [{"a": "PC3", "a_port": "e0", "b": "Switch1", "b_port": "e2"}]},
        )
        assert relinked.result["status"] == "success" and "moved" not in relinked.result
        after = {n.name: (n.x, n.y) for n in await gns3.list_nodes(gns3_project.project_id)}
        assert after["PC1"] == (900, -400)
        assert {k: after[k] for k in ("PC2", "Switch1")} == {k: at[k] for k in ("PC2", "Switch1")}
        assert all(
            abs(after["PC3"][0] - x) >= SPACING or abs(after["PC3"][1] - y) >= SPACING
            for name, (x, y) in after.items()
            if name != "PC3"
        )


@pytest.mark.lab
@pytest.mark.slow
async def test_build_start_address_and_diagnose_a_vpcs_lab(gns3_project: Any) -> None:
    """Given an empty project; the tools build 3 VPCS behind a switch, start them waiting
    for their prompts, address them (automation mode), and diagnose them (teaching mode), where
    changes, stop_nodes and renaming a running node are refused with explanations."""
    progress: list[dict[str, Any]] = []
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3,
            project_id=gns3_project.project_id,
            consoles=pool,
            mode=LAB_AUTOMATION,
            progress=progress.append,
        )
        created = await call(
            ctx,
            "create_nodes",
            {
                "nodes": [
                    *({"template": "VPCS", "name": name} for name in ADDRESSES),
                    {"template": "Ethernet switch", "name": "Switch1"},
                ]
            },
        )
        assert created.ok and created.changed_lab
        nodes = created.result["nodes"]
        assert [n["name"] for n in nodes] == [*ADDRESSES, "Switch1"]
        assert all(n["status"] == "success" for n in nodes)
        assert nodes[0]["ports"] == ["e0"] and nodes[0]["dialect"] == "vpcs"
        spots = [(n["x"], n["y"]) for n in nodes]
        assert all(
            abs(a[0] - b[0]) >= LAYOUT_SPACING or abs(a[1] - b[1]) >= LAYOUT_SPACING
            for i, a in enumerate(spots)
            for b in spots[i + 1 :]
        )

        linked = await call(
            ctx,
            "create_links",
            {
                "links": [
                    {"a": name, "a_port": "e0", "b": "Switch1", "b_port": f"Ethernet{index}"}
                    for index, name in enumerate(ADDRESSES)
                ]
            },
        )
        assert [link["link"] for link in linked.result["links"]] == [
            "PC1 e0 <-> Switch1 e0",
            "PC2 e0 <-> Switch1 e1",
            "PC3 e0 <-> Switch1 e2",
        ]

        progress.clear()
        started = await call(ctx, "start_nodes", {"nodes": ["*"]})
        assert started.result["status"] == "success", started.result
        entries = {entry["name"]: entry for entry in started.result["nodes"]}
        for name in ADDRESSES:
            assert entries[name]["console_ready"] is True
            assert entries[name]["node_status"] == "started"
            messages = [e["message"] for e in progress if e.get("node") == name]
            assert messages.index(f"waiting for {name}'s console") < messages.index(
                f"{name} is ready"
            )
        assert entries["Switch1"]["note"] == "no telnet console to wait for"
        assert all(e["tool"] == "start_nodes" and e["elapsed"] >= 0 for e in progress)

        addressed = await call(
            ctx,
            "run_vpcs_commands",
            {
                "devices": [
                    {"device": name, "commands": [f"ip {address}/24 10.0.0.254"]}
                    for name, address in ADDRESSES.items()
                ]
            },
        )
        assert [e["status"] for e in addressed.result] == ["success"] * 3, addressed.result

        ctx.mode = TEACHING
        diagnosed = await call(
            ctx,
            "run_show_commands",
            {
                "devices": [
                    {"device": "PC1", "commands": ["show ip", "ping 10.0.0.2 -c 1"]},
                    {"device": "PC2", "commands": ["ip 10.0.0.9/24"]},
                    {"device": "PC9", "commands": ["show ip"]},
                ]
            },
        )
        results = by_device(diagnosed.result)
        assert list(results) == ["PC1", "PC2", "PC9"]
        assert results["PC1"]["status"] == "success"
        assert "IP/MASK     : 10.0.0.1/24" in results["PC1"]["output"]
        assert "10.0.0.2 icmp_seq=1 ttl=64" in results["PC1"]["output"]
        assert results["PC2"]["status"] == "failed"
        assert results["PC2"]["error"].startswith("Every command was blocked")
        [refusal] = results["PC2"]["blocked_commands"]
        assert refusal["command"] == "ip 10.0.0.9/24"
        assert "teaching_assistant mode only runs diagnostic commands" in refusal["reason"]
        assert results["PC9"]["status"] == "failed"
        assert results["PC9"]["error"] == (
            "No node named 'PC9' in this project. Nodes: PC1, PC2, PC3, Switch1."
        )

        unchanged = await call(
            ctx,
            "run_show_commands",
            {"devices": [{"device": "PC2", "commands": ["show ip", "history"]}]},
        )
        [entry] = unchanged.result
        assert entry["status"] == "success"
        assert "IP/MASK     : 10.0.0.2/24" in entry["output"]
        assert "10.0.0.9" not in entry["output"], "the blocked command reached the device"

        refused = await call(ctx, "stop_nodes", {"nodes": ["PC1"]})
        assert refused.result["status"] == "refused" and not refused.changed_lab
        renamed = await call(ctx, "rename_nodes", {"nodes": [{"name": "PC1", "new_name": "Host1"}]})
        assert not renamed.ok
        [entry] = renamed.result["nodes"]
        assert entry["status"] == "failed"
        assert "not possible to rename a node that is already powered on" in entry["error"]
        topology = await call(ctx, "get_topology", {})
        statuses = {node["name"]: node["status"] for node in topology.result["nodes"]}
        assert statuses == {
            "PC1": "started",
            "PC2": "started",
            "PC3": "started",
            "Switch1": "started",
        }
        assert "PC1 e0 <-> Switch1 e0" in topology.result["text"]

        skills = await call(ctx, "device_skills", {"device_type": "PC1"})
        assert skills.result["device_type"] == "vpcs"

        ctx.mode = LAB_AUTOMATION
        guarded = await call(
            ctx,
            "run_vpcs_commands",
            {
                "devices": [
                    {
                        "device": "PC3",
                        "commands": ["!touch /tmp/x", "relay add 2000 2001", "show ip"],
                    }
                ]
            },
        )
        [entry] = guarded.result
        assert entry["status"] == "partial_success"
        assert [b["command"] for b in entry["blocked_commands"]] == [
            "!touch /tmp/x",
            "relay add 2000 2001",
        ]
        assert "GNS3 host" in entry["blocked_commands"][0]["reason"]
        assert entry["blocked_commands"][1]["reason"].startswith("forbidden by the command policy")
        assert entry["output"].startswith("PC3> show ip")

        reloaded = await call(ctx, "reload_nodes", {"nodes": ["PC3"]})
        assert reloaded.result["nodes"][0]["console_ready"] is True
        after = await call(
            ctx, "run_show_commands", {"devices": [{"device": "PC3", "commands": ["show ip"]}]}
        )
        assert "IP/MASK     : 0.0.0.0/0" in after.result[0]["output"], "unsaved address survived"


@pytest.mark.lab
async def test_abort_stops_start_nodes_while_it_waits_for_a_prompt(gns3_project: Any) -> None:
    """Given a VPCS whose console (mapped to a silent telnet port) never shows a prompt;
    when the abort event is set while start_nodes waits, then the tool returns at once
    with the node aborted, long before its boot timeout."""
    abort = asyncio.Event()
    progress: list[dict[str, Any]] = []

    def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        asyncio.get_running_loop().call_later(0.3, abort.set)

    silent = await asyncio.start_server(connected, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    async with silent, client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3,
            project_id=gns3_project.project_id,
            consoles=pool,
            abort=abort,
            progress=progress.append,
            console_targets={
                "PC1": ConsoleTarget(name="PC1", host="127.0.0.1", port=port, dialect="vpcs")
            },
            boot_timeout=3600,
        )
        await call(ctx, "create_nodes", {"nodes": [{"template": "VPCS", "name": "PC1"}]})
        outcome = await call(ctx, "start_nodes", {"nodes": ["PC1"]})
        assert not outcome.ok and outcome.result["status"] == "aborted"
        [entry] = outcome.result["nodes"]
        assert entry["status"] == "aborted" and entry["console_ready"] is False
        assert "waiting for PC1's console" in [e["message"] for e in progress]
        node = await gns3.find_node(gns3_project.project_id, "PC1")
        assert node.status == "started"


async def test_abort_stops_configuration_in_the_middle_of_a_slow_command() -> None:
    """Given a configuration whose third line the device answers only after a minute;
    when the abort event is set meanwhile, the tool returns with the lines sent so far, the
    interrupted one and the ones never sent; the console works again for the next call."""
    async with IOSDouble(hostname="R1", delays={"hostname SLOW": 60}) as router:
        abort = asyncio.Event()
        ctx = offline_context(
            mode=LAB_AUTOMATION, abort=abort, console_targets={"R1": router.target()}
        )
        async with ctx.gns3, ctx.consoles:
            configuring = asyncio.ensure_future(
                call(
                    ctx,
                    "run_config_commands",
                    {
                        "devices": [
                            {
                                "device": "R1",
                                "commands": [
                                    "interface g0/1",
                                    "no shutdown",
                                    "hostname SLOW",
                                    "hostname R9",
                                ],
                            }
                        ]
                    },
                )
            )
            await router.wait_for_command("hostname SLOW")
            abort.set()
            [entry] = (await configuring).result
            assert entry["status"] == "partial_success"
            assert entry["error"] == (
                "hostname SLOW: Stopped: the request was aborted. The command was interrupted "
                "and the console is back at its prompt.\nnot run after that: hostname R9"
            )
            assert "hostname R9" not in router.commands
            assert router.interrupts == ["\x1e"]

            abort.clear()
            again = await call(
                ctx,
                "run_show_commands",
                {"devices": [{"device": "R1", "commands": ["show ip interface brief"]}]},
            )
            assert again.result[0]["status"] == "success"
            assert (
                "GigabitEthernet0/1         unassigned      YES unset  up"
                in (again.result[0]["output"])
            )
