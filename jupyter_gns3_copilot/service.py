"""The chat service: one `AgentService` per GNS3 project, managed by `ProjectAgentManager`.

`AgentService.stream_chat(...)` runs one turn of the copilot graph and yields the chat
stream's events as dicts (see `events.py`; every event carries `session_id`):

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
once (see `get_history`).

Secrets (the model API key, GNS3 credentials) stay in memory: they travel in the run's
runtime context and in the service's GNS3 client, never in the checkpoint or the sessions
table. LangGraph, LangChain and the OpenAI client are imported only when a service opens.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from .agent.abort import AbortRegistry, SessionBusy
from .agent.tool_call_stream import ToolCallStreamAccumulator
from .events import (
    AbortEvent,
    ApprovalRequiredEvent,
    ApprovalResolvedEvent,
    ContentEvent,
    DoneEvent,
    ErrorEvent,
    HeartbeatEvent,
    ProgressEvent,
    ToolCallEvent,
    ToolEndEvent,
    ToolStartEvent,
)
from .single_flight import SingleFlight
from .store import ChatSession, ProjectStore, TurnStats

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from .agent.approval import ApprovalDecision, ApprovalRequest
    from .agent.approval_policy import ApprovalPolicy
    from .agent.graph import AgentContext, TopologySource
    from .agent.history import ConversationHistory
    from .agent.models import ModelSettings
    from .agent.state import TurnLimits
    from .gns3 import Project, Topology
    from .objectives.hints import ConfigurationFilter, TurnObjectives
    from .tools.lab_access import LabAccess

log = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_INTERVAL = 15.0
"""Seconds of silence after which a `heartbeat` event is sent."""
STREAM_MODES = ["updates", "custom"]
"""The graph's stream modes; the model's replies come through `AgentContext.reply_sink`."""
REPLY = "reply"
"""Queue items `(REPLY, chunk)` from the reply sink (None: a model call starts)."""
STOP_TIMEOUT = 10.0
"""Seconds `close()` waits for aborted turns to save their end."""
CLEANUP_TIMEOUT = 30.0
"""Seconds the end-of-turn bookkeeping (history repair, statistics) may take."""


def _event(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


def _refused(session_id: str, error: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """How a turn that could not run ends: an `error` event saying why, then `done`."""
    return (
        _event(ErrorEvent(session_id=session_id, error=error)),
        _event(DoneEvent(session_id=session_id)),
    )


def _copilot_off(
    session_id: str, objectives: TurnObjectives
) -> tuple[dict[str, Any], dict[str, Any]]:
    """How a turn ends in a stage with `hints: off` (an exam): the answer says so, no
    model is called, nothing is saved."""
    stage = objectives.stage
    text = f"The copilot is off for this stage ({stage.title}): you are on your own here."
    return (
        _event(ContentEvent(session_id=session_id, content=text)),
        _event(DoneEvent(session_id=session_id)),
    )


class _Finished:
    """Queue marker: the graph run ended (`error` set if it failed)."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


_HEARTBEAT = object()


class _Detached(Exception):
    """The service closes while a turn waits for a decision: the turn stops unresumed."""


