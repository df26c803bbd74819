"""A project's lab objectives: the lab as the caller sees it, attaching a lab file,
checking objectives on the devices, catching up to a stage.

The lab's work is the app's `project_labs()`, an `objectives.provider.LabProvider`: the
project's `lab.yaml` rendered and checked here (`objectives.service.ProjectLabs`), or in
hub mode the hub service's (`classroom.labs.HubProjectLabs`, asked with this server's hub
token: the service renders the lab with the class's salt, which this server has not,
checks the devices itself against a template's lab file and records the grades, so nothing
here can change a grade). Texts and checks carry the caller's own parameter values. An
invalid file is a 422 listing every problem with its file, line and field; a project
without one is a 404; in hub mode the service's refusals come back as they are
(`classroom.client.HubServiceRefused`). These routes add what is this server's: the
caller's copilot mode, the project opened and not used by others, the run registered with
the tool runs (the abort route stops it).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer
from .base import CopilotHandler, EventStreamHandler

if TYPE_CHECKING:
    from ...events import ChatEvent
    from ...objectives.api import LabCheckRequest
    from ...objectives.results import CheckSummary, ObjectiveResult

LAB_MODE = "lab_automation_assistant"


class LabHandler(CopilotHandler):
    """`GET copilot/projects/{project_id}/lab`: the lab as the caller sees it (`LabView`:
    stages, objective texts with their values filled in, points, the caller's latest
    status of each and current stage; never the checks).
    `PUT` with `LabAttachRequest`: check the file against the project and make it the
    project's lab (lab_automation_assistant mode only, the request's `copilot_mode` or
    else the caller's setting: 403 otherwise); the new `LabView`.
    """

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        self.write_json(await self.copilot.project_labs().view(project_id, self.user_id))

    @tornado.web.authenticated
    @authorized
    async def put(self, project_id: str) -> None:
        from ...objectives.api import LabAttachRequest
        from ..llm_config import effective_config

        project_id = self.project_id_from(project_id)
        request = self.body_as(LabAttachRequest)
        app = self.copilot
        if request.copilot_mode is not None:
            mode = app.llm_admin().check_mode(request.copilot_mode)
        else:
            config = effective_config(app.llm_admin(), app.llm_store().get(self.user_id))
            mode = config.copilot_mode
        if mode != LAB_MODE:
            raise ErrorAnswer(
                403,
                "Attaching a lab file needs automation mode (lab_automation_assistant), "
                "for this request or as your copilot mode setting.",
                type="ModeNotAllowed",
            )
        labs = app.project_labs()
        self.write_json(await labs.attach_lab(project_id, self.user_id, request))


class LabStageHandler(CopilotHandler):
    """`PUT copilot/projects/{project_id}/lab/stage` with `LabStageRequest`: the stage the
    caller works on (null: the first their checks have not passed); the `LabView`. 404 for
    a stage the lab does not have (the message lists the stages, and the closest one)."""

    @tornado.web.authenticated
    @authorized
    async def put(self, project_id: str) -> None:
        from ...objectives.api import LabStageRequest

        project_id = self.project_id_from(project_id)
        request = self.body_as(LabStageRequest)
        labs = self.copilot.project_labs()
        self.write_json(await labs.choose_stage(project_id, self.user_id, request.stage))


class LabEventsHandler(EventStreamHandler):
    """`GET copilot/projects/{project_id}/lab/events`: the caller's lab as it changes, as
    SSE, until the client leaves: a `lab_view` event (the `LabView` of `GET .../lab`) at
    once, then again after each change of the caller's progress in the project, wherever
    on this server it came from (a check from the Objectives panel, a notebook, another
    tab or the chat; a stage chosen; a catch-up); a `lab_error` when the lab cannot be
    read after a change; an SSE comment after `heartbeat_interval` seconds of silence.
    Before the stream opens, the errors of `GET .../lab`. In hub mode the changes told
    are those this server asked the hub service for (the service tells nobody of checks
    asked of it otherwise: the panel shows those when it reads the lab again)."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str) -> None:
        from tornado.iostream import StreamClosedError

        from ...events import LabErrorEvent, LabViewEvent, sse_message
        from ..errors import to_error_answer

        project_id = self.project_id_from(project_id)
        labs = self.copilot.project_labs()
        user = self.user_id
        with labs.watch.watching(project_id, user) as changed:
            event: LabViewEvent | LabErrorEvent | None = LabViewEvent(
                project_id=project_id, view=await labs.view(project_id, user)
            )
            self.start_event_stream()
            try:
                while True:
                    self.write(sse_message(event) if event is not None else ": keep-alive\n\n")
                    await self.flush()
                    if not await self._change_or_silence(changed):
                        if self.client_gone:
                            return
                        event = None
                        continue
                    changed.clear()
                    try:
                        view = await labs.view(project_id, user)
                        event = LabViewEvent(project_id=project_id, view=view)
                    except Exception as exc:
                        answer = to_error_answer(exc)
                        self.log.warning(
                            "Copilot: the lab of %s could not be read again: %s",
                            project_id,
                            answer.message,
                        )
                        event = LabErrorEvent(project_id=project_id, error=answer.message)
            except StreamClosedError:
                return

    async def _change_or_silence(self, changed: asyncio.Event) -> bool:
        """Wait for a change (True), the client leaving or `heartbeat_interval` seconds
        (False)."""
        interval = self.copilot.heartbeat_interval or None
        waiters = {
            asyncio.ensure_future(changed.wait()),
            asyncio.ensure_future(self._client_gone.wait()),
        }
        try:
            await asyncio.wait(waiters, timeout=interval, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        return changed.is_set() and not self.client_gone


class LabChecksHandler(EventStreamHandler):
    """`POST copilot/projects/{project_id}/lab/checks` with `LabCheckRequest`: check the
    objectives on the devices (of the project's lab, or of the request's `lab` text).
    SSE: a `check_result` event per objective as it is decided,
    then `check_summary`, then `done`; with `"stream": false` one `CheckReport`
    (`{results, score, max_score, passed, stages}`). 404 for an unknown stage (the
    message lists the stages, and the closest one) or without a lab file, 400 for an unknown
    objective, 422 for an invalid lab file, 409 for a closed project.
    """

    warm_up_stage = "core"

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str) -> None:
        from ...objectives.api import LabCheckRequest

        project_id = self.project_id_from(project_id)
        request = self.body_as(LabCheckRequest)
        app = self.copilot
        labs = app.project_labs()
        check = await labs.prepare_check(project_id, self.user_id, request.selection())
        await self.opened_project(project_id)
        run_id, abort = self._begin(request)
        try:
            with app.project_users.using(project_id, self.user_id):
                if not request.stream:
                    self.write_json(await check.report(abort))
                    return
                async with check.results(abort) as items:
                    await self.relay(
                        _events(run_id, items), session_id=run_id, stream=True, abort=abort.set
                    )
        finally:
            app.tool_runs().end(run_id, abort)

    def _begin(self, request: LabCheckRequest) -> tuple[str, asyncio.Event]:
        """The run's id and abort event, registered with the tool runs (the abort route
        stops it); 409 when that run is going already."""
        run_id = request.run_id or str(uuid.uuid4())
        abort = self.copilot.tool_runs().begin(run_id, self.user_id)
        if abort is None:
            raise ErrorAnswer(409, f"Run {run_id} is already running.", type="SessionBusy")
        return run_id, abort


