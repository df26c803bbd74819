"""Putting one of a lab's faults into a project, verified on the devices.

`apply_fault(devices, project_id, lab, fault_id)`:

1. checks the objectives the fault `breaks`: each must pass, else the fault is `refused`
   (a broken lab cannot take a fault: its symptom would not be the fault's), naming the
   ones that do not;
2. runs its steps, in order, with the instructor's rights (`devices.fault_steps`);
3. checks the broken objectives again until every one fails or the fault's `settle`
   seconds are over (routing takes a few seconds to notice a change): `applied` when
   they all fail, else `ineffective`, naming those still passing.

`undo_fault` takes a fault out again, as far as the devices allow (module
`objectives.exercises`). `working_lab` is the part of a lab its faults go into.

With `check_all`, every other objective is checked before (once, without its `wait`, in
the same run as what the fault breaks) and those that passed are checked again after
(with their `wait`, as the network settles): the ones that fail then are `also_broken`,
for a fault should break what it says and no more. What the fault breaks is checked
after without the checks' `wait` (this loop does the waiting).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ..devices.access import Devices
from ..devices.fault_steps import (
    filter_link,
    pull_cable,
    recable,
    restart_node,
    set_mtu,
    start_node,
    stop_node,
    type_lines,
)
from .fault_model import ConfigStep, Fault, FaultStep, LinkDownStep, LinkFilterStep, MtuStep
from .loader import check_data
from .model import LabFile
from .model_base import link_ports
from .results import ObjectiveResult
from .runner import report

FaultStatus = Literal["applied", "ineffective", "refused"]
POLL_INTERVAL = 1.0
"""Seconds between two checks of the broken objectives while the fault settles."""


class FaultOutcome(BaseModel):
    """What applying a fault did (module docstring). `before` and `after` hold the checked
    objectives' results; `seconds` is the whole time taken, checks included."""

    fault: str
    status: FaultStatus
    explanation: str
    before: list[ObjectiveResult] = Field(default_factory=list)
    after: list[ObjectiveResult] = Field(default_factory=list)
    also_broken: list[str] = Field(default_factory=list)
    seconds: float


async def apply_fault(
    devices: Devices,
    project_id: str,
    lab: LabFile,
    fault_id: str,
    *,
    check_all: bool = False,
    abort: asyncio.Event | None = None,
) -> FaultOutcome:
    """Apply the fault `fault_id` of `lab` (rendered for the student whose project it is)
    to `project_id` and verify it (module docstring). Raises `UnknownFault`, and
    `FaultStepError` when a step cannot be done (the project may then hold part of it)."""
    began = time.monotonic()
    fault = lab.require_fault(fault_id)
    quick = without_waits(lab)
    others = [o for o in lab.objective_ids() if o not in fault.breaks] if check_all else []
    before = await _check(
        without_waits(lab, others), [*fault.breaks, *others], devices, project_id, abort
    )
    not_passing = [r for r in before if r.id in fault.breaks and r.status != "pass"]
    if not_passing:
        return FaultOutcome(
            fault=fault.id,
            status="refused",
            explanation="The lab must pass what the fault breaks first; " + _listed(not_passing),
            before=before,
            seconds=time.monotonic() - began,
        )
    for step in fault.apply:
        await _run(step, devices, project_id, abort)
    after = await _settled(fault, quick, devices, project_id, abort)
    still = [r for r in after if r.status == "pass"]
    passed_before = [r.id for r in before if r.id in others and r.status == "pass"]
    others_after = await _check(lab, passed_before, devices, project_id, abort)
    also = [r.id for r in others_after if r.status != "pass"]
    return FaultOutcome(
        fault=fault.id,
        status="ineffective" if still else "applied",
        explanation=(
            f"Applied, but these still pass: {', '.join(r.id for r in still)}."
            if still
            else f"Applied: {', '.join(fault.breaks)} fail as intended."
        ),
        before=before,
        after=[*after, *others_after],
        also_broken=also,
        seconds=time.monotonic() - began,
    )


