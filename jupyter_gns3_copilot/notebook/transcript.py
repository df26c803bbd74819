"""Conversations as plain text, written while they stream (terminal IPython, `--quiet`).

`TextStream` follows a turn (`turns.TurnFollower`, or called with each event): it writes
the answer's text as it arrives, each tool call once its arguments are complete, progress
lines, each tool's result per device, errors and the outcome. `history_text` renders a
stored conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..events import (
    AbortEvent,
    ApprovalRequiredEvent,
    ApprovalResolvedEvent,
    ChatEvent,
    DoneEvent,
)
from ..mode_labels import mode_label
from ..turns import Item, Op, TurnBuilder
from .render_text import format_stats
from .turn import Turn, device_results, parse_json_text

MAX_OUTPUT_LINES = 40
APPROVAL_OUTCOMES = {
    "approve": "approved",
    "reject": "rejected: not executed",
    "timeout": "not approved in time: not executed",
}


CHAT_DECISION_HINT = (
    "Approve or Reject with the chat widget's buttons, or interrupt this cell (the change "
    "stays waiting) and run `%copilot approve [comment]` or `%copilot reject [comment]`."
)
"""How to decide a chat turn's change from a notebook (the waiting cell blocks the
kernel, so deciding from a cell needs an interrupt first)."""


def approval_prompt(summary: str, hint: str = CHAT_DECISION_HINT) -> str:
    """What a cell shows while a change waits: the plan and how to decide."""
    return f"[waiting for your approval] {summary}\n   {hint}"


class TextStream:
    """Writes a turn's events as readable text through `write` (e.g. `sys.stdout.write`).

    `follow` each event with the operations the turn's reducer gave (`turns.TurnFollower`:
    the kernel's `TurnRecorder` reduces), or call it with each event (it reduces them
    itself); `finish(turn)` writes the footer (outcome and statistics). What is written is
    read from the shared reducer's items (`turns.TurnBuilder`): text as it grows, a tool
    call once its arguments are complete, each new progress line, the tool's summary and
    result, errors. `decide` is called with a change the turn waits for, once its plan and
    `decision_hint` are written (a direct run asks on the console). `mode`: the mode id the
    turn ran in when the cell named it; the footer names it as people say it.
    """

    def __init__(
        self,
        write: Callable[[str], Any],
        *,
        flush: Callable[[], Any] | None = None,
        decision_hint: str = CHAT_DECISION_HINT,
        decide: Callable[[ApprovalRequiredEvent], None] | None = None,
        mode: str | None = None,
    ):
        self._write = write
        self._mode = mode
        self._flush = flush
        self._decision_hint = decision_hint
        self._decide = decide
        self._at_line_start = True
        self._builder = TurnBuilder()
        self._seen: dict[int, Item] = {}

    def __call__(self, event: ChatEvent) -> None:
        self.follow(event, self._builder.apply(event), self._builder)

    def follow(self, event: ChatEvent, ops: list[Op], reducer: TurnBuilder) -> None:
        """Write what `ops` (what `reducer` made of `event`) changed."""
        for op in ops:
            if op["op"] == "append":
                self._text(op["text"])
            else:
                self._item(op["index"], op["item"])
        if isinstance(event, ApprovalResolvedEvent) and not ops:
            # The rest of a turn resumed elsewhere (`%copilot approve`) starts with the
            # decision on a request this stream never saw.
            comment = f" ({event.comment})" if event.comment else ""
            self._line(f"   {APPROVAL_OUTCOMES[event.decision]}{comment}")
        elif isinstance(event, AbortEvent):
            self._line("(stopped)")
        elif isinstance(event, DoneEvent):
            self._end_line()
        if self._flush is not None:
            self._flush()
        if self._decide is not None and isinstance(event, ApprovalRequiredEvent):
            self._decide(event)

    def _item(self, index: int, item: Item) -> None:
        before = self._seen.get(index)
        self._seen[index] = item
        if item["kind"] == "error":
            self._line(f"Error: {item['text']}")
        elif item["kind"] == "approval":
            if item["state"] == "pending":
                self._line(approval_prompt(item["summary"], self._decision_hint))
            else:
                comment = f" ({item['comment']})" if item["comment"] else ""
                self._line(f"   {APPROVAL_OUTCOMES[item['state']]}{comment}")
        elif item["kind"] == "tool":
            assert before is None or before["kind"] == "tool"
            if item["complete"] and (before is None or not before["complete"]):
                arguments = f" {_compact(item['arguments'])}" if item["arguments"] else ""
                self._line(f"-> {item['name']}{arguments}")
            shown = len(before["progress"]) if before is not None else 0
            for line in item["progress"][shown:]:
                self._line(f"   ... {line['message']}")
            if item["output"] is not None and (before is None or before["output"] is None):
                if item["summary"]:
                    self._line(f"<- {item['summary']}")
                if item["note"]:
                    self._line(f"   {item['note']}")
                self._line(tool_output_text(item["name"], item["output"]))

    def finish(self, turn: Turn) -> None:
        """Write the turn's footer: `[done · Automation mode · 1,200 in / 80 out tokens · 2 model
        calls · 3.1 s]` (the mode when known)."""
        stats = turn.statistics.model_dump(exclude_none=True, exclude={"first_event", "title"})
        mode = mode_label(self._mode) if self._mode else ""
        footer = " · ".join(part for part in (turn.status, mode, format_stats(stats)) if part)
        self._line(f"[{footer}]")
        if self._flush is not None:
            self._flush()

    def _text(self, text: str) -> None:
        if text:
            self._write(text)
            self._at_line_start = text.endswith("\n")

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")
            self._at_line_start = True

    def _line(self, text: str) -> None:
        self._end_line()
        self._write(text + "\n")


def tool_output_text(tool: str, output: str) -> str:
    """A tool's result: one block per device (status, then output); a result carrying its
    own `text` rendering (e.g. get_topology) as that text; else pretty JSON."""
    value = parse_json_text(output)
    devices = device_results(value, tool)
    if not devices:
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            return "<- " + _indent(_clip(value["text"].rstrip()), "   ").lstrip()
        return "<- " + _indent(_clip(_pretty(output)), "   ").lstrip()
    lines = []
    for device in devices:
        head = f"<- {device.device_name}: {device.status}"
        if device.error:
            head += f" ({device.error})"
        lines.append(head)
        if device.blocked_info:
            lines.append(f"   {device.blocked_info}")
        if device.output.strip():
            lines.append(_indent(_clip(device.output.rstrip()), "   | "))
    return "\n".join(lines)


def history_text(history: Mapping[str, Any]) -> str:
    """A stored conversation (the history route's answer) as text; a turn that ended in
    an error (`turn_errors`) ends with it."""
    title = history.get("title") or "(untitled)"
    lines = [f"Session {history.get('thread_id', '')} · {title}"]
    errors: dict[str, list[str]] = {}
    for error in history.get("turn_errors") or []:
        errors.setdefault(str(error.get("message_id")), []).append(str(error.get("error")))
    ending: list[str] = []
    for message in history.get("messages", []):
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            lines += [f"Error: {text}" for text in ending]
            ending = errors.get(str(message.get("id")), [])
            lines += ["", "You: " + content]
        elif role == "assistant":
            if content.strip():
                lines += ["", "Copilot: " + content]
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                lines.append(f"-> {function.get('name', '')} {_compact(function.get('arguments'))}")
        elif role == "tool":
            lines.append(tool_output_text(message.get("name") or "", content))
    lines += [f"Error: {text}" for text in ending]
    return "\n".join(lines)


def _compact(arguments: Any) -> str:
    value = parse_json_text(arguments) if isinstance(arguments, str) else arguments
    if value in (None, ""):
        return "{}"
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _pretty(text: str) -> str:
    value = parse_json_text(text)
    return text if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _clip(text: str) -> str:
    lines = text.split("\n")
    if len(lines) <= MAX_OUTPUT_LINES:
        return text
    return "\n".join(
        [*lines[:MAX_OUTPUT_LINES], f"... ({len(lines) - MAX_OUTPUT_LINES} more lines)"]
    )


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))
