"""Streamed tool-call fragments -> the progressive `tool_call` payloads of the chat stream."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..events import ToolCallFunction, ToolCallPayload

ARGUMENTS_INTERVAL = 0.05
"""Shortest time between two growing-arguments payloads of one call (20 a second: smooth
to watch). Each payload re-sends the arguments so far, so one per fragment made a 20-device
call 228 events and most of its turn's relay time."""


@dataclass
class _OpenCall:
    id: str
    name: str
    arguments: str = ""
    sent_at: float = 0.0


class ToolCallStreamAccumulator:
    """Turns streamed tool-call fragments into the stream's progressive `tool_call` payloads.

    A new call (its id and name arrive in its first fragment) gives a payload with empty
    arguments; arguments fragments give payloads with everything accumulated so far, at most
    one per `interval` seconds per call (the fragments in between are in the next payload:
    arguments only grow); `finish()` (the chunk carrying `finish_reason`) gives a last
    payload per call with the full arguments and `complete: true`. Calls are keyed by their
    `index` in the reply. `reset()` starts a new model call. `interval=0` gives one payload
    per fragment.
    """

    def __init__(
        self,
        *,
        interval: float = ARGUMENTS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._calls: dict[int, _OpenCall] = {}
        self._interval = interval
        self._clock = clock

    def reset(self) -> None:
        """Forget the calls of the previous model call."""
        self._calls = {}

    def add(self, fragments: list[Mapping[str, Any]]) -> list[ToolCallPayload]:
        """Payloads for a chunk's `tool_call_chunks` (`{name, args, id, index}` each)."""
        payloads = []
        for fragment in fragments:
            index = fragment.get("index")
            key = index if isinstance(index, int) else len(self._calls)
            call = self._calls.get(key)
            if call is None:
                call = _OpenCall(
                    id=fragment.get("id") or f"call_{key}", name=fragment.get("name") or ""
                )
                self._calls[key] = call
                payloads.append(self._sent(call))
            if fragment.get("args"):
                call.arguments += fragment["args"]
                if self._clock() - call.sent_at >= self._interval:
                    payloads.append(self._sent(call))
        return payloads

    def _sent(self, call: _OpenCall) -> ToolCallPayload:
        call.sent_at = self._clock()
        return self._payload(call)

    def finish(self) -> list[ToolCallPayload]:
        """A `complete: true` payload per open call; the calls are then forgotten."""
        payloads = [self._payload(call, complete=True) for call in self._calls.values()]
        self._calls = {}
        return payloads

    @staticmethod
    def _payload(call: _OpenCall, complete: bool | None = None) -> ToolCallPayload:
        return ToolCallPayload(
            id=call.id,
            function=ToolCallFunction(name=call.name, arguments=call.arguments, complete=complete),
        )
