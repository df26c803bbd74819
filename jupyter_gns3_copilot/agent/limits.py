"""A turn's limits, defined once: their ranges (also the chat request's, `server/schemas.py`)
and `TurnLimits`, the limits a turn runs with. Pydantic only, so the request models and
the kernel side import it without the agent's libraries."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MAX_ITERATIONS = 20
MAX_ITERATIONS_LIMIT = 100
MAX_TOOL_CALLS_LIMIT = 50
MAX_EXECUTION_TIME_LIMIT = 3600
UNLIMITED_TOOL_CALLS = 999
"""The stand-in for "no limit" on tool calls."""
MIN_REMAINING_STEPS = 1
"""The graph ends the turn below this many model calls left (steps are model calls here,
not LangGraph super-steps), and runs no tool whose result no model call would read."""

Temperature = Annotated[float, Field(ge=0.0, le=2.0)]
MaxIterations = Annotated[int, Field(ge=1, le=MAX_ITERATIONS_LIMIT)]
MaxToolCalls = Annotated[int, Field(ge=1, le=MAX_TOOL_CALLS_LIMIT)]
MaxExecutionTime = Annotated[int, Field(ge=1, le=MAX_EXECUTION_TIME_LIMIT)]


class TurnLimits(BaseModel):
    """Runtime parameters of one turn, validated with their ranges.

    `max_iterations`: model calls allowed in the turn (1-100, default 20); each iteration
    is one model call plus the tools it asks for, and tools are only run when a model call
    is left to read their results, so `max_iterations=1` means one model call and no tool
    execution. `max_tool_calls`: tools executed per turn (1-50, None = unlimited); calls
    beyond it get the tool-limit message (`prompts`) as their result. `temperature` (0.0-2.0)
    overrides the model setting for this turn. `max_execution_time_seconds` (1-3600,
    None = no limit): wall-clock seconds the turn may take; at the limit it is stopped the
    way an abort stops it (the chat service's job, not the graph's).
    """

    model_config = ConfigDict(frozen=True)

    max_iterations: MaxIterations = DEFAULT_MAX_ITERATIONS
    max_tool_calls: MaxToolCalls | None = None
    temperature: Temperature | None = None
    max_execution_time_seconds: MaxExecutionTime | None = None

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
