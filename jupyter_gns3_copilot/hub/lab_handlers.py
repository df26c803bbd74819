"""The hub service's lab routes, which a student's server in hub mode forwards its lab
routes to (with its hub token: the caller is the student), so that the service renders,
checks and records (`class_labs.py`) and no student's server needs the class's salt:

- `GET api/labs/{project_id}`: the lab of the caller's project as they see it (`LabView`);
- `PUT api/labs/{project_id}` (`LabAttachRequest`): attach a lab file to it (the student's
  server allows it in automation mode only); the attached file as they see it;
- `PUT api/labs/{project_id}/stage` (`LabStageRequest`): the stage they work on (null:
  follow their checks); the `LabView`;
- `POST api/labs/{project_id}/checks` (`LabCheckSelection`): the service checks the lab on
  the devices: SSE events `check_result` (an `ObjectiveResult`), `check_summary` (a
  `CheckSummary`), `done` (or `error` with a message); with `"stream": false` one
  `CheckReport`. A copy of a template is checked against the template's lab file and its
  results are recorded as the student's grades; with `lab` (a file's text), against that
  file, recorded nowhere;
- `POST api/labs/{project_id}/stages/{stage}/catch-up` (`CatchUpRequest`): restore the
  stage's snapshot and start the nodes; without `"confirm": true` a 400 says what would be
  restored;
- `POST api/labs/{project_id}/exercises` (`ExerciseRequest`): the service starts a
  troubleshooting exercise in the project (`ClassExercises.start`): the
  `ExerciseView`, the symptom only, never the fault;
- `GET api/labs/{project_id}/exercises/current`: the caller's latest exercise
  (`ExerciseView`, with its latest grade);
- `POST api/labs/{project_id}/exercises/current/give-up`: the fault undone and what it
  was (`GiveUpAnswer`).

A check of the project's lab (not of a `lab` sent with it) grades the caller's going
exercise: the `CheckSummary`'s (the `CheckReport`'s) `exercise`.

Errors are `{"error": {"message", "type", "field"?, "errors"?}}` as the copilot's lab routes
give them: 400 (bad body, unknown objective, catch-up not confirmed), 404 (not the
caller's project, no lab file, a stage the lab does not have, a fault it does not have,
no exercise going), 409 (closed project, a stage without snapshot, an exercise refused:
the lab has no faults, does not pass what the fault breaks yet, one is going already),
422 (an invalid lab file: every problem in `errors`), 502 (GNS3 failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from tornado.iostream import StreamClosedError

from ..gns3.errors import GNS3Conflict, GNS3Error, GNS3NotFound
from ..objectives.api import (
    CatchUpDone,
    CatchUpRequest,
    ExerciseRequest,
    LabAttachRequest,
    LabCheckSelection,
    LabStageRequest,
)
from ..objectives.errors import (
    ConfirmationNeeded,
    ExerciseRefused,
    LabFileError,
    NoExercise,
    NoLab,
    StageWithoutSnapshot,
    UnknownFault,
    UnknownSelection,
    UnknownStage,
)
from ..objectives.exercise_model import ExerciseGrade
from ..objectives.results import ObjectiveResult
from .class_exercises import ClassExercises
from .class_labs import ClassLabs, ProjectNotOpened, StudentLab
from .handlers import ServiceHandler
from .runtime import HubRuntime

STREAMED = object()
"""What a route's action returns when it answered as a stream itself."""


def lab_file_error(exc: LabFileError) -> dict[str, Any]:
    """The `error` object of a 422 for a lab file that cannot be used: each problem's
    source, line, field and message."""
    return {
        "message": str(exc),
        "type": type(exc).__name__,
        "field": exc.first.field or None,
        "errors": [
            {"source": p.source, "line": p.line, "field": p.field, "message": p.message}
            for p in exc.problems
        ],
    }


def lab_error(exc: Exception) -> tuple[int, dict[str, Any]] | None:
    """The status and the `error` object of a lab route's expected failure (None: not
    one of them)."""
    if isinstance(exc, LabFileError):
        return 422, lab_file_error(exc)
    error: dict[str, Any] = {"message": str(exc), "type": type(exc).__name__}
    if isinstance(exc, NoLab | GNS3NotFound | UnknownStage | UnknownFault | NoExercise):
        return 404, error
    if isinstance(exc, ConfirmationNeeded):
        return 400, {**error, "field": "confirm", "rule": "true to restore"}
    if isinstance(exc, UnknownSelection):
        return 400, error
    if isinstance(exc, StageWithoutSnapshot | ProjectNotOpened | GNS3Conflict | ExerciseRefused):
        return 409, error
    if isinstance(exc, GNS3Error):
        return 502, error
    return None


class _LabHandler(ServiceHandler):
    """A lab route: the service's `ClassLabs`, errors as the copilot's lab routes."""

    labs: ClassLabs

    def initialize(self, runtime: HubRuntime) -> None:
        super().initialize(runtime)
        assert runtime.labs is not None
        self.labs = runtime.labs

    def send_error_object(self, status: int, error: dict[str, Any]) -> None:
        self.clear()
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": {k: v for k, v in error.items() if v is not None}}))

    async def answer(self, action: Callable[[], Awaitable[Any]]) -> None:
        """Run `action` and answer its result as JSON, or its expected failure."""
        try:
            result = await action()
        except Exception as exc:
            refused = lab_error(exc)
            if refused is None:
                raise
            self.send_error_object(*refused)
            return
        if result is not STREAMED and not self._finished:
            self.write_json(result)


