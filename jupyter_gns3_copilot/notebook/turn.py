"""The result of one copilot turn (`Turn`), built from its stream of events.

`TurnRecorder.add(event)` takes the events of a turn in order; `finish()` gives the
`Turn`: the final text, every tool call with its arguments and result, the results per
device (`turn.tool_results["PC1"]`), errors, the outcome, the statistics and the session.
Everything is read from the shared reducer's turn (`turns.TurnBuilder`, kept as
`Turn.record`); the statistics are the ones the server's `done` event carries.
A `%copilot` magic returns it, so the next cell can use it::

    turn = %copilot why can't PC1 ping PC2?
    turn.tool_results["PC1"].output
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..device_outcome import DELIVERY_OUTCOMES, Outcome, combine, device_outcome
from ..events import ApprovalRequiredEvent, ApprovalResolvedEvent, ChatEvent, HeartbeatEvent
from ..turns import Op, TurnBuilder
from .cell_display import ShownInCell
from .render_text import format_calls, format_tokens

TurnStatus = Literal["done", "aborted", "error", "incomplete"]
"""done: the turn finished; aborted: it was stopped; error: it reported an error;
incomplete: the stream ended (or was left) before its `done` event."""

_PREVIEW = 200


class DeviceToolResult(BaseModel):
    """What one device answered in a tool call (`device_name`, `status`, `output`, ...).

    The fields of the tools' per-device entries (`console.DeviceResult` plus the command
    policy's `blocked_commands` / `blocked_info` and the `checks` read from pings and
    traces); `tool` names the tool that produced it. `status` is the device's outcome in
    the words the cards' badges use (`device_outcome`): `ok`, `partial`, `failed` (also a
    ping that ran but got no answer) or `refused` (the mode or the command policy sent
    nothing); `delivery` is how the console delivered the commands (`success`,
    `partial_success`, `failed`: the tool result's own `status`). `str(result)` is the
    device's output.
    """

    model_config = ConfigDict(extra="allow")

    device_name: str
    status: Outcome
    delivery: str = ""
    output: str = ""
    error: str | None = None
    commands: list[str] = Field(default_factory=list)
    blocked_info: str | None = None
    checks: list[dict[str, Any]] = Field(default_factory=list)
    tool: str = ""

    @property
    def ok(self) -> bool:
        """Whether every command ran and every check passed (status "ok")."""
        return self.status == "ok"

    def __str__(self) -> str:
        return self.output

    def __repr__(self) -> str:
        head = f"{self.device_name}: {self.status}"
        problems = [
            str(check.get("detail") or check.get("problem"))
            for check in self.checks
            if check.get("outcome") != "ok"
        ]
        if self.error or problems:
            head += f" ({'; '.join([*([self.error] if self.error else []), *problems])})"
        if self.blocked_info:
            head += f" [{self.blocked_info}]"
        return f"{head}\n{self.output.rstrip()}" if self.output.strip() else head


class ToolCallRecord(BaseModel):
    """One tool call of the turn: what was asked and what came back.

    `arguments` is the parsed JSON object (the raw text if it is not JSON); `output` the
    tool's result parsed from JSON (the raw text if it is not JSON; None if the tool never
    ended); `status` the result's own `status` in outcome words (`ok`, `partial`, `failed`,
    `refused`; per-device results: their outcomes combined; None when it has none);
    `progress` the progress messages, in order; `summary`,
    `outcome` (ok, partial, failed, refused: what happened to the check) and `note` the
    server's reading of the result.
    """

    id: str
    name: str
    arguments: Any = None
    output: Any = None
    status: str | None = None
    progress: list[str] = Field(default_factory=list)
    summary: str | None = None
    outcome: str | None = None
    note: str | None = None

    def devices(self) -> list[DeviceToolResult]:
        """The per-device results in `output` (empty for other kinds of results)."""
        return device_results(self.output, self.name)


class TurnStatistics(BaseModel):
    """The turn's costs (from the server's `done` event) and timings measured by the
    client. Token counts and model calls are None when the server did not report them
    (a direct tool run, a turn cut off before its end)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    llm_calls: int | None = None
    elapsed: float = 0.0
    """Seconds from sending the request to the end of the stream."""
    first_event: float | None = None
    """Seconds from sending the request to the first event."""
    title: str | None = None
    """The session's title after the turn."""


