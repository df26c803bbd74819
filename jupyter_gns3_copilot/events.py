"""The chat stream's events: one contract for the server (emits), the kernel client
(parses) and the widget (renders).

Each event is one SSE message `data: <json>\\n\\n` with a `type` and the `session_id`:

| type | fields |
| --- | --- |
| content | content, message_id |
| tool_call | tool_call {id, type: "function", function {name, arguments, complete?}}, message_id |
| tool_start | tool_name, tool_call_id |
| progress | tool_name, tool_call_id, message, elapsed, node (ours: long tools report progress) |
| tool_end | tool_name, tool_call_id, tool_output (JSON text); ours: summary, outcome, note |
| approval_required | approval_id, tool_call_id, tool_name, tool_input, summary (ours) |
| approval_resolved | approval_id, tool_call_id, decision (approve, reject or timeout), comment |
| error | error |
| abort | (none) |
| done | ours: statistics, title (the turn's counts and the session's title; see `DoneEvent`) |
| heartbeat | (none; sent after `heartbeat_interval` seconds of silence, render nothing) |
| check_result | result (one lab objective decided: `objectives.results.ObjectiveResult`) |
| check_summary | summary (the score: `objectives.results.CheckSummary`) |

The Objectives panel's lab events stream (`GET copilot/projects/{p}/lab/events`) is not a
chat: its messages are `LabViewEvent` (`lab_view`: the lab as the caller sees it, when the
stream opens and after each change of their progress) and `LabErrorEvent` (`lab_error`:
the lab could not be read after a change), with SSE comments as keep-alives.

Fields marked "ours" are additions to the chat API of the copilot that runs inside a GNS3
server; a client of that API that ignores unknown fields reads these events.

`tool_call` events repeat with the arguments accumulated so far; the last one for an id
has `function.complete = true`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter

from .device_outcome import Outcome
from .objectives.api import LabView
from .objectives.results import CheckSummary, ObjectiveResult


class _Event(BaseModel):
    # The attribute docstrings describe the fields in the JSON Schema (`wire_schema.py`),
    # which the front end's generated types carry as comments.
    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    session_id: str


class ContentEvent(_Event):
    type: Literal["content"] = "content"
    content: str
    message_id: str | None = None


class ToolCallFunction(BaseModel):
    name: str
    arguments: str = ""
    complete: bool | None = None


class ToolCallPayload(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: ToolCallFunction


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    tool_call: ToolCallPayload
    message_id: str | None = None


class ToolStartEvent(_Event):
    type: Literal["tool_start"] = "tool_start"
    tool_name: str
    tool_call_id: str


class ProgressEvent(_Event):
    type: Literal["progress"] = "progress"
    tool_name: str
    tool_call_id: str | None = None
    message: str
    elapsed: float | None = None
    node: str | None = None


ToolOutcome = Outcome
"""What happened to the check, not only to the delivery (a ping with 100% loss: failed)."""


class ToolEndEvent(_Event):
    type: Literal["tool_end"] = "tool_end"
    tool_name: str
    tool_call_id: str | None = None
    tool_output: str
    """What the model reads (unchanged by `summary`, `outcome` and `note`)."""
    summary: str | None = None
    """One human line: "ran `show ip` on PC1, PC2 · 2 ok"."""
    outcome: ToolOutcome | None = None
    note: str | None = None
    """For the student (a policy refusal), never the text written for the model."""


class ApprovalRequiredEvent(_Event):
    type: Literal["approval_required"] = "approval_required"
    approval_id: str
    tool_call_id: str
    tool_name: str
    tool_input: dict[str, object] = Field(default_factory=dict)
    summary: str


class ApprovalResolvedEvent(_Event):
    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    tool_call_id: str
    decision: Literal["approve", "reject", "timeout"]
    comment: str | None = None


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    error: str


class AbortEvent(_Event):
    type: Literal["abort"] = "abort"


class DoneEvent(_Event):
    type: Literal["done"] = "done"
    statistics: dict[str, int | float] | None = None
    """This turn's own counts (not the session's totals) as the statistics rules count
    them: `input_tokens`, `output_tokens`, `llm_calls`, `message_count`, and `elapsed`
    seconds on the server. Absent when no model turn ran (a refused request, a tool run)."""
    title: str | None = None
    """The session's title after the turn."""


class HeartbeatEvent(_Event):
    type: Literal["heartbeat"] = "heartbeat"


class CheckResultEvent(_Event):
    """A lab objective decided, in a lab check's stream (`session_id` names the check run)."""

    type: Literal["check_result"] = "check_result"
    result: ObjectiveResult


class CheckSummaryEvent(_Event):
    """The score of a lab check run, after its last `check_result`."""

    type: Literal["check_summary"] = "check_summary"
    summary: CheckSummary


class LabViewEvent(BaseModel):
    """The lab as the caller sees it now (what `GET copilot/projects/{p}/lab` answers), on
    the lab events stream."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: Literal["lab_view"] = "lab_view"
    project_id: str
    view: LabView


class LabErrorEvent(BaseModel):
    """On the lab events stream: the lab could not be read after a change (the stream
    goes on; the next change tries again)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: Literal["lab_error"] = "lab_error"
    project_id: str
    error: str


class LabEvent(RootModel[Annotated[LabViewEvent | LabErrorEvent, Field(discriminator="type")]]):
    """One message of the lab events stream, sent as `data: <json>` and a blank line."""


ChatEvent = Annotated[
    ContentEvent
    | ToolCallEvent
    | ToolStartEvent
    | ProgressEvent
    | ToolEndEvent
    | ApprovalRequiredEvent
    | ApprovalResolvedEvent
    | ErrorEvent
    | AbortEvent
    | DoneEvent
    | HeartbeatEvent
    | CheckResultEvent
    | CheckSummaryEvent,
    Field(discriminator="type"),
]

_adapter: TypeAdapter[ChatEvent] = TypeAdapter(ChatEvent)


def parse_event(data: str | bytes | dict[str, object]) -> ChatEvent:
    """Parse one event from its SSE `data` (JSON text) or from a dict."""
    if isinstance(data, dict):
        return _adapter.validate_python(data)
    return _adapter.validate_json(data)


def sse_message(event: BaseModel | Mapping[str, object]) -> str:
    """Format one event as an SSE message (`data: <json>\\n\\n`, non-ASCII kept)."""
    if isinstance(event, BaseModel):
        body = event.model_dump_json(exclude_none=True)
    else:
        body = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"data: {body}\n\n"
