"""A routed lab of real FRR routers for tests and benchmarks: three routers in a triangle,
a VPCS on each side (`TRIANGLE`), built in a GNS3 project (`build_triangle`), started
with every console ready (`start_triangle`), configured for OSPF by console
(`configure_triangle`) and waited on until every adjacency is Full (`until_full`) and every
router has a route to each of its subnets (`until_routed`).

    R1 e0 - e0 R2      10.0.12.0/24   (R1 .1, R2 .2)
    R2 e1 - e0 R3      10.0.23.0/24   (R2 .2, R3 .3)
    R1 e1 - e1 R3      10.0.13.0/24   (R1 .1, R3 .3)
    PC1 e0 - e2 R1     192.168.1.0/24 (PC1 .10, R1 .1)
    PC2 e0 - e2 R3     192.168.3.0/24 (PC2 .10, R3 .3)

Router ids are 1.1.1.1, 2.2.2.2 and 3.3.3.3; hellos every second and a dead interval of
4 s make OSPF converge in seconds. Nothing here is a test double: the routers are the lab
kit's FRR image under QEMU, reached over their real telnet consoles.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..console import ConsolePool, ConsoleSession, ConsoleTarget
from ..gns3 import GNS3Client

ROUTERS = ("R1", "R2", "R3")
PCS = ("PC1", "PC2")
BOOT_TIMEOUT = 240.0
"""Seconds the routers' consoles may take to answer (about 15 s on an idle machine)."""
FULL_TIMEOUT = 120.0
"""Seconds OSPF may take to reach Full on every adjacency once configured."""


@dataclass(frozen=True)
class Cable:
    a: str
    a_port: str
    b: str
    b_port: str


@dataclass(frozen=True)
class Triangle:
    """The routed lab's layout and each node's configuration."""

    cables: Sequence[Cable]
    interfaces: Mapping[str, Mapping[str, str]]
    """Router -> interface -> address (CIDR)."""
    pcs: Mapping[str, tuple[str, str]]
    """PC -> (address/len, gateway)."""

    def router_id(self, router: str) -> str:
        number = router.removeprefix("R")
        return ".".join([number] * 4)

    def router_lines(self, router: str) -> list[str]:
        """The vtysh configuration lines giving `router` its addresses and OSPF."""
        lines: list[str] = []
        for interface, address in self.interfaces[router].items():
            lines += [f"interface {interface}", f"ip address {address}"]
            if not address.startswith("192.168."):
                lines += [
                    "ip ospf network point-to-point",
                    "ip ospf hello-interval 1",
                    "ip ospf dead-interval 4",
                ]
            lines.append("exit")
        lines += ["router ospf", f"ospf router-id {self.router_id(router)}"]
        lines += [f"network {address} area 0" for address in self.interfaces[router].values()]
        return lines

    def subnets(self) -> set[str]:
        """Every subnet of the triangle (`10.0.12.0/24`, ...)."""
        found = (
            ipaddress.ip_interface(a).network for i in self.interfaces.values() for a in i.values()
        )
        return {str(network) for network in found}

    def pc_line(self, pc: str) -> str:
        address, gateway = self.pcs[pc]
        return f"ip {address} {gateway}"


TRIANGLE = Triangle(
    cables=(
        Cable("R1", "e0", "R2", "e0"),
        Cable("R2", "e1", "R3", "e0"),
        Cable("R1", "e1", "R3", "e1"),
        Cable("PC1", "e0", "R1", "e2"),
        Cable("PC2", "e0", "R3", "e2"),
    ),
    interfaces={
        "R1": {"eth0": "10.0.12.1/24", "eth1": "10.0.13.1/24", "eth2": "192.168.1.1/24"},
        "R2": {"eth0": "10.0.12.2/24", "eth1": "10.0.23.2/24"},
        "R3": {"eth0": "10.0.23.3/24", "eth1": "10.0.13.3/24", "eth2": "192.168.3.3/24"},
    },
    pcs={"PC1": ("192.168.1.10/24", "192.168.1.1"), "PC2": ("192.168.3.10/24", "192.168.3.3")},
)
PLACES = {"R1": (0, 0), "R2": (250, -150), "R3": (250, 150), "PC1": (-250, 0), "PC2": (500, 150)}
"""Where each node of the triangle is drawn (x, y)."""


async def build_triangle(gns3: GNS3Client, project_id: str) -> None:
    """Create the triangle's nodes (routers named by their kernel `hostname=`) and cables
    in the open, empty project `project_id`."""
    from ..labkit.frr import FRR_TEMPLATE
    from ..labkit.router import hostname_command_line

    for name in ROUTERS:
        x, y = PLACES[name]
        node = await gns3.create_node_from_template(project_id, FRR_TEMPLATE, name, x=x, y=y)
        line = hostname_command_line(name)
        await gns3.update_node(project_id, node.node_id, properties={"kernel_command_line": line})
    for name in PCS:
        x, y = PLACES[name]
        await gns3.create_node_from_template(project_id, "VPCS", name, x=x, y=y)
    for cable in TRIANGLE.cables:
        await gns3.create_link(project_id, cable.a, cable.a_port, cable.b, cable.b_port)


