"""Running one tool directly, without a model (`POST copilot/projects/{id}/tools/{name}`).

The call goes through `tools.execute_tool` with the same lab access as the chats (GNS3
client, console pool and its per-console locks, command policy, skills), in the caller's
copilot mode, so a direct run is refused or screened exactly as the model's call would
be (a tool the mode does not allow runs nothing: its `tool_end` is the refusal, outcome
`refused`, with the note for the student), and asks for approval as it would
(`require_approval`: with `changes`, a run that would change the lab or a device's
configuration, `tools.changes`). Its events are the chat's: `tool_call` (the call with its
complete arguments, as the model's would be, so that its card reads the same), then, when
it asks, `approval_required` (heartbeats while it waits) and `approval_resolved`,
`tool_start`, `progress`..., `tool_end` (the result as JSON text, with its summary and
outcome; a declined run's result says so and nothing ran), `abort` if it was aborted,
`heartbeat` during silences, `done`; their `session_id` field carries the run's id
(`run_id`; a run is no chat session): the run routes abort it
(`POST .../runs/{run_id}/abort`) and decide its approval
(`POST .../runs/{run_id}/approvals/{approval_id}`, answered 200 JSON: the run's own
stream goes on). A run lives as long as its request: one whose client leaves while it
waits is aborted, and nothing runs. `ToolRuns` also holds the lab checks' runs (their
abort flags), so the same routes stop them.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..chat.stream_events import tool_end_event
from ..events import (
    AbortEvent,
    ApprovalRequiredEvent,
    ApprovalResolvedEvent,
    ChatEvent,
    DoneEvent,
    ErrorEvent,
    HeartbeatEvent,
    ProgressEvent,
    ToolCallEvent,
    ToolStartEvent,
)

if TYPE_CHECKING:
    from ..agent.approval import ApprovalDecision, ApprovalRequest
    from ..agent.approval_policy import ApprovalPolicy
    from ..tools import ToolContext, ToolOutcome

ABORT_GRACE = 2.0
"""Seconds a tool gets to stop on its own after an abort before it is cancelled."""


@dataclass
class _Waiting:
    """An approval a run waits for."""

    run_id: str
    user_id: str
    request: ApprovalRequest
    decision: asyncio.Future[ApprovalDecision]


class ToolRuns:
    """The runs in progress (direct tool runs, lab checks): their abort flags and owners,
    by run id, and the approvals they wait for. `approval` says which runs ask first
    (default: none), `approval_timeout` for how many seconds."""

    def __init__(
        self, approval: ApprovalPolicy | None = None, approval_timeout: float | None = None
    ) -> None:
        from ..agent.approval import DEFAULT_TIMEOUT
        from ..agent.approval_policy import NO_APPROVAL

        self.approval = approval or NO_APPROVAL
        self.approval_timeout = approval_timeout or DEFAULT_TIMEOUT
        self._runs: dict[str, tuple[str, asyncio.Event]] = {}
        self._waiting: dict[str, _Waiting] = {}

    def begin(self, run_id: str, user_id: str) -> asyncio.Event | None:
        """Register a run and return its abort flag; None if that id is running already."""
        if run_id in self._runs:
            return None
        flag = asyncio.Event()
        self._runs[run_id] = (user_id, flag)
        return flag

    def end(self, run_id: str, flag: asyncio.Event) -> None:
        """Unregister the run that owns `flag` (and the approvals it asked for)."""
        if self._runs.get(run_id, (None, None))[1] is flag:
            del self._runs[run_id]
            for approval_id, waiting in list(self._waiting.items()):
                if waiting.run_id == run_id:
                    del self._waiting[approval_id]

    def owner(self, run_id: str) -> str | None:
        """The user running `run_id`, or None if no such run is in progress."""
        run = self._runs.get(run_id)
        return run[0] if run else None

    def abort(self, run_id: str, user_id: str) -> bool:
        """Abort the user's run `run_id`; False if the user has no such run."""
        run = self._runs.get(run_id)
        if run is None or run[0] != user_id:
            return False
        run[1].set()
        return True

    def abort_all(self) -> None:
        """Abort every run (the server is stopping)."""
        for _, flag in self._runs.values():
            flag.set()

    # -- approvals -------------------------------------------------------------------------

    def pending(self, run_id: str, user_id: str) -> list[ApprovalRequest] | None:
        """The approvals the user's run `run_id` waits for; None when it is no run of
        the user's in progress."""
        if self.owner(run_id) != user_id:
            return None
        return [
            waiting.request
            for waiting in self._waiting.values()
            if waiting.run_id == run_id and not waiting.decision.done()
        ]

    def decide(
        self, run_id: str, approval_id: str, user_id: str, decision: ApprovalDecision
    ) -> bool | None:
        """Answer the approval `approval_id` of the user's run `run_id`: True when the
        run takes the decision, False when it was decided already, None when no run of
        the user's asked for it."""
        waiting = self._waiting.get(approval_id)
        if waiting is None or (waiting.run_id, waiting.user_id) != (run_id, user_id):
            return None
        if waiting.decision.done():
            return False
        waiting.decision.set_result(decision)
        return True

    async def ask(
        self, request: ApprovalRequest, run_id: str, user_id: str, abort: asyncio.Event
    ) -> ApprovalDecision | None:
        """Wait for the decision on `request` (a "timeout" one when its time runs out);
        None when the run is aborted meanwhile."""
        from ..agent.approval import ApprovalDecision

        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._waiting[request.approval_id] = _Waiting(run_id, user_id, request, future)
        aborting = asyncio.ensure_future(abort.wait())
        try:
            waited: set[asyncio.Future[ApprovalDecision] | asyncio.Task[bool]]
            waited = {future, aborting}
            await asyncio.wait(waited, timeout=request.timeout, return_when=asyncio.FIRST_COMPLETED)
            if future.done():
                return future.result()
            if abort.is_set():
                return None
            return ApprovalDecision(decision="timeout")
        finally:
            aborting.cancel()
            future.cancel()  # a later decision finds it decided (kept until the run ends)


