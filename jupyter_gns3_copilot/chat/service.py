"""`AgentService`: the copilot for one GNS3 project (its chats, their history and statistics),
one per open project (`manager.py`), composed of three parts sharing one `ChatSettings`:
the turn engine (`engine`, `engine.py`), the sessions (`sessions`, `sessions.py`) and the
approvals (`approvals`, `approvals.py`).

`AgentService.stream_chat(...)` runs one turn of the copilot graph and yields the chat
stream's events as `events.ChatEvent` models (every event carries `session_id`; the
server's relay writes each as its JSON object, None fields left out):

- `content` pieces of the answer (with the assistant `message_id`);
- `tool_call` events repeating a call with its arguments accumulated so far, the last one
  for each call with `function.complete: true` (`agent.tool_call_stream`);
- `tool_start` (with `tool_call_id`), `progress` while a long tool works (node boot,
  device commands: `message`, `elapsed`, `node`), `tool_end` (with `tool_output`, the
  JSON text stored in the history);
- `error` with a readable message (model errors explained by `describe_model_error`; a
  second turn on a session that is still streaming; the turn stopping at
  `max_iterations` with tools left unrun; the turn stopped at
  `max_execution_time_seconds`, like an abort: a running tool cancelled, results
  `{"status": "aborted"}`; the time waiting for an approval does not count, and a
  resumed turn runs with the time left: `agent.clock`);
- `approval_required` when a call must wait for a person's decision (`agent.approval`):
  the stream stays open with heartbeats until `decide` answers it (or it times out, or
  the turn is aborted); then `approval_resolved` and the rest of the turn. A client that
  leaves while a decision is awaited detaches: the request stays in the checkpoint, and
  `resume_chat` later streams the rest of the turn (also after a restart);
- `abort` when the user aborted the turn; `heartbeat` after `heartbeat_interval` seconds
  without any other event (render nothing);
- `done`, always last; after a model turn it carries the turn's `statistics` (its own
  counts, as saved, and elapsed seconds) and the session's `title`.

Statistics follow `store.stats`'s counting rules and are saved as the turn goes (after
every model call and tool result, and once more when the turn ends), so a consumer that
stops reading (`aclose()` on the generator, a dropped connection) still leaves correct
counts. Stopping early cancels the turn like an abort, and tool calls left without a
result get one (the real result if the tool finished, else `{"status": "aborted"}`), so
the history stays valid for the model API. A history left invalid by a crash is repaired
the same way when the session's next turn starts, and history reads show that repair at
once (see `ChatSessions.get_history`).

Secrets (the model API key, GNS3 credentials) stay in memory: they travel in the run's
runtime context and in the service's GNS3 client, never in the checkpoint or the sessions
table. LangGraph, LangChain and the OpenAI client are imported only when a service opens.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ..agent.abort import SessionBusy
from ..agent.approval_policy import NO_APPROVAL
from ..store import ProjectStore
from ..tools import check_mode
from . import repair
from .approvals import ChatApprovals
from .engine import DEFAULT_HEARTBEAT_INTERVAL, TurnEngine
from .options import TurnOptions
from .session_read import SessionRead
from .sessions import ChatSessions
from .stream_events import copilot_off, error_text, invalid_parameters, refused

if TYPE_CHECKING:
    from ..agent.limits import TurnLimits
    from ..agent.llm_access import ModelSettings
    from ..agent.topology_source import TopologySource
    from ..events import ChatEvent
    from ..gns3 import Project
    from ..objectives.hints import TurnObjectives
    from ..tools import LabAccess
    from .running_turn import RunningTurn
    from .settings import ChatSettings

DEFAULT_OPTIONS = TurnOptions()
"""A turn with every option left to its default."""


class AgentService:
    """The copilot for one GNS3 project: its chats, their history and statistics.

    Create it with `await AgentService.open(project_id, settings, lab=...)` (the
    project's database is created or migrated under `settings.data_dir`) and `close()`
    it when the project closes. `read_project` reads the GNS3 project for the topology
    (default: the GNS3 client's `get_project`; the server passes its shared lookup).
    The service runs turns (`stream_chat`); its parts answer the rest: `engine` (the
    running turns, `read_topology`, `read_session`), `sessions` (history, list, rename,
    pin, delete, abort) and `approvals` (what waits, deciding, `resume_chat`). Every
    method taking a `user_id` acts only on that user's sessions.
    """

    def __init__(self, engine: TurnEngine) -> None:
        self.engine = engine
        self.store = engine.store
        """The project's database (opened by `open`, closed by `close`)."""
        self.approvals = ChatApprovals(engine)
        self.sessions = ChatSessions(engine, self.approvals)

    @classmethod
    async def open(
        cls,
        project_id: str,
        settings: ChatSettings,
        *,
        lab: LabAccess,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> AgentService:
        """Open the project's database and build the graph."""
        store = await ProjectStore.open(settings.data_dir, project_id)
        try:
            return cls(TurnEngine(store, lab, settings, read_project))
        except BaseException:
            await store.close()
            raise

    async def close(self) -> None:
        """Abort running turns (detach those waiting for an approval), let them save their
        end, and close the database."""
        await self.engine.stop_turns(detach=True)
        await self.store.close()

    async def stream_chat(
        self,
        message: str,
        *,
        session_id: str | None = None,
        user_id: str,
        llm: ModelSettings,
        title_llm: ModelSettings | None = None,
        options: TurnOptions = DEFAULT_OPTIONS,
        heartbeat_interval: float | None = DEFAULT_HEARTBEAT_INTERVAL,
        topology: TopologySource | None = None,
        session: SessionRead | None = None,
        objectives: TurnObjectives | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """One turn: the user's `message` in session `session_id` (None: a new session).

        `llm` says which model to call (with its API key, kept in memory), `title_llm` which
        one names a new session (None: `llm`, without tools); `options` the turn's copilot
        mode (default: the service's), limits and auto-approval (`TurnOptions`, checked
        here). `heartbeat_interval` None or 0 sends no heartbeats. `topology` is a read the
        caller started with `engine.read_topology()` (the turn then owns it and closes it),
        None to start one here; `session` likewise, from `engine.read_session(session_id)`
        (a caller making up the id of a new session passes `new=True` there).
        `objectives`: the user's lab objectives (`objectives.hints`): the stage's objective
        texts for the model in teaching mode, the `check_objectives` tool, `nudge` answers
        without configuration lines, and `off` answered at once without a model call.
        Yields the events (module docstring); invalid parameters, an unknown or foreign
        session, a session already streaming and any failure give an `error` event, then
        `done`.
        """
        engine = self.engine
        if session is None:
            session = engine.read_session(session_id or str(uuid.uuid4()), new=session_id is None)
        session_id = session.session_id

        def close_reads() -> None:
            session.close()
            if topology is not None:
                topology.close()

        if objectives is not None and objectives.hints == "off":
            close_reads()
            for event in copilot_off(session_id, objectives):
                yield event
            return

        try:
            limits = options.limits()
            mode = check_mode(options.mode or engine.settings.default_mode)
        except (ValidationError, ValueError) as exc:
            close_reads()
            for event in refused(session_id, invalid_parameters(exc)):
                yield event
            return
        try:
            abort = engine.turns.begin(session_id)
        except SessionBusy as exc:
            close_reads()
            for event in refused(session_id, str(exc)):
                yield event
            return
        try:
            async with aclosing(
                self._run_turn(
                    message,
                    session,
                    user_id,
                    llm,
                    title_llm,
                    mode,
                    limits,
                    abort,
                    heartbeat_interval,
                    options.auto_approve,
                    topology or engine.read_topology(),
                    objectives,
                )
            ) as events:
                async for event in events:
                    yield event
        except Exception as exc:
            for event in refused(session_id, error_text(exc)):
                yield event
        finally:
            engine.turns.end(session_id, abort)

    async def _run_turn(
        self,
        message: str,
        reads: SessionRead,
        user_id: str,
        llm: ModelSettings,
        title_llm: ModelSettings | None,
        mode: str,
        limits: TurnLimits,
        abort: asyncio.Event,
        heartbeat_interval: float | None,
        auto_approve: bool,
        topology: TopologySource,
        objectives: TurnObjectives | None,
    ) -> AsyncGenerator[ChatEvent, None]:
        # LangChain is imported when the first service opens, not when the server loads.
        from ..agent.state import turn_input, user_message

        engine = self.engine
        turn: RunningTurn | None = None
        session_id = reads.session_id
        try:
            session = await reads.row()
            if session is not None and session.user_id != user_id:
                for event in refused(
                    session_id, f"Chat session {session_id} not found in this project."
                ):
                    yield event
                return
            message_id = str(uuid.uuid4())
            config = engine.config(session_id, user_id)
            config["recursion_limit"] = limits.recursion_limit
            if session is None:
                turn = engine.new_turn(
                    session_id,
                    message_id,
                    title=None,
                    create_row=lambda: self.store.sessions.create_session(
                        session_id, user_id, metadata={"mode": mode}
                    ),
                )
            else:
                turn = engine.new_turn(session_id, message_id, title=session.title)
                if session_id not in engine.consistent:
                    await repair.answer_unanswered_calls(
                        engine.graph, config, turn, interrupted=False
                    )
            engine.consistent.discard(session_id)
            turn.mode = mode
            context = await engine.turn_context(
                llm, title_llm, mode, limits.temperature, abort, topology, message_id, objectives
            )
            turn.answer_filter = context.hold_back.stream() if context.hold_back else None
            if auto_approve:
                context.approval = NO_APPROVAL
            turn.stats.user_message()
            inputs = turn_input(user_message(message, message_id), session_id, limits)
            async with aclosing(
                engine.stream(
                    inputs,
                    config,
                    context,
                    turn,
                    heartbeat_interval,
                    limits.max_execution_time_seconds,
                )
            ) as events:
                async for event in events:
                    yield event
        finally:
            topology.close()
            reads.close()
            if turn is not None:
                turn.start_row()
                if turn.ready is not None:
                    await asyncio.gather(turn.ready, return_exceptions=True)
