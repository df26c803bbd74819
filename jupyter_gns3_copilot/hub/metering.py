"""What one call through the model gateway used: `CallMeter` fills in the record of the
call as it goes, `StreamRelay` passes the upstream's stream on event by event (the key
hidden, the usage chunk dropped when the client did not ask for it) and keeps what is
needed to estimate the tokens when the upstream reports none (tiktoken, offline).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from pydantic import SecretStr

from ..agent.tokens import token_counter_for_model
from .caller import Caller
from .usage import QUESTION_CHARS, CallStatus, ModelCall

HIDDEN = "[hidden]"
"""What the upstream key is replaced with wherever it would leave the service."""
_KEPT_STREAM_BYTES = 4 * 1024 * 1024
"""How much of a stream is kept to estimate its completion when no usage comes."""
_EVENT_END = re.compile(rb"\r?\n\r?\n")
_DONE = b"data: [DONE]"


class CallMeter:
    """What one call used and how it ended, filled in as it goes."""

    def __init__(
        self,
        caller: Caller,
        model: str,
        started: datetime,
        turn_id: str | None,
        question: str | None = None,
    ):
        self.caller = caller
        self.model = model
        self.started = started
        self.turn_id = turn_id
        self.question = question
        self.status: CallStatus = "ok"
        self.detail: str | None = None
        self.usage: tuple[int, int] | None = None
        self.estimate: tuple[int, int] = (0, 0)
        self.relay: StreamRelay | None = None
        """Set once the request may have reached the upstream."""

    def fail(self, status: CallStatus, detail: str) -> None:
        self.status, self.detail = status, detail[:300]

    def settle(self, raw: dict[str, Any]) -> None:
        """Estimate the tokens of a call that reached the upstream and got no usage."""
        if self.usage is None and self.relay is not None:
            self.estimate = (
                _prompt_estimate(raw, self.model),
                self.relay.completion_estimate(self.model),
            )

    def call(self, ended: datetime) -> ModelCall:
        prompt, completion = self.usage or self.estimate
        return ModelCall(
            user=self.caller.name,
            groups=self.caller.groups,
            model=self.model,
            started_at=self.started,
            ended_at=ended,
            status=self.status,
            prompt_tokens=prompt,
            completion_tokens=completion,
            usage_reported=self.usage is not None or self.relay is None,
            detail=self.detail,
            turn_id=self.turn_id,
            question=self.question,
        )


class StreamRelay:
    """Cuts the upstream's bytes at SSE event boundaries, hides the key, drops the usage
    chunk the client did not ask for, and keeps what is needed to meter the call."""

    def __init__(self, key: SecretStr, *, strip_usage: bool) -> None:
        secret = key.get_secret_value()
        self._key = secret.encode() if len(secret) >= 4 else None
        self._strip_usage = strip_usage
        self._pending = b""
        self._last_block = b""
        """The last block with more than `[DONE]`: it holds the usage or error event."""
        self._kept: list[bytes] = []
        self._kept_bytes = 0

    def feed(self, data: bytes, *, final: bool = False) -> bytes:
        """The complete events now available (everything left when `final`)."""
        self._pending += data
        if final:
            block, self._pending = self._pending, b""
        else:
            # Every event boundary (\n\n, \r\n\r\n, ...) ends with one of these two.
            lf, crlf = self._pending.rfind(b"\n\n"), self._pending.rfind(b"\n\r\n")
            cut = max(lf + 2 if lf >= 0 else 0, crlf + 3 if crlf >= 0 else 0)
            if not cut:
                return b""
            block, self._pending = self._pending[:cut], self._pending[cut:]
        if not block:
            return b""
        if self._key and self._key in block:
            block = block.replace(self._key, HIDDEN.encode())
        if self._kept_bytes < _KEPT_STREAM_BYTES:
            self._kept.append(block)
            self._kept_bytes += len(block)
        if block.strip() != _DONE:
            self._last_block = block
        if self._strip_usage and b'"choices":' in block and b"[]" in block:
            block = b"".join(
                event + b"\n\n" for event in _EVENT_END.split(block) if not _is_usage_only(event)
            )
        return block

    def completion_estimate(self, model: str) -> int:
        """Tokens of the text and tool calls that went through (tiktoken)."""
        return token_counter_for_model(model).count_text(_completion_text(self._kept))

    def settle(self, meter: CallMeter) -> None:
        """Put the usage and any error event of the stream's last event on `meter`."""
        events = [e for e in _EVENT_END.split(self._last_block) if e.strip() not in (b"", _DONE)]
        last = _event_json(events[-1]) if events else None
        if isinstance(last, dict):
            meter.usage = meter.usage or usage_of(last)
            error = last.get("error")
            if isinstance(error, dict) and meter.status == "ok":
                meter.fail("error", f"error event: {error.get('message')}")


def _is_usage_only(event: bytes) -> bool:
    # Most events carry `"usage": null` once usage is asked for: parse only likely ones.
    likely = b'"choices":[]' in event or b'"choices": []' in event
    parsed = _event_json(event) if likely else None
    return isinstance(parsed, dict) and parsed.get("choices") == [] and bool(parsed.get("usage"))


def _event_json(event: bytes) -> Any:
    data = b"".join(line[5:].strip() for line in event.splitlines() if line.startswith(b"data:"))
    return json_object(data) if data and data != b"[DONE]" else None


def json_object(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def usage_of(body: Any) -> tuple[int, int] | None:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return max(prompt, 0), max(completion, 0)


def question_of(messages: list[dict[str, Any]]) -> str | None:
    """The text of the last message when it is the user's, cut to `QUESTION_CHARS`."""
    last = messages[-1]
    if last.get("role") != "user":
        return None
    content = last.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    text = content.strip() if isinstance(content, str) else ""
    return text[:QUESTION_CHARS] or None


def _prompt_estimate(raw: dict[str, Any], model: str) -> int:
    """The request's prompt tokens counted like the copilot counts them (tiktoken)."""
    from langchain_core.messages import convert_to_messages

    counter = token_counter_for_model(model)
    try:
        messages = convert_to_messages(raw["messages"])
        return counter.count_messages(messages) + counter.count_tools(raw.get("tools") or [])
    except Exception:  # a body the upstream accepted but langchain cannot read
        return len(json.dumps(raw)) // 4


def _completion_text(kept: list[bytes]) -> str:
    parts: list[str] = []
    for event in _EVENT_END.split(b"".join(kept)):
        chunk = _event_json(event)
        for choice in chunk.get("choices") or [] if isinstance(chunk, dict) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                parts.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    parts.extend(
                        str(function[field])
                        for field in ("name", "arguments")
                        if function.get(field)
                    )
    return "".join(parts)
