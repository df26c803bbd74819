"""The copilot's LangGraph graph, with the per-turn limits (`limits.TurnLimits`).

```
START -> llm_call -(should_continue)-> tool_node | title_generator_node
                                       | abort_handler_node | END
tool_node -(recursion_limit_continue)-> llm_call | END
title_generator_node -> END;  abort_handler_node -> END
```

- `llm_call` puts the lab topology in the system prompt (fetched once per turn, again
  after a tool that changed the lab), trims the history to the model's context budget
  (`context.aprepare_context`) and streams the reply of the model bound to the mode's
  tool schemas. An abort stops the reply where it is: the text so far is kept; its tool
  calls are kept only if the reply was complete (its finish reason arrived), and then
  get `{"status": "aborted"}` results from abort_handler_node.
- `tool_node` runs the requested tools through `tools.execute_tool`, which enforces the
  mode where the tool runs. Results become ToolMessages holding JSON text
  (`json.dumps(..., ensure_ascii=False, indent=2)`), in the order of the calls. Read-only
  calls of one reply run concurrently; a reply containing a call that changes the lab runs
  its calls one after the other, in order. Calls beyond `max_tool_calls` get the
  tool-limit message; when no model call is left to read results (`remaining_steps` < 1,
  e.g. `max_iterations=1`), nothing runs and every call gets a "not executed" result.
  Before anything runs, each call the turn's approval policy names waits for a person
  (`agent.approval`): with `changes`, every call that would change the lab or a device's
  configuration (`tools.changes`: a command tool whose lines include one that is no
  diagnostic); one `interrupt()` per call, in order, its plan naming the configuring
  lines; a declined or timed-out call gets the declined result instead of running.
- `title_generator_node` names the conversation once, after its first complete answer.
- `abort_handler_node` answers pending tool calls with `{"status": "aborted"}`.

Routing: `should_continue` checks, in order, the abort flag (pending tool calls ->
abort_handler_node, else END), tool calls (-> tool_node), a missing title
(-> title_generator_node), else END. `recursion_limit_continue` ends on abort or when
no model call is left in the turn, else goes back to llm_call.

Everything a turn needs that must not be persisted (model clients holding the API key, the
tool context holding the GNS3 client, the abort flag) is in `AgentContext`, passed as
LangGraph's runtime context (`graph.astream(..., context=...)`), never in the state.

Nodes report to the stream through LangGraph's custom stream writer, as dicts with a
`type` (the service turns them into SSE events): `llm_start` (a model call begins; what
the statistics count), `tool_start`, `progress`, `tool_end` (with the exact ToolMessage
content) and `iteration_limit` (with a message for the user).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.messages.tool import ToolCall, invalid_tool_call
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime, get_runtime

from ..gns3 import GNS3Client, Node, Project, Topology
from ..tools import (
    ToolAborted,
    ToolContext,
    ToolSpec,
    execute_tool,
    openai_tool_schema,
    tools_for_mode,
)
from ..tools.changes import PlannedChange, planned_change
from ..tools.registry import call_changes_lab
from .approval import DEFAULT_TIMEOUT, ApprovalDecision, declined_result, new_request
from .approval_policy import NO_APPROVAL, ApprovalPolicy
from .clock import TurnClock
from .context import aprepare_context
from .history import (
    content_text,
    placeholder_results,
    requested_calls,
    unanswered_tool_calls,
)
from .limits import DEFAULT_MAX_ITERATIONS, UNLIMITED_TOOL_CALLS
from .llm_access import TURN_HEADER, ModelSettings
from .llm_errors import ModelCallError, describe_model_error, empty_answer_error
from .llm_retries import ModelRetries
from .prompts import (
    ABORTED_RESULT,
    TITLE_PROMPT,
    clean_title,
    fallback_title,
    iteration_limit_notice,
    iteration_limit_result,
    title_request,
    tool_limit_message,
)
from .state import AgentState, stamp
from .tokens import TokenCost, token_counter_for_model

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from ..objectives.hints import HoldBack


log = logging.getLogger(__name__)

LLM_CALL = "llm_call"
TOOL_NODE = "tool_node"
TITLE_NODE = "title_generator_node"
ABORT_NODE = "abort_handler_node"

MIN_REMAINING_STEPS = 1
"""`recursion_limit_continue` ends the turn below this many model calls left (steps are
model calls here, not LangGraph super-steps)."""
TOPOLOGY_TIMEOUT = 10.0
"""Seconds the topology fetch may take before the model is called without it."""
TITLE_TIMEOUT = 30.0
"""Seconds the title model may take before the fallback title is used."""
ABORT_GRACE = 2.0
"""Seconds tools get to stop on their own after an abort before they are cancelled."""


class TopologySource:
    """The turn's one read of the lab topology: the system prompt's text and the nodes
    the tools look devices up in; read once, again when stale.

    `fetch` returns the project's `Topology`. `prefetch()` starts fetching in the
    background (the service calls it as a turn starts, so the fetch overlaps the
    session bookkeeping); `text()` and `nodes()` wait for it; `invalidate()` marks it
    stale after a tool changed the lab, and calls `on_lab_changed` (the service then
    stops sharing reads begun before the change with other turns). A failed or slow
    fetch yields None (the prompt then says no topology is available, the tools read the
    nodes themselves) and is logged.
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[Topology]],
        timeout: float = TOPOLOGY_TIMEOUT,
        *,
        on_lab_changed: Callable[[], object] | None = None,
    ) -> None:
        self._fetch = fetch
        self._timeout = timeout
        self._on_lab_changed = on_lab_changed
        self._task: asyncio.Task[tuple[Topology, str] | None] | None = None

    async def _load(self) -> tuple[Topology, str] | None:
        try:
            topology = await asyncio.wait_for(self._fetch(), self._timeout)
        except Exception as exc:
            log.warning("Could not read the lab topology: %s", exc)
            return None
        return topology, topology.to_text()

    def prefetch(self) -> None:
        """Start fetching unless a fetch is under way or done."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._load())

    async def _read(self) -> tuple[Topology, str] | None:
        self.prefetch()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def text(self) -> str | None:
        """The topology text (None if it could not be fetched)."""
        read = await self._read()
        return None if read is None else read[1]

    async def nodes(self) -> list[Node] | None:
        """The project's nodes (None if the topology could not be fetched)."""
        read = await self._read()
        return None if read is None else read[0].nodes

    def invalidate(self) -> None:
        """Fetch again on the next `text()` or `nodes()` (a tool changed the lab)."""
        self._task = None
        if self._on_lab_changed is not None:
            self._on_lab_changed()

    def close(self) -> None:
        """Cancel a fetch still running (the turn is over)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


async def read_topology(
    gns3: GNS3Client,
    project_id: str,
    read_project: Callable[[str], Awaitable[Project]] | None = None,
) -> Topology:
    """The project's topology in one round trip (project, nodes and links read at once).

    `read_project` reads the project (default `gns3.get_project`): the server passes its
    shared lookup, so a request checking the project while this read runs costs no
    second GNS3 request.
    """
    project, nodes, links = await asyncio.gather(
        (read_project or gns3.get_project)(project_id),
        gns3.list_nodes(project_id),
        gns3.list_links(project_id),
    )
    return Topology(project, nodes, links)


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
        return _tool_tokens(self.settings.model, tuple(self.specs))

    @functools.cached_property
    def specs_by_name(self) -> dict[str, ToolSpec]:
        """The bound tools by name."""
        return {spec.name: spec for spec in self.specs}


if TYPE_CHECKING:
    CopilotGraph: TypeAlias = CompiledStateGraph[AgentState, AgentContext, AgentState, AgentState]
    """The compiled copilot graph (`build_graph`)."""


@functools.lru_cache(maxsize=64)
def _tool_schema(spec: ToolSpec) -> dict[str, Any]:
    # Building a JSON schema from a pydantic model takes about a millisecond per tool:
    # too much to repeat on every turn.
    return openai_tool_schema(spec)


@functools.lru_cache(maxsize=64)
def _tool_tokens(model: str, specs: tuple[ToolSpec, ...]) -> TokenCost:
    return token_counter_for_model(model).tools_cost([_tool_schema(spec) for spec in specs])


OBJECTIVE_TOOLS = frozenset({"check_objectives"})
"""Tools offered only in a project with lab objectives."""


def make_tool_specs(mode: str, *, objectives: bool = False) -> list[ToolSpec]:
    """The tools the model is shown in `mode` (execution checks the mode again);
    `check_objectives` only when the project has lab `objectives`."""
    return [spec for spec in tools_for_mode(mode) if objectives or spec.name not in OBJECTIVE_TOOLS]


def _last_ai(messages: Sequence[BaseMessage]) -> AIMessage | None:
    last = messages[-1] if messages else None
    return last if isinstance(last, AIMessage) else None


# -- llm_call ------------------------------------------------------------------------------


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


# -- tool_node -------------------------------------------------------------------------------


@dataclass
class _Call:
    id: str
    name: str
    args: dict[str, Any] | str
    """Parsed arguments, or the raw text when the model sent malformed JSON."""


def _calls(message: AIMessage) -> list[_Call]:
    calls = [_Call(call["id"] or "", call["name"], call["args"]) for call in message.tool_calls]
    calls += [
        _Call(call.get("id") or "", call.get("name") or "", call.get("args") or "")
        for call in message.invalid_tool_calls
    ]
    return calls


def _as_json_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, indent=2)


_current_call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "copilot_current_tool_call", default=None
)
"""The tool call the running task executes, so progress events name their call."""


class _ToolRunner:
    """Runs one reply's allowed tool calls and reports them to the stream as they go.

    The turn's one `ToolContext` (its node cache shared by all calls) gets a progress sink
    that tags each event with the call that reported it (`_current_call`, set per task).
    """

    def __init__(self, ctx: AgentContext, writer: Callable[[Any], None]) -> None:
        self.ctx = ctx
        self.writer = writer
        self.results: dict[str, str] = {}
        ctx.tools.progress = self._progress

    def _progress(self, event: dict[str, Any]) -> None:
        call = _current_call.get()
        self.writer(
            {
                "type": "progress",
                "tool_name": call.name if call else str(event.get("tool", "")),
                "tool_call_id": call.id if call else None,
                "message": str(event.get("message", "")),
                "elapsed": event.get("elapsed"),
                "node": event.get("node"),
            }
        )

    async def run_one(self, call: _Call) -> None:
        if self.ctx.abort.is_set():
            return
        _current_call.set(call)
        self.writer({"type": "tool_start", "tool_name": call.name, "tool_call_id": call.id})
        outcome = await execute_tool(self.ctx.tools, call.name, call.args)
        content = _as_json_text(outcome.result)
        if outcome.changed_lab:
            self.ctx.topology.invalidate()
        self.results[call.id] = content
        self.writer(
            {
                "type": "tool_end",
                "tool_name": call.name,
                "tool_call_id": call.id,
                "tool_output": content,
                "arguments": call.args,
            }
        )

    async def run_all(self, calls: list[_Call]) -> None:
        specs = self.ctx.specs_by_name
        changes_lab = any(
            call.name not in specs or call_changes_lab(call.name, call.args) for call in calls
        )
        if changes_lab:
            for call in calls:
                await self.run_one(call)
        else:
            await asyncio.gather(*(self.run_one(call) for call in calls))

    async def run(self, calls: list[_Call]) -> None:
        """Run `calls`; on abort, wait `ABORT_GRACE` for them to stop, then cancel them."""
        batch = asyncio.ensure_future(self.run_all(calls))
        aborting = asyncio.ensure_future(self.ctx.abort.wait())
        try:
            await asyncio.wait({batch, aborting}, return_when=asyncio.FIRST_COMPLETED)
            if not batch.done():
                await asyncio.wait({batch}, timeout=ABORT_GRACE)
        finally:
            for task in (batch, aborting):
                task.cancel()
            await asyncio.gather(batch, aborting, return_exceptions=True)


async def _planned_changes(ctx: AgentContext, calls: list[_Call]) -> dict[str, PlannedChange]:
    """What each call the approval policy may ask about would change, by call id (calls
    that would not run at all left out: `execute_tool` refuses them without running
    anything)."""
    if ctx.abort.is_set():
        return {}
    planned: dict[str, PlannedChange] = {}
    try:
        for call in calls:
            if ctx.approval.considers(call.name):
                change = await planned_change(ctx.tools, call.name, call.args)
                if change is not None:
                    planned[call.id] = change
    except ToolAborted:
        return {}
    return planned


def _ask_approvals(
    ctx: AgentContext, session_id: str, calls: list[_Call], planned: dict[str, PlannedChange]
) -> dict[str, str]:
    """Ask a person about each call the approval policy names (`planned`: what each
    would change), one `interrupt()` per call in order (the graph pauses at the first one
    not decided yet; on resume, this node runs again from the top and the decided ones
    return their recorded decision). The declined calls' results by call id; nothing has
    run when this returns.
    """
    from langgraph.types import interrupt

    if ctx.abort.is_set():
        return {}
    declined: dict[str, str] = {}
    for call in calls:
        change = planned.get(call.id)
        if change is None or not ctx.approval.needs(call.name, change.changes):
            continue
        request = new_request(
            session_id,
            call.id,
            call.name,
            call.args,
            timeout=ctx.approval_timeout,
            mode=ctx.tools.mode,
            temperature=ctx.temperature,
            time_limit=ctx.clock.limit if ctx.clock is not None else None,
            time_used=ctx.clock.used() if ctx.clock is not None else None,
            configuring=change.devices or None,
            plan=change.plan,
        )
        answer = interrupt(request.model_dump(mode="json"))
        try:
            decision = ApprovalDecision.model_validate(answer)
        except ValueError:
            decision = ApprovalDecision(decision="reject", comment="(an unreadable decision)")
        if decision.decision != "approve":
            declined[call.id] = declined_result(decision, ctx.approval_timeout)
    return declined


async def tool_node(
    state: AgentState, runtime: Runtime[AgentContext], config: RunnableConfig
) -> dict[str, Any]:
    """Execute the last reply's tool calls within the turn's limits (see module docstring)."""
    ctx = runtime.context
    writer = runtime.stream_writer
    message = _last_ai(state.get("messages", []))
    calls = _calls(message) if message is not None else []
    count = state.get("tool_calls_count", 0)
    limit = state.get("max_tool_calls", UNLIMITED_TOOL_CALLS)
    runner = _ToolRunner(ctx, writer)
    results: dict[str, str] = {}
    allowed: list[_Call] = []

    out_of_iterations = state.get("remaining_steps", DEFAULT_MAX_ITERATIONS) < MIN_REMAINING_STEPS
    iterations = state.get("llm_calls", 0)
    if out_of_iterations:
        results = {call.id: iteration_limit_result(iterations) for call in calls}
    else:
        allowed = calls[: max(limit - count, 0)]
        if len(allowed) < len(calls):
            log.warning(
                "Tool call limit exceeded: current=%d, requested=%d, max=%d",
                count,
                len(calls),
                limit,
            )
        refused = tool_limit_message(limit, count + len(allowed))
        results = {call.id: refused for call in calls[len(allowed) :]}
        planned = await _planned_changes(ctx, allowed)
        results.update(_ask_approvals(ctx, state.get("session_id", ""), allowed, planned))
        allowed = [call for call in allowed if call.id not in results]
        if allowed:
            await runner.run(allowed)
        for call in allowed:
            results[call.id] = runner.results.get(call.id, ABORTED_RESULT)

    for call in calls:
        if call.id not in runner.results:
            writer(
                {
                    "type": "tool_end",
                    "tool_name": call.name,
                    "tool_call_id": call.id,
                    "tool_output": results[call.id],
                    "arguments": call.args,
                }
            )
    if out_of_iterations:
        notice = iteration_limit_notice(iterations, [call.name for call in calls])
        writer({"type": "iteration_limit", "message": notice})
    # The mode goes with each result: a refusal read back from the history names it.
    tool_messages = [
        ToolMessage(
            content=results[call.id],
            tool_call_id=call.id,
            name=call.name,
            metadata=stamp({"mode": ctx.tools.mode}),
        )
        for call in calls
    ]
    update: dict[str, Any] = {"messages": tool_messages, "tool_calls_count": count + len(allowed)}
    if ctx.abort.is_set():
        update["abort"] = True
    return update


# -- title and abort -----------------------------------------------------------------------


def _first_exchange(messages: Sequence[BaseMessage]) -> tuple[str, str]:
    """The first user message's text and the first answer text after it."""
    user = next((m for m in messages if isinstance(m, HumanMessage)), None)
    user_text = content_text(user.content) if user is not None else ""
    answer = next(
        (
            content_text(m.content)
            for m in messages
            if isinstance(m, AIMessage) and content_text(m.content).strip()
        ),
        "",
    )
    return user_text, answer


