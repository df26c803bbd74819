"""Running the benchmark: each fault of a lab put into its working project and the copilot
asked to find and fix it, as a student would, with its changes approved.

`evaluate(lab_access, project_id, plan, model, data_dir)`:

1. checks every objective of the working lab (`working_lab`: the stages up to the last
   one the faults belong to, and what they break; a later stage, such as a failover with
   a link down, is another state of the lab): the project must pass them all (else
   `LabNotWorking`, naming what fails); the rest of the run knows those stages only;
2. saves the devices' configurations (`devices.saving`), stops the lab, takes a GNS3
   snapshot of it and starts it again (GNS3 snapshots a stopped lab only), and checks
   every objective again (`LabNotWorking` when a configuration could not be saved);
3. for each fault and run: restores that snapshot (nodes started, consoles ready; the
   first run starts from the lab just checked), applies the fault
   (`objectives.faults.apply_fault`; refused or ineffective: recorded, skipped), sends
   the copilot the symptom (`scoring.symptom`, from the failing objectives' texts) in a
   new chat, in the plan's mode, with the lab's objectives unless told not to, every
   change approved, then checks every objective; while what the fault broke still fails
   and turns are left (`max_turns`), it says so in the same chat and checks again;
4. restores the snapshot once more, leaving the project working.

The copilot runs in-process (`chat.AgentService`, its history under `data_dir`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from ..agent.llm_access import ModelSettings
from ..chat.options import TurnOptions
from ..chat.service import AgentService
from ..chat.settings import ChatSettings
from ..console import ConsoleError, ConsoleTargetError, DialectError
from ..devices.access import Devices
from ..devices.fault_steps import FaultStepError
from ..devices.saving import SavedConfiguration, save_configurations
from ..events import ContentEvent, DoneEvent, ErrorEvent, ToolEndEvent, ToolStartEvent
from ..gns3 import GNS3Error, Snapshot
from ..objectives.fault_model import Fault
from ..objectives.faults import apply_fault, working_lab
from ..objectives.hints import TurnObjectives, configuring_judge
from ..objectives.model import LabFile
from ..objectives.results import ObjectiveResult
from ..objectives.runner import report
from ..objectives.service import project_dialects
from ..tools import LabAccess
from ..tools.modes import LAB_AUTOMATION, TEACHING
from .scoring import RunScore, cost, is_diagnosed, symptom

EvalMode = Literal["lab", "teaching"]
MODES: dict[str, str] = {"lab": LAB_AUTOMATION, "teaching": TEACHING}
"""The benchmark's modes and the copilot modes they run in."""
EVAL_USER = "copilot-eval"
"""The user the benchmark's chats belong to."""
READY_TIMEOUT = 300.0
"""Seconds a restored node's console may take to show its prompt."""
STILL_BROKEN = "It still does not work: "
"""How a follow-up turn starts (the symptom of what still fails comes after it)."""

Progress = Callable[[str], None]


class LabNotWorking(Exception):
    """The project is not the working lab: `str()` lists the objectives that do not pass."""


@dataclass(frozen=True)
class EvalPlan:
    """What to run: `faults` of `lab` (ids; empty: all), `runs` times each, in `mode`,
    with at most `max_turns` messages per run; prices per million tokens for the cost.
    `objectives`: the copilot has the lab's objectives, as a student's has (the
    `check_objectives` tool; in teaching mode the stage's texts and hints policy)."""

    lab: LabFile
    faults: Sequence[str] = ()
    runs: int = 1
    mode: EvalMode = "lab"
    max_turns: int = 1
    objectives: bool = True
    price_in: float | None = None
    price_out: float | None = None

    def fault_ids(self) -> list[str]:
        """The faults to run, checked (`UnknownFault` names the lab's faults)."""
        ids = list(self.faults) or [f.id for f in self.lab.faults]
        return [self.lab.require_fault(fault_id).id for fault_id in ids]


@dataclass
class _Turn:
    """What one copilot turn gave."""

    answer: str = ""
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    errors: list[str] = field(default_factory=list)


