"""A conversation as plain text or Markdown: for terminal IPython, and for notebooks viewed
where the chat widget cannot render (nbconvert without widget state, GitHub).

Input is a list of `turns.TurnRecord` (plain dicts): each turn has `user`, `status` (running,
done, aborted, error, interrupted), `items` (text, tool, error and approval items; tool
items with the server's summary, outcome and note) and `stats` (title, input_tokens,
output_tokens, llm_calls, elapsed).

The Markdown is safe to render as HTML: text outside code has `<` and `&` escaped (nbconvert
does not sanitize Markdown outputs), and code fences are longer than any backtick run they
hold. Long tool outputs are clipped to `MAX_OUTPUT_LINES` lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..device_outcome import device_outcome
from ..mode_labels import mode_label

__all__ = ["device_results", "format_stats", "render_markdown", "render_plain"]

MAX_OUTPUT_LINES = 60

_STATUS_NOTES = {
    "running": "still running",
    "aborted": "stopped by the user",
    "interrupted": "interrupted before the copilot finished",
}
_DEVICE_KEYS = {"device_name", "status"}


def device_results(output: str | None) -> list[dict[str, Any]] | None:
    """The per-device results in a tool output (a JSON list of objects with `device_name`
    and `status`), or None when the output is something else."""
    value = _parse_json(output)
    if (
        isinstance(value, list)
        and value
        and all(isinstance(entry, dict) and entry.keys() >= _DEVICE_KEYS for entry in value)
    ):
        return value
    return None


def format_tokens(tokens_in: int, tokens_out: int, llm_calls: int | None) -> str:
    """`8,500 in / 1,200 out tokens`; "tokens not reported" when model calls were made but
    reported no usage at all (a call cut short by Stop, or an endpoint that sends no usage),
    rather than a misleading 0."""
    if tokens_in or tokens_out or not llm_calls:
        return f"{tokens_in:,} in / {tokens_out:,} out tokens"
    return "tokens not reported"


def format_calls(llm_calls: int) -> str:
    """`1 model call`, `2 model calls`."""
    return f"{llm_calls} model call{'' if llm_calls == 1 else 's'}"


def format_stats(stats: Mapping[str, Any]) -> str:
    """A turn's footer: `Title · 8,500 in / 1,200 out tokens · 2 model calls · 4.2 s`."""
    parts: list[str] = []
    if stats.get("title"):
        parts.append(str(stats["title"]))
    if stats.get("input_tokens") is not None or stats.get("output_tokens") is not None:
        parts.append(
            format_tokens(
                int(stats.get("input_tokens") or 0),
                int(stats.get("output_tokens") or 0),
                stats.get("llm_calls"),
            )
        )
    if stats.get("llm_calls") is not None:
        parts.append(format_calls(int(stats["llm_calls"])))
    if stats.get("elapsed") is not None:
        parts.append(_format_seconds(float(stats["elapsed"])))
    return " · ".join(parts)


def render_plain(
    turns: Sequence[Mapping[str, Any]],
    *,
    project: str = "",
    title: str = "",
    mode: str | None = None,
) -> str:
    """The conversation as plain text, tool results as indented per-device blocks;
    `mode` (a mode id, None: not known) is named in the heading as people say it."""
    lines = [_heading(project, title, mode)]
    if not turns:
        lines.append("(no messages yet)")
    for turn in turns:
        lines.append("")
        if turn.get("user"):
            lines.append("You: " + _indent(turn["user"], "     ").lstrip())
        lines.append("Copilot:")
        for item in turn.get("items", []):
            lines.extend(_plain_item(item))
        note = _STATUS_NOTES.get(turn.get("status", ""))
        if note:
            lines.append(f"  ({note})")
        footer = format_stats(turn.get("stats") or {})
        if footer:
            lines.append(f"  [{footer}]")
    return "\n".join(lines)


def render_markdown(
    turns: Sequence[Mapping[str, Any]],
    *,
    project: str = "",
    title: str = "",
    mode: str | None = None,
) -> str:
    """The conversation as Markdown, tool results as per-device tables and code blocks;
    `mode` as for `render_plain`."""
    blocks = [f"**{_escape_text(_heading(project, title, mode))}**"]
    if not turns:
        blocks.append("*No messages yet.*")
    for turn in turns:
        blocks.append("---")
        if turn.get("user"):
            quoted = "\n".join("> " + line for line in _escape_text(turn["user"]).split("\n"))
            blocks.append("**You**\n\n" + quoted)
        blocks.append("**Copilot**")
        for item in turn.get("items", []):
            blocks.extend(_markdown_item(item))
        note = _STATUS_NOTES.get(turn.get("status", ""))
        if note:
            blocks.append(f"*({note})*")
        footer = format_stats(turn.get("stats") or {})
        if footer:
            blocks.append(f"<sub>{_escape_text(footer)}</sub>")
    return "\n\n".join(blocks) + "\n"


def _heading(project: str, title: str, mode: str | None) -> str:
    heading = "GNS3 Copilot"
    if project:
        heading += f" · project {project}"
    if title:
        heading += f" · {title}"
    if mode:
        heading += f" · {mode_label(mode)}"
    return heading