class LabCatchUpHandler(CopilotHandler):
    """`POST copilot/projects/{project_id}/lab/stages/{stage}/catch-up` with
    `CatchUpRequest`: restore the stage's snapshot (the lab as it was at the start of the
    stage) and start the nodes again. Without `"confirm": true`, a 400 says what would be
    restored (the person's click is the approval). 404 for a stage the lab does not have
    (the message lists the stages, and the closest one); 409 when the stage has no snapshot
    or another user is using the project."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str, stage: str) -> None:
        from ...objectives.api import CatchUpRequest

        project_id = self.project_id_from(project_id)
        request = self.body_as(CatchUpRequest)
        labs = self.copilot.project_labs()
        catch_up = await labs.prepare_catch_up(
            project_id, self.user_id, stage, confirm=request.confirm
        )
        await self.opened_project(project_id)
        self.refuse_if_others_use(project_id, "restore")
        with self.copilot.project_users.using(project_id, self.user_id):
            done = await catch_up.restore()
        self.copilot.project_lookup().forget(project_id)
        self.write_json(done)


class LabExercisesHandler(CopilotHandler):
    """`POST copilot/projects/{project_id}/lab/exercises` with `ExerciseRequest`: start a
    troubleshooting exercise for the caller: the working lab's configurations saved, the
    fault named (or one drawn for the caller) put in and verified; the `ExerciseView`
    (the symptom: the objectives now failing; never the fault). 404 for a fault the lab
    does not have or without a lab file; 409 when the lab does not pass what the fault
    breaks yet ("finish the lab first"), an exercise is going already, the fault broke
    nothing (the lab restored), or another user is using the project."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str) -> None:
        from ...objectives.api import ExerciseRequest

        project_id = self.project_id_from(project_id)
        request = self.body_as(ExerciseRequest)
        await self.opened_project(project_id)
        self.refuse_if_others_use(project_id, "break")
        labs = self.copilot.project_labs()
        with self.copilot.project_users.using(project_id, self.user_id):
            view = await labs.start_exercise(project_id, self.user_id, request)
        self.write_json(view)


class LabExerciseHandler(CopilotHandler):
    """`GET copilot/projects/{project_id}/lab/exercises/current`: the caller's latest
    exercise (`ExerciseView`: going or ended, its symptom and latest grade; a check
    grades it). 404 when they never started one."""

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        labs = self.copilot.project_labs()
        self.write_json(await labs.exercise(project_id, self.user_id))


class LabGiveUpHandler(CopilotHandler):
    """`POST copilot/projects/{project_id}/lab/exercises/current/give-up`: end the
    caller's exercise: the fault's description and the diagnosis it wanted
    (`GiveUpAnswer`), and the fault undone (`objectives.exercises`). 404 when no
    exercise is going; 409 when another user is using the project."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        await self.opened_project(project_id)
        self.refuse_if_others_use(project_id, "restore")
        labs = self.copilot.project_labs()
        with self.copilot.project_users.using(project_id, self.user_id):
            answer = await labs.give_up(project_id, self.user_id)
        self.write_json(answer)


async def _events(
    run_id: str, items: AsyncIterator[ObjectiveResult | CheckSummary]
) -> AsyncGenerator[ChatEvent, None]:
    """The route's events: a `check_result` per result, `check_summary`, `done`."""
    from ...events import CheckResultEvent, CheckSummaryEvent, DoneEvent
    from ...objectives.results import ObjectiveResult

    async for item in items:
        if isinstance(item, ObjectiveResult):
            yield CheckResultEvent(session_id=run_id, result=item)
        else:
            yield CheckSummaryEvent(session_id=run_id, summary=item)
    yield DoneEvent(session_id=run_id)
