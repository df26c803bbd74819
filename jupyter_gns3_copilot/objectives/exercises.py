"""Troubleshooting exercises: one of the lab's faults put into a student's working lab,
graded by their checks, given up with the fault taken out again.

Starting one (`Exercises.start`) works on the lab as it is now (no stage's snapshot is
restored: the fault needs the student's working lab). The devices that can save their
configuration do (`devices.saving.save_configurations`: VPCS `save`, FRR `write
memory`), then the fault is applied and verified (`faults.apply_fault`, every objective
checked before and after). A lab that does not pass what the fault breaks refuses it
("finish the lab first"); a fault that breaks nothing, or a step that fails, is taken
out again at once. The fault is the one named, or drawn for the student like their
parameter values (`parameters.student_number` over the salt, the lab's title, the user
and the exercise's number), another than their last one when the lab has several.

No GNS3 snapshot is taken: GNS3 snapshots a stopped lab only, and stopping a Linux
router loses its configuration (it is on no disk), so the working lab would not survive
its own snapshot. Undoing a fault (`faults.undo_fault`) restarts the nodes its lines
went to (they come back with the configuration saved at the start), cables again the
links it pulled or filtered and starts the nodes it stopped; lines typed on a Linux
shell stay (the give-up answer says so, with the fault's description).

A check while an exercise is going grades it (`grade`): fixed when every objective the
fault broke passes, regressions the objectives that passed before and fail now, the time
taken and the copilot's model calls. Fixed without regressions ends it. Giving up
(`give_up`) tells the fault's description and diagnosis and undoes it.

What a student receives (`api.ExerciseView`, `ExerciseGrade`) never names the fault
before they give up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timezone

from ..devices.access import Devices
from ..devices.fault_steps import FaultStepError
from ..devices.saving import save_configurations
from .api import ExerciseRequest, ExerciseView, GiveUpAnswer, SymptomView
from .errors import ExerciseRefused, NoExercise
from .exercise_model import ExerciseGrade, ExerciseRecord
from .fault_model import Fault
from .faults import FaultOutcome, apply_fault, undo_fault
from .model import LabFile
from .parameters import student_number
from .progress import StudentProgress

LabFor = Callable[[str, str], Awaitable[LabFile]]
"""(project id, user) -> the project's lab as the user sees it."""
CallCount = Callable[[str, str], Awaitable[int]]
"""(project id, user) -> the model calls the copilot made for the user so far."""


