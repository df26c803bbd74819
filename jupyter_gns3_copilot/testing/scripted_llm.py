"""A scripted OpenAI-compatible chat completions server. TEST DOUBLE: not a model.

No language model can run on the machines this project is tested on, so the copilot is
tested against this server instead. It is a real HTTP/1.1 server on 127.0.0.1 (an asyncio
loop in a background thread, so sync code and other event loops can call it) that answers
`POST /v1/chat/completions` with the next reply of a script, and `GET /v1/models`. Point
any OpenAI client at `server.base_url` (`http://127.0.0.1:<port>/v1`).

It behaves like the real API where clients depend on it:

- streaming (`"stream": true`) answers are server-sent events, one HTTP chunk written and
  flushed per event, in the real API's order: a role chunk; content pieces; per tool call a
  first delta with `index`, `id`, `type`, `function.name` and empty `function.arguments`,
  then deltas with only `index` and an arguments fragment; a chunk with `finish_reason`
  ("tool_calls" or "stop"); a `choices: []` chunk with `usage` **only** when the request
  has `stream_options.include_usage`; `data: [DONE]`;
- other requests get one `chat.completion` object, always with `usage`;
- it is strict: a history where an assistant message's `tool_calls` are not all answered by
  the `tool` messages right after it (or a `tool` message answering no such call), a
  missing `model` or `messages`, a temperature outside 0-2, or `stream_options` without
  `stream` gets HTTP 400 with an OpenAI-style body `{"error": {message, type, param,
  code}}`. Rejected requests consume no reply;
- with `api_key=...` it answers 401 unless the request carries `Authorization: Bearer <key>`.

Each reply answers one request, in script order; a reply with `when` conditions answers
the first request meeting them (requests that meet no pending reply's conditions, and
requests after the script ran out, get HTTP 500 "scripted model: no reply left for request
#N"). Every request is recorded (`requests`, numbered from 1) with its parsed JSON body and
its headers, Authorization included so tests can check that the key travels; headers are
never logged and are left out of `repr`.

Python scripts are built from `text`, `tool_call`, `tool_calls`, `error`, `html_page` and
`broken_stream` (or the `Completion`, `ToolCall`, `ErrorReply`, `HtmlReply` and
`StreamError` models)::

    with ScriptedLLM([
        tool_call("run_show_commands", {"devices": [{"device": "PC1", "commands": ["show ip"]}]}),
        text("PC1 has address 10.0.0.1.", chunks=5, usage={"prompt_tokens": 120,
                                                           "completion_tokens": 9}),
    ]) as llm:
        ChatOpenAI(base_url=llm.base_url, api_key="sk-test", model="scripted-model", ...)

JSON script files (`ScriptedLLM.load(path)`, `load_script(path)`) hold an object
`{"description": "...", "replies": [...]}` or just the list of replies. Each reply is an
object whose `type` selects its kind (fields not listed are errors):

- `"completion"` (the default when `type` is omitted): `content` (a string, or a list of
  the exact pieces to stream), `chunks` (how many pieces to cut a string content into,
  default 1), `tool_calls` (list of `{"name", "arguments": {...} or a raw string, "id"
  (optional, default a random call_...), "chunks" (argument fragments, default 3)}`),
  `chunk_delay` (seconds before every event after the role chunk, default 0), `usage`
  (`{"prompt_tokens", "completion_tokens", "total_tokens"?}`; estimated at 4 characters
  a token when omitted), `finish_reason` (default "tool_calls" with tool calls, else
  "stop"), `model` (default: the requested model), `stream_error` (`{"message", "code"
  (a status as a string, default "500"), "error_type"}`: after the content and tool calls
  the stream ends with `data: {"error": {...}}` and no `[DONE]`, as a gateway does when its
  upstream dies mid-answer; a non-streamed request gets that error as HTTP `code`). An
  empty `content` without tool calls is a gateway's empty answer (finish reason "stop");
- `"error"`: `status` (400-599), `message`, `error_type`, `code`, `param` (defaults
  typical of the status), `headers` (e.g. `{"retry-after-ms": "10"}`);
- `"html"`: `status` (default 502) and `body` (default an nginx "502 Bad Gateway" page),
  sent as text/html;
- every kind also takes `first_byte_delay` (seconds before the status line, default 0)
  and `when`: `{"last_message": regex, "any_message": regex, "tools": true|false,
  "model": name}`, all given conditions must hold (e.g. `{"tools": false}` for the title
  request, which offers no tools).

Run it on its own (e.g. to try a notebook by hand, or to benchmark a client without the
server sharing its process and GIL)::

    python -m jupyter_gns3_copilot.testing.scripted_llm script.json [--port N] [--api-key K]

prints the base URL on its first line, logs one line per request to stderr and serves until
interrupted.

Example::

    {"description": "PC1 ping check",
     "replies": [
       {"tool_calls": [{"name": "run_vpcs_commands",
                        "arguments": {"devices": [{"device": "PC1",
                                                   "commands": ["ping 10.0.0.2"]}]}}],
        "usage": {"prompt_tokens": 812, "completion_tokens": 31}},
       {"type": "completion", "content": "The ping succeeded.", "chunks": 4},
       {"when": {"tools": false}, "content": "PC1 ping check"},
       {"type": "error", "status": 429, "headers": {"retry-after-ms": "10"}}
     ]}
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import itertools
import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .scripted_llm_script import (
    Completion,
    CompletionRenderer,
    ErrorReply,
    HtmlReply,
    Script,
    ScriptError,
    StreamError,
    ToolCall,
    Usage,
    When,
    broken_stream,
    error,
    error_body,
    html_page,
    load_script,
    text,
    tool_call,
    tool_calls,
)

__all__ = [
    "DEFAULT_TEST_API_KEY",
    "AnyReply",
    "Completion",
    "ErrorReply",
    "HtmlReply",
    "RecordedRequest",
    "Script",
    "ScriptError",
    "ScriptedLLM",
    "StreamError",
    "ToolCall",
    "Usage",
    "When",
    "broken_stream",
    "error",
    "html_page",
    "load_script",
    "main",
    "text",
    "tool_call",
    "tool_calls",
]

log = logging.getLogger(__name__)

AnyReply = Completion | ErrorReply | HtmlReply
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
DEFAULT_TEST_API_KEY = "sk-scripted-test-key"
_MAX_BODY = 64 * 1024 * 1024
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


class RecordedRequest(BaseModel):
    """One request the server received, with what it answered."""

    number: int
    """Position among the requests received since the last reset, from 1."""
    received: float = 0.0
    """When its head and body had arrived (`time.time()`, comparable across processes)."""
    method: str
    path: str
    headers: dict[str, str] = Field(repr=False)
    """Header names in lower case; Authorization included (left out of repr)."""
    body: Any = None
    """The parsed JSON body (None when there was none or it was not JSON)."""
    status: int = 0
    """The HTTP status answered (0 until the answer started)."""
    reply_index: int | None = None
    """Which script reply answered it (0-based, counting every reply added since reset)."""
    disconnected: bool = False
    """The client went away before the end of the answer."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's `messages` (empty if none)."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else []


