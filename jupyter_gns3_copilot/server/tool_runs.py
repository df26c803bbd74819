"""Running one tool directly, without a model (`POST copilot/projects/{id}/tools/{name}`).

The call goes through `tools.execute_tool` with the same lab access as the chats (GNS3
client, console pool and its per-console locks, command policy, skills), in the caller's
copilot mode, so a direct run is refused or screened exactly as the model's call would
be (a tool the mode does not allow runs nothing: its `tool_end` is the refusal, outcome
`refused`, with the note for the student). Its events are the chat's: `tool_call` (the
call with its complete arguments, as the model's would be, so that its card reads the
same), `tool_start`, `progress`..., `tool_end` (the result as JSON text, with its summary
and outcome), `abort` if it was aborted, `heartbeat` during silences, `done`; their
`session_id` names the run and aborts it (`POST .../chat/sessions/{session_id}/abort`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..events import (
    AbortEvent,
    DoneEvent,
    ErrorEvent,
    HeartbeatEvent,
    ProgressEvent,
    ToolCallEvent,
    ToolStartEvent,
)
from ..service import tool_end_event

if TYPE_CHECKING:
    from ..tools import LabAccess, ToolOutcome

ABORT_GRACE = 2.0
"""Seconds a tool gets to stop on its own after an abort before it is cancelled."""


class ToolRuns:
    """The direct tool runs in progress: their abort flags and owners, by session id."""

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, asyncio.Event]] = {}

    def begin(self, session_id: str, user_id: str) -> asyncio.Event | None:
        """Register a run and return its abort flag; None if that id is running already."""
        if session_id in self._runs:
            return None
        flag = asyncio.Event()
        self._runs[session_id] = (user_id, flag)
        return flag

    def end(self, session_id: str, flag: asyncio.Event) -> None:
        """Unregister the run that owns `flag`."""
        if self._runs.get(session_id, (None, None))[1] is flag:
            del self._runs[session_id]

    def owner(self, session_id: str) -> str | None:
        """The user running `session_id`, or None if no such run is in progress."""
        run = self._runs.get(session_id)
        return run[0] if run else None

    def abort(self, session_id: str, user_id: str) -> bool:
        """Abort the user's run `session_id`; False if the user has no such run."""
        run = self._runs.get(session_id)
        if run is None or run[0] != user_id:
            return False
        run[1].set()
        return True

    def abort_all(self) -> None:
        """Abort every run (the server is stopping)."""
        for _, flag in self._runs.values():
            flag.set()


def _event(model: Any) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


def _as_json_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, indent=2)


async def run_tool(
    lab: LabAccess,
    project_id: str,
    tool_name: str,
    arguments: dict[str, Any],
    *,
    mode: str,
    session_id: str,
    abort: asyncio.Event,
    heartbeat_interval: float | None,
) -> AsyncIterator[dict[str, Any]]:
    """The events of one direct tool call (module docstring). Closing the generator early
    cancels the tool."""
    from ..tools import execute_tool

    call_id = f"direct_{uuid.uuid4().hex[:24]}"
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def on_progress(report: dict[str, Any]) -> None:
        queue.put_nowait(
            _event(
                ProgressEvent(
                    session_id=session_id,
                    tool_name=tool_name,
                    tool_call_id=call_id,
                    message=report.get("message", ""),
                    elapsed=report.get("elapsed"),
                    node=report.get("node"),
                )
            )
        )

    context = lab.tool_context(project_id, mode, abort)
    context.progress = on_progress
    call_arguments = json.dumps(arguments, ensure_ascii=False)
    function = {"name": tool_name, "arguments": call_arguments, "complete": True}
    yield _event(
        ToolCallEvent(
            session_id=session_id,
            tool_call={"id": call_id, "type": "function", "function": function},
        )
    )
    yield _event(ToolStartEvent(session_id=session_id, tool_name=tool_name, tool_call_id=call_id))
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
                yield _event(HeartbeatEvent(session_id=session_id))
        while not queue.empty():
            yield queue.get_nowait()
        outcome: ToolOutcome | None = None
        if call.done() and not call.cancelled():
            error = call.exception()
            if error is not None:
                yield _event(
                    ErrorEvent(
                        session_id=session_id,
                        error=f"{tool_name} failed: {type(error).__name__}: {error}",
                    )
                )
            else:
                outcome = call.result()
        output = (
            _as_json_text(outcome.result)
            if outcome is not None
            else _as_json_text({"status": "aborted", "tool": tool_name})
        )
        yield tool_end_event(
            session_id,
            {
                "tool_name": tool_name,
                "tool_call_id": call_id,
                "tool_output": output,
                "arguments": arguments,
            },
            mode=mode,
        )
        if abort.is_set():
            yield _event(AbortEvent(session_id=session_id))
        yield _event(DoneEvent(session_id=session_id))
    finally:
        for task in (call, stop):
            task.cancel()
        await asyncio.gather(call, stop, return_exceptions=True)
