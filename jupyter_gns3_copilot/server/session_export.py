"""A chat session exported as a notebook (nbformat 4) or as Markdown.

Built from the session's history in the OpenAI message format (`ConversationHistory`), no
server code: the handler serves it, the kernel writes it to a file.

- `to_notebook`: a first code cell `%load_ext jupyter_gns3_copilot` + `%copilot use
  "<project>"`; then, in order, a Markdown cell per user question and per assistant text,
  and a code cell `%copilot run [--tool T] DEVICE: command` per device command of the
  command tools (`run_show_commands`, `run_vpcs_commands`: one cell per command;
  `run_config_commands`: one cell per device with its lines joined by `; `, since a
  configuration line depends on the ones before it, e.g. `interface g0/0`). The cells
  carry no outputs: running them asks the devices again.
- `to_markdown`: the questions, the answers, and per device its commands and the output
  the copilot saw, in fenced blocks.

A turn that ended in an error (the history's `turn_errors`) has that error after the rest
of the turn, in both formats.

Commands that cannot be written as one `%copilot run` line (a `;` or a new line inside a
command, a device name with `:` or `,`) are kept as a Markdown note instead of a cell, and
so are a device's commands with configuration lines a `nudge` stage held back
(`devices.hidden.HIDDEN_COMMAND`): the note says how many were left out.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..agent.history import ConversationHistory, OpenAIMessage
from ..device_outcome import device_outcome
from ..devices.hidden import HIDDEN_COMMAND, left_out

EXPORT_FORMATS: tuple[str, ...] = ("ipynb", "md")
MEDIA_TYPES = {"ipynb": "application/x-ipynb+json", "md": "text/markdown; charset=utf-8"}

RUN_TOOL_OPTIONS = {
    "run_show_commands": "",
    "run_vpcs_commands": "--tool vpcs --mode automation ",
    "run_config_commands": "--tool config --mode automation ",
}
"""The command tools and the `%copilot run` options that call them again."""
_UNSAFE_FILENAME = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
_FENCE = re.compile(r"`{3,}")


@dataclass(frozen=True)
class DeviceRun:
    """Commands one command tool ran on one device, and what the copilot saw."""

    tool: str
    device: str
    commands: list[str]
    status: str | None
    output: str


@dataclass(frozen=True)
class Step:
    """One piece of the conversation: a question, an answer text or a device run."""

    kind: Literal["question", "answer", "run", "error"]
    text: str = ""
    run: DeviceRun | None = None


def conversation_steps(history: ConversationHistory) -> Iterator[Step]:
    """The conversation in order: questions, answer texts, device runs and the errors
    turns ended with (other tools, system and tool messages are left out)."""
    results = {m.tool_call_id: m for m in history.messages if m.role == "tool"}
    errors: dict[str, list[str]] = {}
    for error in history.turn_errors:
        errors.setdefault(error.message_id, []).append(error.error)
    ending: list[str] = []
    for message in history.messages:
        if message.role == "user":
            yield from (Step("error", text) for text in ending)
            ending = errors.get(message.id, [])
            if message.content.strip():
                yield Step("question", message.content)
        elif message.role == "assistant":
            if message.content.strip():
                yield Step("answer", message.content)
            for call in message.tool_calls or []:
                name = call.function.get("name", "")
                if name in RUN_TOOL_OPTIONS:
                    yield from (
                        Step("run", run=run)
                        for run in _device_runs(name, call.function, results.get(call.id))
                    )
    yield from (Step("error", text) for text in ending)


def _device_runs(
    tool: str, function: dict[str, Any], result: OpenAIMessage | None
) -> list[DeviceRun]:
    try:
        arguments = json.loads(function.get("arguments") or "{}")
        devices = [
            (str(entry["device"]), [str(command) for command in entry["commands"]])
            for entry in arguments["devices"]
        ]
    except (ValueError, KeyError, TypeError):
        return []  # a malformed call never ran
    outcomes = _outcomes(result)
    return [
        DeviceRun(tool, device, commands, *outcomes.get(device, (None, "")))
        for device, commands in devices
    ]


def _outcomes(result: OpenAIMessage | None) -> dict[str, tuple[str | None, str]]:
    """Device name -> (outcome, output or error) from a command tool's JSON result (the
    outcome in the words the cards use: `device_outcome`)."""
    if result is None:
        return {}
    try:
        entries = json.loads(result.content)
    except ValueError:
        return {}
    if not isinstance(entries, list):
        return {}
    outcomes: dict[str, tuple[str | None, str]] = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("device_name"), str):
            text = "\n".join(str(entry[key]) for key in ("output", "error") if entry.get(key))
            outcomes[entry["device_name"]] = (device_outcome(entry), text)
    return outcomes


def run_lines(run: DeviceRun) -> list[str] | None:
    """The `%copilot run` lines that repeat `run` (None: not expressible as such lines)."""
    if any(c in run.device for c in ":,\n") or any(
        ";" in c or "\n" in c or c == HIDDEN_COMMAND for c in run.commands
    ):
        return None
    head = f"%copilot run {RUN_TOOL_OPTIONS[run.tool]}{run.device}: "
    if run.tool == "run_config_commands":
        return [head + "; ".join(run.commands)]
    return [head + command for command in run.commands]


def _use_line(project_name: str, project_id: str) -> str:
    if '"' in project_name or "\\" in project_name or not project_name.isprintable():
        return f"%copilot use {project_id}"
    return f'%copilot use "{project_name}"'


def _markdown_cell(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": uuid.uuid4().hex[:16], "metadata": {}, "source": text}


def _code_cell(source: str) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": uuid.uuid4().hex[:16],
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": source,
    }


def _question(text: str) -> str:
    return "**You asked:**\n\n" + text


def _error_note(text: str) -> str:
    """A turn's error as a Markdown quote."""
    return "> **Error:** " + text.strip().replace("\n", "\n> ") + "\n"