async def evaluate(
    lab_access: LabAccess,
    project_id: str,
    plan: EvalPlan,
    model: ModelSettings,
    data_dir: Path,
    *,
    progress: Progress | None = None,
    on_score: Callable[[RunScore], None] | None = None,
) -> list[RunScore]:
    """Run `plan` on `project_id` with the copilot on `model` (module docstring); the
    scores of every run, in order, each also given to `on_score` as soon as it is known
    and `progress` told what happens. Raises `LabNotWorking` (also when the restarted lab
    no longer passes: a configuration could not be saved), `UnknownFault`."""
    say = progress or (lambda _: None)
    faults = plan.fault_ids()
    plan = dataclasses.replace(plan, lab=working_lab(plan.lab, faults))
    devices = lab_access.devices
    failing = await _not_passing(devices, project_id, plan.lab)
    if failing:
        raise LabNotWorking(
            "The project must be the working lab (every objective passing) before faults "
            "go in; these do not pass: " + _listed(failing)
        )
    snapshot, unsaved = await snapshot_working_lab(devices, project_id)
    for node in unsaved:
        say(f"{node.node}'s configuration could not be saved: {node.problem}")
    failing = await _not_passing(devices, project_id, plan.lab)
    if failing:
        lost = "; ".join(f"{s.node}: {s.problem}" for s in unsaved) or "none"
        raise LabNotWorking(
            "The lab stopped working once restarted (GNS3 snapshots a stopped lab, so every "
            f"fault starts from a restart): {_listed(failing)}. Configurations that could "
            f"not be saved: {lost}."
        )
    service = await AgentService.open(
        project_id, ChatSettings(data_dir, default_mode=MODES[plan.mode]), lab=lab_access
    )
    scores: list[RunScore] = []
    try:
        for fault_id in faults:
            for run in range(1, plan.runs + 1):
                if scores:  # the first run starts from the lab just restarted and checked
                    say(f"{fault_id} run {run}: restoring the working lab")
                    await restore(devices, project_id, snapshot)
                score = await _run(service, devices, project_id, plan, model, fault_id, run)
                say(f"{fault_id} run {run}: {_verdict(score)}")
                scores.append(score)
                if on_score is not None:
                    on_score(score)
    finally:
        await service.close()
        await restore(devices, project_id, snapshot)
    return scores


async def snapshot_working_lab(
    devices: Devices, project_id: str
) -> tuple[Snapshot, list[SavedConfiguration]]:
    """Save the devices' configurations, stop the lab, snapshot it, start it again; the
    snapshot and the configurations that could not be saved."""
    unsaved = [s for s in await save_configurations(devices, project_id) if not s.saved]
    name = "copilot-eval " + datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    await devices.gns3.stop_all(project_id)
    snapshot = await devices.gns3.create_snapshot(project_id, name)
    await _started(devices, project_id)
    return snapshot, unsaved


async def _not_passing(devices: Devices, project_id: str, lab: LabFile) -> list[ObjectiveResult]:
    return [r for r in (await report(devices, project_id, lab)).results if r.status != "pass"]


def _listed(results: Sequence[ObjectiveResult]) -> str:
    return "; ".join(f"{r.text}: {r.explanation}" for r in results)


async def restore(devices: Devices, project_id: str, snapshot: Snapshot) -> None:
    """Bring the project back to `snapshot`, its nodes started and their consoles ready.
    Looked up by name: GNS3 gives snapshots new ids when a restore reloads the project."""
    [again] = [s for s in await devices.gns3.list_snapshots(project_id) if s.name == snapshot.name]
    await devices.gns3.restore_snapshot(project_id, again.snapshot_id)
    await _started(devices, project_id)


async def _started(devices: Devices, project_id: str) -> None:
    await devices.gns3.start_all(project_id)
    targets = []
    for node in await devices.nodes(project_id):
        if node.console is None or node.console_type != "telnet":
            continue
        try:
            targets.append(await devices.console_target(node))
        except (ConsoleTargetError, DialectError):
            continue
    waits = (devices.consoles.wait_ready(t, timeout=READY_TIMEOUT) for t in targets)
    await asyncio.gather(*waits)


