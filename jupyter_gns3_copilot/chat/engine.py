"""`TurnEngine`: the turn engine of one project's chat service, the part that holds
what the service's other parts (`sessions.py`, `approvals.py`) work on: the graph, the
store, the running turns and the decisions they await.

`stream` runs the graph from a turn's input (or a resumption) and yields the chat
events (`ChatEvent` models; `service.py`'s docstring): the model's reply from the
context's `reply_sink` and the graph's `updates` and `custom` items through one queue,
heartbeats during silence, the turn's time limit (paused while a decision is awaited),
the approvals the graph asks for, and, when the run ends however it ends, the turn's end
saved (`_end_turn`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from ..agent.abort import AbortRegistry
from ..agent.approval import ApprovalDecision, ApprovalRequest
from ..agent.clock import TurnClock
from ..agent.device_notes import device_notes
from ..agent.prompts import time_limit_notice
from ..events import (
    AbortEvent,
    ApprovalRequiredEvent,
    ChatEvent,
    DoneEvent,
    ErrorEvent,
    HeartbeatEvent,
)
from ..single_flight import SingleFlight
from ..store import ProjectStore
from ..tools import LabAccess
from ..tools.skills import SkillsLibrary
from . import repair
from .decisions import Detached, LiveDecisions
from .running_turn import RunningTurn
from .session_read import SessionRead
from .settings import ChatSettings
from .stream_events import custom_events, error_text, reply_events, resolved
from .turn_context import agent_context

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import StreamMode

    from ..agent.agent_context import AgentContext
    from ..agent.graph import CopilotGraph
    from ..agent.llm_access import ModelSettings
    from ..agent.topology_source import TopologySource
    from ..gns3 import Project, Topology
    from ..objectives.hints import TurnObjectives

log = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_INTERVAL = 15.0
"""Seconds of silence after which a `heartbeat` event is sent."""
STREAM_MODES: list[StreamMode] = ["updates", "custom"]
"""The graph's stream modes; the model's replies come through `AgentContext.reply_sink`."""
REPLY = "reply"
"""Queue items `(REPLY, chunk)` from the reply sink (None: a model call starts)."""
STOP_TIMEOUT = 10.0
"""Seconds `close()` waits for aborted turns to save their end."""
CLEANUP_TIMEOUT = 30.0
"""Seconds the end-of-turn bookkeeping (history repair, statistics) may take."""


class _Finished:
    """Queue marker: the graph run ended (`error` set if it failed)."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


_HEARTBEAT = object()


