"""The graph's `tool_node`: runs the last reply's tool calls within the turn's limits.

The tools run through `tools.execute_tool`, which enforces the mode where the tool runs.
Results become ToolMessages holding JSON text (`json.dumps(..., ensure_ascii=False,
indent=2)`), in the order of the calls. Read-only calls of one reply run concurrently; a
reply containing a call that changes the lab runs its calls one after the other, in
order. Calls beyond `max_tool_calls` get the tool-limit message; when no model call is
left to read results (`remaining_steps` below `MIN_REMAINING_STEPS`), nothing runs and
every call gets a "not executed" result. Before anything runs, each call the turn's
approval policy names waits for a person (`agent.approval`), one `interrupt()` per call;
a declined or timed-out call gets the declined result instead of running.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from ..tools import ToolAborted, execute_tool
from ..tools.changes import PlannedChange, planned_change
from ..tools.registry import call_changes_lab
from .agent_context import AgentContext
from .approval import ApprovalDecision, declined_result, new_request
from .history import last_ai
from .limits import DEFAULT_MAX_ITERATIONS, MIN_REMAINING_STEPS, UNLIMITED_TOOL_CALLS
from .prompts import (
    ABORTED_RESULT,
    iteration_limit_notice,
    iteration_limit_result,
    tool_limit_message,
)
from .state import AgentState, stamp

log = logging.getLogger(__name__)

ABORT_GRACE = 2.0
"""Seconds tools get to stop on their own after an abort before they are cancelled."""


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
    message = last_ai(state.get("messages", []))
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