def _plain_item(item: Mapping[str, Any]) -> list[str]:
    kind = item.get("kind")
    if kind == "text":
        return [_indent(item["text"].strip(), "  ")]
    if kind == "error":
        return [_indent("Error: " + item["text"], "  ")]
    if kind == "approval":
        return [f"  [approval] {item.get('summary', '')}: {_decision(item)}"]
    lines = [f"  [tool] {item.get('name', '')} {_compact_arguments(item.get('arguments', ''))}"]
    if item.get("summary"):
        lines.append(f"    {item['summary']}{_outcome_suffix(item)}")
    if item.get("note"):
        lines.append(_indent(str(item["note"]), "    "))
    if _refused_with_note(item):
        return lines
    output = item.get("output")
    if output is None:
        lines.append(f"    ({_missing_result(item)})")
        return lines
    devices = device_results(output)
    if devices is None:
        lines.append(_indent(_clip(_pretty(output)), "    "))
        return lines
    for device in devices:
        head = f"    {device['device_name']}: {device_outcome(device)}"
        if device.get("error"):
            head += f" - {device['error']}"
        lines.append(head)
        if device.get("blocked_info"):
            lines.append(_indent(str(device["blocked_info"]), "      "))
        if device.get("output"):
            lines.append(_indent(_clip(str(device["output"])), "      | "))
    return lines


def _markdown_item(item: Mapping[str, Any]) -> list[str]:
    kind = item.get("kind")
    if kind == "text":
        return [_escape_markdown_html(item["text"].strip())]
    if kind == "error":
        return ["> **Error:** " + _escape_text(item["text"]).replace("\n", "\n> ")]
    if kind == "approval":
        return [f"**Approval** {_escape_text(str(item.get('summary', '')))}: {_decision(item)}"]
    head = f"**Tool call** `{item.get('name', '')}`"
    if item.get("summary"):
        head += f" · {_escape_text(str(item['summary']))}{_outcome_suffix(item)}"
    blocks = [head]
    if item.get("note"):
        blocks.append(f"*{_escape_text(str(item['note']))}*")
    if _refused_with_note(item):
        return blocks
    if item.get("arguments"):
        blocks.append(_fence(_pretty(item["arguments"]), "json"))
    output = item.get("output")
    if output is None:
        blocks.append(f"*({_missing_result(item)})*")
        return blocks
    devices = device_results(output)
    if devices is None:
        is_json = _parse_json(output) is not None
        blocks.append("Result:\n\n" + _fence(_clip(_pretty(output)), "json" if is_json else ""))
        return blocks
    rows = ["| Device | Status | Note |", "| --- | --- | --- |"]
    for device in devices:
        note = device.get("error") or device.get("blocked_info") or ""
        cells = (device["device_name"], device_outcome(device), note)
        rows.append("| " + " | ".join(_table_cell(str(cell)) for cell in cells) + " |")
    blocks.append("\n".join(rows))
    for device in devices:
        if device.get("output"):
            name = _escape_text(str(device["device_name"]))
            blocks.append(f"{name}:\n\n" + _fence(_clip(str(device["output"]))))
    return blocks


_DECISIONS = {
    "pending": "waiting",
    "approve": "approved",
    "reject": "rejected",
    "timeout": "no answer in time",
}


def _decision(item: Mapping[str, Any]) -> str:
    decision = _DECISIONS.get(str(item.get("state")), str(item.get("state")))
    comment = item.get("comment")
    return f"{decision} ({comment})" if comment else decision


def _refused_with_note(item: Mapping[str, Any]) -> bool:
    """A refusal explained to the student: its result (written for the model) is not shown."""
    return item.get("outcome") == "refused" and bool(item.get("note"))


def _outcome_suffix(item: Mapping[str, Any]) -> str:
    outcome = item.get("outcome")
    return f" ({outcome})" if outcome and outcome != "ok" else ""


def _missing_result(tool: Mapping[str, Any]) -> str:
    return "stopped before a result" if tool.get("state") == "stopped" else "no result yet"


def _parse_json(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _pretty(text: str) -> str:
    value = _parse_json(text)
    if value is None:
        return text
    return json.dumps(value, indent=2, ensure_ascii=False)


def _compact_arguments(text: str) -> str:
    value = _parse_json(text)
    if value is None:
        return text
    return json.dumps(value, ensure_ascii=False)


def _clip(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= MAX_OUTPUT_LINES:
        return "\n".join(lines)
    hidden = len(lines) - MAX_OUTPUT_LINES
    return "\n".join([*lines[:MAX_OUTPUT_LINES], f"... ({hidden} more lines)"])


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


def _format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _fence(text: str, language: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _escape_text(text: str) -> str:
    """Text shown as is in Markdown: HTML and Markdown punctuation made literal."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]#|~])", r"\\\1", text)


def _table_cell(text: str) -> str:
    return _escape_text(text).replace("\n", " ")


# A fenced code block (to its closing fence or the end) or an inline code span.
_CODE = re.compile(
    r"(^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\2[ \t]*$|\Z)|(`+)[^`].*?\3)", re.M | re.S
)


def _escape_markdown_html(text: str) -> str:
    """Markdown from the model, with raw HTML made literal outside code spans and blocks."""
    parts: list[str] = []
    position = 0
    for match in _CODE.finditer(text):
        parts.append(_escape_html(text[position : match.start()]))
        parts.append(match.group(0))
        position = match.end()
    parts.append(_escape_html(text[position:]))
    return "".join(parts)


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")