class _HttpRequest:
    def __init__(self, method: str, target: str, version: str, headers: dict[str, str]) -> None:
        self.method = method
        self.path = target.split("?", 1)[0]
        self.version = version
        self.headers = headers
        self.raw_body = b""

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


class _Malformed(Exception):
    """A request this server cannot parse; the connection is answered 400 and closed."""


class _Rejected(Exception):
    """A chat request the real API would refuse; answered with `status` and `body`."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body["error"]["message"])
        self.status = status
        self.body = body


class ScriptedLLM:
    """The scripted model server (see the module docstring).

    Use as a context manager (`with ScriptedLLM(script) as llm:`) or call `start()` and
    `stop()`. The script can be given at construction (replies, or a JSON file path) and
    extended at any time with `add`, `extend` or `load`, also while the server runs.
    """

    def __init__(
        self,
        script: Iterable[AnyReply] | str | Path | None = None,
        *,
        port: int = 0,
        api_key: str | None = None,
        models: Iterable[str] = ("scripted-model",),
    ) -> None:
        self._requested_port = port
        self._api_key = api_key
        self.models = list(models)
        self._lock = threading.Lock()
        self._pending: list[tuple[int, AnyReply]] = []
        self._added = 0
        self._requests: list[RecordedRequest] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._port: int | None = None
        if isinstance(script, (str, Path)):
            self.load(script)
        elif script is not None:
            self.extend(script)

    def __repr__(self) -> str:
        where = self.base_url if self._port is not None else "not started"
        return f"<ScriptedLLM {where}, {self.remaining} replies left>"

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self, timeout: float = 10.0) -> ScriptedLLM:
        """Listen on 127.0.0.1 in a background thread.

        The port is `port`, or a free one when 0; after `stop()`, `start()` listens on the
        same port again (an endpoint that went down and came back).
        """
        if self._thread is not None:
            raise RuntimeError("ScriptedLLM is already running")
        ready: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run_loop, args=(ready,), name="scripted-llm", daemon=True
        )
        self._thread.start()
        try:
            self._port = ready.result(timeout)
        except BaseException:
            self._thread.join(timeout)
            self._thread = None
            raise
        log.debug("scripted model listening on %s", self.base_url)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close every connection (ending answers midway) and stop listening."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError(f"ScriptedLLM thread did not stop within {timeout} s")
        self._thread = self._loop = None
        self._requested_port, self._port = self._port or self._requested_port, None

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        if self._port is None:
            raise RuntimeError("ScriptedLLM is not running: call start() first")
        return self._port

    @property
    def base_url(self) -> str:
        """The OpenAI `base_url` for this server: `http://127.0.0.1:<port>/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, api_key: str | None = None) -> dict[str, str]:
        """`OPENAI_BASE_URL` and `OPENAI_API_KEY` for a process that should use this server."""
        return {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": api_key or self._api_key or DEFAULT_TEST_API_KEY,
        }

    # -- script and records --------------------------------------------------------------

    def add(self, *replies: AnyReply) -> ScriptedLLM:
        """Append replies to the script."""
        return self.extend(replies)

    def extend(self, replies: Iterable[AnyReply]) -> ScriptedLLM:
        """Append replies to the script."""
        replies = list(replies)
        for reply in replies:
            if not isinstance(reply, (Completion, ErrorReply, HtmlReply)):
                raise TypeError(f"not a scripted reply: {reply!r}")
        with self._lock:
            for reply in replies:
                self._pending.append((self._added, reply))
                self._added += 1
        return self

    def load(self, path: str | Path) -> ScriptedLLM:
        """Append the replies of a JSON script file (format: see the module docstring)."""
        return self.extend(load_script(path))

    def reset(self, script: Iterable[AnyReply] | str | Path | None = None) -> ScriptedLLM:
        """Forget the pending replies and the recorded requests, then add `script`."""
        with self._lock:
            self._pending.clear()
            self._requests.clear()
            self._added = 0
        if isinstance(script, (str, Path)):
            return self.load(script)
        return self.extend(script or ())

    @property
    def remaining(self) -> int:
        """How many replies have not been used yet."""
        with self._lock:
            return len(self._pending)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received since the last reset, in order (a copy of the list)."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The `POST /v1/chat/completions` requests among `requests`."""
        return [r for r in self.requests if r.method == "POST" and r.path == CHAT_PATH]

    # -- the server thread ------------------------------------------------------------------

    def _run_loop(self, ready: concurrent.futures.Future[int]) -> None:
        loop = asyncio.new_event_loop()
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._serve_connection, "127.0.0.1", self._requested_port)
            )
        except BaseException as exc:
            loop.close()
            ready.set_exception(exc)
            return
        self._loop = loop
        ready.set_result(int(self._server.sockets[0].getsockname()[1]))
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _close_all(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    request = await _read_request(reader)
                except _Malformed as exc:
                    body = error_body(str(exc), "invalid_request_error")
                    await _send(writer, 400, _json_bytes(body), "application/json", close=True)
                    break
                if request is None:
                    break
                if not await self._answer(request, reader, writer) or not request.keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels these tasks. Ending normally matters: asyncio 3.11's
            # client_connected_cb callback calls task.exception(), which raises on a
            # cancelled task and logs a spurious traceback.
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    def _record(self, request: _HttpRequest, body: Any) -> RecordedRequest:
        with self._lock:
            record = RecordedRequest(
                number=len(self._requests) + 1,
                received=time.time(),
                method=request.method,
                path=request.path,
                headers=request.headers,
                body=body,
            )
            self._requests.append(record)
        return record

    async def _answer(
        self, request: _HttpRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Record and answer one request; False when the connection must be closed."""
        body: Any = None
        if request.raw_body:
            try:
                body = json.loads(request.raw_body)
            except ValueError:
                body = None
        record = self._record(request, body)
        try:
            return await self._respond(record, request, reader, writer)
        finally:
            log.debug(
                "request #%d %s %s -> HTTP %d, reply %s%s",
                record.number,
                record.method,
                record.path,
                record.status,
                record.reply_index,
                " (client left early)" if record.disconnected else "",
            )

    async def _respond(
        self,
        record: RecordedRequest,
        request: _HttpRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        try:
            reply = self._route(request, record)
        except _Rejected as rejected:
            record.status = rejected.status
            return await _send(
                writer, rejected.status, _json_bytes(rejected.body), "application/json"
            )
        if isinstance(reply, dict):
            record.status = 200
            return await _send(writer, 200, _json_bytes(reply), "application/json")
        if reply.first_byte_delay:
            await asyncio.sleep(reply.first_byte_delay)
        if isinstance(reply, ErrorReply):
            record.status = reply.status
            return await _send(
                writer, reply.status, _json_bytes(reply.body()), "application/json", reply.headers
            )
        if isinstance(reply, HtmlReply):
            record.status = reply.status
            return await _send(
                writer, reply.status, reply.body.encode(), "text/html; charset=utf-8"
            )
        renderer = CompletionRenderer(reply, record.body)
        streaming = record.body.get("stream") is True
        if not streaming and reply.stream_error is not None:
            record.status = reply.stream_error.status()
            body = _json_bytes(reply.stream_error.body())
            return await _send(writer, record.status, body, "application/json")
        record.status = 200
        if not streaming:
            return await _send(writer, 200, _json_bytes(renderer.completion()), "application/json")
        options = record.body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        completed = await _stream(
            reader,
            writer,
            renderer.chunks(include_usage=include_usage),
            reply.chunk_delay,
            done=reply.stream_error is None,
        )
        record.disconnected = not completed
        return completed

    def _route(self, request: _HttpRequest, record: RecordedRequest) -> AnyReply | dict[str, Any]:
        """The reply for a request, or a JSON body to answer with 200; raises `_Rejected`."""
        expected_auth = f"Bearer {self._api_key}"
        if self._api_key is not None and request.headers.get("authorization") != expected_auth:
            raise _Rejected(
                401,
                error_body(
                    "Incorrect API key provided.", "invalid_request_error", code="invalid_api_key"
                ),
            )
        if request.method == "GET" and request.path == MODELS_PATH:
            return {
                "object": "list",
                "data": [
                    {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}
                    for name in self.models
                ],
            }
        if request.method != "POST" or request.path != CHAT_PATH:
            raise _Rejected(
                404,
                error_body(
                    f"Invalid URL ({request.method} {request.path})", "invalid_request_error"
                ),
            )
        if not isinstance(record.body, dict):
            raise _Rejected(
                400,
                error_body(
                    "We could not parse the JSON body of your request. The scripted model "
                    "expects a JSON object.",
                    "invalid_request_error",
                ),
            )
        _check_chat_request(record.body)
        return self._take_reply(record)

    def _take_reply(self, record: RecordedRequest) -> AnyReply:
        with self._lock:
            for position, (index, reply) in enumerate(self._pending):
                if reply.when is None or reply.when.matches(record.body):
                    del self._pending[position]
                    record.reply_index = index
                    return reply
            left = len(self._pending)
        if left:
            message = (
                f"scripted model: no reply left for request #{record.number} "
                f"({left} replies are waiting, but their `when` conditions do not match it)"
            )
        else:
            message = f"scripted model: no reply left for request #{record.number}"
        raise _Rejected(500, error_body(message, "server_error", code="script_exhausted"))


# -- HTTP ------------------------------------------------------------------------------------


async def _read_request(reader: asyncio.StreamReader) -> _HttpRequest | None:
    """The next request on the connection, or None when the client closed it."""
    line = await reader.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _Malformed(f"Malformed HTTP request line: {line[:100]!r}")
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        key, value = name.strip().lower(), value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    request = _HttpRequest(parts[0].upper(), parts[1], parts[2], headers)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _Malformed("Chunked request bodies are not supported; send Content-Length")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError as exc:
        raise _Malformed("Invalid Content-Length header") from exc
    if not 0 <= length <= _MAX_BODY:
        raise _Malformed(f"Request body of {length} bytes refused")
    if length:
        request.raw_body = await reader.readexactly(length)
    return request


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


_request_ids = itertools.count(1)


def _head(status: int, content_type: str, headers: Mapping[str, str]) -> list[str]:
    """The status line and headers; a reply's own `headers` replace the defaults of the
    same name (e.g. a scripted `x-request-id`)."""
    given = {name.lower() for name in headers}
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    defaults = {
        "content-type": content_type,
        "x-request-id": f"req_scripted_{next(_request_ids)}",
    }
    lines.extend(f"{name}: {value}" for name, value in defaults.items() if name not in given)
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    return lines


async def _send(
    writer: asyncio.StreamWriter,
    status: int,
    payload: bytes,
    content_type: str,
    headers: Mapping[str, str] | None = None,
    *,
    close: bool = False,
) -> bool:
    """Send a whole response; returns whether the connection can be reused."""
    lines = _head(status, content_type, headers or {})
    lines.append(f"content-length: {len(payload)}")
    if close:
        lines.append("connection: close")
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        await writer.drain()
    except ConnectionError:
        return False
    return not close


async def _stream(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    chunks: Iterable[dict[str, Any]],
    chunk_delay: float,
    *,
    done: bool = True,
) -> bool:
    """Send chunks as server-sent events, one flushed HTTP chunk each, then `data: [DONE]`
    if `done`; False if the client left."""
    lines = _head(200, "text/event-stream; charset=utf-8", {"cache-control": "no-cache"})
    lines.append("transfer-encoding: chunked")
    events = itertools.chain((_json_bytes(chunk) for chunk in chunks), [b"[DONE]"] if done else [])
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        for position, event in enumerate(events):
            if position and chunk_delay:
                await asyncio.sleep(chunk_delay)
            if reader.at_eof():
                return False
            data = b"data: " + event + b"\n\n"
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    except ConnectionError:
        return False
    return True


# -- strictness --------------------------------------------------------------------------------


def _invalid(message: str, param: str | None = None, code: str | None = None) -> _Rejected:
    return _Rejected(400, error_body(message, "invalid_request_error", code=code, param=param))


def _check_chat_request(body: dict[str, Any]) -> None:
    """Raise `_Rejected` (400) for a request the real API refuses."""
    if not body.get("model"):
        raise _invalid("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid(
            "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        )
    temperature = body.get("temperature")
    if temperature is not None and (
        not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2
    ):
        raise _invalid(
            f"Invalid 'temperature': expected a number from 0 to 2, but got {temperature!r}.",
            "temperature",
            "invalid_value",
        )
    if body.get("stream_options") is not None and body.get("stream") is not True:
        raise _invalid(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    _check_tool_pairs(messages)


def _check_tool_pairs(messages: list[Any]) -> None:
    """Every assistant tool call answered by the tool messages right after it, and only those."""
    awaiting: list[str] = []
    answered: set[str] = set()
    asked_at = 0
    for position, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            raise _invalid(
                f"Invalid value for messages.[{position}]: expected an object with a role "
                f"among {sorted(_ROLES)}.",
                f"messages.[{position}].role",
            )
        if message["role"] == "tool":
            if message.get("tool_call_id") not in awaiting:
                raise _invalid(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{position}].role",
                )
            answered.add(message["tool_call_id"])
            continue
        _raise_if_unanswered(awaiting, answered, asked_at)
        awaiting, answered, asked_at = _tool_call_ids(message, position), set(), position
    _raise_if_unanswered(awaiting, answered, asked_at)


def _tool_call_ids(message: dict[str, Any], position: int) -> list[str]:
    if message["role"] != "assistant":
        return []
    ids = []
    for call in message.get("tool_calls") or []:
        call_id = call.get("id") if isinstance(call, dict) else None
        if not call_id:
            raise _invalid(
                f"Missing required parameter: 'messages.[{position}].tool_calls.id'.",
                f"messages.[{position}].tool_calls",
                "missing_required_parameter",
            )
        ids.append(call_id)
    return ids


def _raise_if_unanswered(awaiting: list[str], answered: set[str], position: int) -> None:
    missing = [call_id for call_id in awaiting if call_id not in answered]
    if missing:
        raise _invalid(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(missing)}",
            f"messages.[{position}].role",
        )


# -- command line ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Serve JSON script files until SIGINT or SIGTERM (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_gns3_copilot.testing.scripted_llm",
        description="Serve scripted OpenAI-compatible chat completions on 127.0.0.1.",
    )
    parser.add_argument("scripts", nargs="*", help="JSON script files, served in order")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    parser.add_argument("--api-key", help="require this key (Authorization: Bearer ...)")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    log.setLevel(logging.DEBUG)
    server = ScriptedLLM(port=options.port, api_key=options.api_key)
    try:
        for path in options.scripts:
            server.load(path)
    except ScriptError as exc:
        parser.exit(2, f"{exc}\n")
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    with server:
        print(server.base_url, flush=True)
        stopping.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
