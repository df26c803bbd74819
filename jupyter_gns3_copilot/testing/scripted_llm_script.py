"""Scripts for the scripted model server: the replies, their builders and the JSON loader.

A script is an ordered list of replies; `ScriptedLLM` (in `scripted_llm`) answers each chat
completions request with the next reply. This module only describes replies and turns them
into OpenAI wire objects; it knows nothing about HTTP. The JSON script format is documented
in the `scripted_llm` module docstring.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    model_validator,
)

DEFAULT_HTML_PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)
"""What a reverse proxy in front of a dead model server typically answers."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
}
_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
_DEFAULT_ERROR_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    403: "You are not allowed to use this model.",
    404: "The model does not exist or you do not have access to it.",
    429: "Rate limit reached for requests. Please try again later.",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Strict):
    """Token counts reported for one reply (`total_tokens` defaults to their sum)."""

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    total_tokens: int | None = Field(default=None, ge=0)

    def wire(self) -> dict[str, int]:
        """The `usage` object as the API sends it."""
        total = self.total_tokens
        if total is None:
            total = self.prompt_tokens + self.completion_tokens
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": total,
        }


class When(_Strict):
    """Conditions a request must meet for a reply to answer it (all given ones must hold).

    `last_message` / `any_message`: a regular expression searched (`re.search`) in the text
    of the request's last message / of any of its messages (system prompt included);
    `tools`: whether the request offers tools (a title request usually does not);
    `model`: the exact model name requested.
    """

    last_message: str | None = None
    any_message: str | None = None
    tools: bool | None = None
    model: str | None = None

    def matches(self, body: Mapping[str, Any]) -> bool:
        """Whether the chat completions request `body` meets every condition."""
        texts = [_message_text(message) for message in body.get("messages") or []]
        if self.last_message is not None and not (
            texts and re.search(self.last_message, texts[-1])
        ):
            return False
        if self.any_message is not None and not any(
            re.search(self.any_message, text) for text in texts
        ):
            return False
        if self.tools is not None and bool(body.get("tools")) != self.tools:
            return False
        return self.model is None or body.get("model") == self.model


class _Reply(_Strict):
    first_byte_delay: float = Field(default=0.0, ge=0)
    """Seconds to wait before sending anything (status line included)."""
    when: When | None = None
    """Answer only a request meeting these conditions (see `When`); None answers any."""


class ToolCall(_Strict):
    """One tool call in a reply; its JSON arguments are streamed in `chunks` fragments."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """The arguments object, or a raw string sent as is (e.g. to test malformed JSON)."""
    id: str | None = None
    """The tool call id; a random `call_...` id when omitted."""
    chunks: int = Field(default=3, ge=1)

    def arguments_text(self) -> str:
        """The arguments exactly as sent (compact JSON, like the real API)."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


class StreamError(_Strict):
    """An error event that ends a streamed answer midway, as a gateway sends when its
    upstream dies during the answer (LiteLLM: `data: {"error": {message, type, param,
    code}}`, `code` a status as a string, and the stream ends without `data: [DONE]`)."""

    message: str = (
        "litellm.APIConnectionError: APIConnectionError: OpenAIException - peer closed "
        "connection without sending complete message body (incomplete chunked read)"
    )
    error_type: str | None = None
    """The event's `type` (LiteLLM 1.108 sends null)."""
    code: str = "500"

    def body(self) -> dict[str, Any]:
        """The event's JSON object, `{"error": {...}}` (also the body of a non-streamed
        answer)."""
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": None,
                "code": self.code,
            }
        }

    def status(self) -> int:
        """The HTTP status a non-streamed request gets instead (`code`, else 500)."""
        return int(self.code) if self.code.isdigit() and 400 <= int(self.code) <= 599 else 500