def _run_note(run: DeviceRun) -> str:
    held = run.commands.count(HIDDEN_COMMAND)
    if held:
        return (
            f"**{run.device}** ({run.tool}): {left_out(held)}, in this stage you work "
            "the commands out yourself.\n\n" + _fenced("\n".join(run.commands))
        )
    return f"The copilot ran on **{run.device}** ({run.tool}):\n\n" + _fenced(
        "\n".join(run.commands)
    )


def to_notebook(history: ConversationHistory, project: str, project_id: str) -> dict[str, Any]:
    """The session as an nbformat 4 notebook (a JSON-compatible dict). `project` is the
    project's name (its id where the name cannot be quoted on a magic's line)."""
    title = history.title or f"Copilot session {history.thread_id}"
    cells = [
        _markdown_cell(f"# {title}\n\nExported from the GNS3 copilot (project {project})."),
        _code_cell(f"%load_ext jupyter_gns3_copilot\n{_use_line(project, project_id)}"),
    ]
    for step in conversation_steps(history):
        if step.kind == "question":
            cells.append(_markdown_cell(_question(step.text)))
        elif step.kind == "answer":
            cells.append(_markdown_cell(step.text))
        elif step.kind == "error":
            cells.append(_markdown_cell(_error_note(step.text)))
        elif step.run is not None:
            lines = run_lines(step.run)
            if lines is None:
                cells.append(_markdown_cell(_run_note(step.run)))
            else:
                cells.extend(_code_cell(line) for line in lines)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "gns3_copilot": {
                "session_id": history.thread_id,
                "project": project,
                "project_id": project_id,
            },
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _fenced(text: str, info: str = "text") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(m.group()) for m in _FENCE.finditer(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}\n"


def to_markdown(history: ConversationHistory, project: str) -> str:
    """The session as a Markdown document."""
    title = history.title or f"Copilot session {history.thread_id}"
    parts = [f"# {title}\n\nGNS3 copilot session {history.thread_id}, project {project}.\n"]
    for step in conversation_steps(history):
        if step.kind == "question":
            parts.append("## You\n\n" + step.text.strip() + "\n")
        elif step.kind == "answer":
            parts.append("## Copilot\n\n" + step.text.strip() + "\n")
        elif step.kind == "error":
            parts.append(_error_note(step.text))
        elif (run := step.run) is not None:
            status = f", {run.status}" if run.status else ""
            parts.append(
                f"**{run.device}** (`{run.tool}`{status}):\n\n"
                + _fenced("\n".join(run.commands))
                + ("\nOutput:\n\n" + _fenced(run.output) if run.output else "")
            )
    return "\n".join(parts)


def export_session(
    history: ConversationHistory, project: str, project_id: str, export_format: str
) -> tuple[str, bytes]:
    """`(file name, content)` of the session in `export_format` ("ipynb" or "md"; anything
    else raises ValueError naming the formats). `project` is the project's name."""
    if export_format == "ipynb":
        notebook = to_notebook(history, project, project_id)
        body = json.dumps(notebook, ensure_ascii=False, indent=1) + "\n"
    elif export_format == "md":
        body = to_markdown(history, project)
    else:
        raise ValueError(f"must be one of {', '.join(EXPORT_FORMATS)}, got {export_format!r}")
    return f"{export_filename(history)}.{export_format}", body.encode()


def export_filename(history: ConversationHistory) -> str:
    """A file name (without extension) from the session's title, safe on every OS."""
    name = _UNSAFE_FILENAME.sub("_", history.title or "").strip(" ._")[:100]
    return name or f"copilot-session-{history.thread_id}"
