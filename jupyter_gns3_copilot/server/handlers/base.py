"""The base handlers: JSON errors, the caller's identity, projects, and event streams.

Every handler answers JSON or SSE; every error, expected or not, becomes the JSON body of
`server.errors` with a 4xx/5xx status, never an HTML traceback. Expected errors (4xx, GNS3
failures, a closed copilot) are logged in one line; only bugs get a traceback, in the
server log.

Before a verb runs, `prepare` refuses (after jupyter_server has identified the caller):
503 when the extension's configuration is invalid (`server.configuration`), 413 when the
body is over `MAX_BODY_BYTES`; in hub mode it makes sure the hub session is there (503
naming `hub_service_url` when the hub service cannot give one, or saying that it is slow
when it took the request but answered too late, after asking again); until the warm-up thread
has imported the copilot's modules, it waits for it (`server.warmup`) without blocking the
event loop, so no handler imports on the loop. The body is read whole
first, as for every Jupyter route (up to the server's own `max_body_size`): a handler
that answered before reading it (`stream_request_body`) would make tornado close the
connection, which clients reusing it see as a reset instead of the JSON error.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Protocol, cast

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado.iostream import StreamClosedError

from ..errors import (
    MAX_BODY_BYTES,
    ErrorAnswer,
    bad_input,
    body_too_large,
    parse_body,
    to_error_answer,
)
from ..identity import user_id_for
from .host import CopilotHost

if TYPE_CHECKING:
    from ...chat.service import AgentService
    from ...events import ChatEvent
    from ...gns3 import Project
    from ...objectives.hints import TurnObjectives
    from ..turn_result import TurnResult
    from ..warmup import WarmUpStage

AUTH_RESOURCE = "copilot"
DISCONNECT_DRAIN_TIMEOUT = 30.0
"""Seconds an aborted turn may take to wind down after its client left."""
MAX_LIST_LIMIT = 1000
WRITE_INTERVAL = 0.016
"""Shortest time between two writes of an event stream (`_EventWriter`): one frame of a
60 Hz screen, so a reader cannot see the difference, while a stream of 2,000 tokens a
second costs ~60 writes, flushes and client reads instead of 2,000."""


class CopilotHandler(APIHandler):
    """Base handler: JSON bodies and errors, the app, the user id, project checks."""

    auth_resource = AUTH_RESOURCE
    needs_hub_session = True
    """In hub mode, whether the verb needs the hub session (the status route reports on
    the service instead)."""
    warm_up_stage: WarmUpStage = "agent"
    """The warm-up stage the handler waits for (`server.warmup`): "core" for routes that
    never touch the chat (LangChain, LangGraph, tokenizers)."""

    async def prepare(self) -> None:  # type: ignore[override]
        """Refuse before the verb runs: 503 while the configuration is invalid (to a caller
        jupyter_server identified; others get its 403), 413 for a body over
        `MAX_BODY_BYTES`, 503 in hub mode while the hub service gives no session."""
        await super().prepare()
        app = self.copilot
        problem = app.config_problem
        if problem is not None and self.current_user is not None:
            raise problem.error_answer()
        if len(self.request.body) > MAX_BODY_BYTES:
            raise body_too_large(len(self.request.body))
        if not app.warm_up.done(self.warm_up_stage):
            await app.warm_up.wait(self.warm_up_stage)
        if app.hub_mode and self.needs_hub_session and self.current_user is not None:
            from ...classroom.client import HubServiceError, HubServiceSlow

            try:
                await app.hub_session()
            except HubServiceSlow as exc:  # reached, but slow: no setting to blame
                raise ErrorAnswer(503, str(exc), type="HubServiceSlow") from exc
            except HubServiceError as exc:
                raise ErrorAnswer(
                    503, str(exc), type="HubServiceError", setting="hub_service_url"
                ) from exc

    @property
    def copilot(self) -> CopilotHost:
        """The extension app (`server/app.py`), as the handlers use it."""
        return cast(CopilotHost, self.settings["gns3_copilot"])

    @property
    def user_id(self) -> str:
        """The caller's user id (see `server.identity`)."""
        return user_id_for(self.current_user, self.identity_provider, self.copilot.owner_user_id)

    def api_url(self, *parts: str) -> str:
        """The path of a copilot route under this server's base_url."""
        return url_path_join(self.base_url, "copilot", *parts)

    # -- input and output ------------------------------------------------------------------

    def body_as(self, model: type[Any]) -> Any:
        """The JSON body validated as `model`; 400 naming the field and rule otherwise."""
        return parse_body(self.request.body, model)

    def query_int(
        self, name: str, default: int, *, low: int = 1, high: int = MAX_LIST_LIMIT
    ) -> int:
        """An integer query argument within `low`..`high`; 400 otherwise."""
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise bad_input(name, f"must be an integer, got {raw!r}") from None
        if not low <= value <= high:
            raise bad_input(name, f"must be between {low} and {high}, got {value}")
        return value

    def write_json(self, data: Any, status: int = 200) -> None:
        """Finish with `data` (a pydantic model, or JSON-compatible data)."""
        self.set_status(status)
        if hasattr(data, "model_dump_json"):
            self.finish(data.model_dump_json())
        else:
            self.finish(json.dumps(data, ensure_ascii=False, default=str))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Answer every error as JSON (see `server.errors`)."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        error = (
            to_error_answer(exc)
            if exc is not None
            else ErrorAnswer(status_code, self._reason or "Error", type="Error")
        )
        self.set_status(error.status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(error.body(), ensure_ascii=False))

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """Expected errors in one line; bugs with their traceback."""
        if value is None:
            return super().log_exception(typ, value, tb)
        error = to_error_answer(value)
        if error.expected:
            detail = f" ({error.log_detail})" if error.log_detail else ""
            self.log.warning(
                "%d %s %s: %s%s",
                error.status,
                self.request.method,
                self.request.path,
                error.message,
                detail,
            )
        else:
            super().log_exception(typ, value, tb)

    # -- projects ----------------------------------------------------------------------------

    def project_id_from(self, raw: str) -> str:
        """The path's project id in canonical form; 400 unless it is a UUID."""
        from ...store import validate_project_id

        return validate_project_id(raw)

    async def opened_project(self, project_id: str) -> Project:
        """The project, which GNS3 must have opened: 404 if GNS3 does not know it (its agent
        is dropped), 409 saying how to open it if it is closed, 502 if GNS3 fails."""
        from ...gns3 import GNS3NotFound

        try:
            project = await self.copilot.project_lookup()(project_id)
        except GNS3NotFound:
            if self.copilot.has_agents():
                await self.copilot.agents().remove_agent(project_id)
            raise
        if project.status != "opened":
            raise ErrorAnswer(
                409,
                f"GNS3 project {project.name!r} ({project_id}) is {project.status or 'not opened'}"
                f": open it first (POST {self.api_url('projects', project_id, 'open')}, "
                f"`%copilot use {project.name}` in a notebook, or in the GNS3 GUI).",
                type="ProjectNotOpened",
            )
        return project

    def refuse_if_others_use(self, project_id: str, action: str) -> None:
        """409 when users other than the caller have a turn or tool run in progress on the
        project (`server.project_users`); they are counted, not named."""
        others = len(self.copilot.project_users.others(project_id, self.user_id))
        if others:
            who = "1 other user is" if others == 1 else f"{others} other users are"
            raise ErrorAnswer(
                409,
                f"Cannot {action} this project: {who} using it (a chat turn or tool run in "
                "progress). Try again when they have finished.",
                type="ProjectInUse",
            )

    async def turn_objectives(self, project_id: str) -> TurnObjectives | None:
        """The caller's lab objectives for a chat turn (None: the project has no usable lab
        file; GNS3 failing to say is logged and the turn goes on without them)."""
        from ...gns3 import GNS3Error

        try:
            return await self.copilot.project_labs().turn_objectives(project_id, self.user_id)
        except GNS3Error as exc:
            self.log.warning("Copilot: the lab file of %s could not be read: %s", project_id, exc)
            return None

    async def project_agent(self, project_id: str, *, create: bool) -> AgentService | None:
        """The project's chat service. With `create` False, None when the project has no
        chat data yet (so reading an unknown project's sessions creates nothing)."""
        if not create and not self.copilot.project_has_data(project_id):
            return None
        return await self.copilot.agents().get_agent(project_id)


