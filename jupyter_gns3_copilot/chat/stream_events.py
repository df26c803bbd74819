"""The chat stream's events as the turn engine yields them (`events.ChatEvent` models,
carried as they are made to the server's relay, which writes them): the model's reply
chunks and the graph's custom items translated, and the short answers of a turn that
cannot run.

Imported with the server's first stage (`server/tool_runs.py` uses `tool_end_event`):
nothing heavy at module level.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..agent.llm_errors import ModelCallError
from ..events import (
    ApprovalResolvedEvent,
    ChatEvent,
    ContentEvent,
    DoneEvent,
    ErrorEvent,
    ProgressEvent,
    ToolCallEvent,
    ToolCallPayload,
    ToolEndEvent,
    ToolStartEvent,
)
from ..tools.outcomes import read_result

if TYPE_CHECKING:
    from ..agent.approval import ApprovalDecision, ApprovalRequest
    from ..objectives.hints import ConfigurationFilter, TurnObjectives
    from .running_turn import RunningTurn

log = logging.getLogger(__name__)


def refused(session_id: str, error: str) -> tuple[ChatEvent, ChatEvent]:
    """How a turn that could not run ends: an `error` event saying why, then `done`."""
    return ErrorEvent(session_id=session_id, error=error), DoneEvent(session_id=session_id)


def copilot_off(session_id: str, objectives: TurnObjectives) -> tuple[ChatEvent, ChatEvent]:
    """How a turn ends in a stage with `hints: off` (an exam): the answer says so, no
    model is called, nothing is saved."""
    stage = objectives.stage
    text = f"The copilot is off for this stage ({stage.title}): you are on your own here."
    return ContentEvent(session_id=session_id, content=text), DoneEvent(session_id=session_id)


def resolved(request: ApprovalRequest, decision: ApprovalDecision) -> tuple[str, dict[str, Any]]:
    """The stream item announcing a decision (as the graph's custom events look)."""
    return (
        "custom",
        {
            "type": "approval_resolved",
            "approval_id": request.approval_id,
            "tool_call_id": request.tool_call_id,
            "decision": decision.decision,
            "comment": decision.comment,
        },
    )


def tool_end_event(session_id: str, data: Mapping[str, Any], *, mode: str | None) -> ToolEndEvent:
    """The `tool_end` event of a tool's result (`data`: tool_name, tool_call_id,
    tool_output, the call's arguments when known), with its reading for people
    (`tools.outcomes`); `tool_output` stays what the model reads."""
    arguments = data.get("arguments")
    reading = read_result(
        data["tool_name"],
        data["tool_output"],
        mode=mode,
        arguments=arguments if isinstance(arguments, Mapping) else None,
    )
    return ToolEndEvent(
        session_id=session_id,
        tool_name=data["tool_name"],
        tool_call_id=data.get("tool_call_id"),
        tool_output=data["tool_output"],
        summary=reading.summary,
        outcome=reading.outcome,
        note=reading.note,
    )


def reply_events(chunk: Any, turn: RunningTurn) -> list[ChatEvent]:
    """The events for one chunk of the model's reply (None: a model call starts)."""
    # LangGraph is imported on first use: this module loads with the server's first stage.
    from ..agent.graph import LLM_CALL

    if chunk is None:
        turn.stats.model_started(LLM_CALL)
        turn.accumulator.reset()
        return []
    session_id = turn.session_id
    events: list[ChatEvent] = []
    finished = bool(chunk.response_metadata.get("finish_reason"))
    if chunk.content or (finished and turn.answer_filter is not None):
        text = chunk.content if isinstance(chunk.content, str) else chunk.text
        if turn.answer_filter is not None:
            text = turn.answer_filter.feed(text or "")
            if finished:
                text += turn.answer_filter.flush()
        if text:
            events.append(
                ContentEvent(session_id=session_id, content=text, message_id=chunk.id or None)
            )
    payloads = turn.accumulator.add(chunk.tool_call_chunks) if chunk.tool_call_chunks else []
    if finished:
        payloads += turn.accumulator.finish()
    if turn.answer_filter is not None:
        payloads = _held_back(payloads, turn.answer_filter)
    events += [
        ToolCallEvent(session_id=session_id, tool_call=p, message_id=chunk.id) for p in payloads
    ]
    return events


def _held_back(
    payloads: list[ToolCallPayload], answer_filter: ConfigurationFilter
) -> list[ToolCallPayload]:
    """The tool calls as a `nudge` stage shows them (`objectives.hints`): arguments only
    once complete, their configuration lines hidden as the saved call's are (malformed
    arguments not at all)."""
    shown = []
    for payload in payloads:
        function = payload.function
        if not function.complete:
            if not function.arguments:  # the call's first payload: its name
                shown.append(payload)
            continue
        try:
            arguments = json.loads(function.arguments or "{}")
        except ValueError:
            arguments = None
        text = ""
        if isinstance(arguments, dict):
            text = json.dumps(answer_filter.arguments(arguments), ensure_ascii=False)
        function = function.model_copy(update={"arguments": text})
        shown.append(payload.model_copy(update={"function": function}))
    return shown


def custom_events(data: Mapping[str, Any], turn: RunningTurn) -> list[ChatEvent]:
    """The events for one item of the graph's custom stream (tools' start, progress and
    end, a decision, the iteration limit); the turn records results and errors."""
    kind = data.get("type")
    session_id = turn.session_id
    if kind == "tool_start":
        return [ToolStartEvent(session_id=session_id, **_fields(data))]
    if kind == "progress":
        return [ProgressEvent(session_id=session_id, **_fields(data))]
    if kind == "tool_end":
        turn.tool_results[data["tool_call_id"]] = data["tool_output"]
        return [tool_end_event(session_id, data, mode=turn.mode)]
    if kind == "approval_resolved":
        return [ApprovalResolvedEvent(session_id=session_id, **_fields(data))]
    if kind == "iteration_limit":
        turn.errors.append(data["message"])
        return [ErrorEvent(session_id=session_id, error=data["message"])]
    return []


def _fields(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key != "type" and value is not None}


def invalid_parameters(exc: Exception) -> str:
    """The error text of a turn's options that failed their checks."""
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()
        )
        return f"Invalid chat parameters: {problems}."
    return str(exc)


def error_text(exc: BaseException) -> str:
    """The error text of a turn that failed (a model error says itself; anything else is
    logged with its traceback)."""
    if isinstance(exc, ModelCallError):
        return str(exc)
    log.error("Chat turn failed", exc_info=exc)
    return f"The copilot failed: {type(exc).__name__}: {exc}"