class _Turn:
    """The bookkeeping of one running turn: statistics, results seen, title, outcome."""

    def __init__(
        self,
        session_id: str,
        user_message_id: str,
        *,
        title: str | None,
        create_row: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        self.session_id = session_id
        self.title = title
        """The session's title when the turn started (None: untitled)."""
        self._create_row = create_row
        self.ready: asyncio.Future[Any] | None = None
        """Completes once the session row exists (see `start_row`)."""
        self.user_message_id = user_message_id
        self.stats = TurnStats()
        self.accumulator = ToolCallStreamAccumulator()
        self.tool_results: dict[str, str] = {}
        """Tool results reported so far, by call id (used to repair an interrupted turn)."""
        self.counted_replies: set[str] = set()
        self.counted_results: set[str] = set()
        """Assistant message ids and tool call ids already in the statistics."""
        self.completed = False
        """Whether the graph run ended by itself without an error."""
        self.started = time.monotonic()
        self.mode: str | None = None
        self.waiting: ApprovalRequest | None = None
        """The approval the turn waits for now (None: not waiting)."""
        self.detached = False
        """The client left while a decision was awaited: the request stays pending in
        the checkpoint (no repair)."""
        self.errors: list[str] = []
        """What the turn's `error` events said, kept in the checkpoint when it ends."""
        self.answer_filter: ConfigurationFilter | None = None
        """Configuration lines kept out of the streamed answer (a `nudge` stage)."""

    def start_row(self) -> None:
        """Start creating the new session's row, once. It is needed only when statistics
        are saved, so a turn starts it as its first model call goes out (the write then
        runs while the model answers, not before the call) or when it saves anything."""
        if self._create_row is not None:
            self.ready = asyncio.ensure_future(self._create_row())
            self._create_row = None

    def statistics(self) -> dict[str, int | float]:
        """What `done` reports: this turn's counts and its elapsed seconds."""
        totals = self.stats.totals
        counts: dict[str, int | float] = {
            "input_tokens": totals.input_tokens,
            "output_tokens": totals.output_tokens,
            "llm_calls": totals.llm_calls,
            "message_count": totals.messages,
            "elapsed": round(time.monotonic() - self.started, 3),
        }
        if self.answer_filter is not None:
            counts["hints_filtered"] = self.answer_filter.filtered
        return counts

    def count(self, messages: Sequence[Any]) -> None:
        """Count the assistant replies and tool results among `messages` not counted yet."""
        from langchain_core.messages import AIMessage, ToolMessage

        from .agent.graph import LLM_CALL

        for message in messages:
            if isinstance(message, AIMessage) and message.id not in self.counted_replies:
                self.counted_replies.add(message.id or "")
                self.stats.model_finished(LLM_CALL, message.usage_metadata)
            elif (
                isinstance(message, ToolMessage)
                and message.tool_call_id not in self.counted_results
            ):
                self.counted_results.add(message.tool_call_id)
                self.stats.tool_finished()


class SessionRead:
    """What a turn reads of its session before the graph runs, started as soon as the
    session id is known (the server starts it alongside its GNS3 project check): the
    `chat_sessions` row and the latest checkpoint (`ProjectSaver.prefetch`, taken by the
    graph's own read when the run starts). Made by `AgentService.read_session`; the turn
    it is handed to owns it; `close()` it if no turn follows.
    """

    def __init__(self, store: ProjectStore, session_id: str, *, new: bool) -> None:
        self.store = store
        self.session_id = session_id
        self.new = new
        """The session id was just made up: no row or checkpoint to read."""
        self._checkpoint = store.checkpointer.prefetch(session_id, new=new)
        self._row: asyncio.Future[ChatSession | None] | None = (
            None if new else asyncio.ensure_future(store.sessions.get_session_by_thread(session_id))
        )

    async def row(self) -> ChatSession | None:
        """The session's row, whoever owns it (None: no such session yet)."""
        return None if self._row is None else await asyncio.shield(self._row)

    def close(self) -> None:
        """Stop the reads still running and drop the prefetched checkpoint."""
        if self._row is not None:
            if not self._row.done():
                self._row.cancel()
            elif not self._row.cancelled():
                self._row.exception()  # read: a failure was reported where awaited
        self.store.checkpointer.forget(self.session_id, self._checkpoint)


class AgentService:
    """The copilot for one GNS3 project: its chats, their history and statistics.

    Create it with `await AgentService.open(project_id, data_dir=..., lab=...)` (the
    project's database is created or migrated) and `close()` it when the project closes.
    `system_prompt` replaces the built-in prompt template (see `agent.prompts`).
    `approval` says which tool calls wait for a person (default: none; the server passes
    its `require_approval`), `approval_timeout` for how many seconds (default 600).
    `read_project` reads the GNS3 project for the topology (default: the GNS3 client's
    `get_project`; the server passes its shared lookup).
    Every method taking a `user_id` acts only on that user's sessions.
    """

    def __init__(
        self,
        project_id: str,
        store: ProjectStore,
        lab: LabAccess,
        *,
        system_prompt: str | None = None,
        default_mode: str | None = None,
        approval: ApprovalPolicy | None = None,
        approval_timeout: float | None = None,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> None:
        from .agent.approval import DEFAULT_TIMEOUT
        from .agent.approval_policy import NO_APPROVAL
        from .agent.graph import build_graph, read_topology
        from .tools import DEFAULT_MODE, check_mode

        self.project_id = project_id
        self.approval = approval or NO_APPROVAL
        self.approval_timeout = approval_timeout or DEFAULT_TIMEOUT
        self._decisions: dict[str, tuple[str, asyncio.Future[ApprovalDecision]]] = {}
        """Approvals awaited by a turn streaming in this process: id -> (session id,
        the decision's future)."""
        self._closing = asyncio.Event()
        """Set by `close()`: turns waiting for a decision detach (it stays pending in the
        checkpoint for the next server) instead of being aborted."""
        self.store = store
        self.lab = lab
        self.system_prompt = system_prompt
        self.default_mode = check_mode(default_mode or DEFAULT_MODE)
        self.turns = AbortRegistry()
        self.graph: CompiledStateGraph = build_graph(store.checkpointer)
        self._topology_reads: SingleFlight[str, Topology] = SingleFlight(
            lambda project_id: read_topology(lab.gns3, project_id, read_project)
        )
        """Topology reads shared by turns starting together (one GNS3 read per burst)."""
        self._consistent: set[str] = set()
        """Sessions whose last turn in this process left a valid history (no repair check
        needed before their next turn)."""

    @classmethod
    async def open(
        cls,
        project_id: str,
        *,
        data_dir: str | Path,
        lab: LabAccess,
        system_prompt: str | None = None,
        default_mode: str | None = None,
        approval: ApprovalPolicy | None = None,
        approval_timeout: float | None = None,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> AgentService:
        """Open the project's database and build the graph."""
        store = await ProjectStore.open(data_dir, project_id)
        try:
            return cls(
                store.project_id,
                store,
                lab,
                system_prompt=system_prompt,
                default_mode=default_mode,
                approval=approval,
                approval_timeout=approval_timeout,
                read_project=read_project,
            )
        except BaseException:
            await store.close()
            raise

    async def _stop_turns(self, timeout: float = STOP_TIMEOUT, *, detach: bool = False) -> None:
        """Abort the running turns and wait (at most `timeout` seconds) for them to end;
        with `detach` (the service closes), turns waiting for an approval stop unresumed
        instead, their request kept in the checkpoint."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if detach:
            self._closing.set()
        while self.turns.running() and loop.time() < deadline:
            for session_id in self.turns.running():
                if not (detach and self.awaits_decision(session_id)):
                    self.turns.request_abort(session_id)
            await asyncio.sleep(0.05)
        if self.turns.running():
            log.warning("Turns still running after %.0f s: %s", timeout, self.turns.running())

    async def close(self) -> None:
        """Abort running turns (detach those waiting for an approval), let them save their
        end, and close the database."""
        await self._stop_turns(detach=True)
        await self.store.close()

    def _config(self, session_id: str, user_id: str | None = None) -> dict[str, Any]:
        config: dict[str, Any] = {
            "configurable": {"thread_id": session_id, "project_id": self.project_id}
        }
        if user_id is not None:
            config["metadata"] = {"user_id": user_id}
        return config

    # -- streaming ---------------------------------------------------------------------------

    async def stream_chat(
        self,
        message: str,
        *,
        session_id: str | None = None,
        user_id: str,
        llm: ModelSettings,
        title_llm: ModelSettings | None = None,
        mode: str | None = None,
        temperature: float | None = None,
        max_iterations: int | None = None,
        max_tool_calls: int | None = None,
        max_execution_time_seconds: int | None = None,
        heartbeat_interval: float | None = DEFAULT_HEARTBEAT_INTERVAL,
        auto_approve: bool = False,
        topology: TopologySource | None = None,
        session: SessionRead | None = None,
        objectives: TurnObjectives | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """One turn: the user's `message` in session `session_id` (None: a new session).

        `llm` says which model to call (with its API key, kept in memory), `title_llm` which
        one names a new session (None: `llm`, without tools); `mode` the copilot mode
        (default: the service's); `temperature`, `max_iterations` (1-100, default 20),
        `max_tool_calls` (1-50, default unlimited) and `max_execution_time_seconds` (1-3600,
        default none) apply to this turn only (`agent.state.TurnLimits`).
        `heartbeat_interval` None or 0 sends no heartbeats. `auto_approve` runs every call
        without asking (the caller checked it is allowed). `topology` is a read the caller
        started with `read_topology()` (the turn then owns it and closes it), None to start
        one here; `session` likewise, from `read_session(session_id)` (a caller making up
        the id of a new session passes `new=True` there). `objectives`: the user's lab
        objectives (`objectives.hints`): the stage's objective texts for the model in
        teaching mode, the `check_objectives` tool, `nudge` answers without configuration
        lines, and `off` answered at once without a model call. Yields event dicts (module
        docstring); invalid parameters, an unknown or foreign session, a session already
        streaming and any failure give an `error` event, then `done`.
        """
        from .agent.state import TurnLimits
        from .tools import check_mode

        if session is None:
            session = self.read_session(session_id or str(uuid.uuid4()), new=session_id is None)
        session_id = session.session_id

        def close_reads() -> None:
            session.close()
            if topology is not None:
                topology.close()

        if objectives is not None and objectives.hints == "off":
            close_reads()
            for event in _copilot_off(session_id, objectives):
                yield event
            return

        try:
            given = {
                "max_iterations": max_iterations,
                "max_tool_calls": max_tool_calls,
                "max_execution_time_seconds": max_execution_time_seconds,
                "temperature": temperature,
            }
            limits = TurnLimits(**{key: value for key, value in given.items() if value is not None})
            mode = check_mode(mode or self.default_mode)
        except (ValidationError, ValueError) as exc:
            close_reads()
            for event in _refused(session_id, _invalid_parameters(exc)):
                yield event
            return
        try:
            abort = self.turns.begin(session_id)
        except SessionBusy as exc:
            close_reads()
            for event in _refused(session_id, str(exc)):
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
                    auto_approve,
                    topology or self.read_topology(),
                    objectives,
                )
            ) as events:
                async for event in events:
                    yield event
        except Exception as exc:
            for event in _refused(session_id, _error_text(exc)):
                yield event
        finally:
            self.turns.end(session_id, abort)

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
    ) -> AsyncIterator[dict[str, Any]]:
        from .agent.approval_policy import NO_APPROVAL
        from .agent.state import turn_input, user_message

        turn: _Turn | None = None
        session_id = reads.session_id
        try:
            session = await reads.row()
            if session is not None and session.user_id != user_id:
                for event in _refused(
                    session_id, f"Chat session {session_id} not found in this project."
                ):
                    yield event
                return
            message_id = str(uuid.uuid4())
            config = self._config(session_id, user_id)
            config["recursion_limit"] = limits.recursion_limit
            if session is None:
                turn = _Turn(
                    session_id,
                    message_id,
                    title=None,
                    create_row=lambda: self.store.sessions.create_session(
                        session_id, user_id, metadata={"mode": mode}
                    ),
                )
            else:
                turn = _Turn(session_id, message_id, title=session.title)
                if session_id not in self._consistent:
                    await self._repair(config, turn, interrupted=False)
            self._consistent.discard(session_id)
            turn.mode = mode
            context = await self._context(
                llm, title_llm, mode, limits.temperature, abort, topology, message_id, objectives
            )
            turn.answer_filter = objectives.answer_filter() if context.answer_filter else None
            if auto_approve:
                context.approval = NO_APPROVAL
            turn.stats.user_message()
            inputs = turn_input(user_message(message, message_id), session_id, limits)
            async with aclosing(
                self._stream_graph(
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

    def read_session(self, session_id: str, *, new: bool = False) -> SessionRead:
        """Start reading session `session_id` for a turn (`new`: an id just made up, nothing
        to read); hand it to `stream_chat`, or `close()` it if no turn follows."""
        return SessionRead(self.store, session_id, new=new)

    def read_topology(self) -> TopologySource:
        """Start reading the project's topology for a turn (shared with turns starting
        together); hand it to `stream_chat`, or `close()` it if no turn follows."""
        from .agent.graph import TopologySource

        topology = TopologySource(
            lambda: self._topology_reads(self.project_id),
            on_lab_changed=lambda: self._topology_reads.forget(self.project_id),
        )
        topology.prefetch()
        return topology

    async def _context(
        self,
        llm: ModelSettings,
        title_llm: ModelSettings | None,
        mode: str,
        temperature: float | None,
        abort: asyncio.Event,
        topology: TopologySource,
        turn_id: str,
        objectives: TurnObjectives | None = None,
    ) -> AgentContext:
        """The runtime context of a turn (or of its resumption after an approval); with
        `objectives`, the tool context reaches them, the model is offered
        `check_objectives`, and in teaching mode it reads the current stage and its
        `nudge` answers are filtered."""
        from .agent.graph import AgentContext, make_tool_specs
        from .agent.models import shared_chat_model
        from .agent.prompts import system_prompt
        from .objectives.hints import filter_answer
        from .tools.modes import TEACHING

        tools = self.lab.tool_context(self.project_id, mode, abort)
        prompt = system_prompt(mode, self.system_prompt)
        answer_filter = None
        if objectives is not None:
            tools.objectives = objectives
            if mode == TEACHING:
                prompt += objectives.prompt()
                if objectives.hints == "nudge":
                    answer_filter = functools.partial(
                        filter_answer, is_configuring=objectives.is_configuring
                    )
        return AgentContext(
            model=await shared_chat_model(llm, temperature=temperature),
            settings=llm,
            tools=tools,
            specs=make_tool_specs(mode, objectives=objectives is not None),
            topology=topology,
            system_prompt=prompt,
            answer_filter=answer_filter,
            abort=abort,
            title_model=(
                await shared_chat_model(title_llm, streaming=False)
                if title_llm is not None
                else None
            ),
            turn_id=turn_id,
            approval=self.approval,
            approval_timeout=self.approval_timeout,
            temperature=temperature,
        )

    def _expect_decision(self, request: ApprovalRequest, session_id: str) -> None:
        """Register `request` as awaited by a stream of this process (before the client
        hears of it, so `decide` and `awaits_decision` know it at once)."""
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._decisions[request.approval_id] = (session_id, future)

    async def _await_decision(
        self, request: ApprovalRequest, abort: asyncio.Event
    ) -> ApprovalDecision | None:
        """The decision on `request` (a "timeout" one when its time runs out); None when
        the turn was aborted while waiting. `_Detached` when the service closes."""
        from .agent.approval import ApprovalDecision

        future = self._decisions[request.approval_id][1]
        aborting = asyncio.ensure_future(abort.wait())
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait(
                {future, aborting, closing},
                timeout=max(request.remaining(), 0.0),
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            aborting.cancel()
            closing.cancel()
        if future.done():
            return future.result()
        if self._closing.is_set() and not abort.is_set():
            raise _Detached
        if abort.is_set():
            future.cancel()
            return None
        decision = ApprovalDecision(decision="timeout")
        future.set_result(decision)
        return decision

    async def _stream_graph(
        self,
        inputs: Any,
        config: dict[str, Any],
        context: AgentContext,
        turn: _Turn,
        heartbeat_interval: float | None,
        time_limit: int | None = None,
        time_used: float = 0.0,
    ) -> AsyncIterator[dict[str, Any]]:
        """Run the graph from `inputs` and yield the turn's events (module docstring).

        `time_limit` (None: none) bounds the turn's own work, `time_used` seconds of it
        spent before (a resumed turn): the clock pauses while the turn waits for a
        decision and restarts with the time left (at least `RESUME_FLOOR`)."""
        from .agent.clock import TurnClock
        from .agent.prompts import time_limit_notice

        queue: asyncio.Queue[Any] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        last_sent = [loop.time()]
        timed_out = asyncio.Event()

        def time_is_up() -> None:
            # The limit stops the turn the way the user's abort does (the same flag), so
            # a running tool is cancelled and the history repaired the same way.
            if not context.abort.is_set():
                timed_out.set()
                context.abort.set()

        clock = TurnClock(time_limit, time_is_up, time_used) if time_limit else None
        context.clock = clock
        if clock is not None:
            clock.start()

        def reply_sink(chunk: Any) -> None:
            if chunk is None:
                turn.start_row()
            queue.put_nowait((REPLY, chunk))

        context.reply_sink = reply_sink

        async def run_graph() -> None:
            from langgraph.types import Command

            from .agent.approval import ApprovalDecision, ApprovalRequest

            graph_input = inputs
            try:
                while True:
                    # durability="sync": a step's checkpoint (e.g. the model's tool calls,
                    # an approval request) is committed before the next step runs, so a
                    # crash never loses the record of what was being done.
                    turn.waiting = None
                    async for item in self.graph.astream(
                        graph_input,
                        config,
                        context=context,
                        stream_mode=STREAM_MODES,
                        durability="sync",
                    ):
                        mode, data = item
                        if mode == "updates" and "__interrupt__" in data:
                            turn.waiting = ApprovalRequest.model_validate(
                                data["__interrupt__"][0].value
                            )
                            self._expect_decision(turn.waiting, turn.session_id)
                            if clock is not None:
                                clock.pause()
                        queue.put_nowait(item)
                    request = turn.waiting
                    if request is None:
                        break
                    try:
                        decision = await self._await_decision(request, context.abort)
                    except _Detached:
                        break
                    if decision is not None:
                        queue.put_nowait(_resolved(request, decision))
                    if clock is not None:
                        clock.start()
                    # Aborted: the resumed tool_node sees the flag, asks nothing, runs
                    # nothing and answers every call with the aborted result.
                    resume = decision or ApprovalDecision(decision="reject", comment="aborted")
                    graph_input = Command(resume=resume.model_dump())
            except asyncio.CancelledError as cancelled:
                # LangGraph hands over the task still saving the run's last checkpoint;
                # let it finish before the history is inspected and repaired.
                for saving in cancelled.args:
                    if isinstance(saving, asyncio.Task):
                        await asyncio.gather(saving, return_exceptions=True)
                raise
            except Exception as exc:
                queue.put_nowait(_Finished(exc))
            else:
                queue.put_nowait(_Finished())

        async def beat(interval: float) -> None:
            while True:
                await asyncio.sleep(max(last_sent[0] + interval - loop.time(), 0.0))
                if loop.time() - last_sent[0] >= interval:
                    queue.put_nowait(_HEARTBEAT)
                    last_sent[0] = loop.time()

        runner = asyncio.ensure_future(run_graph())
        heart = asyncio.ensure_future(
            beat(heartbeat_interval) if heartbeat_interval else asyncio.Event().wait()
        )
        session_id = turn.session_id
        error: BaseException | None = None
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _Finished):
                    turn.completed = item.error is None
                    error = item.error
                    break
                if item is _HEARTBEAT:
                    yield _event(HeartbeatEvent(session_id=session_id))
                    continue
                for event in await self._translate(item, turn):
                    last_sent[0] = loop.time()
                    yield event
        finally:
            if clock is not None:
                clock.pause()
            heart.cancel()
            if not runner.done():
                runner.cancel()
            await asyncio.gather(runner, heart, return_exceptions=True)
            if turn.waiting is not None:
                turn.detached = not context.abort.is_set()
            for approval_id in [
                key for key, (owner, _) in self._decisions.items() if owner == turn.session_id
            ]:
                del self._decisions[approval_id]
            unread = [queue.get_nowait() for _ in range(queue.qsize())]
            final_error = None
            if error is not None:
                final_error = _error_text(error)
            elif timed_out.is_set() and time_limit is not None:
                final_error = time_limit_notice(time_limit)
            if final_error is not None:
                turn.errors.append(final_error)
            await asyncio.shield(self._end_turn(config, turn, unread))
        if final_error is not None:
            yield _event(ErrorEvent(session_id=session_id, error=final_error))
        elif context.abort.is_set():
            yield _event(AbortEvent(session_id=session_id))
        yield _event(
            DoneEvent(session_id=session_id, statistics=turn.statistics(), title=turn.title)
        )

    async def _translate(self, item: tuple[str, Any], turn: _Turn) -> list[dict[str, Any]]:
        """The SSE events for one item of the graph's stream or the reply sink (statistics
        updated on the way)."""
        mode, data = item
        session_id = turn.session_id
        if mode == REPLY:
            return self._reply_events(data, turn)
        if mode == "custom":
            return self._custom_event(data, turn)
        await self._record_update(data, turn)
        if "__interrupt__" in data:
            fields = data["__interrupt__"][0].value
            return [_event(ApprovalRequiredEvent(session_id=session_id, **fields))]
        return []

    def _reply_events(self, chunk: Any, turn: _Turn) -> list[dict[str, Any]]:
        """The events for one chunk of the model's reply (None: a model call starts)."""
        from .agent.graph import LLM_CALL

        if chunk is None:
            turn.stats.model_started(LLM_CALL)
            turn.accumulator.reset()
            return []
        session_id = turn.session_id
        events: list[dict[str, Any]] = []
        finished = bool(chunk.response_metadata.get("finish_reason"))
        if chunk.content or (finished and turn.answer_filter is not None):
            text = chunk.content if isinstance(chunk.content, str) else chunk.text
            if turn.answer_filter is not None:
                text = turn.answer_filter.feed(text or "")
                if finished:
                    text += turn.answer_filter.flush()
            if text:
                events.append(
                    {
                        "type": "content",
                        "content": text,
                        "message_id": chunk.id,
                        "session_id": session_id,
                    }
                    if chunk.id
                    else _event(ContentEvent(session_id=session_id, content=text))
                )
        if chunk.tool_call_chunks:
            events += [
                _event(ToolCallEvent(session_id=session_id, tool_call=p, message_id=chunk.id))
                for p in turn.accumulator.add(chunk.tool_call_chunks)
            ]
        if finished:
            events += [
                _event(ToolCallEvent(session_id=session_id, tool_call=p, message_id=chunk.id))
                for p in turn.accumulator.finish()
            ]
        return events

    def _custom_event(self, data: Mapping[str, Any], turn: _Turn) -> list[dict[str, Any]]:
        kind = data.get("type")
        session_id = turn.session_id
        if kind == "tool_start":
            return [_event(ToolStartEvent(session_id=session_id, **_fields(data)))]
        if kind == "progress":
            return [_event(ProgressEvent(session_id=session_id, **_fields(data)))]
        if kind == "tool_end":
            turn.tool_results[data["tool_call_id"]] = data["tool_output"]
            return [tool_end_event(session_id, data, mode=turn.mode)]
        if kind == "approval_resolved":
            return [_event(ApprovalResolvedEvent(session_id=session_id, **_fields(data)))]
        if kind == "iteration_limit":
            turn.errors.append(data["message"])
            return [_event(ErrorEvent(session_id=session_id, error=data["message"]))]
        return []

    async def _record_update(self, data: Mapping[str, Any], turn: _Turn) -> None:
        """Statistics and title from the nodes' state updates, saved at once."""
        from .agent.graph import LLM_CALL, TITLE_NODE

        for node, update in data.items():
            if not isinstance(update, Mapping):
                continue
            if node == LLM_CALL:
                turn.accumulator.reset()
            turn.count(update.get("messages") or [])
            if node == TITLE_NODE and update.get("conversation_title"):
                await self._sync_title(turn, update["conversation_title"])
        await self._flush(turn)

    async def _session_row(self, turn: _Turn) -> None:
        """Wait until the session row exists."""
        turn.start_row()
        if turn.ready is not None:
            await turn.ready
            turn.ready = None

    async def _flush(self, turn: _Turn) -> None:
        """Save the statistics not saved yet."""
        await self._session_row(turn)
        await turn.stats.flush(self.store.sessions, turn.session_id)

    async def _sync_title(self, turn: _Turn, title: str) -> None:
        """Store the generated title unless the session already has one (e.g. renamed)."""
        if turn.title is None:
            await self._session_row(turn)
            await self.store.sessions.update_session(turn.session_id, title=title)
            turn.title = title

    async def _repair(self, config: dict[str, Any], turn: _Turn, *, interrupted: bool) -> None:
        """Answer the thread's unanswered tool calls (known results first, else aborted)."""
        from .agent.graph import ABORT_NODE
        from .agent.history import placeholder_results, unanswered_tool_calls
        from .agent.prompts import ABORTED_RESULT, INTERRUPTED_RESULT
        from .agent.state import stamp

        snapshot = await self.graph.aget_state(config)
        pending = unanswered_tool_calls(snapshot.values.get("messages", []))
        if not pending:
            return
        log.warning(
            "Session %s: %d tool call(s) without a result (%s); adding placeholder results",
            turn.session_id,
            len(pending),
            "turn interrupted" if interrupted else "found at turn start",
        )
        results = placeholder_results(
            pending,
            ABORTED_RESULT if interrupted else INTERRUPTED_RESULT,
            known=turn.tool_results,
            metadata=stamp(),
        )
        await self.graph.aupdate_state(config, {"messages": results}, as_node=ABORT_NODE)
        turn.count(results)

    async def _keep_errors(self, config: dict[str, Any], turn: _Turn) -> None:
        """Keep the errors the turn ended with in its thread's state (`turn_errors`, under
        its user message), so a read of the history shows them; not if the user message
        never reached the history."""
        from .agent.graph import ABORT_NODE
        from .agent.state import now_iso

        snapshot = await self.graph.aget_state(config)
        messages = (snapshot.values or {}).get("messages", [])
        if not any(message.id == turn.user_message_id for message in messages):
            return
        errors = [{"error": text, "created_at": now_iso()} for text in turn.errors]
        await self.graph.aupdate_state(
            config, {"turn_errors": {turn.user_message_id: errors}}, as_node=ABORT_NODE
        )

    async def _end_turn(self, config: dict[str, Any], turn: _Turn, unread: list[Any]) -> None:
        """Save what the statistics still owe; after an interrupted or failed run, repair
        the history first and count every message the turn left in it.

        `unread` holds stream items the consumer never read (it stopped early): their
        model calls still count.
        """

        async def save() -> None:
            for item in unread:
                if isinstance(item, tuple):
                    await self._translate(item, turn)
            if turn.detached:
                await self._flush(turn)
                return
            if not turn.completed:
                await self._repair(config, turn, interrupted=True)
                snapshot = await self.graph.aget_state(config)
                messages = snapshot.values.get("messages", [])
                start = next(
                    (i for i, m in enumerate(messages) if m.id == turn.user_message_id),
                    len(messages),
                )
                turn.count(messages[start + 1 :])
            if turn.errors:
                await self._keep_errors(config, turn)
            await self._flush(turn)
            self._consistent.add(turn.session_id)

        try:
            await asyncio.wait_for(save(), CLEANUP_TIMEOUT)
        except Exception:
            log.exception("Session %s: saving the end of the turn failed", turn.session_id)

    # -- sessions ------------------------------------------------------------------------

    async def get_history(
        self, session_id: str, *, user_id: str, limit: int = 100
    ) -> ConversationHistory | None:
        """The session's last `limit` messages in the OpenAI message format (None: no such
        session for this user).

        A session with no turn running in this process whose history ends with unanswered
        tool calls (the server died mid-tool) is returned repaired, as its next turn will
        write it: each call answered by the interrupted placeholder. The read writes
        nothing and takes no lock; a running turn's calls are not touched (their results
        are coming), nor are those of a turn waiting for an approval."""
        from .agent.history import (
            ConversationHistory,
            to_openai_messages,
            turn_errors_of,
            with_placeholder_results,
        )
        from .agent.prompts import INTERRUPTED_RESULT

        session = await self.store.sessions.get_session_by_thread(session_id, user_id)
        if session is None:
            return None
        snapshot = await self.graph.aget_state(self._config(session_id))
        values = snapshot.values or {}
        messages = values.get("messages", [])
        paused = any(task.interrupts for task in snapshot.tasks)
        if not self.turns.is_running(session_id) and not paused:
            messages = with_placeholder_results(messages, INTERRUPTED_RESULT)
        shown = to_openai_messages(messages[-limit:] if limit > 0 else [])
        return ConversationHistory(
            thread_id=session_id,
            title=session.title or values.get("conversation_title"),
            messages=shown,
            created_at=session.created_at,
            updated_at=session.updated_at,
            llm_calls=session.llm_calls_count,
            turn_errors=turn_errors_of(shown, values.get("turn_errors") or {}),
        )

    async def list_sessions(self, *, user_id: str, limit: int = 100) -> list[ChatSession]:
        """The user's sessions in this project: pinned first, then most recently updated."""
        return await self.store.sessions.list_sessions(user_id, limit=limit)

    async def get_session(self, session_id: str, *, user_id: str) -> ChatSession | None:
        """The user's session `session_id`, or None."""
        return await self.store.sessions.get_session_by_thread(session_id, user_id)

    async def rename_session(
        self, session_id: str, title: str, *, user_id: str
    ) -> ChatSession | None:
        """Set the title (1-255 characters, `InvalidTitle` otherwise); None: no such session."""
        return await self.store.sessions.rename_session(session_id, title, user_id=user_id)

    async def pin_session(
        self, session_id: str, pinned: bool = True, *, user_id: str
    ) -> ChatSession | None:
        """Pin (or unpin) the session; None: no such session."""
        return await self.store.sessions.pin_session(session_id, pinned, user_id=user_id)

    async def delete_session(self, session_id: str, *, user_id: str) -> bool:
        """Delete the session and its checkpoints; False: no such session.

        Raises `SessionBusy` while the session is streaming (abort it first).
        """
        if self.turns.is_running(session_id):
            raise SessionBusy(
                f"Session {session_id} is answering a message: abort it before deleting it."
            )
        deleted = await self.store.sessions.delete_session(session_id, user_id=user_id)
        if deleted:
            self._consistent.discard(session_id)
        return deleted

    async def delete_all_sessions(self) -> int:
        """Delete every session of the project (project deletion), aborting running turns
        first; the number deleted."""
        await self._stop_turns()
        return await self.store.sessions.delete_all_sessions()

    async def abort_session(self, session_id: str, *, user_id: str) -> bool:
        """Ask the session's running turn to stop; False if it is not streaming (or not
        the user's). A turn paused at an approval with no stream attached is ended at
        once: its waiting calls get `{"status": "aborted"}` results, nothing runs."""
        if await self.store.sessions.get_session_by_thread(session_id, user_id) is None:
            return False
        if self.turns.is_running(session_id):
            return self.turns.request_abort(session_id)
        if not await self.pending_approvals(session_id, user_id=user_id):
            return False
        try:
            abort = self.turns.begin(session_id)
        except SessionBusy:
            return self.turns.request_abort(session_id)
        try:
            turn = _Turn(session_id, "", title=None)
            await self._repair(self._config(session_id), turn, interrupted=True)
            self._consistent.add(session_id)
        finally:
            self.turns.end(session_id, abort)
        return True

    # -- approvals -----------------------------------------------------------------------

    def awaits_decision(self, session_id: str) -> bool:
        """Whether the session's streaming turn waits for an approval now (a client that
        leaves then detaches: closing the stream keeps the request pending)."""
        waiting = (not f.done() for owner, f in self._decisions.values() if owner == session_id)
        return any(waiting)

    async def pending_approvals(self, session_id: str, *, user_id: str) -> list[ApprovalRequest]:
        """The session's approval requests waiting for a decision (at most one: a turn
        pauses at its first undecided call); [] for no such session of the user's."""
        from .agent.approval import ApprovalRequest

        if await self.store.sessions.get_session_by_thread(session_id, user_id) is None:
            return []
        snapshot = await self.graph.aget_state(self._config(session_id))
        requests = [
            ApprovalRequest.model_validate(interrupt.value)
            for task in snapshot.tasks
            for interrupt in task.interrupts
        ]
        decided = {key for key, (_, future) in self._decisions.items() if future.done()}
        return [request for request in requests if request.approval_id not in decided]

    async def approval_state(
        self, session_id: str, approval_id: str, *, user_id: str
    ) -> str | None:
        """ "live" (a stream in this process waits for it), "pending" (paused, no stream
        attached: `resume_chat` answers it), "decided", or None (no such approval in the
        user's session)."""
        from .agent.approval import approval_id_for

        if await self.store.sessions.get_session_by_thread(session_id, user_id) is None:
            return None
        live = self._decisions.get(approval_id)
        if live is not None and live[0] == session_id:
            return "decided" if live[1].done() else "live"
        pending = await self.pending_approvals(session_id, user_id=user_id)
        if any(request.approval_id == approval_id for request in pending):
            return "pending"
        snapshot = await self.graph.aget_state(self._config(session_id))
        for message in snapshot.values.get("messages", []):
            for call in getattr(message, "tool_calls", None) or []:
                if approval_id_for(session_id, call.get("id") or "") == approval_id:
                    return "decided"
        return None

    def decide(self, approval_id: str, decision: ApprovalDecision) -> bool:
        """Answer an approval a stream in this process waits for; False if none does."""
        live = self._decisions.get(approval_id)
        if live is None or live[1].done():
            return False
        live[1].set_result(decision)
        return True

    async def resume_chat(
        self,
        session_id: str,
        approval_id: str,
        decision: ApprovalDecision,
        *,
        user_id: str,
        llm: ModelSettings,
        title_llm: ModelSettings | None = None,
        heartbeat_interval: float | None = DEFAULT_HEARTBEAT_INTERVAL,
        objectives: TurnObjectives | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Decide a paused turn's approval with no stream attached (its client left, or
        the server restarted) and stream the rest of the turn: `approval_resolved`, then
        the turn's events, `done` last. A request past its time resolves as "timeout"
        whatever was decided. Events and `objectives` as `stream_chat`'s."""
        from langgraph.types import Command

        from .agent.approval import ApprovalDecision as Decision

        try:
            abort = self.turns.begin(session_id)
        except SessionBusy as exc:
            for event in _refused(session_id, str(exc)):
                yield event
            return
        topology = None
        try:
            session = await self.store.sessions.get_session_by_thread(session_id, user_id)
            pending = await self.pending_approvals(session_id, user_id=user_id)
            request = next((r for r in pending if r.approval_id == approval_id), None)
            if session is None or request is None:
                for event in _refused(
                    session_id, f"Approval {approval_id} is not waiting for a decision."
                ):
                    yield event
                return
            if request.remaining() <= 0:
                decision = Decision(decision="timeout")
            config = self._config(session_id, user_id)
            snapshot = await self.graph.aget_state(config)
            from langchain_core.messages import HumanMessage

            human = [m for m in snapshot.values.get("messages", []) if isinstance(m, HumanMessage)]
            message_id = (human[-1].id if human else None) or str(uuid.uuid4())
            turn = _Turn(session_id, message_id, title=session.title)
            turn.mode = request.mode
            topology = self.read_topology()
            context = await self._context(
                llm,
                title_llm,
                request.mode,
                request.temperature,
                abort,
                topology,
                message_id,
                objectives,
            )
            turn.answer_filter = (
                objectives.answer_filter() if objectives and context.answer_filter else None
            )
            self._consistent.discard(session_id)
            for event in self._custom_event(_resolved(request, decision)[1], turn):
                yield event
            async with aclosing(
                self._stream_graph(
                    Command(resume=decision.model_dump()),
                    config,
                    context,
                    turn,
                    heartbeat_interval,
                    request.time_limit,
                    request.time_used or 0.0,
                )
            ) as events:
                async for event in events:
                    yield event
        except Exception as exc:
            for event in _refused(session_id, _error_text(exc)):
                yield event
        finally:
            if topology is not None:
                topology.close()
            self.turns.end(session_id, abort)


def _resolved(request: ApprovalRequest, decision: ApprovalDecision) -> tuple[str, dict[str, Any]]:
    """The stream item announcing a decision (as the graph's custom events look)."""
    return (
        "custom",
        {
            "type": "approval_resolved",
            "approval_id": request.approval_id,
            "tool_call_id": request.tool_call_id,
            "decision": decision.decision,
            "comment": decision.comment,
        },
    )


def tool_end_event(session_id: str, data: Mapping[str, Any], *, mode: str | None) -> dict[str, Any]:
    """The `tool_end` event of a tool's result (`data`: tool_name, tool_call_id,
    tool_output, the call's arguments when known), with its reading for people
    (`tools.outcomes`); `tool_output` stays what the model reads."""
    from .tools.outcomes import read_result

    arguments = data.get("arguments")
    reading = read_result(
        data["tool_name"],
        data["tool_output"],
        mode=mode,
        arguments=arguments if isinstance(arguments, Mapping) else None,
    )
    return _event(
        ToolEndEvent(
            session_id=session_id,
            tool_name=data["tool_name"],
            tool_call_id=data.get("tool_call_id"),
            tool_output=data["tool_output"],
            summary=reading.summary,
            outcome=reading.outcome,
            note=reading.note,
        )
    )


def _fields(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key != "type" and value is not None}


def _invalid_parameters(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()
        )
        return f"Invalid chat parameters: {problems}."
    return str(exc)


def _error_text(exc: BaseException) -> str:
    from .agent.models import ModelCallError

    if isinstance(exc, ModelCallError):
        return str(exc)
    log.error("Chat turn failed", exc_info=exc)
    return f"The copilot failed: {type(exc).__name__}: {exc}"


class ProjectAgentManager:
    """The `AgentService` of every open project.

    Services share `lab` (GNS3 client, consoles, policy, skills), the approval
    policy and `read_project` (see `AgentService`), and keep their data under
    `<data_dir>/projects/<project_id>/`.
    """

    def __init__(
        self,
        data_dir: str | Path,
        lab: LabAccess,
        *,
        system_prompt: str | None = None,
        default_mode: str | None = None,
        approval: ApprovalPolicy | None = None,
        approval_timeout: float | None = None,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.lab = lab
        self.system_prompt = system_prompt
        self.default_mode = default_mode
        self.approval = approval
        self.approval_timeout = approval_timeout
        self.read_project = read_project
        self._agents: dict[str, AgentService] = {}
        self._lock = asyncio.Lock()

    async def get_agent(self, project_id: str) -> AgentService:
        """The project's service, opened on first use."""
        from .store import validate_project_id

        project_id = validate_project_id(project_id)
        agent = self._agents.get(project_id)
        if agent is not None:
            return agent
        async with self._lock:
            agent = self._agents.get(project_id)
            if agent is None:
                agent = await AgentService.open(
                    project_id,
                    data_dir=self.data_dir,
                    lab=self.lab,
                    system_prompt=self.system_prompt,
                    default_mode=self.default_mode,
                    approval=self.approval,
                    approval_timeout=self.approval_timeout,
                    read_project=self.read_project,
                )
                self._agents[project_id] = agent
            return agent

    def opened(self, project_id: str) -> AgentService | None:
        """The project's service if it is open, without opening it."""
        return self._agents.get(project_id.strip().lower())

    async def remove_agent(self, project_id: str) -> None:
        """Close and forget the project's service (project closed); no-op if none."""
        agent = self._agents.pop(project_id.strip().lower(), None)
        if agent is not None:
            await agent.close()

    async def close_all(self) -> None:
        """Close every service."""
        agents, self._agents = list(self._agents.values()), {}
        for agent in agents:
            await agent.close()
