"""The example labs brought to their solved state by console, and a fault taken out again,
for the tests and benchmarks of faults (a fault goes into a working lab).

`SOLUTIONS[notebook](lab)` gives, for one student's rendered lab file, the lines each
node is typed to solve it (what the student ends up typing); `solve(devices, project_id,
lines)` starts the nodes and types them; `undo(devices, project_id, fault, lines)` takes
a fault out again: its links resumed and cleared, its nodes started, and its
configuration overwritten by the solution (`lines`) or by the lines `UNDO` names for it.
`each_fault` applies every fault of a solved lab in turn, verified with `check_all`.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from ..console import ConsolePool
from ..devices.access import Devices
from ..devices.fault_steps import type_lines
from ..gns3 import GNS3Client
from ..objectives.fault_model import ConfigStep, Fault
from ..objectives.faults import FaultOutcome, apply_fault, undo_fault, working_lab
from ..objectives.model import AddressCheck, LabFile
from ..objectives.runner import report
from ..tools import LabAccess

Solution = dict[str, list[str]]


@asynccontextmanager
async def admin_access(lab_server: Any) -> AsyncIterator[LabAccess]:
    """The lab server's devices as its administrator reaches them (a GNS3 client, a
    console pool), closed afterwards."""
    async with (
        GNS3Client(
            lab_server.url, username=lab_server.username, password=lab_server.password
        ) as gns3,
        ConsolePool() as consoles,
    ):
        yield LabAccess(gns3, consoles)


"""Node name -> the lines typed on its console."""


def address_of(lab: LabFile, objective: str, index: int = 0) -> str:
    """The address (`a.b.c.d/len`) the `index`-th `address` check of `objective` asks."""
    found = [o for s in lab.stages for o in s.objectives if o.id == objective]
    checks = [c for o in found for c in o.checks if isinstance(c, AddressCheck)]
    if len(checks) <= index:
        raise KeyError(f"the lab has no address check {index} in {objective!r}")
    return checks[index].address


def graded_lab(lab: LabFile) -> Solution:
    """notebooks/04-graded-lab: PCs addressed with R1 as gateway, R1 addressed and
    forwarding."""
    a_gw = address_of(lab, "r1-lan-a").split("/")[0]
    b_gw = address_of(lab, "r1-lan-b").split("/")[0]
    return {
        "PC1": [f"ip {address_of(lab, 'pc1-address')} {a_gw}"],
        "PC2": [f"ip {address_of(lab, 'pc2-address')} {a_gw}"],
        "PC3": [f"ip {address_of(lab, 'pc3-address')} {b_gw}"],
        "R1": [
            "ip addr flush dev eth0",
            "ip addr flush dev eth1",
            f"ip addr add {address_of(lab, 'r1-lan-a')} dev eth0",
            f"ip addr add {address_of(lab, 'r1-lan-b')} dev eth1",
            "sysctl -w net.ipv4.ip_forward=1",
        ],
    }


_OSPF_INTERFACES = {
    "R1": ("r1-addresses", ("eth0", "eth1", "eth2")),
    "R2": ("r2-addresses", ("eth0", "eth1")),
    "R3": ("r3-addresses", ("eth0", "eth1", "eth2")),
}
"""notebooks/05-ospf-lab: each router's objective naming its addresses, by interface."""


def ospf_lab(lab: LabFile) -> Solution:
    """notebooks/05-ospf-lab: the routers addressed, OSPF on every interface (transit
    links point-to-point with the lab's fast timers), the PCs addressed with their router
    as gateway."""
    solution: Solution = {}
    for router, (objective, interfaces) in _OSPF_INTERFACES.items():
        lines: list[str] = []
        networks: list[str] = []
        for index, interface in enumerate(interfaces):
            address = address_of(lab, objective, index)
            lines += [f"interface {interface}", f"ip address {address}"]
            if interface != "eth2":
                lines += [
                    "ip ospf network point-to-point",
                    "ip ospf hello-interval 1",
                    "ip ospf dead-interval 4",
                ]
            lines.append("exit")
            networks.append(str(ipaddress.IPv4Interface(address).network))
        number = router.removeprefix("R")
        lines += ["router ospf", f"ospf router-id {'.'.join([number] * 4)}"]
        solution[router] = lines + [f"network {n} area 0" for n in networks]
    r1_lan = address_of(lab, "r1-addresses", 2).split("/")[0]
    r3_lan = address_of(lab, "r3-addresses", 2).split("/")[0]
    solution["PC1"] = [f"ip {address_of(lab, 'pc1-lan1')} {r1_lan}"]
    solution["PC2"] = [f"ip {address_of(lab, 'pc2-lan2')} {r3_lan}"]
    return solution


