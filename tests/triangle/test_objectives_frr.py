"""`address` and `reachable` checks decided on REAL FRR routers: the routed lab
(tests/support/routing.py: R1-R3 in an OSPF triangle, PC1 behind R1, PC2 behind R3),
shared with the other modules here (conftest.py). Addresses are read from `show interface
json`; pings from a router are vtysh's `ping` (5 probes each, whatever the check's count);
one student's parameters are configured on the routers and decided against two students'
labs.
"""

from __future__ import annotations

import asyncio
import ipaddress
import textwrap
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import pytest
from support.tools import client_for

from jupyter_gns3_copilot.console import ConsolePool, ConsoleSession
from jupyter_gns3_copilot.devices.access import Devices
from jupyter_gns3_copilot.objectives.checks import decide
from jupyter_gns3_copilot.objectives.devices import DeviceAccess
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.parameters import student_values
from jupyter_gns3_copilot.objectives.results import CheckVerdict
from jupyter_gns3_copilot.testing.pytest_plugin import GNS3Project
from jupyter_gns3_copilot.testing.routed_lab import BOOT_TIMEOUT, console_targets, until_full

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def lab_of(checks: str) -> str:
    """A lab file of one stage whose objectives are `checks` (`id: {check}` lines)."""
    entries = [line.split(":", 1) for line in textwrap.dedent(checks).strip().splitlines()]
    objectives = "".join(
        f"      - {{id: {key}, text: it, check: {check.strip()}}}\n" for key, check in entries
    )
    return f"title: FRR checks\nstages:\n  - id: s\n    title: S\n    objectives:\n{objectives}"


@asynccontextmanager
async def device_access(project: GNS3Project) -> AsyncIterator[DeviceAccess]:
    async with client_for(project) as gns3, ConsolePool() as pool:
        access = DeviceAccess(Devices(gns3=gns3, consoles=pool), project.project_id)
        try:
            yield access
        finally:
            access.close()


async def decided(project: GNS3Project, lab: LabFile) -> dict[str, CheckVerdict]:
    """Each objective's verdict, its check decided by `decide` on the project's devices,
    one after the other (routers emulated without KVM slow down under parallel pings)."""
    objectives = [o for stage in lab.stages for o in stage.objectives]
    async with device_access(project) as access:
        return {o.id: await decide(o.checks[0], access) for o in objectives}


async def configure(project: GNS3Project, router: str, lines: Sequence[str]) -> None:
    async with client_for(project) as gns3:
        target = (await console_targets(gns3, project.project_id))[router]
    session = ConsoleSession(target, prompt_timeout=BOOT_TIMEOUT)
    await session.open()
    try:
        refused = [line for line in await session.configure(list(lines)) if not line.ok]
    finally:
        await session.close()
    assert not refused, refused


async def until_routed(
    project: GNS3Project, router: str, command: str, shown: str, timeout: float = 60
) -> None:
    """Wait until `command` on `router` shows `shown` (a route learnt by OSPF)."""
    async with client_for(project) as gns3:
        target = (await console_targets(gns3, project.project_id))[router]
    session = ConsoleSession(target, prompt_timeout=BOOT_TIMEOUT)
    await session.open()
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while shown not in (output := (await session.send(command)).output):
            assert asyncio.get_running_loop().time() < deadline, output
            await asyncio.sleep(1)
    finally:
        await session.close()


ADDRESSES = lab_of(
    """
    eth0: {kind: address, node: R1, interface: eth0, address: 10.0.12.1/24}
    anywhere: {kind: address, node: R1, address: 192.168.1.1/24}
    wrong-address: {kind: address, node: R1, interface: eth0, address: 10.0.12.9/24}
    wrong-interface: {kind: address, node: R1, interface: eth1, address: 10.0.12.1/24}
    no-address: {kind: address, node: R2, interface: eth2, address: 10.0.24.2/24}
    no-interface: {kind: address, node: R2, interface: eth7, address: 10.0.24.2/24}
    """
)


async def test_router_addresses_pass_and_fail_with_the_lines_that_decided(
    triangle: GNS3Project,
) -> None:
    verdicts = await decided(triangle, load_lab(ADDRESSES).lab)
    assert {k: v.status for k, v in verdicts.items()} == {
        "eth0": "pass",
        "anywhere": "pass",
        "wrong-address": "fail",
        "wrong-interface": "fail",
        "no-address": "fail",
        "no-interface": "fail",
    }, {k: v.explanation for k, v in verdicts.items()}
    said = {k: v.explanation for k, v in verdicts.items()}
    assert said["eth0"] == "R1 eth0 has 10.0.12.1/24."
    assert said["wrong-address"] == "R1 eth0 has 10.0.12.1/24, not 10.0.12.9/24."
    assert said["wrong-interface"] == (
        "R1 eth1 has 10.0.13.1/24, not 10.0.12.1/24 (10.0.12.1/24 is on eth0)."
    )
    assert said["no-address"] == "R2 eth2 has no IPv4 address."
    evidence = verdicts["eth0"].evidence[0]
    assert (evidence.node, evidence.command, evidence.lines) == (
        "R1",
        "show interface json",
        ["eth0 up 10.0.12.1/24"],
    )
    # an interface without an address, and one the router does not have: its interfaces
    (line,) = verdicts["no-address"].evidence[0].lines
    assert line.startswith("eth2 ") and line.endswith(", no IPv4 address"), line
    listed = verdicts["no-interface"].evidence[0].lines
    assert listed[:2] == ["eth0 up 10.0.12.2/24", "eth1 up 10.0.23.2/24"], listed


