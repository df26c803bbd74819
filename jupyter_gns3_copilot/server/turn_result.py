"""One JSON body summing up a turn's events (`"stream": false` requests).

```
{"session_id": str,
 "status": "done" | "aborted" | "error" | "incomplete" | "waiting_approval",
 "message": str,           # the text of the turn's last assistant message
 "messages": [{"content"}],   # every assistant text of the turn, in order
 "tool_calls": [{"id", "name", "arguments", "output", "status", "summary", "outcome", "note"}],
 "errors": [str],
 "statistics": {...} | null, "title": str | null,    # from the `done` event
 "approval": {"approval_id", "tool_call_id", "tool_name", "summary", "decide"}}
                                                     # only while one waits
```

Read from the shared reducer's turn (`turns.TurnBuilder`): `arguments` is the JSON text
the model sent; `output` the tool's result text (None when the tool never ran); `status`
is the result's own `status` when it is a JSON object with one; `summary`, `outcome` and
`note` the server's reading of it. "incomplete" means the stream ended without its `done`
event; "waiting_approval" that the turn paused for a person's decision on a change:
`approval` says which, and `decide` how (`POST <path> {"decision": "approve" | "reject",
"comment"?}`, answered with the rest of the turn).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..turns import TurnBuilder

if TYPE_CHECKING:
    from ..events import ChatEvent


class TurnResult:
    """Accumulates a turn's events (`add`) into the summary body (`body`)."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self._builder = TurnBuilder()
        self._done: Mapping[str, Any] = {}

    def add(self, event: ChatEvent) -> None:
        """Take one event into account."""
        self.session_id = event.session_id or self.session_id
        if event.type == "done":
            self._done = event.model_dump(exclude_none=True)
        self._builder.apply(event)

    @property
    def status(self) -> str:
        """done, aborted, error or incomplete (see the module docstring)."""
        status = self._builder.status()
        return "incomplete" if status in ("running", "interrupted") else status

    def body(self, approvals_path: str | None = None) -> dict[str, Any]:
        """The summary (see the module docstring); `approvals_path`: the session's
        approvals route with `{session_id}` to fill, for a turn waiting for a decision."""
        items = self._builder.turn()["items"]
        messages = [{"content": item["text"]} for item in items if item["kind"] == "text"]
        calls = [
            {
                "id": item["id"],
                "name": item["name"],
                "arguments": item["arguments"],
                "output": item["output"],
                "status": _result_status(item["output"]),
                "summary": item["summary"],
                "outcome": item["outcome"],
                "note": item["note"],
            }
            for item in items
            if item["kind"] == "tool"
        ]
        body = {
            "session_id": self.session_id,
            "status": self.status,
            "message": messages[-1]["content"] if messages else "",
            "messages": messages,
            "tool_calls": calls,
            "errors": [item["text"] for item in items if item["kind"] == "error"],
            "statistics": self._done.get("statistics"),
            "title": self._done.get("title"),
        }
        waiting = [i for i in items if i["kind"] == "approval" and i["state"] == "pending"]
        if waiting and self.status == "incomplete":
            approval = waiting[-1]
            route = (approvals_path or "").format(session_id=self.session_id)
            body["status"] = "waiting_approval"
            body["approval"] = {
                "approval_id": approval["approval_id"],
                "tool_call_id": approval["tool_call_id"],
                "tool_name": approval["tool_name"],
                "summary": approval["summary"],
                "decide": f"POST {route}/{approval['approval_id']}",
            }
        return body


def _result_status(output: str | None) -> str | None:
    if output is None:
        return None
    try:
        value = json.loads(output)
    except ValueError:
        return None
    return value.get("status") if isinstance(value, dict) else None
