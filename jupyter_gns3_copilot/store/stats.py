"""The statistics rules for one chat turn, saved as the turn goes.

The service feeds `TurnCounters` the turn's events and calls `flush()` whenever it likes
(after each model call and tool result, and once more in a `finally`): each flush adds
only what was not saved yet, so statistics survive a consumer that stops reading midway.

Rules:
- message_count: +1 for the user message, +1 for the AI reply (once per turn, however
  many model calls the turn makes), +1 per tool result;
- llm_calls_count: +1 per model call start;
- input/output tokens: each model call's `usage_metadata` added up;
- the title generator node counts for nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import Any

from .sessions import ChatSessionsRepository, StatsDelta

TITLE_NODE = "title_generator_node"


def usage_tokens(usage: Mapping[str, Any] | None) -> tuple[int, int]:
    """(input, output) tokens from a LangChain `usage_metadata` or an OpenAI `usage` dict."""
    if not usage:
        return 0, 0
    input_tokens = usage.get("input_tokens", usage.get("prompt_tokens")) or 0
    output_tokens = usage.get("output_tokens", usage.get("completion_tokens")) or 0
    return int(input_tokens), int(output_tokens)


class TurnCounters:
    """Statistics of one turn: running totals and the part not yet saved.

    (What a turn's footer shows is `turns.TurnStats`, read from its `done` event.)

    `node` arguments are the LangGraph node an event came from
    (`metadata["langgraph_node"]`); events from `excluded_nodes` are ignored.
    """

    def __init__(self, excluded_nodes: Collection[str] = (TITLE_NODE,)) -> None:
        self.excluded_nodes = frozenset(excluded_nodes)
        self.totals = StatsDelta()
        self._pending = StatsDelta()
        self._ai_reply_counted = False

    def _add(self, delta: StatsDelta) -> None:
        self.totals += delta
        self._pending += delta

    def _counts(self, node: str | None) -> bool:
        return node not in self.excluded_nodes

    def user_message(self) -> None:
        """The user's message that starts the turn."""
        self._add(StatsDelta(messages=1))

    def model_started(self, node: str | None) -> None:
        """A model call began (`on_chat_model_start`)."""
        if self._counts(node):
            self._add(StatsDelta(llm_calls=1))

    def model_finished(self, node: str | None, usage: Mapping[str, Any] | None) -> None:
        """A model call ended (`on_chat_model_end`) with this usage (None if unreported)."""
        if not self._counts(node):
            return
        input_tokens, output_tokens = usage_tokens(usage)
        messages = 0 if self._ai_reply_counted else 1
        self._ai_reply_counted = True
        self._add(
            StatsDelta(messages=messages, input_tokens=input_tokens, output_tokens=output_tokens)
        )

    def tool_finished(self) -> None:
        """A tool result was added (`on_tool_end`, aborted placeholders included)."""
        self._add(StatsDelta(messages=1))

    @property
    def pending(self) -> StatsDelta:
        """What the next `flush` will add."""
        return self._pending

    async def flush(self, repository: ChatSessionsRepository, thread_id: str) -> None:
        """Add the unsaved part to the session's counters.

        The write finishes even if the caller is cancelled meanwhile; if it fails, the
        amounts stay pending for the next flush.
        """
        delta, self._pending = self._pending, StatsDelta()
        if delta.is_empty:
            return
        try:
            await asyncio.shield(repository.add_stats(thread_id, delta))
        except Exception:
            self._pending += delta
            raise
