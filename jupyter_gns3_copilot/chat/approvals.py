"""`ChatApprovals`: the approvals part of one project's chat service: what waits for a
decision, the state of one approval, deciding it, and resuming a paused turn whose stream
is gone.

A turn paused by `interrupt()` keeps its `ApprovalRequest` in the checkpoint. While its
stream is open, a decision reaches it through `LiveDecisions` (`decide`); once the
client left, or after a restart, `resume_chat` decides it and streams the rest of the
turn.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from ..agent.abort import SessionBusy
from ..agent.approval import ApprovalDecision, ApprovalRequest, approval_id_for
from .engine import DEFAULT_HEARTBEAT_INTERVAL, TurnEngine
from .stream_events import custom_events, error_text, refused, resolved

if TYPE_CHECKING:
    from ..agent.llm_access import ModelSettings
    from ..events import ChatEvent
    from ..objectives.hints import TurnObjectives


class ChatApprovals:
    """The approval part of `AgentService`, working on its turn `engine` (every method
    taking a `user_id` acts on that user's sessions)."""

    def __init__(self, engine: TurnEngine) -> None:
        self.engine = engine

    def awaits_decision(self, session_id: str) -> bool:
        """Whether the session's streaming turn waits for an approval now (a client that
        leaves then detaches: closing the stream keeps the request pending)."""
        return self.engine.decisions.awaits(session_id)

    async def _paused_requests(self, session_id: str) -> list[ApprovalRequest]:
        """The approval requests the session's checkpoint waits on, less those decided in
        this process."""
        engine = self.engine
        snapshot = await engine.graph.aget_state(engine.config(session_id))
        requests = [
            ApprovalRequest.model_validate(interrupt.value)
            for task in snapshot.tasks
            for interrupt in task.interrupts
        ]
        decided = engine.decisions.decided()
        return [request for request in requests if request.approval_id not in decided]

    async def pending_approvals(self, session_id: str, *, user_id: str) -> list[ApprovalRequest]:
        """The session's approval requests waiting for a decision (at most one: a turn
        pauses at its first undecided call); [] for no such session of the user's."""
        if await self.engine.store.sessions.get_session_by_thread(session_id, user_id) is None:
            return []
        return await self._paused_requests(session_id)

    async def approval_state(
        self, session_id: str, approval_id: str, *, user_id: str
    ) -> str | None:
        """ "live" (a stream in this process waits for it), "pending" (paused, no stream
        attached: `resume_chat` answers it), "decided", or None (no such approval in the
        user's session)."""
        engine = self.engine
        if await engine.store.sessions.get_session_by_thread(session_id, user_id) is None:
            return None
        live = engine.decisions.state(approval_id, session_id)
        if live is not None:
            return live
        pending = await self.pending_approvals(session_id, user_id=user_id)
        if any(request.approval_id == approval_id for request in pending):
            return "pending"
        snapshot = await engine.graph.aget_state(engine.config(session_id))
        for message in snapshot.values.get("messages", []):
            for call in getattr(message, "tool_calls", None) or []:
                if approval_id_for(session_id, call.get("id") or "") == approval_id:
                    return "decided"
        return None

    def decide(self, approval_id: str, decision: ApprovalDecision) -> bool:
        """Answer an approval a stream in this process waits for; False if none does."""
        return self.engine.decisions.decide(approval_id, decision)

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
    ) -> AsyncGenerator[ChatEvent, None]:
        """Decide a paused turn's approval with no stream attached (its client left, or
        the server restarted) and stream the rest of the turn: `approval_resolved`, then
        the turn's events, `done` last. A request past its time resolves as "timeout"
        whatever was decided. Events and `objectives` as `stream_chat`'s."""
        # LangChain and LangGraph are imported when the first service opens.
        from langchain_core.messages import HumanMessage
        from langgraph.types import Command

        engine = self.engine
        try:
            abort = engine.turns.begin(session_id)
        except SessionBusy as exc:
            for event in refused(session_id, str(exc)):
                yield event
            return
        topology = None
        try:
            session = await engine.store.sessions.get_session_by_thread(session_id, user_id)
            pending = await self.pending_approvals(session_id, user_id=user_id)
            request = next((r for r in pending if r.approval_id == approval_id), None)
            if session is None or request is None:
                for event in refused(
                    session_id, f"Approval {approval_id} is not waiting for a decision."
                ):
                    yield event
                return
            if request.remaining() <= 0:
                decision = ApprovalDecision(decision="timeout")
            config = engine.config(session_id, user_id)
            snapshot = await engine.graph.aget_state(config)
            human = [m for m in snapshot.values.get("messages", []) if isinstance(m, HumanMessage)]
            message_id = (human[-1].id if human else None) or str(uuid.uuid4())
            turn = engine.new_turn(session_id, message_id, title=session.title)
            turn.mode = request.mode
            topology = engine.read_topology()
            context = await engine.turn_context(
                llm,
                title_llm,
                request.mode,
                request.temperature,
                abort,
                topology,
                message_id,
                objectives,
            )
            turn.answer_filter = context.hold_back.stream() if context.hold_back else None
            engine.consistent.discard(session_id)
            for event in custom_events(resolved(request, decision)[1], turn):
                yield event
            async with aclosing(
                engine.stream(
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
            for event in refused(session_id, error_text(exc)):
                yield event
        finally:
            if topology is not None:
                topology.close()
            engine.turns.end(session_id, abort)
