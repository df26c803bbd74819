"""Lab objectives checked on the real devices (`objectives/runner.py`, `checks.py`).

Lab tests drive REAL VPCS nodes through the real gns3-server of the `gns3_project` fixture;
IOS is the scripted telnet TEST DOUBLE (`testing.ios_double`), reached through the tool
context's `console_targets` hook (no IOS image runs here).
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.consoles import linux_shell
from support.tools import offline_context

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.objectives.errors import UnknownSelection
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.results import CheckReport, CheckVerdict, combined
from jupyter_gns3_copilot.objectives.runner import check_lab, report
from jupyter_gns3_copilot.testing.ios_double import IOSDouble
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, TEACHING, ToolContext, execute_tool

EXAMPLE_LAB = Path(__file__).parents[1] / "notebooks" / "04-graded-lab.lab.yaml"
LAB = textwrap.dedent(
    """\
    title: Checks on real devices
    stages:
      - id: build
        title: Build the lab
        objectives:
          - {id: pc1-runs, text: PC1 runs, check: {kind: node_running, node: PC1}}
          - {id: pc3-runs, text: PC3 runs, check: {kind: node_running, node: PC3}}
          - {id: linked, text: PC1 is cabled, check: {kind: link, between: [PC1, Switch1]}}
          - id: linked-ports
            text: PC1 e0 goes to Switch1 e0
            check: {kind: link, between: [[PC1, e0], [Switch1, Ethernet0]]}
          - id: wrong-ports
            text: PC1 e0 goes to Switch1 e5
            check: {kind: link, between: [[PC1, e0], [Switch1, e5]]}
          - {id: no-link, text: PC1 and PC2 cabled, check: {kind: link, between: [PC1, PC2]}}
      - id: addressing
        title: Address the PCs
        objectives:
          - id: pc1-address
            text: PC1 has 10.0.0.1/24
            points: 2
            check: {kind: address, node: PC1, address: 10.0.0.1/24}
          - id: pc1-wrong
            text: PC1 has 10.0.0.9/24
            check: {kind: address, node: PC1, address: 10.0.0.9/24}
          - id: pc2-none
            text: PC2 has an address
            check: {kind: address, node: PC2, address: 10.0.0.2/24}
          - id: pc3-stopped
            text: PC3 has an address
            check: {kind: address, node: PC3, address: 10.0.0.3/24}
          - id: gateway
            text: PC1 has its gateway
            check: {kind: command, node: PC1, command: show ip, contains: 10.0.0.254}
          - id: gateway-regex
            text: PC1's gateway, by regex
            check:
              kind: command
              node: PC1
              command: show ip
              regex: 'GATEWAY\\s*: 10\\.0\\.0\\.254$'
          - id: not-old
            text: PC1 no longer has 10.0.0.1
            check: {kind: command, node: PC1, command: show ip, not_contains: 10.0.0.1/}
          - id: no-template
            text: parsed VPCS output
            check: {kind: parsed, node: PC1, command: show ip, match: {ip: 10.0.0.1}}
          - id: both
            text: PC1 and PC2 addressed
            all:
              - {kind: address, node: PC1, address: 10.0.0.1/24}
              - {kind: address, node: PC2, address: 10.0.0.2/24}
          - id: either
            text: PC1 or PC2 addressed
            any:
              - {kind: address, node: PC2, address: 10.0.0.2/24}
              - {kind: address, node: PC1, address: 10.0.0.1/24}
      - id: router
        title: The router
        objectives:
          - id: r1-address
            text: R1 Gi0/0 has 10.0.12.1/24
            check: {kind: address, node: R1, interface: Gi0/0, address: 10.0.12.1/24}
          - id: r1-brief
            text: Gi0/0 is up with its address
            check:
              kind: parsed
              node: R1
              command: show ip interface brief
              match: {interface: /GigabitEthernet0.0/, ip_address: 10.0.12.1, status: up}
          - id: r1-down
            text: three interfaces are down
            check:
              kind: parsed
              node: R1
              command: show ip interface brief
              match: {status: /down/}
              expect: 3
          - id: r1-bad-field
            text: a field the template does not have
            check: {kind: parsed, node: R1, command: show ip interface brief, match: {nbr: x}}
    """
)


def client_for(project: Any) -> GNS3Client:
    return GNS3Client(
        project.url, username=project.username, password=project.password, token=project.token
    )


@asynccontextmanager
async def checked_lab(gns3_project: Any) -> AsyncIterator[tuple[ToolContext, IOSDouble]]:
    """PC1, PC2 (started, PC1 addressed), PC3 (stopped) on Switch1, and R1 (the IOS double)
    with Gi0/0 addressed and up."""
    project_id = gns3_project.project_id
    async with IOSDouble(hostname="R1") as router, client_for(gns3_project) as gns3:
        for name in ("PC1", "PC2", "PC3"):
            await gns3.create_node_from_template(project_id, "VPCS", name)
        await gns3.create_node_from_template(project_id, "ethernet_switch", "Switch1")
        for index, name in enumerate(("PC1", "PC2", "PC3")):
            await gns3.create_link(project_id, name, "e0", "Switch1", f"e{index}")
        nodes = {n.name: n for n in await gns3.list_nodes(project_id)}
        for name in ("PC1", "PC2", "Switch1"):
            await gns3.start_node(project_id, nodes[name].node_id)
        async with ConsolePool() as consoles:
            setup = ToolContext(
                gns3=gns3,
                project_id=project_id,
                consoles=consoles,
                mode=LAB_AUTOMATION,
                console_targets={"R1": router.target()},
            )
            configured = await execute_tool(
                setup,
                "run_vpcs_commands",
                {"devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24 10.0.0.254"]}]},
            )
            assert configured.ok, configured.result
            configured = await execute_tool(
                setup,
                "run_config_commands",
                {
                    "devices": [
                        {
                            "device": "R1",
                            "commands": [
                                "interface Gi0/0",
                                "ip address 10.0.12.1 255.255.255.0",
                                "no shutdown",
                            ],
                        }
                    ]
                },
            )
            assert configured.ok, configured.result
            checking = ToolContext(
                gns3=gns3,
                project_id=project_id,
                consoles=consoles,
                mode=TEACHING,
                console_targets={"R1": router.target()},
            )
            yield checking, router


@pytest.mark.lab
async def test_every_check_kind_passes_fails_or_says_why_not(gns3_project: Any) -> None:
    lab = load_lab(LAB).lab
    async with checked_lab(gns3_project) as (ctx, router):
        result = await report(ctx.devices, ctx.project_id, lab)
    by_id = {r.id: r for r in result.results}
    statuses = {r.id: r.status for r in result.results}
    assert statuses == {
        "pc1-runs": "pass",
        "pc3-runs": "fail",
        "linked": "pass",
        "linked-ports": "pass",
        "wrong-ports": "fail",
        "no-link": "fail",
        "pc1-address": "pass",
        "pc1-wrong": "fail",
        "pc2-none": "fail",
        "pc3-stopped": "error",
        "gateway": "pass",
        "gateway-regex": "pass",
        "not-old": "fail",
        "no-template": "error",
        "both": "fail",
        "either": "pass",
        "r1-address": "pass",
        "r1-brief": "pass",
        "r1-down": "pass",
        "r1-bad-field": "error",
    }, {r.id: r.explanation for r in result.results if r.status == "error"}
    assert by_id["pc3-runs"].explanation == "PC3 is stopped."
    assert by_id["wrong-ports"].explanation == (
        "PC1 and Switch1 are linked (PC1 e0 - Switch1 e0), but not PC1 e0 to Switch1 e5."
    )
    assert by_id["pc1-wrong"].explanation == "PC1 has 10.0.0.1/24, not 10.0.0.9/24."
    assert by_id["pc2-none"].explanation == "PC2 has no IPv4 address."
    # the line that decided it: VPCS's unconfigured address
    assert [" ".join(line.split()) for line in by_id["pc2-none"].evidence[0].lines] == [
        "IP/MASK : 0.0.0.0/0"
    ]
    assert by_id["pc3-stopped"].explanation == "PC3 is stopped; start it to check this."
    assert "There is no parser for `show ip` on vpcs devices" in by_id["no-template"].explanation
    assert "no field nbr (fields: " in by_id["r1-bad-field"].explanation
    # a parsed check says its match in words, never as a pattern
    assert by_id["r1-brief"].explanation == (
        "`show ip interface brief` on R1: 1 of 4 rows with interface as the objective asks "
        "and ip_address 10.0.12.1 and status up (as expected)."
    )
    assert by_id["r1-down"].explanation == (
        "`show ip interface brief` on R1: 3 of 4 rows with status like down (as expected)."
    )
    evidence = by_id["pc1-address"].evidence[0]
    assert (evidence.node, evidence.command) == ("PC1", "show ip")
    assert any("10.0.0.1/24" in line for line in evidence.lines)
    assert by_id["both"].explanation == "PC2 has no IPv4 address."
    assert by_id["pc1-address"].points_awarded == 2 and by_id["pc1-wrong"].points_awarded == 0
    # the summary
    assert (result.score, result.max_score, result.passed) == (11, 21, False)
    assert [(s.id, s.passed, s.score, s.max_score) for s in result.stages] == [
        ("build", False, 3, 6),
        ("addressing", False, 5, 11),
        ("router", False, 3, 4),
    ]
    # each command was typed once per run, however many checks read it
    assert [line.line for line in router.received].count("show ip interface brief") == 1


@pytest.mark.lab
def test_an_objective_of_several_checks_explains_in_one_sentence() -> None:
    running = [CheckVerdict(status="pass", explanation=f"{n} is running.") for n in ("PC1", "PC2")]
    assert combined("all", running).explanation == "PC1 is running; PC2 is running."
    stopped = CheckVerdict(status="fail", explanation="PC3 is stopped.")
    assert combined("all", [*running, stopped]).explanation == "PC3 is stopped."


@pytest.mark.lab
async def test_a_stage_or_some_objectives_are_checked_alone(gns3_project: Any) -> None:
    lab = load_lab(LAB).lab
    async with checked_lab(gns3_project) as (ctx, _):
        only = await report(ctx.devices, ctx.project_id, lab, stage="build")
        named = [
            r
            async for r in check_lab(
                ctx.devices, ctx.project_id, lab, objectives=["gateway", "pc1-runs"]
            )
        ]
        with pytest.raises(UnknownSelection, match=r"no stage 'nope' .stages: build, address"):
            await report(ctx.devices, ctx.project_id, lab, stage="nope")
        with pytest.raises(UnknownSelection, match="no objective 'gatewya'"):
            await report(ctx.devices, ctx.project_id, lab, objectives=["gatewya"])
    assert [r.id for r in only.results][:2] == ["pc1-runs", "pc3-runs"]
    assert {r.stage for r in only.results} == {"build"}
    assert sorted(r.id for r in named) == ["gateway", "pc1-runs"]


@pytest.mark.lab
async def test_a_check_never_changes_a_device(gns3_project: Any) -> None:
    """A lab file that slipped a configuring command past validation (a node's dialect
    unknown then) still sends nothing: the read-only screening runs before each command."""
    text = textwrap.dedent(
        """\
        title: Sneaky
        stages:
          - id: s
            title: S
            objectives:
              - id: o
                text: o
                check: {kind: command, node: PC1, command: ip 10.0.0.99/24, contains: x}
        """
    )
    async with checked_lab(gns3_project) as (ctx, _):
        result: CheckReport = await report(ctx.devices, ctx.project_id, load_lab(text).lab)
        after = await report(
            ctx.devices, ctx.project_id, load_lab(LAB).lab, objectives=["pc1-address"]
        )
    assert result.results[0].status == "error"
    assert "would change PC1; a check only reads" in result.results[0].explanation
    assert after.results[0].status == "pass"


REACH = textwrap.dedent(
    """\
    title: Reachability
    stages:
      - id: reach
        title: Reach
        objectives:
          - {id: by-name, text: PC1 reaches PC2, check: {kind: reachable, from: PC1, to: PC2}}
          - id: expected
            text: PC1 reaches PC2 at 10.0.0.2
            check: {kind: reachable, from: PC1, to: PC2, address: 10.0.0.2, count: 1}
          - id: elsewhere
            text: PC1 reaches PC2 at 10.0.0.3
            check: {kind: reachable, from: PC1, to: PC2, address: 10.0.0.3, count: 1}
          - id: nobody
            text: PC1 reaches 10.0.0.99
            check: {kind: reachable, from: PC1, to: 10.0.0.99, count: 2}
          - id: isolated
            text: PC1 cannot reach 10.0.0.99
            check: {kind: reachable, from: PC1, to: 10.0.0.99, expect: false, count: 1}
          - id: not-isolated
            text: PC1 cannot reach PC2
            check: {kind: reachable, from: PC1, to: PC2, expect: false, count: 1}
          - id: no-gateway
            text: PC2 reaches another subnet
            check: {kind: reachable, from: PC2, to: 10.9.0.1, count: 1, wait: 60}
          - id: router
            text: R1 reaches its neighbour
            check: {kind: reachable, from: R1, to: 10.0.12.2, count: 2}
          - id: icmp-crosses
            text: pings cross PC1's cable
            check:
              kind: traffic
              link: PC1 e0 - Switch1 e0
              filter: icmp
              seconds: 60
              during: {ping: {from: PC1, to: PC2}}
          - id: no-ospf
            text: OSPF crosses PC1's cable
            check:
              kind: traffic
              link: {a: Switch1, a_port: e0, b: PC1, b_port: e0}
              filter: ospf
              seconds: 1
    """
)


NO_ADDRESS = textwrap.dedent(
    """\
    title: From a PC without an address
    stages:
      - id: reach
        title: Reach
        objectives:
          - id: pc2-pc1
            text: PC2 reaches PC1
            check: {kind: reachable, from: PC2, to: 10.0.0.1, count: 1, wait: 60}
    """
)


@pytest.mark.lab
async def test_reachability_and_traffic_are_read_from_the_devices(gns3_project: Any) -> None:
    """Pings parsed per dialect (VPCS "No gateway found" is a failure, decided at once, as
    is one from a PC without an address), isolation, a node's first address as the
    target, and packets seen on a captured link (the first ones pass the check at once;
    none, and it waits its seconds out)."""
    async with checked_lab(gns3_project) as (ctx, _):
        # PC2 has no address yet: only configuring it helps, so no waiting its 60 s out
        pc2 = await ctx.gns3.find_node(ctx.project_id, "PC2")
        await ctx.consoles.wait_ready(await ctx.console_target(pc2))
        unaddressed = await report(ctx.devices, ctx.project_id, load_lab(NO_ADDRESS).lab)
        [from_pc2] = unaddressed.results
        assert from_pc2.status == "fail" and from_pc2.duration_ms < 60_000, from_pc2
        # and it is not made to ping (without an address VPCS drops its console then)
        assert from_pc2.explanation == "PC2 does not reach 10.0.0.1: PC2 has no IPv4 address."
        assert from_pc2.evidence[0].command == "show ip"
        setup = replace(ctx, mode=LAB_AUTOMATION)
        addressed = await execute_tool(
            setup,
            "run_vpcs_commands",
            {"devices": [{"device": "PC2", "commands": ["ip 10.0.0.2/24"]}]},
        )
        assert addressed.ok, addressed.result
        result = await report(ctx.devices, ctx.project_id, load_lab(REACH).lab)
    by_id = {r.id: r for r in result.results}
    assert {r.id: r.status for r in result.results} == {
        "by-name": "pass",
        "expected": "pass",
        "elsewhere": "fail",
        "nobody": "fail",
        "isolated": "pass",
        "not-isolated": "fail",
        "no-gateway": "fail",
        "router": "pass",
        "icmp-crosses": "pass",
        "no-ospf": "fail",
    }, {r.id: r.explanation for r in result.results if r.status == "error"}
    assert by_id["by-name"].explanation.startswith("PC1 reaches PC2 (10.0.0.2) (")
    assert by_id["by-name"].evidence[0].command == "ping 10.0.0.2 -c 3 -i 50"
    # `to: PC2` pings PC2 wherever it is; with `address`, where it should be
    assert by_id["expected"].evidence[0].command == "ping 10.0.0.2 -c 1 -i 50"
    assert by_id["elsewhere"].evidence[0].command == "ping 10.0.0.3 -c 1 -i 50"
    assert by_id["elsewhere"].explanation == (
        "PC1 does not reach PC2 (10.0.0.3) (address not reachable). PC2 has 10.0.0.2."
    )
    assert "No gateway found" in by_id["no-gateway"].evidence[0].lines[0]
    # only setting a gateway helps a PC without one: the check does not wait its 60 s out
    assert by_id["no-gateway"].duration_ms < 60_000, by_id["no-gateway"].explanation
    assert by_id["isolated"].explanation.endswith(", as required.")
    assert by_id["not-isolated"].explanation.endswith(", which it must not.")
    assert by_id["router"].evidence[0].command == "ping 10.0.12.2 repeat 2"
    assert by_id["no-ospf"].explanation == "No ospf packets crossed Switch1 e0 - PC1 e0 in 1 s."
    # the first packets seen pass a traffic check: it does not wait its 60 s out
    assert by_id["icmp-crosses"].duration_ms < 60_000, by_id["icmp-crosses"].explanation
    assert " icmp packets crossed PC1 e0 - Switch1 e0 in " in by_id["icmp-crosses"].explanation


@pytest.mark.lab
async def test_a_reachable_check_waits_for_convergence(gns3_project: Any) -> None:
    """With `wait`, a failing ping is tried again until the lab converges (here: PC2 gets
    its address two seconds into the check)."""
    text = textwrap.dedent(
        """\
        title: Convergence
        stages:
          - id: s
            title: S
            objectives:
              - id: o
                text: PC1 reaches 10.0.0.2
                check: {kind: reachable, from: PC1, to: 10.0.0.2, count: 1, wait: 20}
        """
    )
    async with checked_lab(gns3_project) as (ctx, _):
        setup = replace(ctx, mode=LAB_AUTOMATION)

        async def address_later() -> None:
            await asyncio.sleep(2)
            await execute_tool(
                setup,
                "run_vpcs_commands",
                {"devices": [{"device": "PC2", "commands": ["ip 10.0.0.2/24"]}]},
            )

        later = asyncio.ensure_future(address_later())
        result = await report(ctx.devices, ctx.project_id, load_lab(text).lab)
        await later
    assert result.results[0].status == "pass", result.results[0].explanation
    assert result.results[0].duration_ms >= 2000


WORDS = textwrap.dedent(
    """\
    title: Gateways in words
    stages:
      - id: gateways
        title: Gateways
        objectives:
          - id: said-fail
            text: PC2's gateway is 10.0.0.254
            check:
              kind: command
              node: PC2
              command: show ip
              regex: 'GATEWAY +: 10\\.0\\.0\\.254$'
              read: 'GATEWAY +: (\\S+)'
              say:
                pass: "PC2's gateway is 10.0.0.254."
                fail: "PC2's gateway is {{ found }}; it should be 10.0.0.254."
          - id: said-pass
            text: PC1's gateway is 10.0.0.254
            check:
              kind: command
              node: PC1
              command: show ip
              regex: 'GATEWAY +: 10\\.0\\.0\\.254$'
              read: 'GATEWAY +: (\\S+)'
              say: {fail: "PC1's gateway is {{ found }}; it should be 10.0.0.254."}
          - id: plain-fail
            text: PC2's gateway is 10.0.0.254
            check: {kind: command, node: PC2, command: show ip, regex: 'GATEWAY +: 10.0.0.254$'}
          - id: plain-pass
            text: PC1's gateway is 10.0.0.254
            check: {kind: command, node: PC1, command: show ip, regex: 'GATEWAY +: 10.0.0.254$'}
          - id: keyless
            text: PC1 shows a DNS server
            check: {kind: command, node: PC1, command: show ip, regex: '^\\s*\\d+\\.\\d+\\.9\\.9$'}
          - id: contains
            text: PC2 shows its gateway
            check: {kind: command, node: PC2, command: show ip, contains: 10.0.0.254}
    """
)


@pytest.mark.lab
async def test_a_command_check_says_its_result_in_words_never_its_pattern(
    gns3_project: Any,
) -> None:
    """The lab file's own words with the value read from the device; without them, the
    command, the node and the output line that decided (the one holding the pattern's
    word, GATEWAY); the pattern itself is never shown."""
    async with checked_lab(gns3_project) as (ctx, _):
        result = await report(ctx.devices, ctx.project_id, load_lab(WORDS).lab)
    by_id = {r.id: r for r in result.results}
    assert {r.id: r.status for r in result.results} == {
        "said-fail": "fail",
        "said-pass": "pass",
        "plain-fail": "fail",
        "plain-pass": "pass",
        "keyless": "fail",
        "contains": "fail",
    }
    assert by_id["said-fail"].explanation == "PC2's gateway is 0.0.0.0; it should be 10.0.0.254."
    assert [" ".join(x.split()) for x in by_id["said-fail"].evidence[0].lines] == [
        "GATEWAY : 0.0.0.0"
    ]
    # no `pass` words: the general sentence
    assert by_id["said-pass"].explanation == "`show ip` on PC1 shows `GATEWAY : 10.0.0.254`."
    assert by_id["plain-fail"].explanation == (
        "`show ip` on PC2 shows `GATEWAY : 0.0.0.0`, not what the objective asks."
    )
    assert [" ".join(x.split()) for x in by_id["plain-fail"].evidence[0].lines] == [
        "GATEWAY : 0.0.0.0"
    ]
    assert by_id["plain-pass"].explanation == "`show ip` on PC1 shows `GATEWAY : 10.0.0.254`."
    assert by_id["keyless"].explanation == "`show ip` on PC1 does not show what the objective asks."
    assert by_id["keyless"].evidence[0].lines  # the output it read, as evidence
    assert by_id["contains"].explanation == "`show ip` on PC2 does not show `10.0.0.254`."
    for r in result.results:
        assert "GATEWAY +" not in r.explanation and "\\" not in r.explanation, r.explanation
        assert "/" not in r.explanation, r.explanation


@pytest.mark.lab
async def test_the_example_lab_says_a_wrong_gateway_with_the_students_values(
    gns3_project: Any,
) -> None:
    """notebooks/04-graded-lab.lab.yaml's gateway objective on a real VPCS with the wrong
    gateway, as one student sees it."""
    document = load_lab(EXAMPLE_LAB.read_text(), EXAMPLE_LAB.name)
    lab = document.for_student("alice", "class")
    gateway = lab.stages[1].objectives[0].text.split("(")[1].rstrip(")")
    async with checked_lab(gns3_project) as (ctx, _):
        result = await report(ctx.devices, ctx.project_id, lab, objectives=["pc1-gateway"])
    [pc1] = result.results
    assert pc1.explanation == f"PC1's gateway is 10.0.0.254; it should be {gateway}."
    assert pc1.evidence[0].command == "show ip"
    assert " ".join(pc1.evidence[0].lines[0].split()) == "GATEWAY : 10.0.0.254"


LINUX_NETWORK = """\
ip link set lo up
ip link add v0 type veth peer name v1
ip addr add 10.9.0.1/24 dev v0
ip link set v0 up"""
"""The Linux router's network: its loopback (listed first) and 10.9.0.1 on v0; v1 has no
address."""
LINUX = textwrap.dedent(
    """\
    title: A Linux router
    stages:
      - id: s
        title: S
        objectives:
          - {id: itself, text: R1 reaches R1, check: {kind: reachable, from: R1, to: R1, count: 1}}
          - id: v1
            text: R1 has 10.9.1.1/24 on v1
            check: {kind: address, node: R1, interface: v1, address: 10.9.1.1/24}
    """
)


@pytest.mark.slow
async def test_a_linux_node_is_reached_at_its_address_and_shows_where_it_has_none() -> None:
    """A REAL shell in a network namespace of its own as R1: `to: R1` pings its first
    address that is not a loopback (`ip -4 addr show` lists 127.0.0.1 first), and an
    interface without an address is shown by the output that lacks it."""
    async with linux_shell(LINUX_NETWORK) as target, ConsolePool() as pool:
        router = target.model_copy(update={"name": "R1"})
        ctx = offline_context(consoles=pool, mode=TEACHING, console_targets={"R1": router})
        result = await report(ctx.devices, ctx.project_id, load_lab(LINUX).lab)
    by_id = {r.id: r for r in result.results}
    assert by_id["itself"].status == "pass", by_id["itself"].explanation
    assert by_id["itself"].evidence[0].command == "ping -c 1 -i 0.2 -W 1 10.9.0.1"
    assert by_id["v1"].explanation == "R1 v1 has no IPv4 address."
    # `ip -4 addr show` lists no interface without an IPv4 address: its output decided
    lines = by_id["v1"].evidence[0].lines
    assert any("inet 10.9.0.1/24" in line for line in lines), lines
    assert not any(line.split(":")[1:2] == [" v1@v0"] for line in lines), lines
