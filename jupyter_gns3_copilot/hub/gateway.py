"""The hub service's model gateway: an OpenAI-compatible endpoint with per-student budgets.

`POST /v1/chat/completions` (streamed or not) and `GET /v1/models`, as tornado handlers
(`gateway_handlers.py`: `gateway_routes(gateway)`). A call goes:

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
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from tornado.httputil import HTTPServerRequest

from ..agent.llm_access import http_base_url
from .budgets import BudgetLeft, BudgetOverrides, BudgetPolicy, Refusal
from .caller import Caller
from .metering import HIDDEN
from .usage import UsageStore, utc_now

Authenticate = Callable[[HTTPServerRequest], Awaitable[Caller | None]]
Clock = Callable[[], datetime]

UPSTREAM_POOLS = 8
"""Connection pools to the upstream, used in turn. httpcore's pool looks over every one of
its connections, the idle ones against all the others, each time a request starts or
ends, so a call's cost grows with the calls in flight: with 100 streamed calls at once,
each cost the service 5.2-6.4 ms of CPU with one pool and 2.7-4.6 ms with eight."""


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

    async def aclose(self) -> None:
        """Close the upstream connections."""
        await asyncio.gather(*(client.aclose() for client in self._clients))

    def scrub(self, text: str) -> str:
        """`text` without the upstream key."""
        key = self.upstream.api_key.get_secret_value()
        return text.replace(key, HIDDEN) if len(key) >= 4 else text

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