async def undo_fault(
    devices: Devices, project_id: str, fault: Fault, saved: Sequence[str]
) -> list[str]:
    """Take `fault` out of the project: each node its lines went to restarted when its
    configuration was saved before (`saved`: it comes back with it), each cable it pulled
    or filtered made anew, each node it stopped started, each MTU it set taken out (the
    node restarts on its configuration, saved then). What could not be undone, as
    sentences (lines typed on a node whose configuration was not saved: a Linux shell's).
    Raises `FaultStepError`."""
    left: list[str] = []
    restarted: set[str] = set()
    for step in fault.apply:
        if isinstance(step, ConfigStep):
            if step.node not in saved:
                left.append(f"{step.node} keeps the change ({'; '.join(step.lines)})")
            elif step.node not in restarted:
                await restart_node(devices, project_id, step.node)
                restarted.add(step.node)
        elif isinstance(step, LinkDownStep | LinkFilterStep):
            ports = link_ports(step.link)
            await recable(devices, project_id, (ports.a, ports.a_port, ports.b, ports.b_port))
        elif isinstance(step, MtuStep):
            await set_mtu(devices, project_id, step.node, step.interface, None)
            restarted.add(step.node)
        else:
            await start_node(devices, project_id, step.node)
    return left


def working_lab(lab: LabFile, fault_ids: Sequence[str]) -> LabFile:
    """`lab` as the faults `fault_ids` go into it: the stages up to the last one a fault
    belongs to, and of the later stages only the objectives a fault breaks (a fault
    without a stage: the whole lab). Later stages are other states of the lab (a link
    taken down for a failover), which the working lab does not pass."""
    faults = [lab.require_fault(fault_id) for fault_id in fault_ids]
    if not faults or any(f.stage is None for f in faults):
        return lab
    index = {stage.id: i for i, stage in enumerate(lab.stages)}
    last = max(index[f.stage] for f in faults if f.stage is not None)
    broken = {o for f in faults for o in f.breaks}
    stages = lab.stages[: last + 1]
    for stage in lab.stages[last + 1 :]:
        kept = [o for o in stage.objectives if o.id in broken]
        if kept:
            stages.append(stage.model_copy(update={"objectives": kept}))
    return lab.model_copy(update={"stages": stages})


def without_waits(lab: LabFile, objectives: Collection[str] | None = None) -> LabFile:
    """`lab` with the `wait` of every check (of the `objectives` named, when given) at 0:
    such a check decides on its first try."""
    data = lab.model_dump(by_alias=True, exclude_unset=True)
    for path, check in check_data(data):
        _, s, _, o, *_ = path
        chosen = objectives is None or data["stages"][s]["objectives"][o]["id"] in objectives
        if chosen and "wait" in check:
            check["wait"] = 0
    return LabFile.model_validate(data)


async def _check(
    lab: LabFile,
    ids: Sequence[str],
    devices: Devices,
    project_id: str,
    abort: asyncio.Event | None,
) -> list[ObjectiveResult]:
    if not ids:
        return []
    return (await report(devices, project_id, lab, objectives=ids, abort=abort)).results


async def _settled(
    fault: Fault,
    lab: LabFile,
    devices: Devices,
    project_id: str,
    abort: asyncio.Event | None,
) -> list[ObjectiveResult]:
    """The broken objectives checked until none passes or `fault.settle` is over."""
    deadline = time.monotonic() + fault.settle
    while True:
        after = await _check(lab, fault.breaks, devices, project_id, abort)
        if all(r.status != "pass" for r in after) or time.monotonic() >= deadline:
            return after
        await asyncio.sleep(POLL_INTERVAL)


async def _run(
    step: FaultStep, devices: Devices, project_id: str, abort: asyncio.Event | None
) -> None:
    if isinstance(step, ConfigStep):
        await type_lines(devices, project_id, step.node, step.lines, abort=abort)
        return
    if isinstance(step, LinkDownStep | LinkFilterStep):
        ports = link_ports(step.link)
        ends = (ports.a, ports.a_port, ports.b, ports.b_port)
        if isinstance(step, LinkDownStep):
            await pull_cable(devices, project_id, ends)
        else:
            await filter_link(devices, project_id, ends, step.filters())
        return
    if isinstance(step, MtuStep):
        await set_mtu(devices, project_id, step.node, step.interface, step.mtu, abort=abort)
        return
    await stop_node(devices, project_id, step.node, abort)


def _listed(results: Sequence[ObjectiveResult]) -> str:
    return "; ".join(f"{r.id} is {r.status}: {r.explanation}" for r in results)