def ospf_lab_undo(lab: LabFile) -> dict[str, Solution]:
    """notebooks/05-ospf-lab: the lines taking out the faults that typing the solution
    again leaves in (a line the solution never types: an area, a passive interface, a
    second address)."""
    r2r3 = ipaddress.IPv4Interface(address_of(lab, "r2-addresses", 1)).network
    lan = address_of(lab, "r3-addresses", 2)
    host = lan.split("/")[0]
    return {
        "r2-area-mismatch": {
            "R2": ["router ospf", f"no network {r2r3} area 1", f"network {r2r3} area 0"]
        },
        "r3-passive-to-r1": {"R3": ["router ospf", "no passive-interface eth1"]},
        "r3-lan-wrong-mask": {
            "R3": ["interface eth2", f"no ip address {host}/25", f"ip address {lan}"]
        },
    }


_BGP_ROUTERS = {
    "R1": (
        65001,
        ("eth0", "eth1", "eth2"),
        (("r2-interfaces", 0, 65002), ("r3-interfaces", 1, 65003)),
    ),
    "R2": (65002, ("eth0", "eth1"), (("r1-interfaces", 0, 65001), ("r3-interfaces", 0, 65003))),
    "R3": (
        65003,
        ("eth0", "eth1", "eth2"),
        (("r2-interfaces", 1, 65002), ("r1-interfaces", 1, 65001)),
    ),
}
"""notebooks/06-bgp-lab: each router's AS, its interfaces (eth2 is its LAN) in the order
its `Rn-interfaces` objective names their addresses, and its peers (the objective naming
the peer's address, that address's index, the peer's AS)."""


def bgp_lab(lab: LabFile) -> Solution:
    """notebooks/06-bgp-lab: the routers addressed, each an AS peering by eBGP with its
    two neighbours (routes exchanged without policies, keepalives every second, a silent
    peer dropped after 3 s, a failed connection tried again after 1 s) and advertising its
    LAN; the PCs addressed with their router as gateway."""
    solution: Solution = {}
    for router, (asn, interfaces, peers) in _BGP_ROUTERS.items():
        objective = f"{router.lower()}-interfaces"
        lines: list[str] = []
        networks: list[str] = []
        for index, interface in enumerate(interfaces):
            address = address_of(lab, objective, index)
            lines += [f"interface {interface}", f"ip address {address}", "exit"]
            if interface == "eth2":
                networks.append(str(ipaddress.IPv4Interface(address).network))
        number = router.removeprefix("R")
        lines += [
            f"router bgp {asn}",
            f"bgp router-id {'.'.join([number] * 4)}",
            "no bgp ebgp-requires-policy",
            "timers bgp 1 3",
        ]
        for peer_objective, index, peer_as in peers:
            peer = address_of(lab, peer_objective, index).split("/")[0]
            lines += [f"neighbor {peer} remote-as {peer_as}", f"neighbor {peer} timers connect 1"]
        if networks:
            lines += ["address-family ipv4 unicast", *(f"network {n}" for n in networks)]
            lines.append("exit-address-family")
        solution[router] = lines
    r1_lan = address_of(lab, "r1-interfaces", 2).split("/")[0]
    r3_lan = address_of(lab, "r3-interfaces", 2).split("/")[0]
    solution["PC1"] = [f"ip {address_of(lab, 'pc1-lan')} {r1_lan}"]
    solution["PC2"] = [f"ip {address_of(lab, 'pc2-lan')} {r3_lan}"]
    return solution