def _as_json_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, indent=2)


async def approval_request(
    runs: ToolRuns,
    context: ToolContext,
    tool_name: str,
    arguments: dict[str, Any],
    run_id: str,
) -> ApprovalRequest | None:
    """The approval a direct run of `tool_name` must wait for under `runs.approval`, or
    None when it asks nothing (it changes nothing, or would not run at all)."""
    from ..agent.approval import new_request
    from ..tools.changes import planned_change

    if not runs.approval.considers(tool_name):
        return None
    change = await planned_change(context, tool_name, arguments)
    if change is None or not runs.approval.needs(tool_name, change.changes):
        return None
    return new_request(
        run_id,
        f"direct_{uuid.uuid4().hex[:24]}",
        tool_name,
        arguments,
        timeout=runs.approval_timeout,
        mode=context.mode,
        temperature=None,
        configuring=change.devices or None,
        plan=change.plan,
    )


async def run_tool(
    context: ToolContext,
    tool_name: str,
    arguments: dict[str, Any],
    *,
    run_id: str,
    abort: asyncio.Event,
    heartbeat_interval: float | None,
    approval: ApprovalRequest | None = None,
    runs: ToolRuns | None = None,
    user_id: str = "",
) -> AsyncGenerator[ChatEvent, None]:
    """The events of one direct tool call in `context` (module docstring): with
    `approval` (see `approval_request`), the call waits for the decision that `runs`
    receives for `user_id`'s run first. Closing the generator early cancels the tool."""
    from ..tools import execute_tool

    call_id = approval.tool_call_id if approval else f"direct_{uuid.uuid4().hex[:24]}"
    mode = context.mode
    call_arguments = json.dumps(arguments, ensure_ascii=False)
    function = {"name": tool_name, "arguments": call_arguments, "complete": True}
    yield ToolCallEvent(
        session_id=run_id,
        tool_call={"id": call_id, "type": "function", "function": function},
    )
    if approval is not None and runs is not None:
        declined: str | None = None
        async for event in _approval(approval, runs, run_id, user_id, abort, heartbeat_interval):
            if isinstance(event, str):
                declined = event
            else:
                yield event
        if declined is not None:
            ending = _last_events(run_id, tool_name, call_id, arguments, declined, mode, abort)
            for event in ending:
                yield event
            return
    queue: asyncio.Queue[ProgressEvent] = asyncio.Queue()

    def on_progress(report: dict[str, Any]) -> None:
        queue.put_nowait(
            ProgressEvent(
                session_id=run_id,
                tool_name=tool_name,
                tool_call_id=call_id,
                message=report.get("message", ""),
                elapsed=report.get("elapsed"),
                node=report.get("node"),
            )
        )

    context.progress = on_progress
    yield ToolStartEvent(session_id=run_id, tool_name=tool_name, tool_call_id=call_id)
    call = asyncio.ensure_future(execute_tool(context, tool_name, arguments))
    stop = asyncio.ensure_future(abort.wait())
    try:
        while not call.done():
            getting = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait(
                {call, getting, stop},
                timeout=heartbeat_interval or None,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if getting in done:
                yield getting.result()
            else:
                getting.cancel()
            if stop in done and not call.done():
                await asyncio.wait({call}, timeout=ABORT_GRACE)
                break
            if not done:
                yield HeartbeatEvent(session_id=run_id)
        while not queue.empty():
            yield queue.get_nowait()
        outcome: ToolOutcome | None = None
        if call.done() and not call.cancelled():
            error = call.exception()
            if error is not None:
                yield ErrorEvent(
                    session_id=run_id,
                    error=f"{tool_name} failed: {type(error).__name__}: {error}",
                )
            else:
                outcome = call.result()
        output = (
            _as_json_text(outcome.result)
            if outcome is not None
            else _as_json_text({"status": "aborted", "tool": tool_name})
        )
        for event in _last_events(run_id, tool_name, call_id, arguments, output, mode, abort):
            yield event
    finally:
        for task in (call, stop):
            task.cancel()
        await asyncio.gather(call, stop, return_exceptions=True)


def _last_events(
    run_id: str,
    tool_name: str,
    call_id: str,
    arguments: dict[str, Any],
    output: str,
    mode: str,
    abort: asyncio.Event,
) -> list[ChatEvent]:
    """A run's last events: its `tool_end` (with its reading), `abort` when it was
    aborted, `done`."""
    data = {
        "tool_name": tool_name,
        "tool_call_id": call_id,
        "tool_output": output,
        "arguments": arguments,
    }
    ending: list[ChatEvent] = [tool_end_event(run_id, data, mode=mode)]
    if abort.is_set():
        ending.append(AbortEvent(session_id=run_id))
    return [*ending, DoneEvent(session_id=run_id)]


async def _approval(
    request: ApprovalRequest,
    runs: ToolRuns,
    run_id: str,
    user_id: str,
    abort: asyncio.Event,
    heartbeat_interval: float | None,
) -> AsyncIterator[ChatEvent | str]:
    """The events of a run's wait for a person: `approval_required`, heartbeats, and
    `approval_resolved`; last, when the call must not run, the result the run gives
    instead (a string: declined, not approved in time, or aborted)."""
    from ..agent.approval import declined_result

    yield ApprovalRequiredEvent(
        session_id=run_id,
        approval_id=request.approval_id,
        tool_call_id=request.tool_call_id,
        tool_name=request.tool_name,
        tool_input=request.tool_input,
        summary=request.summary,
    )
    deciding = asyncio.ensure_future(runs.ask(request, run_id, user_id, abort))
    try:
        while not deciding.done():
            await asyncio.wait({deciding}, timeout=heartbeat_interval or None)
            if not deciding.done():
                yield HeartbeatEvent(session_id=run_id)
    finally:
        if not deciding.done():
            deciding.cancel()
            await asyncio.gather(deciding, return_exceptions=True)
    decision = deciding.result()
    if decision is None:
        yield _as_json_text({"status": "aborted", "tool": request.tool_name})
        return
    yield ApprovalResolvedEvent(
        session_id=run_id,
        approval_id=request.approval_id,
        tool_call_id=request.tool_call_id,
        decision=decision.decision,
        comment=decision.comment,
    )
    if decision.decision != "approve":
        yield declined_result(decision, request.timeout)
