"""Troubleshooting exercises in a class's labs, run by the hub service.

Troubleshooting exercises (`objectives.exercises`) run here too, so that no student's
server ever holds a fault: the service puts the fault (named, or drawn with the class's
salt) into the student's copy through its own access, grades the exercise with the
student's checks through it, and undoes it on a give-up; the student receives the
symptom, the grade and, once given up, the fault's description. The exercise is kept in
memory with the student's results (`ProjectLabs.progress`) and, for a graded lab,
recorded in the grade store at each change with the copilot turns and model calls the
gateway counted for the student since it started (read back after a restart).

"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import datetime, timezone

from ..console import ConsolePool
from ..objectives.api import ExerciseRequest, ExerciseView, GiveUpAnswer
from ..objectives.exercise_model import ExerciseGrade
from ..objectives.exercises import Exercises
from ..objectives.model import LabFile
from .class_labs import ClassLabs, StudentLab, require_opened
from .usage import utc_now

EVER = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""Before any model call the gateway recorded (counting a student's calls so far)."""


class ClassExercises:
    """Exercises over `labs` (its devices, lock per project, results and grade store);
    holds nothing itself, so one may be made per request."""

    def __init__(self, labs: ClassLabs) -> None:
        self.labs = labs

    async def start(self, lab: StudentLab, request: ExerciseRequest) -> ExerciseView:
        """Start an exercise in `lab` (`Exercises.start`; its project must be opened:
        `ProjectNotOpened`). Raises `UnknownFault`, `ExerciseRefused`."""
        require_opened(lab, "start an exercise")
        async with self.labs.lock(lab), self._exercises(lab) as exercises:
            view = await exercises.start(lab.project.project_id, lab.user, request)
            await self._record_exercise(lab)
        return view

    async def current(self, lab: StudentLab) -> ExerciseView:
        """The student's latest exercise in `lab` (`Exercises.current`). Raises
        `NoExercise`."""
        async with self._exercises(lab) as exercises:
            return await exercises.current(lab.project.project_id, lab.user)

    async def grade(self, lab: StudentLab) -> ExerciseGrade | None:
        """The student's going exercise graded on their latest results (after a check of
        `lab`), and recorded; None when none is going."""
        async with self._exercises(lab) as exercises:
            grade = await exercises.grade(lab.project.project_id, lab.user)
        if grade is not None:
            await self._record_exercise(lab)
        return grade

    async def give_up(self, lab: StudentLab) -> GiveUpAnswer:
        """End the student's going exercise, the fault undone (`Exercises.give_up`; the
        project must be opened). Raises `NoExercise`."""
        require_opened(lab, "give up its exercise")
        async with self.labs.lock(lab), self._exercises(lab) as exercises:
            answer = await exercises.give_up(lab.project.project_id, lab.user)
            await self._record_exercise(lab)
        return answer

    @contextlib.asynccontextmanager
    async def _exercises(self, lab: StudentLab) -> AsyncIterator[Exercises]:
        """`Exercises` over the student's lab as the service renders it, the service's
        own console connections (closed after) and the gateway's count of model calls;
        a graded lab's latest exercise read back from the grade store when the service
        does not remember it (it restarted)."""
        progress = self.labs.labs.progress
        key = lab.project.project_id
        if lab.graded and await progress.exercise(key, lab.user) is None:
            recorded = await self.labs.grades.latest_exercise(lab.user, lab.lab)
            if recorded is not None:
                await progress.save_exercise(key, lab.user, recorded)
        rendered = self.labs.render(lab)

        async def lab_for(project_id: str, user: str) -> LabFile:
            return rendered

        async def model_calls(project_id: str, user: str) -> int:
            return await self.labs.usage.calls_between(user, EVER, utc_now())

        pool = ConsolePool()
        try:
            yield Exercises(self.labs.devices(pool), progress, lab_for, self.labs.salt, model_calls)
        finally:
            await pool.aclose()

    async def _record_exercise(self, lab: StudentLab) -> None:
        """Record the student's latest exercise in a graded lab, with the copilot turns
        and calls from its start to its end (or now)."""
        record = await self.labs.labs.progress.exercise(lab.project.project_id, lab.user)
        if not lab.graded or record is None:
            return
        until = record.ended_at or utc_now()
        turns = await self.labs.usage.turns_between(lab.user, record.started_at, until)
        calls = await self.labs.usage.calls_between(lab.user, record.started_at, until)
        await self.labs.grades.record_exercise(lab.user, lab.lab, record, turns, calls)
