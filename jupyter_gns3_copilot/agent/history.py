"""Conversation history in the OpenAI message format, and the repair of unanswered tool calls.

`to_openai_message` converts a LangChain message into that format: every message gets an
id (generated when missing), its timestamp stays in `metadata.created_at` (no top-level
`created_at`; `{}` for messages without metadata), tool calls become
`{"id", "type": "function", "function": {"name", "arguments"}}` with the arguments as a
JSON string, and non-string content becomes JSON text. `from_openai_message` goes the
other way.

`unanswered_tool_calls` / `placeholder_results` keep a history valid for the model API:
an assistant message's tool calls must each be followed by a tool message. A placeholder's
id is derived from its call's id (`placeholder_id`), so the repair a history read shows
(`with_placeholder_results`, nothing written) and the one the session's next turn writes
are the same messages.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import BaseModel, Field

Role = Literal["user", "assistant", "system", "tool"]


class OpenAIToolCall(BaseModel):
    """One tool call of an assistant message."""

    id: str
    type: Literal["function"] = "function"
    function: dict[str, str]
    """`{"name": str, "arguments": str}` (arguments as JSON text)."""


class OpenAIMessage(BaseModel):
    """One message in the OpenAI-compatible history format."""

    id: str
    role: Role
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[OpenAIToolCall] | None = None


class TurnError(BaseModel):
    """An error a turn ended with: `message_id` is the id of the user message that started
    the turn, `error` what its `error` event said."""

    message_id: str
    error: str
    created_at: str | None = None


class ConversationHistory(BaseModel):
    """A session's history, as the history route answers it.

    `llm_calls` is the session's total count of model calls (title model excluded).
    `turn_errors` (a later addition to the answer) lists, in order, the errors of the turns
    whose user message is among `messages`: a turn that failed shows as failed, not as
    a question without an answer.
    """

    thread_id: str
    title: str | None = None
    messages: list[OpenAIMessage]
    created_at: datetime | None = None
    updated_at: datetime | None = None
    llm_calls: int = 0
    turn_errors: list[TurnError] = Field(default_factory=list)


def content_text(content: Any) -> str:
    """Message content as text: strings as they are, a list of text blocks joined,
    anything else as JSON (non-ASCII kept)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")
        for block in content
    ):
        return "".join(block if isinstance(block, str) else block["text"] for block in content)
    return json.dumps(content, ensure_ascii=False, indent=2)


