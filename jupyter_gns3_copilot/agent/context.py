"""The context window: budgets, topology in the system prompt, trimming.

Before every model call the graph calls `prepare_context(...)`:

1. the system prompt template gets the lab topology in place of `{{topology_info}}`
   (`render_system_prompt`);
2. the input budget is `context_limit × 1000 × ratio` for the strategy (conservative 0.60,
   balanced 0.75, aggressive 0.85); the tool definitions' tokens are taken off it, and
   what remains is the budget for the messages, system message included;
3. `trim_messages` keeps the system message and the newest messages that fit. An assistant
   message and the tool results that follow it form one unit, kept or dropped together,
   so a trimmed history never holds a tool call without its result (or the reverse).

Token counts come from `tokens.TokenCounter` (tiktoken offline, counts cached per message),
so a long history costs little on every call. Until its encoding is built, though (23-43
MB, 0.4-0.9 s), an upper bound comes first (`TokenCounter.bound_*`: UTF-8 bytes in place
of tokens, the same framing): when it shows that the whole history fits and that the
system prompt leaves room (no warning about a tight budget could apply), nothing is counted and the
encoding is not built; the figures reported and logged are then those upper bounds
(`PreparedContext.exact` False, `≤` in place of `~` in the log line). Otherwise, and
always once the encoding is built, the counts and the trimming are exact. On an event
loop, `aprepare_context` builds the encoding, when first needed, in a worker thread. Each
call logs one line: `Context ready` (or `Messages trimmed`) with the counts, and a warning
when the budget leaves the history little or no room.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from ..gns3.topology import Topology
from .tokens import TOKENS_REPLY_PRIMING, TokenCost, TokenCounter, token_counter_for_model

log = logging.getLogger(__name__)

ContextStrategy = Literal["conservative", "balanced", "aggressive"]
CONTEXT_STRATEGY_RATIOS: dict[ContextStrategy, float] = {
    "conservative": 0.60,
    "balanced": 0.75,
    "aggressive": 0.85,
}
DEFAULT_CONTEXT_STRATEGY: ContextStrategy = "balanced"
TOPOLOGY_PLACEHOLDER = "{{topology_info}}"
NO_TOPOLOGY_INFO = "(No topology information available)"


def resolve_strategy(strategy: str | None) -> ContextStrategy:
    """`strategy` if it is one of the three; otherwise balanced, with a WARNING log.

    None (not configured) means balanced without a warning.
    """
    if strategy is None:
        return DEFAULT_CONTEXT_STRATEGY
    if strategy in get_args(ContextStrategy):
        return cast(ContextStrategy, strategy)
    log.warning(
        "Invalid context_strategy %r, falling back to %r (use one of: %s)",
        strategy,
        DEFAULT_CONTEXT_STRATEGY,
        ", ".join(get_args(ContextStrategy)),
    )
    return DEFAULT_CONTEXT_STRATEGY


def validate_context_limit(context_limit: object) -> int:
    """The context limit in thousands of tokens; ValueError unless a positive integer."""
    if context_limit is None:
        raise ValueError(
            "context_limit is missing: set the model's context window in thousands of tokens "
            "(e.g. 128 for 128K)."
        )
    if isinstance(context_limit, bool) or not isinstance(context_limit, int) or context_limit <= 0:
        raise ValueError(
            f"Invalid context_limit {context_limit!r}: it must be a positive integer, the "
            "context window in thousands of tokens (e.g. 128 for 128K)."
        )
    return context_limit


def input_budget(context_limit: int, strategy: str | None = None) -> int:
    """Tokens the prompt may use: `context_limit × 1000 × ratio(strategy)`."""
    ratio = CONTEXT_STRATEGY_RATIOS[resolve_strategy(strategy)]
    return int(validate_context_limit(context_limit) * 1000 * ratio)


def trim_budget(context_limit: int, strategy: str | None, tool_tokens: int) -> int:
    """Tokens left for the messages (system message included) once tools are paid for."""
    return input_budget(context_limit, strategy) - tool_tokens


def render_system_prompt(template: str, topology: Topology | str | None) -> str:
    """`template` with the topology text in place of `{{topology_info}}`.

    `topology` is a `Topology` (rendered with `to_text()`), text already rendered, or None
    when it could not be fetched: then `(No topology information available)` goes in. A
    template without the placeholder is returned unchanged, with a WARNING log.
    """
    if TOPOLOGY_PLACEHOLDER not in template:
        log.warning(
            "System prompt has no %s placeholder: topology not injected", TOPOLOGY_PLACEHOLDER
        )
        return template
    if topology is None:
        log.warning("✗ Topology data is None, injecting placeholder")
        return template.replace(TOPOLOGY_PLACEHOLDER, NO_TOPOLOGY_INFO)
    if isinstance(topology, Topology):
        text = topology.to_text()
        log.info(
            "✓ Topology injected: %d chars, nodes: %s",
            len(text),
            [node.name for node in topology.sorted_nodes],
        )
    else:
        text = topology
        log.info("✓ Topology injected: %d chars", len(text))
    return template.replace(TOPOLOGY_PLACEHOLDER, text)


def message_units(messages: Sequence[BaseMessage]) -> list[tuple[int, int]]:
    """`messages` cut into `(start, stop)` slices that trimming keeps or drops whole.

    A unit is one message plus the tool messages right after it, so an assistant message
    with tool calls and its results always stay together.
    """
    units: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(messages) + 1):
        if index == len(messages) or not isinstance(messages[index], ToolMessage):
            units.append((start, index))
            start = index
    return units


def _trim(
    messages: Sequence[BaseMessage], max_tokens: int, counter: TokenCounter
) -> tuple[list[BaseMessage], int]:
    """`trim_messages` plus the tokens of what it kept (reply priming included)."""
    has_system = bool(messages) and isinstance(messages[0], SystemMessage)
    history = messages[1:] if has_system else messages
    used = TOKENS_REPLY_PRIMING + (counter.count_message(messages[0]) if has_system else 0)
    keep_from = len(history)
    for start, stop in reversed(message_units(history)):
        cost = sum(counter.count_message(message) for message in history[start:stop])
        if used + cost > max_tokens:
            break
        used += cost
        keep_from = start
    kept = list(history[keep_from:])
    return ([messages[0], *kept] if has_system else kept), used


def trim_messages(
    messages: Sequence[BaseMessage], max_tokens: int, counter: TokenCounter
) -> list[BaseMessage]:
    """The leading system message (if any) plus the newest units that fit in `max_tokens`.

    The system message is always kept, even over budget. Units are taken newest first and
    the first that does not fit stops the walk, so what is kept is a contiguous tail.
    `max_tokens` covers the system message and the reply priming.
    """
    return _trim(messages, max_tokens, counter)[0]


class PreparedContext(BaseModel):
    """What `prepare_context` hands to the model call, and the figures it logged.

    With `exact` False nothing was counted: the token figures are upper bounds (never
    below the real count; `trim_budget` is then the input budget less the tools' bound).
    """

    messages: list[BaseMessage]
    input_count: int
    dropped: int
    system_tokens: int
    message_tokens: int  # kept messages + reply priming (only the system one if trimming failed)
    tool_tokens: int
    context_limit: int
    strategy: ContextStrategy
    trim_budget: int
    exact: bool = True

    @property
    def total_tokens(self) -> int:
        """Messages plus tool definitions."""
        return self.message_tokens + self.tool_tokens

    @property
    def trimmed(self) -> bool:
        """Whether older messages were dropped."""
        return self.dropped > 0

    @property
    def newest_kept(self) -> bool:
        """Whether the newest history message made it (False: only the system prompt fit)."""
        return self.input_count == 0 or self.dropped < self.input_count


@dataclass
class _Request:
    """One model call's context, assembled but not yet counted."""

    system: SystemMessage
    history: list[BaseMessage]
    limit: int
    strategy: ContextStrategy
    counter: TokenCounter
    tools: TokenCost

    @property
    def full(self) -> list[BaseMessage]:
        return [self.system, *self.history]

    @functools.cached_property
    def counts_exactly(self) -> bool:
        """Whether to count exactly: yes once the encoding is built; before, only when
        upper bounds cannot show that everything fits and that the system prompt leaves
        room (then neither trimming nor a warning about a tight budget can apply)."""
        if self.counter.loaded:
            return True
        budget = input_budget(self.limit, self.strategy) - self.tools.bound
        if budget < self.counter.bound_message(self.system) * 1.5:
            return True
        used = TOKENS_REPLY_PRIMING
        for message in self.full:
            used += self.counter.bound_message(message)
            if used > budget:  # a long history: no need to bound all of it
                return True
        return False


def _request(
    messages: Sequence[BaseMessage],
    *,
    system_prompt: str,
    topology: Topology | str | None,
    context_limit: int,
    strategy: str | None,
    model: str | None,
    counter: TokenCounter | None,
    tools: Sequence[Any],
    tool_tokens: int | TokenCost | None,
) -> _Request:
    limit = validate_context_limit(context_limit)
    chosen = resolve_strategy(strategy)
    counter = counter or token_counter_for_model(model)
    has_system = bool(messages) and isinstance(messages[0], SystemMessage)
    history = list(messages[1:] if has_system else messages)
    log.info("Calling pre_hook to prepare %d messages", len(history))
    system = SystemMessage(content=render_system_prompt(system_prompt, topology))
    if tool_tokens is None:
        tools_cost = counter.tools_cost(tools)
    elif isinstance(tool_tokens, TokenCost):
        tools_cost = tool_tokens
    else:
        tools_cost = TokenCost.exactly(tool_tokens)
    return _Request(system, history, limit, chosen, counter, tools_cost)


def _prepare(request: _Request) -> PreparedContext:
    if not request.counts_exactly:
        return _report(
            request,
            request.full,
            request.counter.bound_messages(request.full),
            request.counter.bound_message(request.system),
            request.tools.bound,
            exact=False,
        )
    counter, limit, chosen = request.counter, request.limit, request.strategy
    tools_cost = request.tools.exact()
    system_tokens = counter.count_message(request.system)
    budget_in = input_budget(limit, chosen)
    budget = budget_in - tools_cost
    if system_tokens + tools_cost > budget_in:
        log.error(
            "System prompt (~%d tokens) + tools (%d tokens) exceed the input budget of %d "
            "tokens (%dK x %.2f, strategy=%s): no conversation history will fit. Shorten the "
            "system prompt or bind fewer tools, use a model with a larger context window, or "
            "switch to the conservative strategy to reserve less for the answer.",
            system_tokens,
            tools_cost,
            budget_in,
            limit,
            CONTEXT_STRATEGY_RATIOS[chosen],
            chosen,
        )
    elif budget < system_tokens * 1.5:
        log.warning(
            "Trim budget of %d tokens is less than 1.5x the system prompt (~%d tokens): "
            "minimal room for conversation history",
            budget,
            system_tokens,
        )

    full = request.full
    try:
        prepared, message_tokens = _trim(full, budget, counter)
    except Exception:
        log.exception("trim_messages failed; sending the messages untrimmed")
        prepared = full
        message_tokens = TOKENS_REPLY_PRIMING + system_tokens
    return _report(request, prepared, message_tokens, system_tokens, tools_cost, exact=True)


def _report(
    request: _Request,
    prepared: list[BaseMessage],
    message_tokens: int,
    system_tokens: int,
    tools_cost: int,
    *,
    exact: bool,
) -> PreparedContext:
    """The result, with its log lines (`≤` in place of `~` for upper bounds)."""
    history, limit, chosen = request.history, request.limit, request.strategy
    result = PreparedContext(
        messages=prepared,
        input_count=len(history),
        dropped=len(history) + 1 - len(prepared),
        system_tokens=system_tokens,
        message_tokens=message_tokens,
        tool_tokens=tools_cost,
        context_limit=limit,
        strategy=chosen,
        trim_budget=input_budget(limit, chosen) - tools_cost,
        exact=exact,
    )
    total = result.total_tokens
    share = f"{total / (limit * 1000):.1%}"
    if exact:
        usage = f"~{message_tokens} tokens + {tools_cost} tools = {total} / {limit}K ({share})"
    else:
        usage = f"≤{message_tokens} tokens + ≤{tools_cost} tools = ≤{total} / {limit}K (≤{share})"
    usage += f", strategy={chosen}"
    if result.trimmed:
        log.info("Messages trimmed: %d → %d msgs. Total: %s", len(history), len(prepared), usage)
    else:
        log.info("Context ready: %d msgs, %s", len(prepared), usage)
    if not result.newest_kept:
        log.warning(
            "Not even the newest message fits in the trim budget of %d tokens: the model "
            "sees only the system prompt",
            result.trim_budget,
        )
    log.info("Messages prepared: %d → %d", len(history), len(prepared))
    return result


def prepare_context(
    messages: Sequence[BaseMessage],
    *,
    system_prompt: str,
    topology: Topology | str | None,
    context_limit: int,
    strategy: str | None = None,
    model: str | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Any] = (),
    tool_tokens: int | TokenCost | None = None,
) -> PreparedContext:
    """The system message (template + topology) followed by the history trimmed to budget.

    `messages` is the conversation without a system message (a leading one is replaced).
    `counter` defaults to the shared counter for `model`'s encoding. Tool definitions are
    counted from `tools` unless `tool_tokens` is given (a count, or a `TokenCost` counted
    only if needed). Counts are exact only when the upper bounds do not settle the call
    (module docstring); the first exact count builds the encoding here, on the calling
    thread. Raises ValueError for a missing or invalid `context_limit`; every other
    problem is logged (a tight budget, a message that does not fit) and the call goes
    ahead: if trimming itself fails, the history is returned untrimmed.
    """
    return _prepare(
        _request(
            messages,
            system_prompt=system_prompt,
            topology=topology,
            context_limit=context_limit,
            strategy=strategy,
            model=model,
            counter=counter,
            tools=tools,
            tool_tokens=tool_tokens,
        )
    )


async def aprepare_context(
    messages: Sequence[BaseMessage],
    *,
    system_prompt: str,
    topology: Topology | str | None,
    context_limit: int,
    strategy: str | None = None,
    model: str | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Any] = (),
    tool_tokens: int | TokenCost | None = None,
) -> PreparedContext:
    """`prepare_context` for a coroutine on the event loop: when exact counts are needed
    and the encoding is not built yet, it is built in a worker thread first
    (`TokenCounter.load`) instead of on the loop."""
    request = _request(
        messages,
        system_prompt=system_prompt,
        topology=topology,
        context_limit=context_limit,
        strategy=strategy,
        model=model,
        counter=counter,
        tools=tools,
        tool_tokens=tool_tokens,
    )
    if request.counts_exactly and not request.counter.loaded:
        await request.counter.load()
    return _prepare(request)
