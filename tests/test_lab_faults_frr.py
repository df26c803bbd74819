"""The routing labs' faults on real FRR routers: the example OSPF lab (three routers in a
triangle, two PCs) built on the real local GNS3 lab and solved by console, then each of
its faults applied, verified on the devices and taken out again; then, on the same
routers (the BGP lab's triangle is the same), OSPF taken out and the example BGP lab
solved and faulted the same way."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.devices.fault_steps import pull_cable, recable, type_lines
from jupyter_gns3_copilot.objectives.faults import FaultOutcome
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.results import ObjectiveResult
from jupyter_gns3_copilot.objectives.runner import report
from jupyter_gns3_copilot.testing.local_stack import (
    EXAMPLES,
    NOTEBOOK_PROJECTS,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.solved_labs import (
    SOLUTIONS,
    Solution,
    admin_access,
    each_fault,
)

OSPF_LAB = EXAMPLES / "05-ospf-lab.lab.yaml"
BGP_LAB = EXAMPLES / "06-bgp-lab.lab.yaml"
ROUTING_CAUSES = {"area", "dead", "passive", "network statement", "mask", "link", "mtu"}
"""Kinds of routing fault the example OSPF lab must hold, by a word of their diagnosis."""
BGP_CAUSES = {"remote-as", "neighbor address", "network statement"}
"""Kinds of fault the example BGP lab must hold: a wrong remote AS, a wrong neighbour
address, a LAN not advertised."""


def test_the_example_labs_ship_at_least_twelve_faults_with_routing_ones() -> None:
    """Across the example labs there are at least 12 faults, each with a solution to
    apply it to; the OSPF lab's cover an area mismatch, a dead interval mismatch, a
    passive interface, a missing network statement, a wrong mask, a pulled cable and an
    MTU mismatch, and the BGP lab's a wrong remote AS, a wrong neighbour address and a LAN
    not advertised."""
    labs = {path.name.removesuffix(".lab.yaml"): path for path in EXAMPLES.glob("*.lab.yaml")}
    faults = {name: load_lab(Path(path).read_text()).lab.faults for name, path in labs.items()}
    assert sum(len(found) for found in faults.values()) >= 12
    assert all(name in SOLUTIONS for name, found in faults.items() if found)
    words = {w for fault in faults["05-ospf-lab"] for w in fault.diagnosis.words}
    assert words >= ROUTING_CAUSES, ROUTING_CAUSES - words
    bgp_words = {w for fault in faults["06-bgp-lab"] for w in fault.diagnosis.words}
    assert bgp_words >= BGP_CAUSES, BGP_CAUSES - bgp_words


@dataclasses.dataclass
class RoutersProject:
    """The module's triangle project and the example lab last solved on it, if any."""

    lab_server: Any
    project_id: str
    solved: Solution | None = None


@pytest.fixture(scope="module")
def triangle(gns3_lab: Any, gns3_http: httpx.Client) -> Iterator[RoutersProject]:
    """The example OSPF lab's project (routers blank), for the OSPF lab and then the BGP
    lab: both are the same triangle, so its routers boot once."""
    recipe = dataclasses.replace(
        NOTEBOOK_PROJECTS["05-ospf-lab"], name=f"pytest-routing-faults-{uuid.uuid4().hex[:8]}"
    )
    ids = prepare_projects(gns3_lab, [recipe])
    try:
        yield RoutersProject(gns3_lab, ids[recipe.name])
    finally:
        delete_projects(gns3_lab, ids.values())


def _taken_out(solution: Solution) -> Solution:
    """The lines that take a solved lab's routing out of the routers: OSPF and BGP
    stopped, each address the solution gave removed (the next lab's subnets differ)."""
    lines: Solution = {}
    for node, typed in solution.items():
        if not node.startswith("R"):
            continue
        lines[node] = []
        for line in typed:
            if line.startswith(("interface ", "router ")):
                context = line
            if line.startswith("ip address "):
                lines[node] += [context, f"no {line}", "exit"]
            if line.startswith("router "):
                lines[node].append(f"no {line}")
    return lines


async def _outcomes(triangle: RoutersProject, lab: LabFile, notebook: str) -> list[FaultOutcome]:
    async with admin_access(triangle.lab_server) as access:
        devices = access.devices
        if triangle.solved is not None:
            taken_out = _taken_out(triangle.solved)
            await asyncio.gather(
                *(
                    type_lines(devices, triangle.project_id, node, lines)
                    for node, lines in taken_out.items()
                )
            )
        triangle.solved = SOLUTIONS[notebook](lab)
        return await each_fault(devices, triangle.project_id, lab, notebook)


async def _failover(triangle: RoutersProject, lab: LabFile) -> list[ObjectiveResult]:
    """The failover stage's results with the R1 - R3 cable pulled (made anew after)."""
    r1_r3 = ("R1", "e1", "R3", "e1")
    async with admin_access(triangle.lab_server) as access:
        await pull_cable(access.devices, triangle.project_id, r1_r3)
        try:
            checked = await report(access.devices, triangle.project_id, lab, stage="failover")
        finally:
            await recable(access.devices, triangle.project_id, r1_r3)
    return checked.results


def _problems(outcomes: list[FaultOutcome]) -> list[str]:
    """Each fault that did not break what it says, or broke more."""
    problems = []
    for outcome in outcomes:
        broken = sorted(r.id for r in outcome.after if r.status != "pass")
        print(f"{outcome.fault}: {outcome.status} in {outcome.seconds:.1f} s, broken {broken}")
        if outcome.status != "applied" or outcome.also_broken:
            problems.append(f"{outcome.fault}: {outcome.explanation} {outcome.also_broken}")
    return problems


@pytest.mark.slow
def test_each_ospf_fault_breaks_what_it_says_and_no_more(triangle: RoutersProject) -> None:
    """On the solved OSPF lab each fault is applied on the routers (configuration lines
    typed in vtysh's configuration mode, a cable pulled): the objectives it names fail
    once OSPF notices, and every other objective that passed still passes."""
    lab = load_lab(OSPF_LAB.read_text()).for_student("s", "x")
    outcomes = asyncio.run(_outcomes(triangle, lab, "05-ospf-lab"))
    problems = _problems(outcomes)
    assert len(outcomes) == 7
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_each_bgp_fault_breaks_what_it_says_and_no_more_and_the_failover_passes(
    triangle: RoutersProject,
) -> None:
    """On the same routers, OSPF taken out and the BGP lab solved, each BGP fault (a wrong
    remote AS, a wrong neighbour address, a LAN not advertised, a session shut down) is
    typed in vtysh: the objectives it names fail once BGP notices, and every other
    objective that passed still passes. Then, the R1 - R3 cable pulled, the failover
    stage passes: R1 reaches LAN 2 through R2, with the AS path 65002 65003."""
    lab = load_lab(BGP_LAB.read_text()).for_student("s", "x")
    outcomes = asyncio.run(_outcomes(triangle, lab, "06-bgp-lab"))
    problems = _problems(outcomes)
    assert len(outcomes) == 4
    assert not problems, "\n".join(problems)
    failover = asyncio.run(_failover(triangle, lab))
    assert [r.id for r in failover] == ["still-reaches", "rerouted", "as-path"]
    assert all(r.status == "pass" for r in failover), [r.explanation for r in failover]
