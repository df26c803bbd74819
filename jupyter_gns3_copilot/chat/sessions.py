"""`ChatSessions`: the sessions part of one project's chat service: the chat sessions as
their user sees them: the history (read repaired, never written), the list, rename, pin,
delete, and abort."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.abort import SessionBusy
from ..agent.prompts import INTERRUPTED_RESULT
from ..store import ChatSession
from . import repair

if TYPE_CHECKING:
    from ..agent.history import ConversationHistory
    from .approvals import ChatApprovals
    from .engine import TurnEngine


class ChatSessions:
    """The session part of `AgentService`, working on its turn `engine` and asking its
    `approvals` what waits for a decision (every method taking a `user_id` acts on that
    user's sessions)."""

    def __init__(self, engine: TurnEngine, approvals: ChatApprovals) -> None:
        self.engine = engine
        self.approvals = approvals

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
        # LangChain is imported when the first service opens, not when the server loads.
        from ..agent.history import (
            ConversationHistory,
            to_openai_messages,
            turn_errors_of,
            with_placeholder_results,
        )

        engine = self.engine
        session = await engine.store.sessions.get_session_by_thread(session_id, user_id)
        if session is None:
            return None
        snapshot = await engine.graph.aget_state(engine.config(session_id))
        values = snapshot.values or {}
        messages = values.get("messages", [])
        paused = any(task.interrupts for task in snapshot.tasks)
        if not engine.turns.is_running(session_id) and not paused:
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
        return await self.engine.store.sessions.list_sessions(user_id, limit=limit)

    async def get_session(self, session_id: str, *, user_id: str) -> ChatSession | None:
        """The user's session `session_id`, or None."""
        return await self.engine.store.sessions.get_session_by_thread(session_id, user_id)

    async def rename_session(
        self, session_id: str, title: str, *, user_id: str
    ) -> ChatSession | None:
        """Set the title (1-255 characters, `InvalidTitle` otherwise); None: no such session."""
        return await self.engine.store.sessions.rename_session(session_id, title, user_id=user_id)

    async def pin_session(
        self, session_id: str, pinned: bool = True, *, user_id: str
    ) -> ChatSession | None:
        """Pin (or unpin) the session; None: no such session."""
        return await self.engine.store.sessions.pin_session(session_id, pinned, user_id=user_id)

    async def delete_session(self, session_id: str, *, user_id: str) -> bool:
        """Delete the session and its checkpoints; False: no such session.

        Raises `SessionBusy` while the session is streaming (abort it first).
        """
        engine = self.engine
        if engine.turns.is_running(session_id):
            raise SessionBusy(
                f"Session {session_id} is answering a message: abort it before deleting it."
            )
        deleted = await engine.store.sessions.delete_session(session_id, user_id=user_id)
        if deleted:
            engine.consistent.discard(session_id)
        return deleted

    async def delete_all_sessions(self) -> int:
        """Delete every session of the project (project deletion), aborting running turns
        first; the number deleted."""
        await self.engine.stop_turns()
        return await self.engine.store.sessions.delete_all_sessions()

    async def abort_session(self, session_id: str, *, user_id: str) -> bool:
        """Ask the session's running turn to stop; False if it is not streaming (or not
        the user's). A turn paused at an approval with no stream attached is ended at
        once: its waiting calls get `{"status": "aborted"}` results, nothing runs."""
        engine = self.engine
        turns = engine.turns
        if await engine.store.sessions.get_session_by_thread(session_id, user_id) is None:
            return False
        if turns.is_running(session_id):
            return turns.request_abort(session_id)
        if not await self.approvals.pending_approvals(session_id, user_id=user_id):
            return False
        try:
            abort = turns.begin(session_id)
        except SessionBusy:
            return turns.request_abort(session_id)
        try:
            turn = engine.new_turn(session_id, "", title=None)
            await repair.answer_unanswered_calls(
                engine.graph, engine.config(session_id), turn, interrupted=True
            )
            engine.consistent.add(session_id)
        finally:
            turns.end(session_id, abort)
        return True