def _arguments_text(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def openai_tool_calls(message: AIMessage) -> list[OpenAIToolCall]:
    """The message's tool calls in OpenAI form (malformed ones with their raw arguments)."""
    calls = [
        OpenAIToolCall(
            id=call["id"] or "",
            function={"name": call["name"], "arguments": _arguments_text(call["args"])},
        )
        for call in message.tool_calls
    ]
    calls += [
        OpenAIToolCall(
            id=call.get("id") or "",
            function={"name": call.get("name") or "", "arguments": call.get("args") or ""},
        )
        for call in message.invalid_tool_calls
    ]
    return calls


def message_metadata(message: BaseMessage) -> dict[str, Any]:
    """The message's `metadata` (timestamps etc.), `{}` when it has none."""
    metadata = getattr(message, "metadata", None)
    return dict(metadata) if isinstance(metadata, Mapping) else {}


def to_openai_message(message: BaseMessage) -> OpenAIMessage:
    """One LangChain message in the OpenAI message format."""
    fields: dict[str, Any] = {
        "id": message.id or str(uuid.uuid4()),
        "content": content_text(message.content),
        "metadata": message_metadata(message),
    }
    if isinstance(message, HumanMessage):
        return OpenAIMessage(role="user", **fields)
    if isinstance(message, SystemMessage):
        return OpenAIMessage(role="system", **fields)
    if isinstance(message, ToolMessage):
        return OpenAIMessage(
            role="tool", name=message.name, tool_call_id=message.tool_call_id, **fields
        )
    if isinstance(message, AIMessage):
        return OpenAIMessage(
            role="assistant", tool_calls=openai_tool_calls(message) or None, **fields
        )
    raise TypeError(f"Cannot convert a {type(message).__name__} to the OpenAI format")


def to_openai_messages(messages: Sequence[BaseMessage]) -> list[OpenAIMessage]:
    """Every message of `messages` in the OpenAI message format, in order."""
    return [to_openai_message(message) for message in messages]


def with_readings(messages: Sequence[OpenAIMessage]) -> list[OpenAIMessage]:
    """`messages` with each tool result's reading for people (`tools.outcomes.read_result`:
    `{"summary", "outcome", "note"}`, what its `tool_end` event carried) in its metadata
    under `"reading"`, so a stored conversation reads as it streamed: a refusal's note
    names the mode of its turn (kept in the result's metadata as `"mode"`)."""
    from ..tools.outcomes import read_result

    arguments: dict[str, dict[str, Any]] = {}
    read: list[OpenAIMessage] = []
    for message in messages:
        for call in message.tool_calls or []:
            arguments[call.id] = _parsed_arguments(call.function.get("arguments")) or {}
        if message.role == "tool" and message.name:
            reading = read_result(
                message.name,
                message.content,
                mode=message.metadata.get("mode"),
                arguments=arguments.get(message.tool_call_id or ""),
            )
            metadata = {**message.metadata, "reading": dataclasses.asdict(reading)}
            message = message.model_copy(update={"metadata": metadata})
        read.append(message)
    return read


def turn_errors_of(
    messages: Sequence[OpenAIMessage], stored: Mapping[str, Sequence[Mapping[str, Any]]]
) -> list[TurnError]:
    """The stored turn errors (the state's `turn_errors`) of the user messages among
    `messages`, in their order."""
    return [
        TurnError(
            message_id=message.id,
            error=str(entry.get("error", "")),
            created_at=entry.get("created_at"),
        )
        for message in messages
        if message.role == "user"
        for entry in stored.get(message.id, ())
    ]


def _parsed_arguments(arguments: Any) -> dict[str, Any] | None:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        parsed = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None


def from_openai_message(message: OpenAIMessage | Mapping[str, Any]) -> BaseMessage:
    """A LangChain message from the OpenAI format (the inverse of `to_openai_message`)."""
    msg = message if isinstance(message, OpenAIMessage) else OpenAIMessage.model_validate(message)
    common: dict[str, Any] = {"content": msg.content, "id": msg.id, "metadata": msg.metadata}
    if msg.role == "user":
        return HumanMessage(**common)
    if msg.role == "system":
        return SystemMessage(**common)
    if msg.role == "tool":
        return ToolMessage(tool_call_id=msg.tool_call_id or "", name=msg.name, **common)
    tool_calls, invalid = [], []
    for call in msg.tool_calls or []:
        name, arguments = call.function.get("name", ""), call.function.get("arguments")
        args = _parsed_arguments(arguments)
        if args is None:
            invalid.append({"name": name, "args": arguments, "id": call.id, "error": None})
        else:
            tool_calls.append({"name": name, "args": args, "id": call.id, "type": "tool_call"})
    return AIMessage(tool_calls=tool_calls, invalid_tool_calls=invalid, **common)


class PendingCall(BaseModel):
    """A tool call of the last assistant message that has no result yet."""

    id: str
    name: str


def last_ai(messages: Sequence[BaseMessage]) -> AIMessage | None:
    """The last message, when it is the model's (None otherwise or for no messages)."""
    last = messages[-1] if messages else None
    return last if isinstance(last, AIMessage) else None


def requested_calls(message: AIMessage) -> list[PendingCall]:
    """Every tool call the message asks for, well-formed or not, in order."""
    return [PendingCall(id=call["id"] or "", name=call["name"]) for call in message.tool_calls] + [
        PendingCall(id=call.get("id") or "", name=call.get("name") or "")
        for call in message.invalid_tool_calls
    ]


def unanswered_tool_calls(messages: Sequence[BaseMessage]) -> list[PendingCall]:
    """The tool calls of the last assistant message that no tool message answers.

    Only the end of the history is looked at: that is where a crash or an interrupted
    turn leaves them (every turn starts with this check, so earlier ones were repaired).
    """
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
            continue
        if isinstance(message, AIMessage):
            return [call for call in requested_calls(message) if call.id not in answered]
        return []
    return []


def placeholder_id(call_id: str) -> str | None:
    """The id of the placeholder result answering call `call_id` (None for a call without
    an id: the message then gets a generated one)."""
    return f"{call_id}-result" if call_id else None


def placeholder_results(
    calls: Sequence[PendingCall],
    content: str,
    known: Mapping[str, str] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> list[ToolMessage]:
    """Tool messages answering `calls`: the `known` result by call id, else `content`."""
    known = known or {}
    return [
        ToolMessage(
            content=known.get(call.id, content),
            tool_call_id=call.id,
            name=call.name,
            id=placeholder_id(call.id),
            metadata=dict(metadata or {}),
        )
        for call in calls
    ]


def with_placeholder_results(messages: Sequence[BaseMessage], content: str) -> list[BaseMessage]:
    """`messages`, followed by a `content` result for each tool call the last assistant
    message left unanswered: the history as the next turn will repair it, for reading a
    session whose turn was cut short by a crash. Nothing is written; the placeholders
    carry the assistant message's metadata (its `created_at`), so reads are stable."""
    pending = unanswered_tool_calls(messages)
    if not pending:
        return list(messages)
    asking = next(m for m in reversed(messages) if isinstance(m, AIMessage))
    return [*messages, *placeholder_results(pending, content, metadata=message_metadata(asking))]