async def console_targets(gns3: GNS3Client, project_id: str) -> dict[str, ConsoleTarget]:
    """Each node's console target, its dialect decided the way the tools decide it."""
    notes = {t.template_id: t.notes for t in await gns3.list_templates()}
    host = urlsplit(gns3.url).hostname
    return {
        node.name: ConsoleTarget.from_node(
            node, server_host=host, inherited=notes.get(node.template_id or "", [])
        )
        for node in await gns3.list_nodes(project_id)
        if node.console_type == "telnet"
    }


async def start_triangle(gns3: GNS3Client, project_id: str) -> float:
    """Start every node and wait until each console answers; the seconds that took."""
    began = time.monotonic()
    await gns3.start_all(project_id)
    targets = await console_targets(gns3, project_id)
    async with ConsolePool() as pool:
        await asyncio.gather(*(pool.wait_ready(t, timeout=BOOT_TIMEOUT) for t in targets.values()))
    return time.monotonic() - began


async def configure_triangle(
    gns3: GNS3Client, project_id: str, *, routers: Sequence[str] = ROUTERS, pcs: bool = True
) -> None:
    """Configure `routers` (addresses and OSPF) and, with `pcs`, the PCs, by console;
    raises AssertionError naming a line a device refused."""
    targets = await console_targets(gns3, project_id)
    for router in routers:
        session = ConsoleSession(targets[router], prompt_timeout=BOOT_TIMEOUT)
        await session.open()
        try:
            lines = await session.configure(TRIANGLE.router_lines(router))
        finally:
            await session.close()
        refused = [line for line in lines if not line.ok]
        if refused:
            raise AssertionError(f"{router} refused {refused}")
    if not pcs:
        return
    async with ConsolePool() as pool:
        setup = [(targets[pc], [TRIANGLE.pc_line(pc)]) for pc in PCS]
        for result in await pool.run_many(setup):
            if result.status != "success":
                raise AssertionError(f"{result.device_name}: {result}")


async def ospf_states(session: ConsoleSession) -> dict[str, str]:
    """Neighbour router id -> OSPF state (`Full/-`, `Init/DROther`, ...) as `session`'s
    router sees them, from `show ip ospf neighbor json`."""
    shown = await session.send("show ip ospf neighbor json")
    neighbors = json.loads(shown.output or "{}").get("neighbors", {})
    return {rid: found[0]["nbrState"] for rid, found in neighbors.items() if found}


async def until_full(gns3: GNS3Client, project_id: str, *, timeout: float = FULL_TIMEOUT) -> float:
    """Wait until every router of the triangle has its two neighbours Full; the seconds it
    took. Raises AssertionError with the states last seen after `timeout`."""

    async def full(session: ConsoleSession) -> tuple[bool, object]:
        states = await ospf_states(session)
        return len(states) == 2 and all(v.startswith("Full") for v in states.values()), states

    return await _until(gns3, project_id, full, timeout, "OSPF Full")


async def until_routed(
    gns3: GNS3Client, project_id: str, *, timeout: float = FULL_TIMEOUT
) -> float:
    """Wait until every router of the triangle has a route installed to each of its
    subnets (OSPF's routes come a little after the adjacencies are Full, and again after
    a router restarts); the seconds it took. Raises AssertionError with the subnets last
    missing after `timeout`."""
    wanted = TRIANGLE.subnets()

    async def routed(session: ConsoleSession) -> tuple[bool, object]:
        shown = await session.send("show ip route json")
        routes = json.loads(shown.output or "{}")
        installed = {p for p, entries in routes.items() if any(e.get("installed") for e in entries)}
        missing = sorted(wanted - installed)
        return not missing, missing

    return await _until(gns3, project_id, routed, timeout, "every subnet routed")


async def _until(
    gns3: GNS3Client,
    project_id: str,
    ready: Callable[[ConsoleSession], Awaitable[tuple[bool, object]]],
    timeout: float,
    what: str,
) -> float:
    """Ask each router `ready` every second until all say yes; the seconds it took.
    Raises AssertionError with what each said last after `timeout`."""
    began = time.monotonic()
    targets = await console_targets(gns3, project_id)
    sessions = [ConsoleSession(targets[r], prompt_timeout=BOOT_TIMEOUT) for r in ROUTERS]
    try:
        for session in sessions:
            await session.open()
        while True:
            answers = [await ready(session) for session in sessions]
            if all(done for done, _ in answers):
                return time.monotonic() - began
            if time.monotonic() - began > timeout:
                said = dict(zip(ROUTERS, (seen for _, seen in answers), strict=True))
                raise AssertionError(f"no {what} after {timeout:.0f} s: {said}")
            await asyncio.sleep(1)
    finally:
        for session in sessions:
            await session.close()
