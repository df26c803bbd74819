"""A project's lab objectives: the lab as the caller sees it, attaching a lab file,
checking objectives on the devices, catching up to a stage.

The lab file is the project's `lab.yaml` (`objectives.service.ProjectLabs`); texts and
checks carry the caller's own parameter values. An invalid file is a 422 listing every
problem with its file, line and field; a project without one is a 404.

In hub mode the hub service does the lab's work (`hub/lab_handlers.py`), asked with this
server's hub token: it renders the lab with the class's salt (this server has none),
checks the devices itself against a template's lab file and records the grades, so
nothing here can change a grade. These routes keep their answers and errors; the
service's refusals come back as they are (`hub.service_client.HubServiceRefused`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer
from .base import CopilotHandler, EventStreamHandler

if TYPE_CHECKING:
    from ...events import ChatEvent
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
        from ..llm_config import effective_config
        from ..schemas import LabAttachRequest

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
                "Attaching a lab file needs lab automation mode (lab_automation_assistant), "
                "for this request or as your copilot mode setting.",
                type="ModeNotAllowed",
            )
        if app.hub_mode:
            self.write_json(await app.hub_client().attach_lab(project_id, request))
            return
        labs = app.local_project_labs()
        await labs.attach(project_id, request.text, request.source)
        self.write_json(await labs.view(project_id, self.user_id))


class LabStageHandler(CopilotHandler):
    """`PUT copilot/projects/{project_id}/lab/stage` with `LabStageRequest`: the stage the
    caller works on (null: the first their checks have not passed); the `LabView`. 404 for
    a stage the lab does not have (the message lists the stages, and the closest one)."""

    @tornado.web.authenticated
    @authorized
    async def put(self, project_id: str) -> None:
        from ..schemas import LabStageRequest

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
        from ...objectives.runner import collect, select
        from ..schemas import LabCheckRequest

        project_id = self.project_id_from(project_id)
        request = self.body_as(LabCheckRequest)
        app = self.copilot
        if app.hub_mode:
            await self.opened_project(project_id)
            await self._check_through_hub(project_id, request)
            return
        labs = app.local_project_labs()
        if request.lab is not None:
            document = await labs.checked_against(project_id, request.lab, request.source)
            lab = labs.render(document, self.user_id)
        else:
            lab = await labs.for_student(project_id, self.user_id)
        select(lab, request.stage, request.objectives)  # 400 before anything runs
        await self.opened_project(project_id)
        run_id, abort = self._begin(request)
        try:
            results = labs.check(
                project_id,
                self.user_id,
                lab,
                stage=request.stage,
                objectives=request.objectives,
                abort=abort,
            )
            with app.project_users.using(project_id, self.user_id):
                if request.stream:
                    await self._relay(run_id, _summed(lab, results), abort)
                else:
                    self.write_json(await collect(lab, results))
        finally:
            app.tool_runs().end(run_id, abort)

    async def _check_through_hub(self, project_id: str, request: Any) -> None:
        """The hub service checks (module docstring); its events relayed as this route's."""
        from ...objectives.requests import LabCheckSelection

        app = self.copilot
        hub = app.hub_client()
        watch = app.project_labs().watch
        selection = LabCheckSelection(**request.model_dump(exclude={"run_id", "session_id"}))
        run_id, abort = self._begin(request)
        try:
            with app.project_users.using(project_id, self.user_id):
                if not request.stream:
                    self.write_json(await hub.lab_check_report(project_id, selection))
                    return
                async with hub.lab_checks(project_id, selection) as items:
                    told = _telling(items, lambda: watch.changed(project_id, self.user_id))
                    await self._relay(run_id, _until_aborted(told, abort), abort)
        finally:
            app.tool_runs().end(run_id, abort)
            watch.changed(project_id, self.user_id)

    async def _relay(
        self, run_id: str, items: AsyncIterator[ObjectiveResult | CheckSummary], abort: Any
    ) -> None:
        await self.relay(_events(run_id, items), session_id=run_id, stream=True, abort=abort.set)

    def _begin(self, request: Any) -> tuple[str, asyncio.Event]:
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
        from ..responses import CatchUpDone
        from ..schemas import CatchUpRequest

        project_id = self.project_id_from(project_id)
        request = self.body_as(CatchUpRequest)
        if self.copilot.hub_mode:
            await self._catch_up_through_hub(project_id, stage, request)
            return
        labs = self.copilot.local_project_labs()
        plan = await labs.catch_up_plan(project_id, self.user_id, stage)
        if not request.confirm:
            raise ErrorAnswer(
                400,
                f'{plan.description} Send {{"confirm": true}} to do it.',
                type="ConfirmationNeeded",
                field="confirm",
                rule="true to restore",
            )
        await self.opened_project(project_id)
        self.refuse_if_others_use(project_id, "restore")
        with self.copilot.project_users.using(project_id, self.user_id):
            await labs.catch_up(project_id, plan)
        self.copilot.project_lookup().forget(project_id)
        done = CatchUpDone(stage=plan.stage.id, snapshot=plan.snapshot.name, restored=True)
        self.write_json(done)

    async def _catch_up_through_hub(self, project_id: str, stage: str, request: Any) -> None:
        """The hub service restores (the stage's snapshot as the lab it checks names it);
        unconfirmed, its 400 says what would be restored."""
        hub = self.copilot.hub_client()
        if request.confirm:
            await self.opened_project(project_id)
            self.refuse_if_others_use(project_id, "restore")
        with self.copilot.project_users.using(project_id, self.user_id):
            done = await hub.catch_up(project_id, stage, request)
        self.copilot.project_lookup().forget(project_id)
        self.copilot.project_labs().watch.changed(project_id)
        self.write_json(done)


async def _telling(
    items: AsyncIterator[ObjectiveResult | CheckSummary], tell: Callable[[], None]
) -> AsyncIterator[ObjectiveResult | CheckSummary]:
    """`items`, calling `tell()` as each result comes (the service has recorded it)."""
    from ...objectives.results import ObjectiveResult

    async for item in items:
        if isinstance(item, ObjectiveResult):
            tell()
        yield item


async def _summed(lab: Any, results: AsyncIterator[ObjectiveResult]) -> AsyncIterator[Any]:
    """`results` (of `lab`), then their summary."""
    from ...objectives.results import summarize

    seen = []
    async for result in results:
        seen.append(result)
        yield result
    yield summarize(lab, seen)


async def _until_aborted(
    items: AsyncIterator[ObjectiveResult | CheckSummary], abort: asyncio.Event
) -> AsyncIterator[ObjectiveResult | CheckSummary]:
    """`items` until `abort` is set (then `ToolAborted`, as a local run stops)."""
    from ...console import ConsoleAborted
    from ...console.pool import abortable
    from ...tools.base import ToolAborted

    while True:
        try:
            item = await abortable(anext(items), abort)
        except StopAsyncIteration:
            return
        except ConsoleAborted:
            raise ToolAborted() from None
        yield item


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
