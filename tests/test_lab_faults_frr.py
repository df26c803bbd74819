"""The routing lab's faults on real FRR routers: the example OSPF lab (three routers in a
triangle, two PCs) built on the real local GNS3 lab and solved by console, then each of
its faults applied, verified on the devices and taken out again."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.objectives.faults import FaultOutcome
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.testing.local_stack import (
    EXAMPLES,
    NOTEBOOK_PROJECTS,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.solved_labs import SOLUTIONS, admin_access, each_fault

OSPF_LAB = EXAMPLES / "05-ospf-lab.lab.yaml"
ROUTING_CAUSES = {"area", "dead", "passive", "network statement", "mask", "link", "mtu"}
"""Kinds of routing fault the example OSPF lab must hold, by a word of their diagnosis."""


def test_the_example_labs_ship_at_least_twelve_faults_with_routing_ones() -> None:
    """Across the example labs there are at least 12 faults, each with a solution to
    apply it to, and the OSPF lab's cover an area mismatch, a dead interval mismatch, a
    passive interface, a missing network statement, a wrong mask, a pulled cable and an
    MTU mismatch."""
    labs = {path.name.removesuffix(".lab.yaml"): path for path in EXAMPLES.glob("*.lab.yaml")}
    faults = {name: load_lab(Path(path).read_text()).lab.faults for name, path in labs.items()}
    assert sum(len(found) for found in faults.values()) >= 12
    assert all(name in SOLUTIONS for name, found in faults.items() if found)
    words = {w for fault in faults["05-ospf-lab"] for w in fault.diagnosis.words}
    assert words >= ROUTING_CAUSES, ROUTING_CAUSES - words


@pytest.fixture(scope="module")
def ospf_lab(gns3_lab: Any, gns3_http: httpx.Client) -> Iterator[tuple[Any, str, LabFile]]:
    """The example OSPF lab's project (routers blank) and its lab file for one student."""
    recipe = dataclasses.replace(
        NOTEBOOK_PROJECTS["05-ospf-lab"], name=f"pytest-ospf-faults-{uuid.uuid4().hex[:8]}"
    )
    ids = prepare_projects(gns3_lab, [recipe])
    try:
        yield gns3_lab, ids[recipe.name], load_lab(OSPF_LAB.read_text()).for_student("s", "x")
    finally:
        delete_projects(gns3_lab, ids.values())


async def _outcomes(lab_server: Any, project_id: str, lab: LabFile) -> list[FaultOutcome]:
    async with admin_access(lab_server) as access:
        devices = access.devices
        return await each_fault(devices, project_id, lab, "05-ospf-lab")


@pytest.mark.slow
def test_each_ospf_fault_breaks_what_it_says_and_no_more(
    ospf_lab: tuple[Any, str, LabFile],
) -> None:
    """On the solved OSPF lab each fault is applied on the routers (configuration lines
    typed in vtysh's configuration mode, a cable pulled): the objectives it names fail
    once OSPF notices, and every other objective that passed still passes."""
    outcomes = asyncio.run(_outcomes(*ospf_lab))
    problems = []
    for outcome in outcomes:
        broken = sorted(r.id for r in outcome.after if r.status != "pass")
        print(f"{outcome.fault}: {outcome.status} in {outcome.seconds:.1f} s, broken {broken}")
        if outcome.status != "applied" or outcome.also_broken:
            problems.append(f"{outcome.fault}: {outcome.explanation} {outcome.also_broken}")
    assert len(outcomes) == 7
    assert not problems, "\n".join(problems)
