"""The agent's graph state (the per-turn limits are `limits.py`'s).

The state is what the checkpointer persists for a chat session (thread). It holds no
secret: API keys and GNS3 credentials travel in the run's runtime context (`graph.py`).

Per-turn fields are reset by `turn_input` at the start of every turn: `llm_calls`,
`remaining_steps` (model calls left in this turn, from `max_iterations`),
`max_tool_calls`, `tool_calls_count` and `abort`. `messages`, `conversation_title`,
`topology_info` and `turn_errors` carry over between turns.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph.message import add_messages

if TYPE_CHECKING:
    from .limits import TurnLimits

TurnErrors = dict[str, list[dict[str, str]]]
"""The errors turns ended with, by the id of the user message that started the turn:
`[{"error": text, "created_at": iso}]`, what the turn's `error` events said."""


def merge_turn_errors(old: TurnErrors | None, new: TurnErrors | None) -> TurnErrors:
    """`turn_errors`' reducer: a turn's errors are added to those it had already."""
    merged = {key: list(value) for key, value in (old or {}).items()}
    for key, errors in (new or {}).items():
        merged[key] = [*merged.get(key, []), *errors]
    return merged


class AgentState(TypedDict, total=False):
    """The graph state: the messages, the session's title and topology, and the current
    turn's counters (model calls, tool calls) and abort flag."""

    messages: Annotated[list[AnyMessage], add_messages]
    llm_calls: int
    """Model calls made in the current turn (the title model is not counted)."""
    remaining_steps: int
    """Model calls the current turn may still make (starts at `max_iterations`)."""
    conversation_title: str | None
    topology_info: str | None
    """The topology text the model saw last (the `{{topology_info}}` of the system prompt)."""
    session_id: str
    abort: bool
    """Set when the turn was aborted by the user."""
    max_tool_calls: int
    tool_calls_count: int
    """Tools executed in the current turn (calls refused by a limit are not counted)."""
    turn_errors: Annotated[TurnErrors, merge_turn_errors]
    """How turns that failed ended (`TurnErrors`): kept for the history, never shown to
    the model."""


def now_iso() -> str:
    """The current UTC time in ISO 8601, as stored in `message.metadata.created_at`."""
    return datetime.now(timezone.utc).isoformat()


def stamp(metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """Message metadata with `created_at` set to now."""
    return {**(metadata or {}), "created_at": now_iso()}


def user_message(content: str, message_id: str) -> HumanMessage:
    """The user's message for a turn, with its id and `metadata.created_at`."""
    return HumanMessage(content=content, id=message_id, metadata=stamp())


def turn_input(message: HumanMessage, session_id: str, limits: TurnLimits) -> AgentState:
    """The graph input that starts a turn: the user message and the reset counters."""
    return {
        "messages": [message],
        "llm_calls": 0,
        "remaining_steps": limits.max_iterations,
        "session_id": session_id,
        "abort": False,
        "max_tool_calls": limits.tool_call_budget,
        "tool_calls_count": 0,
    }