class EventStreamHandler(CopilotHandler):
    """A handler that answers with SSE (or, for `stream: false`, one JSON summary).

    The client going away is noticed at once (`on_connection_close`): with
    `on_disconnect = "abort"` the running turn is asked to stop and given
    `DISCONNECT_DRAIN_TIMEOUT` to wind down (then it is cancelled); with "finish" it runs
    to its end unseen. Either way the event generator is read to its end or closed, so
    the service saves its statistics and leaves no tool call without a result.
    """

    def initialize(self, **kwargs: Any) -> None:
        super().initialize(**kwargs)
        self._client_gone = asyncio.Event()

    def on_connection_close(self) -> None:
        self._client_gone.set()
        super().on_connection_close()

    @property
    def client_gone(self) -> bool:
        return self._client_gone.is_set()

    def start_event_stream(self) -> None:
        """Send the SSE headers."""
        self.set_status(200)
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")

    async def relay(
        self,
        events: AsyncGenerator[ChatEvent, None],
        *,
        session_id: str,
        stream: bool,
        abort: Callable[[], object],
        detach: Callable[[], bool] | None = None,
    ) -> TurnResult:
        """Send `events` as SSE (`stream`) or collect them into one JSON body; finish the
        response. Returns the collected result (empty when streaming).

        A stream opens with a `heartbeat` event at once: the client has the session id
        before the model answers (to abort early), and proxies see the answer begin.
        When the client leaves and `detach()` says so (a turn waiting for an approval), the
        events are closed at once whatever `on_disconnect` says: the turn stays paused.
        A collected turn (`stream` false) that can detach is answered as soon as it asks
        for an approval: it stays paused, and the body says which and how to decide.
        """
        from ...events import HeartbeatEvent
        from ..turn_result import TurnResult

        result = TurnResult()
        writer = None
        if stream:
            self.start_event_stream()
            writer = _EventWriter(self, HeartbeatEvent(session_id=session_id))

        async def pump() -> None:
            async with aclosing(events) as source:
                async for event in source:
                    if writer is not None:
                        writer.send(event)
                        continue
                    result.add(event)
                    if event.type == "approval_required" and detach is not None:
                        break  # closing the events detaches the waiting turn
            if writer is not None:
                await writer.close()

        pumping = asyncio.ensure_future(pump())
        gone = asyncio.ensure_future(self._client_gone.wait())
        try:
            await asyncio.wait({pumping, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not pumping.done() and detach is not None and detach():
                self.log.info(
                    "Copilot: the client of %s left; the approval stays pending", session_id
                )
                pumping.cancel()
                await asyncio.gather(pumping, return_exceptions=True)
            elif not pumping.done():
                self.log.info(
                    "Copilot: the client of %s left; %s the turn",
                    session_id,
                    "aborting" if self.copilot.on_disconnect == "abort" else "finishing",
                )
                if self.copilot.on_disconnect == "abort":
                    abort()
                    await asyncio.wait({pumping}, timeout=DISCONNECT_DRAIN_TIMEOUT)
                    pumping.cancel()
                await asyncio.gather(pumping, return_exceptions=True)
            else:
                pumping.result()
        finally:
            gone.cancel()
            pumping.cancel()
            if writer is not None:
                writer.cancel()
        if not self.client_gone:
            if stream:
                self.finish()
            else:
                route = self.request.path.rsplit("/", 1)[0]
                self.write_json(result.body(f"{route}/sessions/{{session_id}}/approvals"))
        return result


class FrameClock(Protocol):
    """The part of an event loop `_EventWriter` paces its writes with (tests pass a
    clock they advance themselves)."""

    def time(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], object]) -> asyncio.TimerHandle: ...