async def title_generator_node(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Name the conversation (<= 40 characters; the user's first 30 if the model fails).

    The title model's call is tagged `nostream`, reports no `llm_start`, and so appears
    neither in the stream nor in the statistics.
    """
    ctx = runtime.context
    user_text, answer = _first_exchange(state.get("messages", []))
    model = ctx.title_model or ctx.model
    request = [SystemMessage(content=TITLE_PROMPT), HumanMessage(title_request(user_text, answer))]
    title = ""
    try:
        reply = await asyncio.wait_for(
            model.ainvoke(request, {"tags": ["nostream"], "run_name": "title"}), TITLE_TIMEOUT
        )
        title = clean_title(content_text(reply.content))
    except Exception as exc:
        log.warning("Title generation failed, using the first message: %s", exc)
    if ctx.hold_back is not None and ctx.hold_back.shows_configuration(title):
        title = ""  # the student's own words instead
    return {"conversation_title": title or fallback_title(user_text)}


def aborted_results(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """`{"status": "aborted"}` results for the last reply's unanswered tool calls."""
    return placeholder_results(unanswered_tool_calls(messages), ABORTED_RESULT, metadata=stamp())


async def abort_handler_node(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Answer the pending tool calls with placeholders so the history stays valid."""
    results = aborted_results(state.get("messages", []))
    for message in results:
        runtime.stream_writer(
            {
                "type": "tool_end",
                "tool_name": message.name,
                "tool_call_id": message.tool_call_id,
                "tool_output": message.content,
            }
        )
    return {"messages": results, "abort": True}


# -- routing and assembly --------------------------------------------------------------------


def _aborted() -> bool:
    """Whether the running turn's abort flag is set.

    Outside a run (a state update through `aupdate_state`) there is no runtime context,
    hence no flag.
    """
    runtime = get_runtime(AgentContext)
    context = runtime.context if runtime is not None else None
    return context is not None and context.abort.is_set()


def should_continue(state: AgentState) -> str:
    """After llm_call: abort, then tools, then the title, else the end."""
    messages = state.get("messages", [])
    last = _last_ai(messages)
    if _aborted():
        return ABORT_NODE if unanswered_tool_calls(messages) else END
    if last is not None and requested_calls(last):
        return TOOL_NODE
    if not state.get("conversation_title") and last is not None:
        return TITLE_NODE
    return END


def recursion_limit_continue(state: AgentState) -> str:
    """After tool_node: end on abort or when the turn has no model call left."""
    if _aborted():
        return END
    if state.get("remaining_steps", DEFAULT_MAX_ITERATIONS) < MIN_REMAINING_STEPS:
        return END
    return LLM_CALL


def build_graph(checkpointer: BaseCheckpointSaver[str] | None = None) -> CopilotGraph:
    """The compiled copilot graph, persisting to `checkpointer`."""
    graph = StateGraph(AgentState, context_schema=AgentContext)
    # These two nodes take both `runtime` and `config` (LangGraph passes each by its
    # parameter name); LangGraph's add_node overloads type one or the other, not both.
    graph.add_node(LLM_CALL, llm_call)  # type: ignore[call-overload]
    graph.add_node(TOOL_NODE, tool_node)  # type: ignore[call-overload]
    graph.add_node(TITLE_NODE, title_generator_node)
    graph.add_node(ABORT_NODE, abort_handler_node)
    graph.add_edge(START, LLM_CALL)
    graph.add_conditional_edges(LLM_CALL, should_continue, [TOOL_NODE, TITLE_NODE, ABORT_NODE, END])
    graph.add_conditional_edges(TOOL_NODE, recursion_limit_continue, [LLM_CALL, END])
    graph.add_edge(TITLE_NODE, END)
    graph.add_edge(ABORT_NODE, END)
    return graph.compile(checkpointer=checkpointer)