class Exercises:
    """The exercises of the students of the projects `devices` reaches (module
    docstring), kept in `progress`; `lab_for` gives a student's lab, `salt` draws the
    random faults; `model_calls` counts the copilot's calls (default: the progress's
    store, the project's chat store; the hub service counts its gateway's)."""

    def __init__(
        self,
        devices: Devices,
        progress: StudentProgress,
        lab_for: LabFor,
        salt: str | bytes,
        model_calls: CallCount | None = None,
    ) -> None:
        self.devices = devices
        self.progress = progress
        self._lab_for = lab_for
        self._key = salt.encode() if isinstance(salt, str) else salt
        self._model_calls = model_calls or progress.model_calls

    async def start(self, project_id: str, user: str, request: ExerciseRequest) -> ExerciseView:
        """Start an exercise for `user` (module docstring). Raises `UnknownFault`, and
        `ExerciseRefused` saying why in a student's words."""
        lab = await self._lab_for(project_id, user)
        if not lab.faults:
            raise ExerciseRefused("This lab has no exercises (its lab file names no faults).")
        last = await self.progress.exercise(project_id, user)
        if last is not None and last.ended_at is None:
            raise ExerciseRefused(
                "You have an exercise going already: fix it and check, or give up first."
            )
        number = 1 if last is None else last.number + 1
        if request.fault is not None:
            fault_id = lab.require_fault(request.fault).id
        else:
            fault_id = draw_fault(lab, user, self._key, number, last.fault if last else None)
        fault = lab.require_fault(fault_id)
        saved = [s.node for s in await save_configurations(self.devices, project_id) if s.saved]
        started = datetime.now(timezone.utc)
        try:
            outcome = await apply_fault(self.devices, project_id, lab, fault_id, check_all=True)
        except FaultStepError:
            await self._undo(project_id, fault, saved)
            raise ExerciseRefused(
                "This exercise could not be set up on your lab (tell your instructor); "
                "your lab was restored."
            ) from None
        if outcome.status == "refused":
            raise ExerciseRefused("Finish the lab first: " + _not_passing(lab, outcome))
        if outcome.status == "ineffective":
            await self._undo(project_id, fault, saved)
            raise ExerciseRefused(
                "This exercise did not break your lab as planned (tell your instructor); "
                "your lab was restored."
            )
        await self.progress.record(project_id, user, outcome.after)
        record = ExerciseRecord(
            fault=fault_id,
            started_at=started,
            broken=sorted(r.id for r in outcome.after if r.status != "pass"),
            passed_before=[r.id for r in outcome.before if r.status == "pass"],
            calls_at_start=await self._model_calls(project_id, user),
            saved=saved,
            number=number,
        )
        await self.progress.save_exercise(project_id, user, record)
        return _view(lab, record)

    async def current(self, project_id: str, user: str) -> ExerciseView:
        """The user's latest exercise (going or ended). Raises `NoExercise`."""
        record = await self.progress.exercise(project_id, user)
        if record is None:
            raise NoExercise("You have not started an exercise in this project.")
        return _view(await self._lab_for(project_id, user), record)

    async def grade(self, project_id: str, user: str) -> ExerciseGrade | None:
        """The user's going exercise graded on their latest results (after a check); it
        ends when fixed without regressions. None when none is going."""
        progress = self.progress
        record = await progress.exercise(project_id, user)
        if record is None or record.ended_at is not None:
            return None
        latest = await progress.results(project_id, user)
        still = [o for o in record.broken if o not in latest or latest[o].status != "pass"]
        regressions = [
            o
            for o in record.passed_before
            if o not in record.broken and o in latest and latest[o].status != "pass"
        ]
        now = datetime.now(timezone.utc)
        calls = await self._model_calls(project_id, user) - record.calls_at_start
        done = not still and not regressions
        grade = ExerciseGrade(
            fixed=not still,
            still_failing=still,
            regressions=regressions,
            seconds=(now - record.started_at).total_seconds(),
            copilot_calls=max(calls, 0),
            done=done,
        )
        update: dict[str, object] = {"grade": grade}
        if done:
            update |= {"ended_at": now, "how": "fixed"}
        await progress.save_exercise(project_id, user, record.model_copy(update=update))
        return grade

    async def give_up(self, project_id: str, user: str) -> GiveUpAnswer:
        """End the user's going exercise: what the fault was, and the fault undone
        (module docstring). Raises `NoExercise`."""
        progress = self.progress
        record = await progress.exercise(project_id, user)
        if record is None or record.ended_at is not None:
            raise NoExercise("You have no exercise going: there is nothing to give up.")
        lab = await self._lab_for(project_id, user)
        fault = next((f for f in lab.faults if f.id == record.fault), None)
        left = await self._undo(project_id, fault, record.saved) if fault else []
        ended = {"ended_at": datetime.now(timezone.utc), "how": "given up"}
        await progress.save_exercise(project_id, user, record.model_copy(update=ended))
        if fault is None:
            return GiveUpAnswer(
                description="This fault is no longer in the lab file: nothing was undone.",
                device="",
                cause="",
            )
        return GiveUpAnswer(
            description=fault.description,
            device=fault.diagnosis.device,
            interface=fault.diagnosis.interface,
            cause=fault.diagnosis.cause,
            not_undone=left,
        )

    async def _undo(self, project_id: str, fault: Fault, saved: list[str]) -> list[str]:
        """`faults.undo_fault`; the project's latest results are forgotten (the devices
        changed under them)."""
        left = await undo_fault(self.devices, project_id, fault, saved)
        await self.progress.forget(project_id)
        return left


def draw_fault(lab: LabFile, user: str, key: bytes, number: int, last: str | None) -> str:
    """The fault of `user`'s exercise `number` in `lab`: drawn with `key` (the salt),
    another than `last` when the lab has more than one."""
    ids = [f.id for f in lab.faults]
    index = student_number(key, lab.title, f"exercise {number}", user) % len(ids)
    if ids[index] == last and len(ids) > 1:
        index = (index + 1) % len(ids)
    return ids[index]


def _view(lab: LabFile, record: ExerciseRecord) -> ExerciseView:
    texts = {o.id: o.text for s in lab.stages for o in s.objectives}
    return ExerciseView(
        started_at=record.started_at.isoformat(),
        active=record.ended_at is None,
        symptom=[SymptomView(id=o, text=texts.get(o, o)) for o in record.broken],
        grade=record.grade,
    )


def _not_passing(lab: LabFile, outcome: FaultOutcome) -> str:
    """The objectives the fault needs passing that do not, as the student reads them."""
    breaks = set(lab.require_fault(outcome.fault).breaks)
    texts = {o.id: o.text for s in lab.stages for o in s.objectives}
    failing = [texts[r.id] for r in outcome.before if r.id in breaks and r.status != "pass"]
    verb = " does not pass yet." if len(failing) == 1 else " do not pass yet."
    return "; ".join(failing) + verb