class _EventWriter:
    """Writes a handler's events as SSE messages, in order, at most one write a frame.

    The `first` event is written and flushed at once, in the constructor: under load one
    turn of the event loop can take a long time, and the stream's opening is what the
    client (and any proxy) waits for. After it, `send` never waits: the event is queued
    and a writer task writes and flushes it. An event arriving more than `interval`
    (`WRITE_INTERVAL`) after the last write began goes out at once; one arriving sooner
    waits for the frame to end, and everything queued by then goes out in one write and
    flush. A fast stream thus costs one write, flush and client read per frame instead of
    per token, and a sparse one (the first piece, a tool's start, an approval, a
    heartbeat) no delay; no event waits more than a frame (or a flush a slow client holds
    up). Events that cannot be merged (a tool's start or end, an approval, an error) do
    not cut the frame short: they wait at most `interval`, while the events around them
    (progress lines, content) would then cost a write each again. `close` (the turn's
    end) writes what is queued at once.

    Queued events are merged: consecutive `content` pieces of one message become one
    event, and of consecutive growing `tool_call` events of one call only the last is
    sent (it holds all the arguments so far; the opening and the complete one are always
    sent): the client gets fewer, larger events, never less text. A closed connection
    marks the handler's client gone.
    """

    def __init__(
        self,
        handler: EventStreamHandler,
        first: ChatEvent,
        *,
        interval: float = WRITE_INTERVAL,
        clock: FrameClock | None = None,
    ) -> None:
        from ...events import sse_message

        self._handler = handler
        self._interval = interval
        self._clock: FrameClock = clock or asyncio.get_running_loop()
        self._pending: list[ChatEvent] = []
        self._wake = asyncio.Event()
        self._frame_over = asyncio.Event()
        self._closing = False
        handler.write(sse_message(first))
        self._written_at = self._clock.time()
        self._task = asyncio.ensure_future(self._run(handler.flush()))

    def send(self, event: ChatEvent) -> None:
        if not self._handler.client_gone:
            merged = _merged(self._pending[-1], event) if self._pending else None
            if merged is not None:
                self._pending[-1] = merged
                return
            self._pending.append(event)
            self._wake.set()

    async def close(self) -> None:
        """Write what is queued at once, and wait until it is written (or the client
        left)."""
        self._closing = True
        self._wake.set()
        self._frame_over.set()
        await asyncio.shield(self._task)

    def cancel(self) -> None:
        self._task.cancel()

    async def _run(self, first_flush: Awaitable[None]) -> None:
        from ...events import sse_message

        handler = self._handler
        try:
            await first_flush
            while True:
                await self._wake.wait()
                await self._end_of_frame()
                self._wake.clear()
                if self._pending:
                    events, self._pending = self._pending, []
                    self._written_at = self._clock.time()
                    handler.write("".join(map(sse_message, events)))
                    await handler.flush()
                if self._closing and not self._pending:
                    return
        except StreamClosedError:
            handler._client_gone.set()

    async def _end_of_frame(self) -> None:
        """Return when `interval` has passed since the last write began, or at `close`."""
        delay = self._written_at + self._interval - self._clock.time()
        if delay <= 0 or self._closing:
            return
        self._frame_over.clear()
        timer = self._clock.call_later(delay, self._frame_over.set)
        try:
            await self._frame_over.wait()
        finally:
            timer.cancel()


def _merged(last: ChatEvent, event: ChatEvent) -> ChatEvent | None:
    """`event` folded into the queued `last`, when it only continues it (see
    `_EventWriter`); None otherwise. A call's opening and complete payloads are kept."""
    from ...events import ContentEvent, ToolCallEvent

    if isinstance(event, ContentEvent) and isinstance(last, ContentEvent):
        if (event.session_id, event.message_id) != (last.session_id, last.message_id):
            return None
        return event.model_copy(update={"content": last.content + event.content})
    if isinstance(event, ToolCallEvent) and isinstance(last, ToolCallEvent):
        queued = last.tool_call.function
        if (event.message_id is None) != (last.message_id is None):
            return None
        if event.tool_call.id != last.tool_call.id or queued.complete:
            return None
        return event if queued.arguments else None
    return None
