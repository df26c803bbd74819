"""Streamed tool-call fragments -> the progressive `tool_call` payloads of seed 000."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..events import ToolCallFunction, ToolCallPayload


@dataclass
class _OpenCall:
    id: str
    name: str
    arguments: str = ""


class ToolCallStreamAccumulator:
    """Turns streamed tool-call fragments into the seed's progressive `tool_call` payloads.

    Seed 000 "Streaming Tool Call Mechanism": a new call (its id and name arrive in its
    first fragment) gives a payload with empty arguments; each arguments fragment gives a
    payload with everything accumulated so far; `finish()` (the chunk carrying
    `finish_reason`) gives a last payload per call with `complete: true`. Calls are keyed
    by their `index` in the reply. `reset()` starts a new model call.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _OpenCall] = {}

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
                payloads.append(self._payload(call))
            if fragment.get("args"):
                call.arguments += fragment["args"]
                payloads.append(self._payload(call))
        return payloads

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
