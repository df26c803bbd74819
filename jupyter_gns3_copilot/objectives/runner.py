"""Checking a lab's objectives on the real devices.

`check_lab(devices, project_id, lab, abort=..., stage=..., objectives=...)` yields one
`ObjectiveResult` per selected objective as soon as it is decided (objectives run
concurrently, those capturing traffic after all the others; the console pool makes
commands of one device take turns). Each objective
has a time limit: `CHECK_TIMEOUT` plus the longest `wait` of its checks; past it the
objective is an error, never a hang.
`report(...)` gathers them with their summary.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, AsyncIterator, Sequence

from ..devices.access import Devices
from .checks import decide
from .devices import DeviceAccess
from .errors import UnknownSelection
from .model import LabFile, Objective, Stage, TrafficCheck
from .results import CheckReport, CheckVerdict, ObjectiveResult, combined, summarize

CHECK_TIMEOUT = 30.0
"""Seconds an objective's checks may take, on top of the longest `wait` among them."""


def select(
    lab: LabFile, stage: str | None = None, objectives: Sequence[str] | None = None
) -> list[tuple[Stage, Objective]]:
    """The objectives to check: all, those of `stage`, or those named (in lab order).
    Raises `UnknownStage` for a stage the lab does not have, `UnknownSelection` for an
    objective."""
    if stage is not None:
        lab.require_stage(stage)
    chosen = [(s, o) for s in lab.stages if stage in (None, s.id) for o in s.objectives]
    if objectives:
        known_ids = {o.id for _, o in chosen}
        missing = [o for o in objectives if o not in known_ids]
        if missing:
            where = f" in stage {stage!r}" if stage else ""
            raise UnknownSelection(
                f"no objective {', '.join(map(repr, missing))}{where} "
                f"(objectives: {', '.join(sorted(known_ids))})"
            )
        chosen = [(s, o) for s, o in chosen if o.id in objectives]
    return chosen


async def check_lab(
    devices: Devices,
    project_id: str,
    lab: LabFile,
    *,
    abort: asyncio.Event | None = None,
    stage: str | None = None,
    objectives: Sequence[str] | None = None,
    timeout: float = CHECK_TIMEOUT,
) -> AsyncIterator[ObjectiveResult]:
    """Yield each selected objective's result on `project_id`'s devices as it is decided
    (module docstring; `abort` stops the run with `ConsoleAborted`). Raises
    `UnknownSelection` before checking anything."""
    chosen = select(lab, stage, objectives)
    access = DeviceAccess(devices, project_id, abort)
    # A capture counts the packets crossing a link: the pings of other checks running
    # meanwhile would count too, so objectives that capture run after all the others.
    first = [(s, o) for s, o in chosen if not _captures(o)]
    last = [(s, o) for s, o in chosen if _captures(o)]
    tasks: list[asyncio.Future[ObjectiveResult]] = []
    try:
        for batch in (first, last):
            started = [
                asyncio.ensure_future(_check_objective(s, o, access, timeout)) for s, o in batch
            ]
            tasks += started
            for next_done in asyncio.as_completed(started):
                yield await next_done
    finally:
        for task in tasks:
            task.cancel()
        access.close()


def _captures(objective: Objective) -> bool:
    return any(isinstance(check, TrafficCheck) for check in objective.checks)


async def report(
    devices: Devices,
    project_id: str,
    lab: LabFile,
    *,
    abort: asyncio.Event | None = None,
    stage: str | None = None,
    objectives: Sequence[str] | None = None,
    timeout: float = CHECK_TIMEOUT,
) -> CheckReport:
    """Every selected objective's result, in the lab's order, with the summary."""
    results = check_lab(
        devices, project_id, lab, abort=abort, stage=stage, objectives=objectives, timeout=timeout
    )
    return await collect(lab, results)


async def collect(lab: LabFile, results: AsyncIterable[ObjectiveResult]) -> CheckReport:
    """`results` (of `lab`'s objectives, in any order) in the lab's order, with the summary."""
    gathered = [r async for r in results]
    summary = summarize(lab, gathered)
    return CheckReport(results=summary.in_lab_order(gathered), **summary.model_dump())


async def _check_objective(
    stage: Stage, objective: Objective, devices: DeviceAccess, timeout: float
) -> ObjectiveResult:
    started = time.monotonic()
    limit = timeout + max(getattr(c, "wait", 0) for c in objective.checks)
    try:
        decided = asyncio.gather(*(decide(check, devices) for check in objective.checks))
        verdicts = list(await asyncio.wait_for(decided, limit))
    except asyncio.TimeoutError:
        verdict = CheckVerdict(
            status="error", explanation=f"The check took longer than {limit:g} s."
        )
    else:
        if objective.check is not None:
            verdict = verdicts[0]
        else:
            verdict = combined("all" if objective.all is not None else "any", verdicts)
    return ObjectiveResult(
        id=objective.id,
        stage=stage.id,
        text=objective.text,
        status=verdict.status,
        points=objective.points,
        points_awarded=objective.points if verdict.status == "pass" else 0,
        explanation=verdict.explanation,
        evidence=verdict.evidence,
        duration_ms=round((time.monotonic() - started) * 1000),
    )
