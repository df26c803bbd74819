"""Reading a turn's events into its `Turn` from a kernel, and what a kernel interrupt
does to it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

from ..events import ApprovalRequiredEvent, ChatEvent
from ..turns import TurnFollower
from .api_client import CopilotClient
from .errors import CopilotError
from .turn import Turn, TurnRecorder

EventCallback = Callable[[ChatEvent], None] | TurnFollower
"""`on_event`: called with each event; or a `turns.TurnFollower` (the magics' chat widget
and text output), given each event with what the turn's one reduction made of it."""


class TurnHolder(Protocol):
    """What `read_turn` tells its owner (a `Copilot`)."""

    last_turn: Turn | None
    waiting_approval: ApprovalRequiredEvent | None


def read_turn(
    holder: TurnHolder,
    client: CopilotClient,
    events: Iterator[ChatEvent],
    recorder: TurnRecorder,
    on_event: EventCallback | None,
    *,
    abort: tuple[str, ...],
    detachable: bool = True,
) -> Turn:
    """Read `events` into `recorder`, the turn kept as `holder.last_turn`; on a kernel
    interrupt, abort the turn on the server (`abort`: its abort route's path, from
    `session_abort` or `run_abort`) and re-raise, except a `detachable` turn (a chat
    turn) waiting for an approval: it stays waiting, as `holder.waiting_approval` (a
    direct run lives only as long as its request)."""
    try:
        for event in events:
            ops = recorder.add(event)
            if isinstance(on_event, TurnFollower):
                on_event.follow(event, ops, recorder.builder)
            elif on_event is not None:
                on_event(event)
    except KeyboardInterrupt:
        holder.waiting_approval = recorder.waiting_approval if detachable else None
        if holder.waiting_approval is None:
            abort_quietly(client, abort)
        holder.last_turn = recorder.finish(aborted=True)
        raise
    holder.waiting_approval = None
    holder.last_turn = recorder.finish()
    return holder.last_turn


def session_abort(project_id: str, session_id: str) -> tuple[str, ...]:
    """The path of the route stopping the chat session's turn."""
    return ("projects", project_id, "chat", "sessions", session_id, "abort")


def run_abort(project_id: str, run_id: str) -> tuple[str, ...]:
    """The path of the route stopping the run `run_id` (a direct tool run, a lab check)."""
    return ("projects", project_id, "runs", run_id, "abort")


def abort_quietly(client: CopilotClient, path: tuple[str, ...]) -> None:
    """Ask the server to stop what the abort route `path` names (errors ignored: it may
    be over)."""
    with contextlib.suppress(CopilotError):
        client.post(*path)
