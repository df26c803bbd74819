"""The hub service's model gateway: an OpenAI-compatible endpoint with per-student budgets.

`POST /v1/chat/completions` (streamed or not) and `GET /v1/models`, as tornado handlers
(`ModelGateway.routes()`). A call goes:

1. **authenticate**: the injected `authenticate(request)` returns the `Caller` (hub name and
   groups) or None. The shape is a hub token sent as the API key (`Authorization: Bearer
   <token>`, see `bearer_token`): the single-user server's `JUPYTERHUB_API_TOKEN`, checked
   with `jupyterhub.services.auth.HubAuth`. Otherwise: 401, OpenAI-style.
2. **admit**: the model must be in the allow-list if there is one (else 404); the caller's
   calls in flight and tokens used today (user and course) must be under the policy
   (`budgets.py`), else 429 with the readable line, an error code starting `copilot_`
   (the copilot shows the line as is) and `x-should-retry: false`.
3. **forward** to the upstream with the real key, through `UPSTREAM_POOLS` shared
   `httpx.AsyncClient`s taken in turn (see there why several), asking for
   `stream_options.include_usage` when streaming;
   the upstream's bytes go back as they come, complete SSE events written and flushed as
   soon as each network read brings them, never held back for the rest of the answer.
4. **record** the call in the `UsageStore`: the usage of the final chunk (or of the JSON
   body). When the upstream reports none (it ignores `include_usage`, or the client left
   before the end) the gateway records its own estimate, marked `usage_reported = false`:
   the prompt counted with tiktoken offline (`agent/tokens.py`) and the completion from
   the text and tool arguments that went through. Estimating rather than recording
   nothing means leaving before the last chunk does not make a call free. The record is
   written before the response ends, so the client's next call is checked against it.
   The usage chunk reaches only clients that asked for it.
   With `log_questions` (off by default; students are told when it is on) the record
   also carries the student's question: the request's last message when it is the
   user's (a call that continues a turn after a tool ends with the tool's answer, so
   each question is logged once), its text cut to `QUESTION_CHARS`.

A client that disconnects cancels the upstream request at once (its connection is closed)
and the call is recorded as "error" with what was used so far.

Upstream errors go back with the upstream's status and OpenAI-style body (headers such as
`retry-after` included); a web page or an unreachable upstream becomes an OpenAI-style
body that tells the student to ask the course staff; a 401 from the upstream (the
service's own key refused) says so, so the copilot does not ask the student to check
their key. The real key is never in a response or a log line (scrubbed from whatever the
upstream sends back).

**The gateway never retries.** The copilot retries a failed call itself (`ModelRetries`:
bounded, honouring `retry-after`, stopped by Stop); a second layer of retries multiplies
upstream requests and the student's wait. Refusals carry `x-should-retry: false`.

The upstream can be the model provider or a school's existing gateway (a LiteLLM proxy
with a virtual key, say): it is just another base URL and key, forwarded to unchanged.
Turn that gateway's own retries off (LiteLLM: `litellm_settings: num_retries: 0`) so that
retries stay in one place.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from tornado.httputil import HTTPServerRequest, responses
from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

from ..agent.llm_access import TURN_HEADER, http_base_url
from ..agent.tokens import token_counter_for_model
from .budgets import BudgetLeft, BudgetOverrides, BudgetPolicy, Refusal
from .caller import Caller
from .usage import QUESTION_CHARS, CallStatus, ModelCall, UsageStore, utc_now

log = logging.getLogger(__name__)

Authenticate = Callable[[HTTPServerRequest], Awaitable[Caller | None]]
Clock = Callable[[], datetime]

_PASSED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry", "x-request-id")
"""Upstream response headers handed on (the copilot's retries honour them)."""
UPSTREAM_POOLS = 8
"""Connection pools to the upstream, used in turn. httpcore's pool looks over every one of
its connections, the idle ones against all the others, each time a request starts or
ends, so a call's cost grows with the calls in flight: with 100 streamed calls at once,
each cost the service 5.2-6.4 ms of CPU with one pool and 2.7-4.6 ms with eight."""
_KEPT_STREAM_BYTES = 4 * 1024 * 1024
"""How much of a stream is kept to estimate its completion when no usage comes."""
_EVENT_END = re.compile(rb"\r?\n\r?\n")
_DONE = b"data: [DONE]"
_HIDDEN = "[hidden]"


class UpstreamSettings(BaseModel):
    """The model endpoint behind the gateway (a provider, or a school's gateway)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str
    """OpenAI-style base URL, e.g. `https://api.openai.com/v1`."""
    api_key: SecretStr = SecretStr("")
    models: tuple[str, ...] | None = None
    """Allow-list of model names students may use (None: whatever the upstream offers)."""
    timeout: float = Field(default=300.0, gt=0)
    """Seconds to wait for the upstream's answer to begin, and between its pieces."""
    connect_timeout: float = Field(default=10.0, gt=0)
    max_connections: int = Field(default=200, gt=0)
    """Connections to the upstream at once (a class starting turns together)."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_base_url(value, "the upstream base URL")


class ChatCompletionBody(BaseModel):
    """The fields of a chat completion request the gateway looks at; the body is forwarded
    as sent (other fields included), apart from `stream_options.include_usage`."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=200)
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None


def bearer_token(request: HTTPServerRequest) -> str | None:
    """The token of `Authorization: Bearer <token>` (or JupyterHub's `token <token>`)."""
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() in ("bearer", "token") and token else None


def openai_error(message: str, error_type: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


class ModelGateway:
    """The gateway's state: upstream client, budgets, usage store, calls in flight.

    One per service process; `routes(prefix)` gives the tornado handlers bound to it.
    Close with `aclose()` (the upstream connections).
    """

    def __init__(
        self,
        upstream: UpstreamSettings,
        policy: BudgetPolicy,
        store: UsageStore,
        authenticate: Authenticate,
        *,
        clock: Clock = utc_now,
        log_questions: bool = False,
    ) -> None:
        self.upstream = upstream
        self.log_questions = log_questions
        self.policy = policy
        self.store = store
        self.authenticate = authenticate
        self.clock = clock
        self.in_flight: dict[str, int] = {}
        """Calls running per hub user."""
        per_pool = -(-upstream.max_connections // UPSTREAM_POOLS)
        self._clients = [
            httpx.AsyncClient(
                timeout=httpx.Timeout(upstream.timeout, connect=upstream.connect_timeout),
                limits=httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool),
            )
            for _ in range(UPSTREAM_POOLS)
        ]
        self._next_pool = itertools.cycle(self._clients)

    def routes(self, prefix: str = "") -> list[tuple[str, type[RequestHandler], dict[str, Any]]]:
        """Tornado URL specs for `{prefix}/v1/chat/completions` and `{prefix}/v1/models`."""
        prefix = prefix.rstrip("/")
        kwargs = {"gateway": self}
        return [
            (rf"{re.escape(prefix)}/v1/chat/completions", ChatCompletionsHandler, kwargs),
            (rf"{re.escape(prefix)}/v1/models", ModelsHandler, kwargs),
        ]

    async def aclose(self) -> None:
        """Close the upstream connections."""
        await asyncio.gather(*(client.aclose() for client in self._clients))

    def scrub(self, text: str) -> str:
        """`text` without the upstream key."""
        key = self.upstream.api_key.get_secret_value()
        return text.replace(key, _HIDDEN) if len(key) >= 4 else text

    def upstream_request(self, method: str, path: str, body: Any = None) -> httpx.Request:
        """A request to the upstream with the real key (and nothing of the caller's)."""
        headers = {"Accept-Encoding": "identity"}
        key = self.upstream.api_key.get_secret_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return self._clients[0].build_request(
            method, f"{self.upstream.base_url}{path}", json=body, headers=headers
        )

    async def send(self, request: httpx.Request) -> httpx.Response:
        """Send to the upstream, the body left to stream."""
        return await next(self._next_pool).send(request, stream=True)

    async def budget_refusal(self, caller: Caller, now: datetime) -> Refusal | None:
        """Why `caller` may not start a call now (tokens used today), or None."""
        overrides, used, course_used = await self._used_today(caller, now)
        return self.policy.refusal(
            caller, overrides, used_today=used, course_used_today=course_used
        )

    async def budget_left(self, caller: Caller, now: datetime) -> BudgetLeft:
        """`caller`'s budget today: the daily tokens, those used, and those left (the
        course-wide cap included); None where no limit applies."""
        overrides, used, course_used = await self._used_today(caller, now)
        daily = self.policy.daily_budget(caller, overrides).daily_tokens
        course = self.policy.course_budget(overrides)
        lefts = [
            limit - spent
            for limit, spent in ((daily, used), (course, course_used))
            if limit is not None
        ]
        return BudgetLeft(
            daily_tokens=daily,
            used_today=used,
            left=max(min(lefts), 0) if lefts else None,
        )

    async def _used_today(self, caller: Caller, now: datetime) -> tuple[BudgetOverrides, int, int]:
        """The overrides in force and the tokens used today by `caller` and by the course
        (only what a limit applies to is read; 0 otherwise)."""
        overrides = await self.store.overrides()
        day = now.date()
        used = course_used = 0
        if self.policy.daily_budget(caller, overrides).daily_tokens is not None:
            used = await self.store.tokens_used(day, caller.name)
        if self.policy.course_budget(overrides) is not None:
            course_used = await self.store.tokens_used(day)
        return overrides, used, course_used


class _Meter:
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
        self.relay: _StreamRelay | None = None
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


class _GatewayHandler(RequestHandler):
    """Shared parts: the gateway, OpenAI-style errors, authentication."""

    gateway: ModelGateway

    def initialize(self, gateway: ModelGateway) -> None:
        self.gateway = gateway

    def check_xsrf_cookie(self) -> None:
        """API clients authenticate with a token, not cookies: no XSRF check."""

    def send_error_body(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.clear()
        self.set_status(status)
        for name, value in (headers or {}).items():
            self.set_header(name, value)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Tornado's own errors (405, an unexpected exception) as OpenAI-style JSON."""
        message = (
            responses.get(status_code, "Error")
            if status_code < 500
            else "The copilot hub failed on this request."
        )
        self.send_error_body(status_code, openai_error(message, "server_error"))

    async def caller(self) -> Caller | None:
        """The authenticated caller; otherwise a 401 is sent and None returned."""
        caller = await self.gateway.authenticate(self.request)
        if caller is None:
            self.send_error_body(
                401,
                openai_error(
                    "The copilot hub does not know this API key: send your hub token "
                    "(the single-user server's JUPYTERHUB_API_TOKEN) as the API key.",
                    "invalid_request_error",
                    "invalid_api_key",
                ),
            )
        return caller

    def pass_upstream_error(self, response: httpx.Response, content: bytes) -> str:
        """Answer with the upstream's error; returns a short description for the record."""
        gateway = self.gateway
        status = response.status_code
        headers = {n: response.headers[n] for n in _PASSED_HEADERS if n in response.headers}
        body = _json_object(content)
        if status == 401:
            # The upstream refused the service's own key: not the student's problem, and
            # some upstreams echo part of the key in this message.
            message = (
                "The copilot hub's upstream provider refused the hub's own API key (HTTP "
                "401): tell the course staff."
            )
            self.send_error_body(status, openai_error(message, "upstream_error"), headers)
            return "upstream HTTP 401"
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            text = gateway.scrub(json.dumps(body))
            self.send_error_body(status, json.loads(text), headers)
            message = str(body["error"].get("message") or "")
            return gateway.scrub(f"upstream HTTP {status}: {message}")
        message = (
            f"The model endpoint behind the copilot hub answered HTTP {status} without an "
            "API error (a web page or nothing): tell the course staff if it persists."
        )
        self.send_error_body(status, openai_error(message, "upstream_error"), headers)
        return f"upstream HTTP {status}, not an API answer"

    def upstream_unreachable(self, exc: httpx.HTTPError) -> str:
        """Answer 502/504 for an upstream that could not be reached or did not answer."""
        if isinstance(exc, httpx.TimeoutException):
            status, what = 504, "did not answer in time"
        else:
            status, what = 502, f"cannot be reached ({type(exc).__name__})"
        message = f"The model endpoint behind the copilot hub {what}: try again later."
        self.send_error_body(status, openai_error(message, "upstream_error"))
        return f"upstream {what}"


class ModelsHandler(_GatewayHandler):
    """`GET /v1/models`: the upstream's list, limited to the allow-list if there is one."""

    async def get(self) -> None:
        if await self.caller() is None:
            return
        gateway = self.gateway
        try:
            response = await gateway.send(gateway.upstream_request("GET", "/models"))
            try:
                content = await response.aread()
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            self.upstream_unreachable(exc)
            return
        if response.status_code >= 400:
            self.pass_upstream_error(response, content)
            return
        body = _json_object(content)
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            body = {"object": "list", "data": []}
        allowed = gateway.upstream.models
        if allowed is not None:
            offered = {m.get("id"): m for m in body["data"] if isinstance(m, dict)}
            body["data"] = [
                offered.get(name) or {"id": name, "object": "model", "owned_by": "copilot-hub"}
                for name in allowed
            ]
        self.set_header("Content-Type", "application/json")
        self.finish(gateway.scrub(json.dumps(body)))


class ChatCompletionsHandler(_GatewayHandler):
    """`POST /v1/chat/completions` (see the module docstring for the flow)."""

    _forwarding: asyncio.Task[None] | None = None
    _client_gone = False

    def on_connection_close(self) -> None:
        self._client_gone = True
        if self._forwarding is not None:
            self._forwarding.cancel()

    async def post(self) -> None:
        gateway = self.gateway
        caller = await self.caller()
        if caller is None:
            return
        raw = _json_object(self.request.body)
        if not isinstance(raw, dict):
            self._bad_request("The request body must be a JSON object.")
            return
        try:
            body = ChatCompletionBody.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            self._bad_request(f"Invalid chat completion request: {problems}.")
            return
        turn_id = self.request.headers.get(TURN_HEADER, "")[:100] or None
        question = _question(body.messages) if gateway.log_questions else None
        meter = _Meter(caller, body.model, gateway.clock(), turn_id, question)
        try:
            if not self._admit(body, meter):
                return
            gateway.in_flight[caller.name] = gateway.in_flight.get(caller.name, 0) + 1
            try:
                refusal = await gateway.budget_refusal(caller, meter.started)
                if refusal is not None:
                    self._refuse(refusal, meter)
                    return
                self._forwarding = asyncio.ensure_future(self._forward(raw, body, meter))
                try:
                    await self._forwarding
                except asyncio.CancelledError:
                    if not self._client_gone:
                        raise
                    meter.fail("error", "the client left before the end of the answer")
            finally:
                gateway.in_flight[caller.name] -= 1
                if not gateway.in_flight[caller.name]:
                    del gateway.in_flight[caller.name]
        finally:
            # Recorded before the response ends (tornado ends it when `post` returns): a
            # client's next call is checked against the tokens of this one.
            meter.settle(raw)
            await self._record(meter)

    def _bad_request(self, message: str) -> None:
        self.send_error_body(400, openai_error(message, "invalid_request_error"))

    def _admit(self, body: ChatCompletionBody, meter: _Meter) -> bool:
        """Allow-list and concurrency; sends the refusal and returns False if refused."""
        allowed = self.gateway.upstream.models
        if allowed is not None and body.model not in allowed:
            meter.fail("refused", "model not allowed")
            message = (
                f"The model {body.model!r} is not offered by the copilot hub; use one of: "
                f"{', '.join(allowed)}."
            )
            self.send_error_body(
                404, openai_error(message, "invalid_request_error", "model_not_found")
            )
            return False
        refusal = self.gateway.policy.concurrency_refusal(
            self.gateway.in_flight.get(meter.caller.name, 0)
        )
        if refusal is not None:
            self._refuse(refusal, meter)
            return False
        return True

    def _refuse(self, refusal: Refusal, meter: _Meter) -> None:
        meter.fail("refused", refusal.code)
        self.send_error_body(
            429,
            openai_error(refusal.message, "copilot_refusal", refusal.code),
            {"x-should-retry": "false"},
        )

    async def _forward(self, raw: dict[str, Any], body: ChatCompletionBody, meter: _Meter) -> None:
        gateway = self.gateway
        forwarded = dict(raw)
        client_wants_usage = bool((body.stream_options or {}).get("include_usage"))
        if body.stream:
            forwarded["stream_options"] = {**(body.stream_options or {}), "include_usage": True}
        relay = meter.relay = _StreamRelay(
            gateway.upstream.api_key, strip_usage=body.stream and not client_wants_usage
        )
        try:
            response = await gateway.send(
                gateway.upstream_request("POST", "/chat/completions", forwarded)
            )
        except httpx.HTTPError as exc:
            if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
                meter.relay = None  # the request never left
            meter.fail("error", self.upstream_unreachable(exc))
            return
        streaming = False
        try:
            streamed = "text/event-stream" in response.headers.get("content-type", "")
            if response.status_code >= 400 or not streamed:
                content = await response.aread()
                if response.status_code >= 400:
                    meter.fail("error", self.pass_upstream_error(response, content))
                    return
                meter.usage = _usage(_json_object(content))
                self.set_header(
                    "Content-Type", response.headers.get("content-type", "application/json")
                )
                self.write(gateway.scrub(content.decode("utf-8", "replace")))
                return
            self.set_header("Content-Type", response.headers["content-type"])
            self.set_header("Cache-Control", "no-cache")
            self.set_header("X-Accel-Buffering", "no")
            # tornado keeps Nagle's algorithm on until a response ends: each small event
            # would wait for the previous one's ACK. (tornado turns it back on afterwards.)
            stream = getattr(self.request.connection, "stream", None)
            if stream is not None:
                stream.set_nodelay(True)
            streaming = True
            encoded = response.headers.get("content-encoding", "identity") != "identity"
            async for data in response.aiter_bytes() if encoded else response.aiter_raw():
                block = relay.feed(data)
                if block:
                    self.write(block)
                    await self.flush()
            block = relay.feed(b"", final=True)
            if block:
                self.write(block)
                await self.flush()
        except StreamClosedError:
            meter.fail("error", "the client left before the end of the answer")
        except httpx.HTTPError as exc:
            if not streaming:
                meter.fail("error", self.upstream_unreachable(exc))
                return
            # Mid-answer: the status is sent already; end with an error event, as the
            # OpenAI API and LiteLLM do, so the client knows the answer is cut short.
            meter.fail("error", f"the upstream connection broke ({type(exc).__name__})")
            message = "The model endpoint behind the copilot hub broke off the answer."
            self.write(
                b"data: " + json.dumps(openai_error(message, "upstream_error")).encode() + b"\n\n"
            )
        finally:
            await response.aclose()
            relay.settle(meter)

    async def _record(self, meter: _Meter) -> None:
        call = meter.call(self.gateway.clock())
        log.info(
            "model call: user=%s model=%s status=%s tokens=%d+%d%s%s",
            call.user,
            call.model,
            call.status,
            call.prompt_tokens,
            call.completion_tokens,
            "" if call.usage_reported else " (estimated)",
            f" ({call.detail})" if call.detail else "",
        )
        try:
            await self.gateway.store.record(call)
        except Exception:
            log.exception("Could not record a model call of %s", call.user)


class _StreamRelay:
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
            block = block.replace(self._key, _HIDDEN.encode())
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

    def settle(self, meter: _Meter) -> None:
        """Put the usage and any error event of the stream's last event on `meter`."""
        events = [e for e in _EVENT_END.split(self._last_block) if e.strip() not in (b"", _DONE)]
        last = _event_json(events[-1]) if events else None
        if isinstance(last, dict):
            meter.usage = meter.usage or _usage(last)
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
    return _json_object(data) if data and data != b"[DONE]" else None


def _json_object(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def _usage(body: Any) -> tuple[int, int] | None:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return max(prompt, 0), max(completion, 0)


def _question(messages: list[dict[str, Any]]) -> str | None:
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