class Completion(_Reply):
    """A successful reply: assistant text and/or tool calls, streamed or not.

    Streaming sends, in this order: a role chunk; the content in `chunks` pieces (or the
    given list of pieces); per tool call a first delta with id, type and name and empty
    arguments, then its argument fragments; the `finish_reason` chunk; the usage chunk
    (`choices: []`) only if the request asked for it; `data: [DONE]`. `chunk_delay` is
    slept before every event after the role chunk. With `stream_error`, its error event
    replaces everything after the content and tool calls (a non-streamed request gets it
    as an HTTP error). An empty `content` without tool calls is the empty answer a gateway
    makes of an upstream that sent no answer (finish reason "stop", no text).
    """

    type: Literal["completion"] = "completion"
    content: str | list[str] = ""
    chunks: int = Field(default=1, ge=1)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    chunk_delay: float = Field(default=0.0, ge=0)
    usage: Usage | None = None
    """Reported token counts; estimated from text lengths (4 characters a token) if None."""
    finish_reason: Literal["stop", "tool_calls", "length", "content_filter"] | None = None
    """Defaults to "tool_calls" when the reply has tool calls, else "stop"."""
    model: str | None = None
    """The model name the reply claims; defaults to the requested model."""
    stream_error: StreamError | None = None
    """End the stream with this error event after the content and tool calls."""

    def content_text(self) -> str:
        """The whole assistant text."""
        return self.content if isinstance(self.content, str) else "".join(self.content)

    def content_pieces(self) -> list[str]:
        """The content as streamed: the given pieces, or the text cut into `chunks` parts."""
        if isinstance(self.content, list):
            return [piece for piece in self.content if piece]
        return _split(self.content, self.chunks)

    def resolved_finish_reason(self) -> str:
        """The finish reason sent with the last choice chunk."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


class ErrorReply(_Reply):
    """An HTTP error with an OpenAI-style JSON body `{"error": {message, type, param, code}}`."""

    type: Literal["error"] = "error"
    status: int = Field(ge=400, le=599)
    message: str | None = None
    """Defaults to a message typical for the status."""
    error_type: str | None = None
    """The body's `error.type`; defaults by status (e.g. "server_error" for 5xx)."""
    code: str | None = None
    param: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra response headers, e.g. {"retry-after-ms": "10"} so clients retry quickly."""

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return error_body(
            self.message or _DEFAULT_ERROR_MESSAGES.get(self.status, "The server had an error."),
            self.error_type or _ERROR_TYPES.get(self.status, "server_error"),
            code=self.code or _ERROR_CODES.get(self.status),
            param=self.param,
        )


class HtmlReply(_Reply):
    """An HTML page instead of an API answer, as a misconfigured gateway or proxy sends."""

    type: Literal["html"] = "html"
    status: int = Field(default=502, ge=200, le=599)
    body: str = DEFAULT_HTML_PAGE


def _reply_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("type", "completion"))
    return str(getattr(value, "type", "completion"))


Reply = Annotated[
    Annotated[Completion, Tag("completion")]
    | Annotated[ErrorReply, Tag("error")]
    | Annotated[HtmlReply, Tag("html")],
    Discriminator(_reply_kind),
]
"""One scripted reply: a `Completion`, an `ErrorReply` or an `HtmlReply`."""


class Script(_Strict):
    """A script file: its replies in order, with an optional description for humans."""

    description: str = ""
    replies: list[Reply]

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, value: Any) -> Any:
        return {"replies": value} if isinstance(value, list) else value


class ScriptError(ValueError):
    """A script file that cannot be read or does not follow the script format."""


_SCRIPT = TypeAdapter(Script)


def load_script(path: str | Path) -> list[Completion | ErrorReply | HtmlReply]:
    """Read the replies of a JSON script file (format: see the `scripted_llm` docstring)."""
    return parse_script(read_script_data(path), Path(path))


def read_script_data(path: str | os.PathLike[str]) -> Any:
    """A JSON script file's data, not yet checked against the script format."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScriptError(f"Cannot read the model script {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ScriptError(f"The model script {path} is not valid JSON: {exc}") from exc


def parse_script(
    data: Any, source: str | os.PathLike[str]
) -> list[Completion | ErrorReply | HtmlReply]:
    """The replies of a script's data (as read from the JSON file `source`)."""
    try:
        return list(_SCRIPT.validate_python(data).replies)
    except ValidationError as exc:
        raise ScriptError(
            f"The model script {source} does not follow the script format:\n{exc}"
        ) from exc


def text(
    content: str | Sequence[str],
    *,
    chunks: int = 1,
    chunk_delay: float = 0.0,
    first_byte_delay: float = 0.0,
    usage: Usage | Mapping[str, int] | None = None,
    when: When | Mapping[str, Any] | None = None,
) -> Completion:
    """A text reply, streamed in `chunks` pieces (or in the given pieces)."""
    return Completion.model_validate(
        {
            "content": content if isinstance(content, str) else list(content),
            "chunks": chunks,
            "chunk_delay": chunk_delay,
            "first_byte_delay": first_byte_delay,
            "usage": usage,
            "when": when,
        }
    )


def tool_calls(
    *calls: ToolCall,
    content: str | Sequence[str] = "",
    chunks: int = 1,
    chunk_delay: float = 0.0,
    first_byte_delay: float = 0.0,
    usage: Usage | Mapping[str, int] | None = None,
    when: When | Mapping[str, Any] | None = None,
) -> Completion:
    """A reply calling several tools (optionally after some text)."""
    return Completion.model_validate(
        {
            "content": content if isinstance(content, str) else list(content),
            "chunks": chunks,
            "tool_calls": list(calls),
            "chunk_delay": chunk_delay,
            "first_byte_delay": first_byte_delay,
            "usage": usage,
            "when": when,
        }
    )


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    id: str | None = None,
    argument_chunks: int = 3,
    content: str | Sequence[str] = "",
    chunk_delay: float = 0.0,
    first_byte_delay: float = 0.0,
    usage: Usage | Mapping[str, int] | None = None,
    when: When | Mapping[str, Any] | None = None,
) -> Completion:
    """A reply calling one tool, its arguments streamed in `argument_chunks` fragments."""
    call = ToolCall(
        name=name,
        arguments=dict(arguments or {}) if not isinstance(arguments, str) else arguments,
        id=id,
        chunks=argument_chunks,
    )
    return tool_calls(
        call,
        content=content,
        chunk_delay=chunk_delay,
        first_byte_delay=first_byte_delay,
        usage=usage,
        when=when,
    )


