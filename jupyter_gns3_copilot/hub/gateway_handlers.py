"""The model gateway's tornado handlers: `POST /v1/chat/completions` and `GET /v1/models`
(`gateway_routes`), each bound to the `ModelGateway`; the flow of a call is in
`gateway.py`'s docstring.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from http.client import responses
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

from ..agent.llm_access import TURN_HEADER
from .budgets import Refusal
from .caller import Caller
from .gateway import ModelGateway, openai_error
from .metering import CallMeter, StreamRelay, json_object, question_of, usage_of

log = logging.getLogger(__name__)

_PASSED_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry", "x-request-id")
"""Upstream response headers handed on (the copilot's retries honour them)."""


class ChatCompletionBody(BaseModel):
    """The fields of a chat completion request the gateway looks at; the body is forwarded
    as sent (other fields included), apart from `stream_options.include_usage`."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=200)
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None


def gateway_routes(
    gateway: ModelGateway, prefix: str = ""
) -> list[tuple[str, type[RequestHandler], dict[str, Any]]]:
    """Tornado URL specs for `{prefix}/v1/chat/completions` and `{prefix}/v1/models`."""
    prefix = prefix.rstrip("/")
    kwargs = {"gateway": gateway}
    return [
        (rf"{re.escape(prefix)}/v1/chat/completions", ChatCompletionsHandler, kwargs),
        (rf"{re.escape(prefix)}/v1/models", ModelsHandler, kwargs),
    ]


class GatewayHandler(RequestHandler):
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
        body = json_object(content)
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


class ModelsHandler(GatewayHandler):
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
        body = json_object(content)
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


class ChatCompletionsHandler(GatewayHandler):
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
        raw = json_object(self.request.body)
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
        question = question_of(body.messages) if gateway.log_questions else None
        meter = CallMeter(caller, body.model, gateway.clock(), turn_id, question)
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

    def _admit(self, body: ChatCompletionBody, meter: CallMeter) -> bool:
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

    def _refuse(self, refusal: Refusal, meter: CallMeter) -> None:
        meter.fail("refused", refusal.code)
        self.send_error_body(
            429,
            openai_error(refusal.message, "copilot_refusal", refusal.code),
            {"x-should-retry": "false"},
        )

    async def _forward(
        self, raw: dict[str, Any], body: ChatCompletionBody, meter: CallMeter
    ) -> None:
        gateway = self.gateway
        forwarded = dict(raw)
        client_wants_usage = bool((body.stream_options or {}).get("include_usage"))
        if body.stream:
            forwarded["stream_options"] = {**(body.stream_options or {}), "include_usage": True}
        relay = meter.relay = StreamRelay(
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
                meter.usage = usage_of(json_object(content))
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

    async def _record(self, meter: CallMeter) -> None:
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
