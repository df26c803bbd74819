"""A lab's faults: the `faults:` section of the lab file (its errors with their lines) and
faults applied to a real lab, verified on its devices (the example graded lab, built on
the real local GNS3 lab, configured by console as a student would)."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.devices.fault_steps import FaultStepError
from jupyter_gns3_copilot.objectives.errors import LabFileError, UnknownFault
from jupyter_gns3_copilot.objectives.faults import apply_fault
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.view import lab_view
from jupyter_gns3_copilot.testing.local_stack import (
    EXAMPLES,
    NOTEBOOK_PROJECTS,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.solved_labs import admin_access, each_fault

GRADED = EXAMPLES / "04-graded-lab.lab.yaml"
LAB = """\
title: A fault
stages:
  - id: one
    title: One
    objectives:
      - id: pc1-up
        text: PC1 runs
        check: {kind: node_running, node: PC1}
"""

AFTER_LAB = LAB.count("\n")
"""Lines of `LAB`: the faults appended to it start on the next one."""


def _problems(faults: str) -> list[str]:
    with pytest.raises(LabFileError) as raised:
        load_lab(LAB + faults)
    return [f"{p.line}: {p.message}" for p in raised.value.problems]


def test_a_faults_mistakes_are_reported_with_their_lines() -> None:
    """A fault breaking an objective the lab lacks, starting at an unknown stage, reusing
    an id, naming a link in another shape, filtering nothing, or setting an MTU out of
    range or on no interface name is refused with the line of the mistake."""
    problems = _problems(
        """\
faults:
  - id: f1
    description: x
    stage: two
    breaks: [pc9-up]
    apply: [{kind: node_stopped, node: PC1}]
    diagnosis: {device: PC1, cause: stopped, words: [stopped]}
  - id: f1
    description: y
    breaks: [pc1-up]
    apply:
      - {kind: link_down, link: PC1 to SW1}
      - {kind: link_filter, link: PC1 e0 - SW1 e0}
      - {kind: mtu, node: R1, interface: eth1, mtu: 100}
      - {kind: mtu, node: R1, interface: "eth1; reboot", mtu: 1400}
    diagnosis: {device: PC1, cause: down, words: [down]}
"""
    )
    assert problems == [
        f"{AFTER_LAB + 12}: 'PC1 to SW1' names no link; write it as 'PC1 e0 - SW1 e1'",
        f"{AFTER_LAB + 13}: a link_filter step sets packet_loss, delay_ms or corrupt",
        f"{AFTER_LAB + 14}: an MTU is 576 to 9000 bytes, not 100",
        f"{AFTER_LAB + 15}: 'eth1; reboot' is no interface name: letters, digits, dots and "
        "dashes, as eth1 (15 at most)",
    ]
    problems = _problems(
        """\
faults:
  - id: f1
    description: x
    stage: two
    breaks: [pc9-up]
    apply: [{kind: node_stopped, node: PC1}]
    diagnosis: {device: PC1, cause: stopped, words: [stopped]}
  - id: f1
    description: y
    breaks: [pc1-up]
    apply: [{kind: node_stopped, node: PC1}]
    diagnosis: {device: PC1, cause: stopped, words: [stopped]}
"""
    )
    assert problems == [
        f"{AFTER_LAB + 4}: no stage 'two' (stages: one)",
        f"{AFTER_LAB + 5}: no objective 'pc9-up' in the lab",
        f"{AFTER_LAB + 8}: another fault has the id 'f1'",
    ]


def test_the_graded_labs_faults_render_per_student_and_stay_out_of_the_students_view() -> None:
    """The example lab's faults load, name only nodes of its project, render with each
    student's own addresses, and the lab's view (what a student receives) holds none of
    them, only that exercises can be started (the Objectives panel offers them then); an
    unknown fault is refused naming the lab's faults."""
    document = load_lab(GRADED.read_text())
    assert len(document.lab.faults) >= 7
    assert not document.node_problems(["PC1", "PC2", "PC3", "R1", "Switch1", "Switch2"])
    assert [p.message for p in document.node_problems(["PC1"])]
    alice, bob = (document.for_student(user, "salt") for user in ("alice", "bob"))
    lines = {lab.require_fault("pc1-wrong-gateway").apply[0].lines[0] for lab in (alice, bob)}  # type: ignore[union-attr]
    assert len(lines) == 2 and not any("{{" in line for line in lines)
    assert lab_view(alice).exercises
    assert not lab_view(alice.model_copy(update={"faults": []})).exercises
    view = lab_view(alice).model_dump_json()
    for fault in alice.faults:
        assert fault.id not in view and fault.description not in view
    with pytest.raises(UnknownFault, match="pc1-wrong-gateway"):
        alice.require_fault("nope")