class LabApi(_LabHandler):
    """`GET`/`PUT api/labs/{project_id}` (module docstring)."""

    async def get(self, project_id: str) -> None:
        await self.answer(lambda: self.labs.view(self.caller.name, project_id))

    async def put(self, project_id: str) -> None:
        body = self.body_as(LabAttachRequest)
        if body is not None:
            name = self.caller.name
            await self.answer(lambda: self.labs.attach(name, project_id, body.text, body.source))


class LabStageApi(_LabHandler):
    """`PUT api/labs/{project_id}/stage` (module docstring)."""

    async def put(self, project_id: str) -> None:
        body = self.body_as(LabStageRequest)
        if body is not None:
            name = self.caller.name
            await self.answer(lambda: self.labs.choose_stage(name, project_id, body.stage))


class LabChecksApi(_LabHandler):
    """`POST api/labs/{project_id}/checks` (module docstring)."""

    abort: asyncio.Event | None = None

    def on_connection_close(self) -> None:
        if self.abort is not None:
            self.abort.set()

    async def post(self, project_id: str) -> None:
        body = self.body_as(LabCheckSelection)
        if body is None:
            return
        self.abort = asyncio.Event()
        await self.answer(lambda: self._check(project_id, body))

    async def _check(self, project_id: str, body: LabCheckSelection) -> Any:
        from ..objectives.runner import collect, select

        labs = self.labs
        lab = await labs.student_lab(self.caller.name, project_id)
        if body.lab is not None:
            lab = await labs.checked_against(lab, body.lab, body.source)
        rendered = labs.render(lab)
        select(rendered, body.stage, body.objectives)  # a 400 before anything runs

        async def graded() -> ExerciseGrade | None:
            return await ClassExercises(labs).grade(lab) if body.lab is None else None

        checks = labs.check(lab, stage=body.stage, objectives=body.objectives, abort=self.abort)
        async with contextlib.aclosing(checks) as results:
            if not body.stream:
                report = await collect(rendered, results)
                report.exercise = await graded()
                return report
            first = await anext(results, None)  # a closed project: a 409, not a broken stream
            await self._stream(rendered, first, results, graded)
        return STREAMED

    async def _stream(
        self,
        rendered: Any,
        first: ObjectiveResult | None,
        rest: AsyncIterator[ObjectiveResult],
        graded: Callable[[], Awaitable[ExerciseGrade | None]],
    ) -> None:
        from ..console import ConsoleAborted
        from ..objectives.results import summarize

        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        seen: list[ObjectiveResult] = []
        try:
            if first is not None:
                seen.append(first)
                await self._event("check_result", first.model_dump_json())
                async for result in rest:
                    seen.append(result)
                    await self._event("check_result", result.model_dump_json())
            summary = summarize(rendered, seen)
            summary.exercise = await graded()
            await self._event("check_summary", summary.model_dump_json())
            await self._event("done", "{}")
        except (StreamClosedError, ConsoleAborted):
            return  # the student's server left: `on_connection_close` stopped the checks
        except Exception as exc:
            refused = lab_error(exc)
            if refused is None:
                raise
            with contextlib.suppress(StreamClosedError):
                await self._event("error", refused[1]["message"])
        self.finish()

    async def _event(self, name: str, data: str) -> None:
        self.write(f"event: {name}\ndata: {data}\n\n")
        await self.flush()


class LabCatchUpApi(_LabHandler):
    """`POST api/labs/{project_id}/stages/{stage}/catch-up` (module docstring)."""

    async def post(self, project_id: str, stage: str) -> None:
        body = self.body_as(CatchUpRequest)
        if body is not None:
            await self.answer(lambda: self._catch_up(project_id, stage, body.confirm))

    async def _catch_up(self, project_id: str, stage: str, confirm: bool) -> CatchUpDone:
        labs = self.labs
        lab = await labs.student_lab(self.caller.name, project_id)
        plan = await labs.catch_up_plan(lab, stage)
        if not confirm:
            raise ConfirmationNeeded(plan.description)
        await labs.catch_up(lab, plan)
        return CatchUpDone(stage=plan.stage.id, snapshot=plan.snapshot.name, restored=True)


class LabExercisesApi(_LabHandler):
    """`POST api/labs/{project_id}/exercises` (module docstring)."""

    async def post(self, project_id: str) -> None:
        body = self.body_as(ExerciseRequest)
        if body is not None:
            name = self.caller.name
            labs = self.labs
            await self.answer(
                lambda: _on_lab(
                    labs, name, project_id, lambda lab: ClassExercises(labs).start(lab, body)
                )
            )


class LabExerciseApi(_LabHandler):
    """`GET api/labs/{project_id}/exercises/current` (module docstring)."""

    async def get(self, project_id: str) -> None:
        labs = self.labs
        await self.answer(
            lambda: _on_lab(labs, self.caller.name, project_id, ClassExercises(labs).current)
        )


class LabGiveUpApi(_LabHandler):
    """`POST api/labs/{project_id}/exercises/current/give-up` (module docstring)."""

    async def post(self, project_id: str) -> None:
        labs = self.labs
        await self.answer(
            lambda: _on_lab(labs, self.caller.name, project_id, ClassExercises(labs).give_up)
        )


async def _on_lab(
    labs: ClassLabs, user: str, project_id: str, action: Callable[[StudentLab], Awaitable[Any]]
) -> Any:
    """`action` on `user`'s lab in the project."""
    return await action(await labs.student_lab(user, project_id))