class Turn(ShownInCell, BaseModel):
    """One turn of the copilot: the message, what came back, how it ended (module doc)."""

    message: str
    session_id: str
    project_id: str = ""
    status: TurnStatus = "incomplete"
    messages: list[str] = Field(default_factory=list)
    """The text of every assistant message of the turn, in order."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    statistics: TurnStatistics = Field(default_factory=TurnStatistics)
    events: list[ChatEvent] = Field(default_factory=list, repr=False)
    """Every event of the turn except heartbeats."""
    record: dict[str, Any] = Field(default_factory=dict, repr=False)
    """The turn in the shared turn model (`turns.TurnRecord`: user, status, items, stats)."""
    _shown_in: int | None = PrivateAttr(default=None)

    @property
    def text(self) -> str:
        """The final answer: the text of the turn's last assistant message."""
        return self.messages[-1] if self.messages else ""

    @property
    def ok(self) -> bool:
        """Whether the turn finished without error and was not stopped."""
        return self.status == "done"

    @property
    def tool_results(self) -> dict[str, DeviceToolResult]:
        """Each device's latest result in this turn, by device name."""
        results: dict[str, DeviceToolResult] = {}
        for call in self.tool_calls:
            for device in call.devices():
                results[device.device_name] = device
        return results

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        stats = self.statistics
        lines = [f"Turn {self.status} · session {self.session_id} · {_stats_text(stats)}"]
        if self.text:
            lines.append(f"  text: {_preview(self.text)!r}")
        for call in self.tool_calls:
            devices = ", ".join(d.device_name for d in call.devices())
            suffix = f" on {devices}" if devices else ""
            status = f" -> {call.status}" if call.status else ""
            lines.append(f"  tool call: {call.name}{suffix}{status}")
        if self.tool_results:
            lines.append(f"  tool_results: {', '.join(self.tool_results)}")
        lines.extend(f"  error: {error}" for error in self.errors)
        return "\n".join(lines)

    def _display_bundle(self) -> dict[str, Any]:
        return {"text/plain": repr(self), "text/markdown": self._repr_markdown_()}

    def _repr_markdown_(self) -> str:
        from .render_text import format_stats

        lines = [f"**Turn {self.status}** · session `{self.session_id}`"]
        footer = format_stats(self.statistics.model_dump(exclude_none=True))
        if footer:
            lines[0] += f" · {footer}"
        if self.tool_results:
            lines += ["", "| Device | Status | Tool |", "| --- | --- | --- |"]
            lines += [
                f"| {r.device_name} | {r.status} | {r.tool} |" for r in self.tool_results.values()
            ]
        lines += [f"\n> **Error:** {error}" for error in self.errors]
        return "\n".join(lines)


def _stats_text(stats: TurnStatistics) -> str:
    parts = []
    if stats.llm_calls is not None:
        parts.append(format_calls(stats.llm_calls))
    if stats.input_tokens is not None and stats.output_tokens is not None:
        parts.append(format_tokens(stats.input_tokens, stats.output_tokens, stats.llm_calls))
    parts.append(f"{stats.elapsed:.1f} s")
    return ", ".join(parts)


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."


