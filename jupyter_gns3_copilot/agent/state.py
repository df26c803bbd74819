"""The agent's graph state and the per-turn limits.

The state is what the checkpointer persists for a chat session (thread). It holds no
secret: API keys and GNS3 credentials travel in the run's runtime context (`graph.py`).

Per-turn fields are reset by `turn_input` at the start of every turn: `llm_calls`,
`remaining_steps` (model calls left in this turn, from `max_iterations`),
`max_tool_calls`, `tool_calls_count` and `abort`. `messages`, `conversation_title`,
`topology_info` and `turn_errors` carry over between turns.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MAX_ITERATIONS = 20
MAX_ITERATIONS_LIMIT = 100
MAX_TOOL_CALLS_LIMIT = 50
MAX_EXECUTION_TIME_LIMIT = 3600
UNLIMITED_TOOL_CALLS = 999
"""The stand-in for "no limit" on tool calls."""


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


class TurnLimits(BaseModel):
    """Runtime parameters of one turn, validated with their ranges.

    `max_iterations`: model calls allowed in the turn (1-100, default 20); each iteration
    is one model call plus the tools it asks for, and tools are only run when a model call
    is left to read their results, so `max_iterations=1` means one model call and no tool
    execution. `max_tool_calls`: tools executed per turn (1-50, None = unlimited); calls
    beyond it get the tool-limit message (`prompts`) as their result. `temperature` (0.0-2.0)
    overrides the model setting for this turn. `max_execution_time_seconds` (1-3600,
    None = no limit): wall-clock seconds the turn may take; at the limit it is stopped the
    way an abort stops it (the service's job, not the graph's).
    """

    model_config = ConfigDict(frozen=True)

    max_iterations: int = Field(default=DEFAULT_MAX_ITERATIONS, ge=1, le=MAX_ITERATIONS_LIMIT)
    max_tool_calls: int | None = Field(default=None, ge=1, le=MAX_TOOL_CALLS_LIMIT)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_execution_time_seconds: int | None = Field(default=None, ge=1, le=MAX_EXECUTION_TIME_LIMIT)

    @property
    def tool_call_budget(self) -> int:
        """`max_tool_calls`, or 999 when unlimited."""
        return self.max_tool_calls if self.max_tool_calls is not None else UNLIMITED_TOOL_CALLS

    @property
    def recursion_limit(self) -> int:
        """LangGraph's super-step limit: never reached before `max_iterations` is.

        Each iteration takes two super-steps (llm_call, tool_node); the title or abort
        handler node takes one more, plus slack.
        """
        return 2 * self.max_iterations + 4


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
