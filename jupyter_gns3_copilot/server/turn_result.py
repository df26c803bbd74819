"""One JSON body summing up a turn's events (`"stream": false` requests).

```
{"session_id": str, "status": "done" | "aborted" | "error" | "incomplete",
 "message": str,           # the text of the turn's last assistant message
 "messages": [{"message_id", "content"}],   # every assistant message of the turn, in order
 "tool_calls": [{"id", "name", "arguments", "output", "status"}],
 "errors": [str]}
```

`arguments` is the JSON text the model sent; `output` the tool's result text (None when
the tool never ran); `status` is the result's own `status` when it is a JSON object with
one. "incomplete" means the stream ended without its `done` event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class TurnResult:
    """Accumulates a turn's events (`add`) into the summary body (`body`)."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self._texts: dict[str | None, list[str]] = {}
        self._calls: dict[str, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.aborted = False
        self.done = False

    def add(self, event: Mapping[str, Any]) -> None:
        """Take one event into account."""
        self.session_id = event.get("session_id") or self.session_id
        kind = event.get("type")
        if kind == "content":
            self._texts.setdefault(event.get("message_id"), []).append(event.get("content", ""))
        elif kind == "tool_call":
            call = event["tool_call"]
            entry = self._call(call["id"], call["function"]["name"])
            entry["arguments"] = call["function"].get("arguments", "")
        elif kind in ("tool_start", "tool_end"):
            entry = self._call(event.get("tool_call_id") or "", event.get("tool_name", ""))
            if kind == "tool_end":
                entry["output"] = event.get("tool_output")
                entry["status"] = _result_status(event.get("tool_output"))
        elif kind == "error":
            self.errors.append(str(event.get("error", "")))
        elif kind == "abort":
            self.aborted = True
        elif kind == "done":
            self.done = True

    def _call(self, call_id: str, name: str) -> dict[str, Any]:
        entry = self._calls.get(call_id)
        if entry is None:
            entry = {"id": call_id, "name": name, "arguments": "", "output": None, "status": None}
            self._calls[call_id] = entry
        return entry

    @property
    def status(self) -> str:
        """done, aborted, error or incomplete (see the module docstring)."""
        if self.aborted:
            return "aborted"
        if self.errors:
            return "error"
        return "done" if self.done else "incomplete"

    def body(self) -> dict[str, Any]:
        """The summary (see the module docstring)."""
        messages = [
            {"message_id": message_id, "content": "".join(parts)}
            for message_id, parts in self._texts.items()
        ]
        return {
            "session_id": self.session_id,
            "status": self.status,
            "message": messages[-1]["content"] if messages else "",
            "messages": messages,
            "tool_calls": list(self._calls.values()),
            "errors": self.errors,
        }


def _result_status(output: Any) -> str | None:
    if not isinstance(output, str):
        return None
    try:
        value = json.loads(output)
    except ValueError:
        return None
    return value.get("status") if isinstance(value, dict) else None