def bgp_lab_undo(lab: LabFile) -> dict[str, Solution]:
    """notebooks/06-bgp-lab: the lines taking out the faults that typing the solution
    again leaves in (a second neighbour, a neighbour shut down)."""
    solution = bgp_lab(lab)
    r2r3 = ipaddress.IPv4Interface(address_of(lab, "r2-interfaces", 1)).network
    return {
        "r3-wrong-neighbor-address": {
            "R3": [*solution["R3"], "router bgp 65003", f"no neighbor {r2r3[4]}"]
        },
        "r2-session-to-r3-shut": {"R2": ["router bgp 65002", f"no neighbor {r2r3[3]} shutdown"]},
    }


SOLUTIONS: dict[str, Callable[[LabFile], Solution]] = {
    "04-graded-lab": graded_lab,
    "05-ospf-lab": ospf_lab,
    "06-bgp-lab": bgp_lab,
}
"""How each example notebook's lab is solved, by notebook name."""
UNDO: dict[str, Callable[[LabFile], Mapping[str, Solution]]] = {
    "05-ospf-lab": ospf_lab_undo,
    "06-bgp-lab": bgp_lab_undo,
}
"""Per notebook, fault id -> the lines that take the fault's configuration out, where
typing the solution again does not (a router keeps a line the solution does not undo)."""


async def solve(devices: Devices, project_id: str, lines: Solution) -> None:
    """Start the project's nodes and type each node's `lines` (in configuration mode on a
    router); `FaultStepError` when a device rejects one."""
    await devices.gns3.start_all(project_id)
    await _type_each(devices, project_id, lines)


async def _type_each(devices: Devices, project_id: str, lines: Solution) -> None:
    """Each node's `lines` typed, the nodes at once (each has its own console; a VPCS
    takes 3 s to check a new address is not a duplicate)."""
    await asyncio.gather(
        *(type_lines(devices, project_id, node, typed) for node, typed in lines.items())
    )


async def undo(
    devices: Devices,
    project_id: str,
    fault: Fault,
    solution: Solution,
    undo_lines: Solution | None = None,
) -> None:
    """Take `fault` out of the project: its cables made anew and its stopped nodes started
    (`undo_fault`), and its configuration lines overwritten by `undo_lines` when given,
    else by typing `solution` again on the nodes it configured."""
    await undo_fault(devices, project_id, fault, saved=[])
    configured = {step.node for step in fault.apply if isinstance(step, ConfigStep)}
    lines = undo_lines or {node: solution[node] for node in configured if node in solution}
    await _type_each(devices, project_id, lines)


async def each_fault(
    devices: Devices, project_id: str, lab: LabFile, notebook: str
) -> list[FaultOutcome]:
    """Solve the lab, then apply each of its faults in turn to its `working_lab`
    (verified, `check_all`) and take it out again, waiting until what passed once solved
    passes again (a network reconverging would otherwise pass or fail objectives by
    chance); each fault's outcome, in the lab's order. AssertionError when the lab does
    not come back."""
    solution = SOLUTIONS[notebook](lab)
    undo_lines = UNDO[notebook](lab) if notebook in UNDO else {}
    await solve(devices, project_id, solution)
    # a later stage's objective (a failover's) may pass while the routers converge
    working = working_lab(lab, [f.id for f in lab.faults])
    checked = await report(devices, project_id, working)
    solved = [r.id for r in checked.results if r.status == "pass"]
    outcomes = []
    for fault in lab.faults:
        outcome = await apply_fault(devices, project_id, working, fault.id, check_all=True)
        outcomes.append(outcome)
        await undo(devices, project_id, fault, solution, undo_lines.get(fault.id))
        back = await report(devices, project_id, lab, objectives=solved)
        failing = [f"{r.id}: {r.explanation}" for r in back.results if r.status != "pass"]
        if failing:
            raise AssertionError(f"the lab did not come back after {fault.id}: {failing}")
    return outcomes
