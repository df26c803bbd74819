"""`AgentContext`: what one turn of the graph needs and must not be persisted (the model
clients holding the API key, the tool context holding the GNS3 client, the abort flag),
passed as LangGraph's runtime context (`graph.astream(..., context=...)`), never in the
state; and the tools the model is shown (`make_tool_specs`), their schemas and what they
cost in tokens.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessageChunk

from ..tools import ToolContext, ToolSpec, openai_tool_schema, tools_for_mode
from .approval import DEFAULT_TIMEOUT
from .approval_policy import NO_APPROVAL, ApprovalPolicy
from .clock import TurnClock
from .llm_access import TURN_HEADER, ModelSettings
from .tokens import TokenCost, token_counter_for_model
from .topology_source import TopologySource

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from ..objectives.hints import HoldBack


@dataclass
class AgentContext:
    """What one turn of the graph needs and must not be persisted (LangGraph runtime context).

    `model` is the chat model for this turn (temperature applied), `title_model` an
    optional separate one for titles (None: `model` without tools). `tools` is the tool
    context of the turn, whose `abort` is this turn's flag; `specs` the tools bound for
    its mode. `system_prompt` is the template holding `{{topology_info}}`.
    """

    model: BaseChatModel
    settings: ModelSettings
    tools: ToolContext
    specs: Sequence[ToolSpec]
    topology: TopologySource
    system_prompt: str
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    title_model: BaseChatModel | None = None
    turn_id: str | None = None
    """Sent as `TURN_HEADER` with the turn's model calls (a gateway counts turns by it)."""
    approval: ApprovalPolicy = NO_APPROVAL
    """Which calls wait for a person's decision (`agent.approval`)."""
    approval_timeout: float = DEFAULT_TIMEOUT
    temperature: float | None = None
    """The turn's temperature override, kept in an approval request for the resume."""
    clock: TurnClock | None = None
    """The turn's execution time limit (None: no limit), kept with the seconds used in an
    approval request for the resume."""
    hold_back: HoldBack | None = None
    """What a `nudge` stage holds back from the student (`objectives.hints`): the saved
    answer's, tool calls' and title's configuration lines; the service filters the stream
    alike."""
    reply_sink: Callable[[AIMessageChunk | None], None] | None = None
    """Where the caller reads the model's replies as they stream, on the graph's own loop:
    None as each model call starts, then each chunk. Without it, a model call starts with
    a custom `llm_start` event and its chunks reach LangGraph's `messages` stream mode,
    which hands each one over with `call_soon_threadsafe` (a self-pipe wake-up per token)."""

    @functools.cached_property
    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI tool schemas the model is shown."""
        return [_tool_schema(spec) for spec in self.specs]

    @functools.cached_property
    def bound_model(self) -> Any:
        """`model` sending the tool schemas with every request (no tools: the model as is).

        The schemas go in `extra_body`, which puts them in the request body exactly as
        `bind_tools` would, but skips the openai SDK's re-validation of every schema on
        every request (about 5 ms per call with this catalogue). With a `turn_id`, every
        request also carries it as `TURN_HEADER`.
        """
        bound: dict[str, Any] = {}
        if self.schemas:
            extra_body = getattr(self.model, "extra_body", None) or {}
            bound["extra_body"] = {**extra_body, "tools": self.schemas}
        if self.turn_id:
            bound["extra_headers"] = {TURN_HEADER: self.turn_id}
        return self.model.bind(**bound) if bound else self.model

    @functools.cached_property
    def tool_tokens(self) -> TokenCost:
        """Tokens the tool schemas take in every request (bounded; counted when needed)."""
        return tool_schema_tokens(self.settings.model, tuple(self.specs))

    @functools.cached_property
    def specs_by_name(self) -> dict[str, ToolSpec]:
        """The bound tools by name."""
        return {spec.name: spec for spec in self.specs}


@functools.lru_cache(maxsize=64)
def _tool_schema(spec: ToolSpec) -> dict[str, Any]:
    # Building a JSON schema from a pydantic model takes about a millisecond per tool:
    # too much to repeat on every turn.
    return openai_tool_schema(spec)


@functools.lru_cache(maxsize=64)
def tool_schema_tokens(model: str, specs: tuple[ToolSpec, ...]) -> TokenCost:
    """Tokens the schemas of `specs` take in every request to `model` (cached)."""
    return token_counter_for_model(model).tools_cost([_tool_schema(spec) for spec in specs])


OBJECTIVE_TOOLS = frozenset({"check_objectives"})
"""Tools offered only in a project with lab objectives."""


def make_tool_specs(mode: str, *, objectives: bool = False) -> list[ToolSpec]:
    """The tools the model is shown in `mode` (execution checks the mode again);
    `check_objectives` only when the project has lab `objectives`."""
    return [spec for spec in tools_for_mode(mode) if objectives or spec.name not in OBJECTIVE_TOOLS]