class TurnEngine:
    """One project's graph, database, running turns and the decisions they await, run
    with `settings` (see `AgentService`, which composes it with the sessions and the
    approvals). `read_project` reads the GNS3 project for the topology (None: the GNS3
    client's `get_project`)."""

    def __init__(
        self,
        store: ProjectStore,
        lab: LabAccess,
        settings: ChatSettings,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> None:
        # LangGraph is imported when the first service opens, not when the server loads.
        from ..agent.graph import build_graph
        from ..agent.topology_source import read_topology

        self.project_id = store.project_id
        self.store = store
        self.lab = lab
        self.settings = settings
        self.decisions = LiveDecisions()
        self.turns = AbortRegistry()
        self.graph: CopilotGraph = build_graph(store.checkpointer)
        self._skills = lab.skills or SkillsLibrary()
        """Whose `prompt` notes the system prompt shows for the lab's dialects."""
        self._topology_reads: SingleFlight[str, Topology] = SingleFlight(
            lambda project_id: read_topology(lab.gns3, project_id, read_project)
        )
        """Topology reads shared by turns starting together (one GNS3 read per burst)."""
        self.consistent: set[str] = set()
        """Sessions whose last turn in this process left a valid history (no repair check
        needed before their next turn); a part that changes a session's history outside a
        turn discards it (or adds it, having repaired the history)."""

    def config(self, session_id: str, user_id: str | None = None) -> RunnableConfig:
        """The graph's config for a run (or a state read) of session `session_id`."""
        config: RunnableConfig = {
            "configurable": {"thread_id": session_id, "project_id": self.project_id}
        }
        if user_id is not None:
            config["metadata"] = {"user_id": user_id}
        return config

    def new_turn(self, session_id: str, user_message_id: str, **kwargs: Any) -> RunningTurn:
        """The bookkeeping of a turn starting in session `session_id` (`RunningTurn`)."""
        return RunningTurn(session_id, user_message_id, self.store.sessions, **kwargs)

    async def stop_turns(self, timeout: float = STOP_TIMEOUT, *, detach: bool = False) -> None:
        """Abort the running turns and wait (at most `timeout` seconds) for them to end;
        with `detach` (the service closes), turns waiting for an approval stop unresumed
        instead, their request kept in the checkpoint."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if detach:
            self.decisions.closing.set()
        while self.turns.running() and loop.time() < deadline:
            for session_id in self.turns.running():
                if not (detach and self.decisions.awaits(session_id)):
                    self.turns.request_abort(session_id)
            await asyncio.sleep(0.05)
        if self.turns.running():
            log.warning("Turns still running after %.0f s: %s", timeout, self.turns.running())

    def read_session(self, session_id: str, *, new: bool = False) -> SessionRead:
        """Start reading session `session_id` for a turn (`new`: an id just made up, nothing
        to read); hand it to `stream_chat`, or `close()` it if no turn follows."""
        return SessionRead(self.store, session_id, new=new)

    def read_topology(self) -> TopologySource:
        """Start reading the project's topology for a turn (shared with turns starting
        together); hand it to `stream_chat`, or `close()` it if no turn follows."""
        # LangGraph is imported when the first service opens, not when the server loads.
        from ..agent.topology_source import TopologySource

        topology = TopologySource(
            lambda: self._topology_reads(self.project_id),
            on_lab_changed=lambda: self._topology_reads.forget(self.project_id),
            annotate=lambda read: device_notes(read.nodes, self.lab.devices, self._skills),
        )
        topology.prefetch()
        return topology

    async def turn_context(
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
        """The runtime context of a turn (or of its resumption after an approval):
        `turn_context.agent_context` with this project's lab, prompt and approvals."""
        return await agent_context(
            self.lab.tool_context(self.project_id, mode, abort),
            llm=llm,
            title_llm=title_llm,
            mode=mode,
            temperature=temperature,
            abort=abort,
            topology=topology,
            turn_id=turn_id,
            objectives=objectives,
            settings=self.settings,
        )

    async def stream(
        self,
        inputs: Any,
        config: RunnableConfig,
        context: AgentContext,
        turn: RunningTurn,
        heartbeat_interval: float | None,
        time_limit: int | None = None,
        time_used: float = 0.0,
    ) -> AsyncGenerator[ChatEvent, None]:
        """Run the graph from `inputs` and yield the turn's events (`service.py`).

        `time_limit` (None: none) bounds the turn's own work, `time_used` seconds of it
        spent before (a resumed turn): the clock pauses while the turn waits for a
        decision and restarts with the time left (at least `RESUME_FLOOR`)."""
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
            # LangGraph is imported when the first service opens, not when the server loads.
            from langgraph.types import Command

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
                        # With a list of stream modes LangGraph yields (mode, data) pairs.
                        mode, data = cast("tuple[StreamMode, Any]", item)
                        if mode == "updates" and "__interrupt__" in data:
                            turn.waiting = ApprovalRequest.model_validate(
                                data["__interrupt__"][0].value
                            )
                            self.decisions.expect(turn.waiting, turn.session_id)
                            if clock is not None:
                                clock.pause()
                        queue.put_nowait(item)
                    request = turn.waiting
                    if request is None:
                        break
                    try:
                        decision = await self.decisions.wait(request, context.abort)
                    except Detached:
                        break
                    if decision is not None:
                        queue.put_nowait(resolved(request, decision))
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
                    yield HeartbeatEvent(session_id=session_id)
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
            self.decisions.forget(turn.session_id)
            unread = [queue.get_nowait() for _ in range(queue.qsize())]
            final_error = None
            if error is not None:
                final_error = error_text(error)
            elif timed_out.is_set() and time_limit is not None:
                final_error = time_limit_notice(time_limit)
            if final_error is not None:
                turn.errors.append(final_error)
            await asyncio.shield(self._end_turn(config, turn, unread))
        if final_error is not None:
            yield ErrorEvent(session_id=session_id, error=final_error)
        elif context.abort.is_set():
            yield AbortEvent(session_id=session_id)
        yield DoneEvent(session_id=session_id, statistics=turn.statistics(), title=turn.title)

    async def _translate(self, item: tuple[str, Any], turn: RunningTurn) -> list[ChatEvent]:
        """The chat events for one item of the graph's stream or the reply sink
        (statistics updated on the way)."""
        mode, data = item
        if mode == REPLY:
            return reply_events(data, turn)
        if mode == "custom":
            return custom_events(data, turn)
        await turn.record_update(data)
        if "__interrupt__" in data:
            fields = data["__interrupt__"][0].value
            return [ApprovalRequiredEvent(session_id=turn.session_id, **fields)]
        return []

    async def _end_turn(self, config: RunnableConfig, turn: RunningTurn, unread: list[Any]) -> None:
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
                await turn.flush()
                return
            if not turn.completed:
                await repair.answer_unanswered_calls(self.graph, config, turn, interrupted=True)
                await repair.count_left_messages(self.graph, config, turn)
            if turn.errors:
                await repair.keep_turn_errors(self.graph, config, turn)
            await turn.flush()
            self.consistent.add(turn.session_id)

        try:
            await asyncio.wait_for(save(), CLEANUP_TIMEOUT)
        except Exception:
            log.exception("Session %s: saving the end of the turn failed", turn.session_id)