REACHABLE = lab_of(
    """
    r1-r3: {kind: reachable, from: R1, to: R3}
    r1-pc2: {kind: reachable, from: R1, to: PC2, count: 2}
    pc1-r3: {kind: reachable, from: PC1, to: R3}
    pc1-pc2: {kind: reachable, from: PC1, to: PC2, wait: 30}
    nobody: {kind: reachable, from: R1, to: 192.168.3.99, count: 7, expect: false}
    """
)


async def test_routers_ping_and_are_pinged_across_the_triangle(triangle: GNS3Project) -> None:
    verdicts = await decided(triangle, load_lab(REACHABLE).lab)
    said = {k: v.explanation for k, v in verdicts.items()}
    assert {k: v.status for k, v in verdicts.items()} == dict.fromkeys(verdicts, "pass"), said
    # a router as the target is its first address; a router pings 5 probes at a time
    assert said["r1-r3"] == "R1 reaches R3 (10.0.23.3) (5 of 5 answered)."
    assert verdicts["r1-r3"].evidence[0].command == "ping 10.0.23.3"
    assert said["r1-pc2"] == "R1 reaches PC2 (192.168.3.10) (5 of 5 answered)."
    assert said["pc1-r3"].startswith("PC1 reaches R3 (10.0.23.3) ("), said
    assert said["pc1-pc2"].startswith("PC1 reaches PC2 (192.168.3.10) ("), said
    # a count above the router's 5 probes pings again: 7 asked, 10 sent, none answered
    assert said["nobody"] == "R1 does not reach 192.168.3.99 (0 of 10 answered), as required."


STUDENT_LAB = textwrap.dedent(
    """\
    title: Per-student router addresses
    parameters:
      r1r2: {subnet: {pool: 172.16.0.0/16, prefix: 24}}
    stages:
      - id: link
        title: Address the R1-R2 link
        objectives:
          - id: r1
            text: "R1 eth0 has {{ r1r2 | host(1) }}/24"
            check: {kind: address, node: R1, interface: eth0, address: "{{ r1r2 | host(1) }}/24"}
          - id: r2
            text: R1 reaches R2 at its address on the link
            check: {kind: reachable, from: R1, to: R2, address: "{{ r1r2 | host(2) }}", count: 2}
    """
)


async def test_each_students_router_addresses_are_decided_on_the_routers(
    triangle: GNS3Project,
) -> None:
    document = load_lab(STUDENT_LAB)
    alice = student_values(document.lab, "alice", "class-salt")["r1r2"]
    bob = student_values(document.lab, "bob", "class-salt")["r1r2"]
    assert isinstance(alice, ipaddress.IPv4Network) and isinstance(bob, ipaddress.IPv4Network)
    assert alice != bob
    r1, r2 = f"{alice[1]}/24", f"{alice[2]}/24"
    await configure(triangle, "R1", ["interface eth0", f"ip address {r1}"])
    await configure(triangle, "R2", ["interface eth0", f"ip address {r2}"])
    try:
        mine = await decided(triangle, document.for_student("alice", "class-salt"))
        theirs = await decided(triangle, document.for_student("bob", "class-salt"))
    finally:
        await configure(triangle, "R1", ["interface eth0", f"no ip address {r1}"])
        await configure(triangle, "R2", ["interface eth0", f"no ip address {r2}"])
    assert {k: v.status for k, v in mine.items()} == {"r1": "pass", "r2": "pass"}, mine
    assert mine["r1"].explanation == f"R1 eth0 has {r1}."
    assert mine["r2"].explanation == f"R1 reaches R2 ({alice[2]}) (5 of 5 answered)."
    # the other student's values are not what the routers have
    assert {k: v.status for k, v in theirs.items()} == {"r1": "fail", "r2": "fail"}, theirs
    assert theirs["r1"].explanation == f"R1 eth0 has 10.0.12.1/24, {r1}, not {bob[1]}/24."
    unreached = theirs["r2"].explanation
    assert unreached.startswith(f"R1 does not reach R2 ({bob[2]}) ("), unreached
    assert unreached.endswith(f" R2 has 10.0.12.2, {alice[2]}, 10.0.23.2."), unreached


FAILOVER = lab_of("pc1-pc2: {kind: reachable, from: PC1, to: PC2, wait: 60}")
THROUGH_R2 = lab_of(
    "via-r2: {kind: command, node: R1, command: show ip route 192.168.3.10, "
    "contains: '10.0.12.2, via eth0'}"
)


async def test_a_reachable_check_waits_for_ospf_to_route_around_a_cut_cable(
    triangle: GNS3Project,
) -> None:
    """With R1-R3 suspended, PC1 reaches PC2 through R2 once OSPF has reconverged (R1
    routes PC2's LAN via R2). Right after the cut a ping may still pass (GNS3 drops one
    direction of a suspended link, and the dead interval has not passed), so that a check
    fails then is not asserted."""
    async with client_for(triangle) as gns3:
        link = await gns3.find_link(triangle.project_id, "R1", "e1", "R3", "e1")
        await gns3.suspend_link(triangle.project_id, link.link_id)
        try:
            await until_routed(triangle, "R1", "show ip route 192.168.3.10", "10.0.12.2, via eth0")
            verdicts = await decided(triangle, load_lab(FAILOVER).lab)
            verdicts |= await decided(triangle, load_lab(THROUGH_R2).lab)
        finally:
            # a resumed link between two QEMU routers stays dead (GNS3 3.0.6): cable it anew
            await gns3.delete_link(triangle.project_id, link.link_id)
            await gns3.create_link(triangle.project_id, "R1", "e1", "R3", "e1")
            await until_full(gns3, triangle.project_id)
    said = {k: v.explanation for k, v in verdicts.items()}
    assert verdicts["pc1-pc2"].status == "pass", said
    assert said["pc1-pc2"].startswith("PC1 reaches PC2 (192.168.3.10) ("), said
    assert verdicts["via-r2"].status == "pass", said
