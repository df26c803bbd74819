"""The graph's `llm_call` node: one model call of the turn.

It puts the lab topology in the system prompt (`TopologySource`), trims the history to
the model's context budget (`context.aprepare_context`) and streams the reply of the model
bound to the mode's tool schemas, retrying a call that failed before its first chunk
(`ModelRetries`). An abort stops the reply where it is: the text so far is kept; its tool
calls are kept only if the reply was complete (its finish reason arrived). Streamed tool
arguments count only as a complete JSON object; a `nudge` stage's held-back lines are
hidden from the saved reply.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, InvalidToolCall
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.messages.tool import ToolCall, invalid_tool_call
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from .agent_context import AgentContext
from .context import aprepare_context
from .history import content_text
from .limits import DEFAULT_MAX_ITERATIONS
from .llm_errors import ModelCallError, describe_model_error, empty_answer_error
from .llm_retries import ModelRetries
from .state import AgentState, stamp

if TYPE_CHECKING:
    from ..objectives.hints import HoldBack

log = logging.getLogger(__name__)


async def _stream_reply(
    model: Any,
    messages: list[BaseMessage],
    abort: asyncio.Event,
    config: RunnableConfig,
    chunks: list[AIMessageChunk],
    sink: Callable[[AIMessageChunk], None] | None = None,
) -> bool:
    """Stream the reply into `chunks` (and `sink`); whether an abort cut it short."""
    if abort.is_set():
        return True

    async def read() -> None:
        async for chunk in model.astream(messages, config):
            chunks.append(chunk)
            if sink is not None:
                sink(chunk)

    reading = asyncio.ensure_future(read())
    aborting = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({reading, aborting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (reading, aborting):
            task.cancel()
        await asyncio.gather(reading, aborting, return_exceptions=True)
    if reading.cancelled():
        return True
    reading.result()
    return False


async def _reply_with_retries(
    ctx: AgentContext, messages: list[BaseMessage], config: RunnableConfig
) -> tuple[list[AIMessageChunk], bool]:
    """The reply's chunks, and whether an abort cut it short.

    An attempt that fails before its first chunk is retried as `ModelRetries` decides (an
    abort ends the wait); once a chunk has arrived, a failure is final, since part of the
    answer was already shown. Raises `ModelCallError`.
    """
    retries = ModelRetries(ctx.settings)
    while True:
        chunks: list[AIMessageChunk] = []
        try:
            return chunks, await _stream_reply(
                ctx.bound_model, messages, ctx.abort, config, chunks, ctx.reply_sink
            )
        except Exception as exc:
            delay = None if chunks else retries.next_delay(exc)
            if delay is None:
                error = retries.explain(describe_model_error(exc, ctx.settings))
                log.warning("%s (turn %s)", error.log_line(), ctx.turn_id or "-")
                raise error from exc
            log.info(
                "Model call failed (%s); retry %d of %d in %.2f s",
                type(exc).__name__,
                retries.retries,
                ctx.settings.max_retries,
                delay,
            )
        try:
            await asyncio.wait_for(ctx.abort.wait(), delay)
        except TimeoutError:
            continue
        return [], True


def _merge(chunks: list[AIMessageChunk], aborted: bool) -> AIMessage | None:
    if not chunks:
        return None
    merged = add_ai_message_chunks(chunks[0], *chunks[1:]) if len(chunks) > 1 else chunks[0]
    if aborted and not merged.response_metadata.get("finish_reason"):
        # Half-streamed tool calls cannot be answered; keep only the text already shown.
        if not merged.content:
            return None
        return AIMessage(content=merged.content, id=merged.id, metadata=stamp())
    calls, invalid = _checked_tool_calls(merged)
    return AIMessage(
        content=merged.content,
        id=merged.id,
        tool_calls=calls,
        invalid_tool_calls=invalid,
        additional_kwargs=merged.additional_kwargs,
        response_metadata=merged.response_metadata,
        usage_metadata=merged.usage_metadata,
        metadata=stamp(),
    )


def _is_empty(reply: AIMessage) -> bool:
    """A reply with no text (blank counts as none) and no tool call, valid or not."""
    return (
        not content_text(reply.content).strip()
        and not reply.tool_calls
        and not reply.invalid_tool_calls
    )


def _checked_tool_calls(merged: AIMessageChunk) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """The reply's tool calls, parsed strictly.

    LangChain parses streamed arguments leniently (a truncated `{"commands": ["a", "b"`
    becomes `{"commands": ["a", "b"]}`); a tool must never run on arguments the model did
    not finish, so only a complete JSON object counts; anything else is an invalid call,
    answered with an error result.
    """
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for chunk in merged.tool_call_chunks:
        raw = chunk.get("args") or ""
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError:
            args = None
        name, call_id = chunk.get("name") or "", chunk.get("id")
        if isinstance(args, dict):
            calls.append(ToolCall(name=name, args=args, id=call_id, type="tool_call"))
        else:
            invalid.append(
                invalid_tool_call(
                    name=name,
                    args=raw,
                    id=call_id,
                    error="the arguments are not a complete JSON object",
                )
            )
    return calls, invalid


async def llm_call(
    state: AgentState, runtime: Runtime[AgentContext], config: RunnableConfig
) -> dict[str, Any]:
    """Call the model with the topology in the system prompt and the trimmed history."""
    ctx = runtime.context
    topology = await ctx.topology.text()
    prepared = await aprepare_context(
        state.get("messages", []),
        system_prompt=ctx.system_prompt,
        topology=topology,
        context_limit=ctx.settings.context_limit,
        strategy=ctx.settings.context_strategy,
        model=ctx.settings.model,
        tool_tokens=ctx.tool_tokens,
    )
    if ctx.reply_sink is not None:
        ctx.reply_sink(None)
    else:
        runtime.stream_writer({"type": "llm_start"})
    chunks, aborted = await _reply_with_retries(ctx, prepared.messages, config)
    reply = _merge(chunks, aborted)
    empty: ModelCallError | None = None
    if reply is None and not aborted:
        empty = describe_model_error(ValueError("No generation chunks were returned"), ctx.settings)
    elif reply is not None and not aborted and _is_empty(reply):
        empty = empty_answer_error(ctx.settings, reply.response_metadata.get("finish_reason"))
    if empty is not None:
        log.warning("%s (turn %s)", empty.log_line(), ctx.turn_id or "-")
        raise empty
    log.info(
        "LLM call completed: tool_calls=%d%s",
        len(reply.tool_calls) if reply else 0,
        " (aborted)" if aborted else "",
    )
    update: dict[str, Any] = {
        "llm_calls": state.get("llm_calls", 0) + 1,
        "remaining_steps": state.get("remaining_steps", DEFAULT_MAX_ITERATIONS) - 1,
    }
    if reply is not None:
        if ctx.hold_back is not None:
            reply = _held_back(reply, ctx.hold_back)
        update["messages"] = [reply]
    if topology is not None and topology != state.get("topology_info"):
        update["topology_info"] = topology
    if aborted:
        update["abort"] = True
    return update


def _held_back(reply: AIMessage, hold_back: HoldBack) -> AIMessage:
    """`reply` as the student may see it (saved so): configuration lines of its text and of
    its tool calls' commands hidden (the tools then run what is left: teaching mode would
    refuse the hidden lines), a malformed call's arguments text dropped."""
    content = reply.content
    if isinstance(content, str):
        content, _ = hold_back.answer(content)
    calls = [{**call, "args": hold_back.arguments(call["args"])[0]} for call in reply.tool_calls]
    invalid = [{**call, "args": ""} for call in reply.invalid_tool_calls]
    extra = {
        k: v for k, v in reply.additional_kwargs.items() if k not in ("tool_calls", "function_call")
    }
    return reply.model_copy(
        update={
            "content": content,
            "tool_calls": calls,
            "invalid_tool_calls": invalid,
            "additional_kwargs": extra,
        }
    )