def parse_json_text(text: str | None) -> Any:
    """`text` parsed as JSON, or `text` itself when it is not JSON."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def device_results(output: Any, tool: str = "") -> list[DeviceToolResult]:
    """The per-device entries (objects with `device_name` and `status`) of a tool output."""
    if not isinstance(output, list):
        return []
    entries = [e for e in output if isinstance(e, dict) and {"device_name", "status"} <= e.keys()]
    if len(entries) != len(output):
        return []
    return [
        DeviceToolResult.model_validate(
            {
                **{key: value for key, value in entry.items() if key != "outcome"},
                "status": device_outcome(entry),
                "delivery": entry["status"],
                "tool": tool,
            }
        )
        for entry in entries
    ]


_RESULT_OUTCOMES: dict[str, Outcome] = {
    **DELIVERY_OUTCOMES,
    "error": "failed",
    "aborted": "failed",
    "not_executed": "failed",
    "refused": "refused",
    "declined": "refused",
}
"""A whole result's own `status` in outcome words."""


def _result_status(output: Any, tool: str) -> str | None:
    if isinstance(output, dict) and isinstance(output.get("status"), str):
        return _RESULT_OUTCOMES.get(output["status"], output["status"])
    devices = device_results(output, tool)
    if not devices:
        return None
    return combine(device.status for device in devices)


class TurnRecorder:
    """Builds a `Turn` from its events (`add` each, in order, then `finish`).

    Its `builder` is the turn's one reduction in the kernel: what shows the turn while it
    runs (the chat widget, the text transcript) follows it (`turns.TurnFollower`) with the
    operations `add` returns, instead of reducing the events again.
    """

    def __init__(self, message: str, session_id: str, project_id: str = "") -> None:
        self.turn = Turn(message=message, session_id=session_id, project_id=project_id)
        self.builder = TurnBuilder(message)
        self._started = time.monotonic()
        self.waiting_approval: ApprovalRequiredEvent | None = None
        """The approval the turn waits for now (None: not waiting)."""

    def add(self, event: ChatEvent) -> list[Op]:
        """Take one event into account; returns the operations it gave (`turns.TurnBuilder`)."""
        turn = self.turn
        if turn.statistics.first_event is None:
            turn.statistics.first_event = round(time.monotonic() - self._started, 4)
        if isinstance(event, HeartbeatEvent):
            return []
        turn.events.append(event)
        if event.session_id:
            turn.session_id = event.session_id
        ops = self.builder.apply(event)
        if isinstance(event, ApprovalRequiredEvent):
            self.waiting_approval = event
        elif isinstance(event, ApprovalResolvedEvent):
            self.waiting_approval = None
        return ops

    def finish(self, *, aborted: bool = False) -> Turn:
        """The turn (`aborted`: the client stopped it, whatever the events said; the builder
        is left as the events made it, so a follower shows the turn as they said)."""
        self.builder.finish()
        record = self.builder.turn()
        if aborted:  # aborted comes before every other status
            record["status"] = "aborted"
        turn = self.turn
        turn.record = dict(record)
        turn.messages = [i["text"] for i in record["items"] if i["kind"] == "text"]
        turn.errors = [i["text"] for i in record["items"] if i["kind"] == "error"]
        turn.tool_calls = [_call_record(i) for i in record["items"] if i["kind"] == "tool"]
        status = record["status"]
        turn.status = "incomplete" if status == "interrupted" or status == "running" else status
        stats = record["stats"]
        turn.statistics.input_tokens = stats.get("input_tokens")
        turn.statistics.output_tokens = stats.get("output_tokens")
        turn.statistics.llm_calls = stats.get("llm_calls")
        turn.statistics.title = stats.get("title")
        turn.statistics.elapsed = round(time.monotonic() - self._started, 4)
        return turn


def _call_record(item: Any) -> ToolCallRecord:
    output = parse_json_text(item["output"])
    return ToolCallRecord(
        id=item["id"],
        name=item["name"],
        arguments=parse_json_text(item["arguments"]) if item["arguments"] else None,
        output=output,
        status=_result_status(output, item["name"]) if item["output"] is not None else None,
        progress=[line["message"] for line in item["progress"]],
        summary=item["summary"],
        outcome=item["outcome"],
        note=item["note"],
    )