async def _run(
    service: AgentService,
    devices: Devices,
    project_id: str,
    plan: EvalPlan,
    model: ModelSettings,
    fault_id: str,
    run: int,
) -> RunScore:
    fault = plan.lab.require_fault(fault_id)
    try:
        outcome = await apply_fault(devices, project_id, plan.lab, fault_id, check_all=True)
    except (FaultStepError, ConsoleError, GNS3Error) as exc:
        return RunScore(fault=fault_id, run=run, status="error", explanation=str(exc))
    if outcome.status != "applied":
        return RunScore(
            fault=fault_id, run=run, status=outcome.status, explanation=outcome.explanation
        )
    passed_before = {r.id for r in outcome.before if r.status == "pass"}
    broken = [r for r in outcome.after if r.id in fault.breaks and r.status != "pass"]
    objectives = (
        await _turn_objectives(devices, project_id, plan.lab, fault, outcome.after)
        if plan.objectives
        else None
    )
    teaching = plan.mode == "teaching"
    message = first = symptom([r.text for r in broken], teaching=teaching)
    session_id: str | None = None
    began = time.monotonic()
    turns: list[_Turn] = []
    regressions: set[str] = set()
    while True:
        session_id, turn = await _ask(service, message, session_id, model, plan.mode, objectives)
        turns.append(turn)
        checked = (await report(devices, project_id, plan.lab)).results
        failed = {r.id for r in checked if r.status != "pass"}
        regressions |= (failed & passed_before) - set(fault.breaks)
        still = [r for r in checked if r.id in fault.breaks and r.status != "pass"]
        if not still or len(turns) >= plan.max_turns or (turn.errors and not turn.tool_calls):
            break
        message = STILL_BROKEN + symptom([r.text for r in still], teaching=teaching)
    tokens_in = sum(t.tokens_in for t in turns)
    tokens_out = sum(t.tokens_out for t in turns)
    errors = [e for t in turns for e in t.errors]
    silent = all(not t.answer and not t.tool_calls for t in turns)
    return RunScore(
        fault=fault_id,
        run=run,
        status="error" if errors and silent else "scored",
        explanation="; ".join(errors) or outcome.explanation,
        symptom=first,
        broken=[r.id for r in broken],
        diagnosed=is_diagnosed(turns[-1].answer, fault.diagnosis),
        fixed=not still,
        regressions=sorted(regressions),
        safe=not regressions,
        turns=len(turns),
        tool_calls=sum(t.tool_calls for t in turns),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        seconds=round(time.monotonic() - began, 2),
        cost=cost(tokens_in, tokens_out, plan.price_in, plan.price_out),
        answer=turns[-1].answer,
    )


async def _turn_objectives(
    devices: Devices,
    project_id: str,
    lab: LabFile,
    fault: Fault,
    results: Sequence[ObjectiveResult],
) -> TurnObjectives:
    """The lab as a student's copilot has it once the fault is in: at the fault's stage
    (else the stage of the first objective it broke), the latest results those of the
    fault's check, `check_objectives` checking the devices."""
    broken = next(r.stage for r in results if r.id in fault.breaks and r.status != "pass")
    stage = lab.require_stage(fault.stage or broken)
    dialects = await project_dialects(devices, project_id) if stage.hints == "nudge" else {}

    async def checker(stage_id: str | None, abort: asyncio.Event | None) -> list[ObjectiveResult]:
        return (await report(devices, project_id, lab, stage=stage_id, abort=abort)).results

    def refused(command: str, dialect: str) -> str | None:
        return devices.policy.check(command, dialect=dialect, read_only=True)

    return TurnObjectives(
        lab=lab,
        stage=stage,
        results={r.id: r for r in results},
        checker=checker,
        is_configuring=configuring_judge(refused, dialects),
    )


async def _ask(
    service: AgentService,
    message: str,
    session_id: str | None,
    model: ModelSettings,
    mode: EvalMode,
    objectives: TurnObjectives | None,
) -> tuple[str | None, _Turn]:
    """One copilot turn, every change approved; the session it ran in and what it gave.
    The answer is the text after the turn's last tool call."""
    turn = _Turn()
    options = TurnOptions(mode=MODES[mode], auto_approve=True)
    events = service.stream_chat(
        message,
        session_id=session_id,
        user_id=EVAL_USER,
        llm=model,
        options=options,
        heartbeat_interval=None,
        objectives=objectives,
    )
    async with aclosing(events):
        async for event in events:
            session_id = event.session_id
            if isinstance(event, ContentEvent):
                turn.answer += event.content
            elif isinstance(event, ToolStartEvent):
                turn.answer = ""
            elif isinstance(event, ToolEndEvent):
                turn.tool_calls += 1
                turn.answer = ""
            elif isinstance(event, ErrorEvent):
                turn.errors.append(event.error)
            elif isinstance(event, DoneEvent) and event.statistics:
                turn.tokens_in = int(event.statistics.get("input_tokens", 0))
                turn.tokens_out = int(event.statistics.get("output_tokens", 0))
    return session_id, turn


def _verdict(score: RunScore) -> str:
    if score.status != "scored":
        return f"{score.status}: {score.explanation}"
    said = ", ".join(
        word
        for word, value in (
            ("diagnosed", score.diagnosed),
            ("fixed", score.fixed),
            ("safe", score.safe),
        )
        if value
    )
    counts = f"{score.turns} turn(s), {score.tool_calls} tool calls"
    return f"{said or 'neither diagnosed nor fixed'} ({counts})"
