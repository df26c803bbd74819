"""`RunningTurn`: the bookkeeping of one running turn (statistics, results seen, title,
errors, outcome), saved to the session's `chat_sessions` row as the turn goes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..agent.tool_call_stream import ToolCallStreamAccumulator
from ..store import ChatSessionsRepository, TurnCounters

if TYPE_CHECKING:
    from ..agent.approval import ApprovalRequest
    from ..objectives.hints import ConfigurationFilter


class RunningTurn:
    """One turn of session `session_id`, started by the user message `user_message_id`.

    `title` is the session's title when the turn started (None: untitled); a new
    session's row is made by `create_row`, once, when first needed (`start_row`).
    Statistics follow `store.stats`'s counting rules and are saved with `flush`.
    """

    def __init__(
        self,
        session_id: str,
        user_message_id: str,
        sessions: ChatSessionsRepository,
        *,
        title: str | None,
        create_row: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        self.session_id = session_id
        self.sessions = sessions
        self.title = title
        """The session's title when the turn started (None: untitled)."""
        self._create_row = create_row
        self.ready: asyncio.Future[Any] | None = None
        """Completes once the session row exists (see `start_row`)."""
        self.user_message_id = user_message_id
        self.stats = TurnCounters()
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
        """Configuration lines kept out of the streamed answer and tool calls (a `nudge`
        stage, `AgentContext.hold_back`)."""

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
        # LangChain and LangGraph are imported on first use, not when the server loads.
        from langchain_core.messages import AIMessage, ToolMessage

        from ..agent.graph import LLM_CALL

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

    async def record_update(self, data: Mapping[str, Any]) -> None:
        """Statistics and title from the graph nodes' state updates, saved at once."""
        # LangGraph is imported on first use, not when the server loads.
        from ..agent.graph import LLM_CALL, TITLE_NODE

        for node, update in data.items():
            if not isinstance(update, Mapping):
                continue
            if node == LLM_CALL:
                self.accumulator.reset()
            self.count(update.get("messages") or [])
            if node == TITLE_NODE and update.get("conversation_title"):
                await self.sync_title(update["conversation_title"])
        await self.flush()

    async def session_row(self) -> None:
        """Wait until the session row exists."""
        self.start_row()
        if self.ready is not None:
            await self.ready
            self.ready = None

    async def flush(self) -> None:
        """Save the statistics not saved yet."""
        await self.session_row()
        await self.stats.flush(self.sessions, self.session_id)

    async def sync_title(self, title: str) -> None:
        """Store the generated title unless the session already has one (e.g. renamed)."""
        if self.title is None:
            await self.session_row()
            await self.sessions.update_session(self.session_id, title=title)
            self.title = title