def broken_stream(
    content: str | Sequence[str] = "",
    *,
    message: str | None = None,
    code: str = "500",
    chunks: int = 1,
    chunk_delay: float = 0.0,
    when: When | Mapping[str, Any] | None = None,
) -> Completion:
    """A streamed answer that a gateway ends with an error event after `content` (its
    upstream died mid-answer); `message` defaults to LiteLLM's for a cut connection."""
    stream_error = (
        StreamError(code=code) if message is None else StreamError(message=message, code=code)
    )
    return Completion.model_validate(
        {
            "content": content if isinstance(content, str) else list(content),
            "chunks": chunks,
            "chunk_delay": chunk_delay,
            "stream_error": stream_error,
            "when": when,
        }
    )


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
    first_byte_delay: float = 0.0,
    when: When | Mapping[str, Any] | None = None,
) -> ErrorReply:
    """An HTTP error reply with an OpenAI-style JSON body."""
    return ErrorReply.model_validate(
        {
            "status": status,
            "message": message,
            "error_type": type,
            "code": code,
            "headers": dict(headers or {}),
            "first_byte_delay": first_byte_delay,
            "when": when,
        }
    )


def html_page(
    status: int = 502,
    body: str = DEFAULT_HTML_PAGE,
    *,
    first_byte_delay: float = 0.0,
    when: When | Mapping[str, Any] | None = None,
) -> HtmlReply:
    """An HTML page (status and text/html body) instead of an API answer."""
    return HtmlReply.model_validate(
        {"status": status, "body": body, "first_byte_delay": first_byte_delay, "when": when}
    )


def error_body(
    message: str, error_type: str, *, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


class CompletionRenderer:
    """Turns one `Completion` into the objects sent for one request (tool call ids fixed)."""

    def __init__(self, reply: Completion, request: Mapping[str, Any]) -> None:
        self.reply = reply
        self.model = reply.model or str(request.get("model") or "scripted-model")
        self.completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.call_ids = [call.id or f"call_{uuid.uuid4().hex[:24]}" for call in reply.tool_calls]
        self.usage = (reply.usage or _estimate_usage(reply, request)).wire()

    def chunks(self, *, include_usage: bool) -> Iterator[dict[str, Any]]:
        """The `chat.completion.chunk` objects of a streamed answer, in wire order."""
        yield self._chunk({"role": "assistant", "content": ""}, include_usage)
        for piece in self.reply.content_pieces():
            yield self._chunk({"content": piece}, include_usage)
        for index, (call, call_id) in enumerate(
            zip(self.reply.tool_calls, self.call_ids, strict=True)
        ):
            first = {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield self._chunk({"tool_calls": [first]}, include_usage)
            for fragment in _split(call.arguments_text(), call.chunks):
                fragment_delta = {"index": index, "function": {"arguments": fragment}}
                yield self._chunk({"tool_calls": [fragment_delta]}, include_usage)
        if self.reply.stream_error is not None:
            yield self.reply.stream_error.body()
            return
        yield self._chunk({}, include_usage, finish_reason=self.reply.resolved_finish_reason())
        if include_usage:
            yield {**self._envelope("chat.completion.chunk"), "choices": [], "usage": self.usage}

    def completion(self) -> dict[str, Any]:
        """The single `chat.completion` object of a non-streamed answer."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.reply.content_text() or (None if self.reply.tool_calls else ""),
            "refusal": None,
        }
        if self.reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for call, call_id in zip(self.reply.tool_calls, self.call_ids, strict=True)
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": self.reply.resolved_finish_reason(),
        }
        return {**self._envelope("chat.completion"), "choices": [choice], "usage": self.usage}

    def _envelope(self, kind: str) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_scripted",
        }

    def _chunk(
        self, delta: dict[str, Any], include_usage: bool, finish_reason: str | None = None
    ) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        chunk = {**self._envelope("chat.completion.chunk"), "choices": [choice]}
        if include_usage:
            # The real API sends "usage": null on every chunk but the last when asked for usage.
            chunk["usage"] = None
        return chunk


def _split(value: str, parts: int) -> list[str]:
    """`value` cut into at most `parts` contiguous, nearly equal, non-empty pieces."""
    if not value:
        return []
    parts = min(parts, len(value))
    size, extra = divmod(len(value), parts)
    pieces, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        pieces.append(value[start:end])
        start = end
    return pieces


def _message_text(message: Any) -> str:
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def _estimate_usage(reply: Completion, request: Mapping[str, Any]) -> Usage:
    prompt = json.dumps(request.get("messages") or [], ensure_ascii=False)
    prompt += json.dumps(request.get("tools") or [], ensure_ascii=False)
    completion = reply.content_text() + "".join(
        call.name + call.arguments_text() for call in reply.tool_calls
    )
    return Usage(
        prompt_tokens=math.ceil(len(prompt) / 4),
        completion_tokens=max(1, math.ceil(len(completion) / 4)),
    )