# -- on the real lab ---------------------------------------------------------------------------

USER = "student-faults"


@pytest.fixture(scope="module")
def graded_lab(gns3_lab: Any, gns3_http: httpx.Client) -> Iterator[tuple[Any, str, LabFile]]:
    """The example graded lab's project (fresh: nothing configured) and its lab file for
    one student."""
    recipe = dataclasses.replace(
        NOTEBOOK_PROJECTS["04-graded-lab"], name=f"pytest-faults-{uuid.uuid4().hex[:8]}"
    )
    ids = prepare_projects(gns3_lab, [recipe])
    try:
        lab = load_lab(GRADED.read_text()).for_student(USER, "salt")
        yield gns3_lab, ids[recipe.name], lab
    finally:
        delete_projects(gns3_lab, ids.values())


async def _each_fault(lab_server: Any, project_id: str, lab: LabFile) -> list[str]:
    problems: list[str] = []
    async with admin_access(lab_server) as access:
        devices = access.devices
        refused = await apply_fault(devices, project_id, lab, "pc1-wrong-gateway")
        assert refused.status == "refused", refused
        assert "pc1-gateway is fail" in refused.explanation, refused.explanation
        for outcome in await each_fault(devices, project_id, lab, "04-graded-lab"):
            broken = sorted(r.id for r in outcome.after if r.status != "pass")
            print(f"{outcome.fault}: {outcome.status} in {outcome.seconds:.1f} s, broken {broken}")
            if outcome.status != "applied" or outcome.also_broken:
                problems.append(f"{outcome.fault}: {outcome.explanation} {outcome.also_broken}")
        # each_fault left the lab solved (it checks so), and a rejected line changes nothing
        bad_line = {"kind": "config", "node": "R1", "lines": ["gibberish"]}
        with pytest.raises(FaultStepError, match="refused"):
            await apply_fault(devices, project_id, _with_fault(lab, bad_line), "f")
        # an MTU needs a kernel command line (a lab kit router's)
        pc_mtu = {"kind": "mtu", "node": "PC1", "interface": "eth0", "mtu": 1400}
        with pytest.raises(FaultStepError, match="PC1 has no kernel command line"):
            await apply_fault(devices, project_id, _with_fault(lab, pc_mtu), "f")
        noop = {"kind": "config", "node": "PC1", "lines": ["show ip"]}
        ineffective = await apply_fault(devices, project_id, _with_fault(lab, noop), "f")
        assert ineffective.status == "ineffective", ineffective
        assert "pc1-pc3" in ineffective.explanation
    return problems


def _with_fault(lab: LabFile, step: dict[str, object]) -> LabFile:
    """`lab` with one more fault `f` of the one `step` (a line R1's shell rejects, one
    changing nothing, an MTU...)."""
    fault = {
        "id": "f",
        "description": "test",
        "breaks": ["pc1-pc3"],
        "apply": [step],
        "diagnosis": {"device": "PC1", "cause": "none", "words": ["none"]},
        "settle": 0,
    }
    data = lab.model_dump(by_alias=True, exclude_unset=True)
    return LabFile.model_validate({**data, "faults": [fault]})


@pytest.mark.slow
def test_each_fault_of_the_graded_lab_breaks_what_it_says_and_no_more(
    graded_lab: tuple[Any, str, LabFile],
) -> None:
    """On the fresh lab a fault is refused (what it breaks does not pass yet); on the
    solved lab each of the example's faults is applied: the objectives it names fail,
    and every other objective that passed still passes. A line the device rejects stops
    the fault with the device's answer; a fault that breaks nothing is `ineffective`."""
    lab_server, project_id, lab = graded_lab
    problems = asyncio.run(_each_fault(lab_server, project_id, lab))
    assert not problems, "\n".join(problems)
