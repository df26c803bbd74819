"""Model access: settings, a `ChatOpenAI` factory for any OpenAI-compatible endpoint, and
readable errors.

`ModelSettings` holds what reaching a model takes (endpoint, key, model name, sampling,
timeouts, retries) and how much of its context window the copilot may fill
(`context_limit`, in thousands of tokens, and `context_strategy`, see `agent.context`).
`make_chat_model` builds the LangChain chat model; `describe_model_error` turns whatever a
model call raised into a `ModelCallError` whose text says what went wrong and which setting
to fix; `empty_answer_error` explains an answer with neither text nor tool calls.

Retries are the copilot's own, not the openai client's (`make_chat_model` turns those
off): `ModelRetries` decides, for one model call, whether a failure that came before the
answer began is tried again, honouring the endpoint's `retry-after-ms` / `retry-after` and
never retrying later than `retry_budget` seconds after the first attempt started. The
openai client would wait up to two minutes per retry, and a gateway that retries too
multiplies the wait.

The API key is a `SecretStr`: it is never part of a repr, a log line or an error message
(`describe_model_error` also scrubs it from texts an endpoint sends back).

langchain_openai and openai are imported inside the functions that need them, so importing
this module stays cheap.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import re
import socket
import time
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

log = logging.getLogger(__name__)

TURN_HEADER = "x-copilot-turn-id"
"""Request header naming the chat turn a model call belongs to (sent with every call of
a turn; the hub gateway counts a student's turns by it)."""

ContextStrategy = Literal["conservative", "balanced", "aggressive"]
DEFAULT_CONTEXT_STRATEGY: ContextStrategy = "balanced"
DEFAULT_CONTEXT_LIMIT = 32
"""Thousands of tokens assumed for a model of no known family: small enough for most
local models served with a larger window, so trimming errs on the safe side."""
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_API_KEY = "no-api-key-set"
"""Sent when no key is configured: local servers (Ollama, vLLM, LM Studio) accept any key,
and the openai client refuses to start without one."""

SETTING_HELP = {
    "base_url": "OPENAI_BASE_URL or c.GNS3Copilot.llm_base_url",
    "api_key": "OPENAI_API_KEY or c.GNS3Copilot.llm_api_key",
    "model": "GNS3_COPILOT_MODEL or c.GNS3Copilot.llm_model",
    "timeout": "c.GNS3Copilot.llm_timeout",
    "context_limit": "c.GNS3Copilot.context_limit or PUT copilot/llm-config",
}
"""Where a user sets each model setting, named in error messages."""

DEFAULT_RETRY_BUDGET = 10.0
"""Seconds after a model call's first attempt within which a retry may still start: the
student sees an error after about this long at most (plus one attempt's own time)."""
_RETRY_STATUSES = frozenset({408, 409, 429})
"""Statuses retried besides 5xx (the openai client's choice too)."""
_BACKOFF_FIRST = 0.5
_BACKOFF_MAX = 8.0
"""Seconds of the exponential backoff used when the endpoint names no wait."""
_UPSTREAM_AUTH = re.compile(
    r"litellm\.AuthenticationError|\b([A-Z][A-Za-z]*)Exception - |\bupstream\b|\bprovider\b",
    re.IGNORECASE,
)
"""A 401 body saying that the gateway's upstream provider refused the gateway's own key
(LiteLLM: `litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect
API key provided ...`), not that the gateway refused the user's key."""

GATEWAY_REFUSAL_PREFIX = "copilot_"
"""An error `code` starting with this marks a refusal by the copilot hub's gateway (budget
used up, too many calls at once) whose message is written for the student: it is shown as
is."""

_EMPTY_STREAM_MESSAGES = ("No generation chunks were returned", "No generations found in stream.")
"""What langchain raises when a stream carried no chunk (e.g. a 200 web page)."""
_TIKTOKEN_KNOWN_PREFIXES = ("gpt-3.5-turbo", "gpt-4", "gpt-5", "gpt-6", "o1", "o3", "o4")
"""Model names langchain-openai can count tokens for without `tiktoken_model_name`."""
_TIKTOKEN_FALLBACK_MODEL = "gpt-4"
"""Counts models of no known family with cl100k_base."""


class ModelFamily(NamedTuple):
    """A family of models recognised by name, with its default context limit."""

    name: str
    pattern: str
    """Regular expression matched (`re.match`) against the lower-case model name with any
    `provider/` prefix removed (`openai/gpt-4o` -> `gpt-4o`)."""
    context_limit: int
    """Thousands of tokens the copilot may count on (input and output together)."""


MODEL_FAMILIES: tuple[ModelFamily, ...] = (
    # First match wins, so narrower patterns come first.
    ModelFamily("gpt-4.1", r"gpt-4\.1", 1047),
    ModelFamily("gpt-4o", r"(chatgpt-)?gpt-4o", 128),
    ModelFamily("gpt-4-turbo", r"gpt-4-(turbo|\d{4}-preview)", 128),
    ModelFamily("gpt-4-32k", r"gpt-4-32k", 32),
    ModelFamily("gpt-4", r"gpt-4", 8),
    ModelFamily("gpt-3.5", r"gpt-3\.5", 16),
    ModelFamily("gpt-5-chat", r"gpt-5[.\d]*-chat", 128),
    # gpt-5 has a 400k window but accepts at most 272k input tokens: counting 272k keeps
    # every strategy's input budget under that cap.
    ModelFamily("gpt-5", r"gpt-5", 272),
    ModelFamily("gpt-oss", r"gpt-oss", 128),
    ModelFamily("o1-mini/preview", r"o1-(mini|preview)", 128),
    ModelFamily("o-series", r"o[134]\b", 200),
    # DeepSeek's API served 64k before V3.1 and 128k since; 64k is safe for both.
    ModelFamily("deepseek", r"deepseek", 64),
    # Qwen 2.5/3 are natively 32k (128k only with YaRN scaling, rarely enabled).
    ModelFamily("qwen", r"qwen|qwq", 32),
    ModelFamily("llama-3.1+", r"(meta-)?llama-?(3\.[1-9]|[4-9])", 128),
    ModelFamily("llama", r"(meta-)?llama", 8),
    ModelFamily("mistral-large", r"mistral-(large|medium)", 128),
    ModelFamily("mistral", r"mistral|mixtral|ministral|codestral|magistral|devstral", 32),
    ModelFamily("claude", r"claude", 200),
    ModelFamily("gemini", r"gemini", 1000),
    ModelFamily("gemma", r"gemma", 8),
    ModelFamily("phi", r"phi-?[34]", 16),
)
"""Default context limits per model family (used when `context_limit` is not set).

Local servers may serve a model with a smaller window than the family supports (Ollama's
default `num_ctx` is a few thousand tokens); set `context_limit` to what the server uses.
"""


def bare_model_name(model: str) -> str:
    """The lower-case model name without a gateway's `provider/` prefix."""
    return model.strip().rsplit("/", 1)[-1].lower()


def model_family(model: str) -> ModelFamily | None:
    """The family `model` belongs to, or None when no known family matches."""
    name = bare_model_name(model)
    for family in MODEL_FAMILIES:
        if re.match(family.pattern, name):
            return family
    return None


def default_context_limit(model: str) -> int:
    """The context limit (thousands of tokens) assumed for `model` when none is set."""
    family = model_family(model)
    return family.context_limit if family else DEFAULT_CONTEXT_LIMIT


def tiktoken_model_name(model: str) -> str | None:
    """The `tiktoken_model_name` ChatOpenAI needs to count tokens for `model` (None: none).

    langchain-openai counts only names starting like an OpenAI model; others (and gateway
    names such as `openai/gpt-4o`) get a stand-in name so counting works.
    """
    name = bare_model_name(model)
    if name.startswith(_TIKTOKEN_KNOWN_PREFIXES):
        return None if name == model else name
    return _TIKTOKEN_FALLBACK_MODEL


def http_base_url(value: str, what: str) -> str:
    """`value` without surrounding spaces or a trailing slash; `ValueError` naming `what`
    unless it is an http(s) URL with a host."""
    value = value.strip().rstrip("/")
    if not re.match(r"https?://[^/\s]+", value):
        raise ValueError(f"{what} must start with http:// or https://, got {value!r}")
    return value


class ModelSettings(BaseModel):
    """How to reach a chat model on an OpenAI-compatible endpoint, and how to use its window.

    `temperature` None leaves sampling to the endpoint's default (reasoning models such as
    o1/o3 accept no other value). `context_limit` defaults per model family (see
    `MODEL_FAMILIES`, else `DEFAULT_CONTEXT_LIMIT`). An unknown `context_strategy` falls
    back to "balanced" with a warning.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    api_key: SecretStr = SecretStr("")
    """Empty: no key (fine for local servers; a hosted API will answer 401)."""
    model: str = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    timeout: float = Field(default=60.0, gt=0)
    """Seconds to wait for the connection and for each part of an answer."""
    max_retries: int = Field(default=2, ge=0, le=10)
    """Retries of a model call that failed before its answer began: connection errors,
    timeouts, 408, 409, 429 and 5xx (see `ModelRetries`)."""
    retry_budget: float = Field(default=DEFAULT_RETRY_BUDGET, ge=0, le=300)
    """Seconds after the first attempt within which a retry may start; a wait the endpoint
    asks for (`retry-after`) that ends later stops the retries at once."""
    context_limit: int = Field(default=DEFAULT_CONTEXT_LIMIT, gt=0)
    """Thousands of tokens (128 = 128,000 tokens)."""
    context_strategy: ContextStrategy = DEFAULT_CONTEXT_STRATEGY

    @model_validator(mode="before")
    @classmethod
    def _context_limit_from_model(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("context_limit") is None:
            data = {**data, "context_limit": default_context_limit(str(data.get("model", "")))}
        return data

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_base_url(value, "the model base URL")

    @field_validator("context_strategy", mode="before")
    @classmethod
    def _known_strategy(cls, value: Any) -> Any:
        if value is None:
            return DEFAULT_CONTEXT_STRATEGY
        if value not in get_args(ContextStrategy):
            log.warning(
                "Unknown context_strategy %r, using %r (choose one of %s)",
                value,
                DEFAULT_CONTEXT_STRATEGY,
                ", ".join(get_args(ContextStrategy)),
            )
            return DEFAULT_CONTEXT_STRATEGY
        return value


def make_chat_model(
    settings: ModelSettings, *, temperature: float | None = None, streaming: bool = True
) -> ChatOpenAI:
    """A `ChatOpenAI` for `settings`, with `temperature` (0.0-2.0) overriding the setting.

    `stream_usage=True` makes it ask for the usage chunk, which ChatOpenAI omits for a
    custom base URL otherwise. Note that langchain-openai drops a temperature other than 1
    for gpt-5 reasoning models (not gpt-5-chat), which accept no other value.

    The model makes one attempt per call: retrying is the caller's (`ModelRetries`), so
    `settings.max_retries` is not given to the openai client. Its client sends the
    messages as LangChain built them (`completions.MessagesAsGiven`: the SDK's walk of
    each message through its types costs ~0.35 ms per message per call), over the
    process's one TLS context for models (`tls.model_tls_context`: the SDK's client
    otherwise loads the CA store for every model, ~1 MB and 40-60 ms each).
    """
    if temperature is not None and not 0.0 <= temperature <= 2.0:
        raise ValueError(f"temperature must be between 0.0 and 2.0, got {temperature}")
    import openai
    from langchain_openai import ChatOpenAI

    from ..tls import model_tls_context
    from .completions import MessagesAsGiven

    tls = model_tls_context()
    model = ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key if settings.api_key.get_secret_value() else SecretStr(NO_API_KEY),
        temperature=settings.temperature if temperature is None else temperature,
        timeout=settings.timeout,
        max_retries=0,
        streaming=streaming,
        stream_usage=True,
        tiktoken_model_name=tiktoken_model_name(settings.model),
        # Its own connection pool: langchain-openai otherwise shares one per base URL across
        # the whole process, and pooled connections break in any event loop but their own.
        http_async_client=openai.DefaultAsyncHttpxClient(verify=tls),
        # Never used (the copilot calls the model asynchronously only), but built anyway:
        # given, it takes the shared context instead of langchain-openai caching a client
        # with a context of its own per base URL for the life of the process.
        http_client=openai.DefaultHttpxClient(verify=tls),
    )
    model.async_client = MessagesAsGiven(model.async_client)
    return model


_MODELS_PER_LOOP = 32
_loop_models: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[ModelSettings, float | None, bool], ChatOpenAI]
] = weakref.WeakKeyDictionary()


async def shared_chat_model(
    settings: ModelSettings, *, temperature: float | None = None, streaming: bool = True
) -> ChatOpenAI:
    """`make_chat_model(...)` built once per running event loop and arguments, so turns
    reuse its connections; at most `_MODELS_PER_LOOP` are kept per loop (oldest dropped).

    A missing model is built in a worker thread (the openai client and its TLS context
    take tens of milliseconds the loop, and every request on it, would otherwise wait);
    its connections are opened on first use, so they belong to the caller's loop.
    """
    models = _loop_models.setdefault(asyncio.get_running_loop(), {})
    key = (settings, temperature, streaming)
    model = models.get(key)
    if model is None:
        built = await asyncio.to_thread(
            make_chat_model, settings, temperature=temperature, streaming=streaming
        )
        model = models.get(key)  # a concurrent first turn may have built one meanwhile
        if model is None:
            if len(models) >= _MODELS_PER_LOOP:
                del models[next(iter(models))]
            model = models[key] = built
    return model


ModelErrorKind = Literal[
    "unreachable",
    "timeout",
    "connection_lost",
    "auth",
    "upstream_auth",
    "forbidden",
    "not_found",
    "rate_limit",
    "quota",
    "refused",
    "context_length",
    "bad_request",
    "server_error",
    "html_page",
    "empty_reply",
    "unexpected",
]


class ModelCallError(Exception):
    """A failed model call, explained: `str(error)` says what happened and what to fix.

    `kind` classifies it (see `ModelErrorKind`), `status` is the HTTP status if one came,
    `base_url` the endpoint, `request_id` the id the endpoint gave its answer (its
    `x-request-id` or `request-id` header), for finding the call in the endpoint's own
    logs. Never contains the API key.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ModelErrorKind,
        status: int | None = None,
        base_url: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: ModelErrorKind = kind
        self.status = status
        self.base_url = base_url
        self.request_id = request_id

    def __str__(self) -> str:
        return self.message

    def log_line(self) -> str:
        """The failure for the server log: endpoint, HTTP status, the endpoint's request id
        and the message the user was shown."""
        facts = [f"kind {self.kind}"]
        if self.status is not None:
            facts.append(f"HTTP {self.status}")
        if self.request_id:
            facts.append(f"request id {self.request_id}")
        where = f" at {self.base_url}" if self.base_url else ""
        return f"Model call{where} failed ({', '.join(facts)}): {self.message}"


def describe_model_error(
    exc: BaseException, settings: ModelSettings | None = None
) -> ModelCallError:
    """Explain an exception raised by a model call (openai, httpx or langchain errors).

    `settings`, when given, names the endpoint, model, timeout and retry count in the
    message; without them they are read from the failed request where possible.
    """
    if isinstance(exc, ModelCallError):
        return exc
    import openai

    request = _failed_request(exc)
    base_url = settings.base_url if settings else _base_url(request)
    model = settings.model if settings else _requested_model(request)
    secrets = _secrets(exc, settings)
    endpoint = f"the model endpoint at {base_url}" if base_url else "the model endpoint"

    request_id = _request_id(exc)

    def fail(message: str, kind: ModelErrorKind, status: int | None = None) -> ModelCallError:
        return ModelCallError(
            _scrub(message, secrets),
            kind=kind,
            status=status,
            base_url=base_url,
            request_id=request_id,
        )

    where_to_fix = (
        f"check the base URL ({SETTING_HELP['base_url']}) and the API key "
        f"({SETTING_HELP['api_key']})"
    )
    if _is_html_answer(exc):
        status = getattr(exc, "status_code", None)
        shown = f" (HTTP {status})" if status else ""
        return fail(
            f"{_capitalized(endpoint)} answered with a web page{shown} instead of an API response: "
            f"{where_to_fix}.",
            "html_page",
            status,
        )
    if isinstance(exc, openai.APITimeoutError):
        waited = f"within {settings.timeout:g} s" if settings else "in time"
        return fail(
            f"{_capitalized(endpoint)} did not answer {waited}. Check that it is running, "
            f"or raise the timeout ({SETTING_HELP['timeout']}).",
            "timeout",
        )
    if isinstance(exc, openai.APIConnectionError) and not _broke_midway(exc):
        return fail(
            f"Cannot reach {endpoint} ({_transport_reason(exc)}). Check that the model "
            f"server is running and that the base URL is right ({SETTING_HELP['base_url']}).",
            "unreachable",
        )
    if isinstance(exc, openai.APIStatusError):
        return fail(*_status_message(exc, endpoint, base_url, model, settings))
    if _is_stream_error_event(exc):
        if _is_context_overflow(exc):
            return fail(_context_overflow_message(_server_detail(exc), model), "context_length")
        # A gateway whose upstream died mid-answer says so in an error event; for the user
        # it is the same as a connection broken during the answer.
        detail = _server_detail(exc, first_line=True)
        reported = f"; the endpoint reported: {detail}" if detail else ""
        return fail(
            f"The connection to {endpoint} broke during the answer (an error event in the "
            f"stream{reported}). Try again.",
            "connection_lost",
        )
    if isinstance(exc, openai.APIConnectionError) or _is_transport_error(exc):
        return fail(
            f"The connection to {endpoint} broke during the answer ({_transport_reason(exc)}). "
            "Try again.",
            "connection_lost",
        )
    if isinstance(exc, ValueError) and str(exc) in _EMPTY_STREAM_MESSAGES:
        return fail(
            f"{_capitalized(endpoint)} sent an empty answer (no chunks at all): {where_to_fix}.",
            "empty_reply",
        )
    return fail(f"The model call failed: {type(exc).__name__}: {exc}", "unexpected")


def empty_answer_error(
    settings: ModelSettings | None = None, finish_reason: str | None = None
) -> ModelCallError:
    """The error for an answer that came to an end with neither text nor tool calls.

    A gateway does this when its upstream sent something that was no answer (an HTML page
    with HTTP 200 became an empty stream ending with finish reason "stop"); the user must
    see an error, not an empty reply.
    """
    base_url = settings.base_url if settings else None
    where = f" at {base_url}" if base_url else ""
    reason = f' (finish reason "{finish_reason}")' if finish_reason else ""
    if finish_reason == "length":
        advice = "It reached its output limit before writing anything: try again."
    elif finish_reason == "content_filter":
        advice = "The endpoint's content filter withheld it: rephrase the message."
    else:
        advice = (
            "Try again; if it keeps happening, tell whoever runs the model endpoint"
            f"{where} (a gateway answers like this when its upstream sent no answer)."
        )
    return ModelCallError(
        f"The model returned an empty answer: no text and no tool call{reason}. {advice}",
        kind="empty_reply",
        base_url=base_url,
    )


class ModelRetries:
    """Whether a failed model call is tried again, and after how long (one per call).

    `next_delay(exc)` after each failure that came before the answer began: the seconds to
    wait before the next attempt, or None to give up. A retry is made for connection
    errors, timeouts, HTTP 408, 409, 429 (not "insufficient_quota") and 5xx, or whenever
    the endpoint's `x-should-retry` header says "true" ("false" forbids it); at most
    `max_retries` times; after the wait the endpoint asks for (`retry-after-ms`, then
    `retry-after` in seconds or as a date) or else an exponential backoff (0.5 s, 1 s, 2 s,
    ... at most 8 s, less up to 25 % jitter); and only if the retry starts within
    `retry_budget` seconds of the first attempt. `explain(error)` adds what the retries
    did to the final error.
    """

    def __init__(
        self, settings: ModelSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._started = clock()
        self.retries = 0
        """Retries made so far."""
        self.refused_wait: float | None = None
        """A wait the endpoint asked for that did not fit in the budget (seconds)."""

    def next_delay(self, exc: BaseException) -> float | None:
        """Seconds to wait before retrying after `exc` (the retry is counted), or None."""
        if self.retries >= self.settings.max_retries or not _retryable(exc):
            return None
        left = self.settings.retry_budget - (self._clock() - self._started)
        asked = _asked_wait(exc)
        if asked is not None and asked > 0:
            if asked > left:
                self.refused_wait = asked
                return None
            delay = asked
        else:
            backoff = min(_BACKOFF_FIRST * 2.0**self.retries, _BACKOFF_MAX)
            delay = backoff * (1 - 0.25 * random.random())
            if delay > left:
                return None
        self.retries += 1
        return delay

    def explain(self, error: ModelCallError) -> ModelCallError:
        """`error` with a sentence on the retries made or refused (unchanged if none)."""
        if self.refused_wait is not None:
            wait = _seconds_text(self.refused_wait)
            later = "later" if math.isinf(self.refused_wait) else f"in {wait}"
            note = (
                f" The endpoint asked to wait {wait} before trying again, longer than the "
                f"copilot waits ({self.settings.retry_budget:g} s): try again {later}."
            )
        elif self.retries:
            times = "once" if self.retries == 1 else f"{self.retries} times"
            note = f" (Retried {times}.)"
        else:
            return error
        return ModelCallError(
            error.message + note,
            kind=error.kind,
            status=error.status,
            base_url=error.base_url,
            request_id=error.request_id,
        )


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # timeouts included
        return True
    if not isinstance(exc, openai.APIStatusError):
        return False
    should_retry = exc.response.headers.get("x-should-retry")
    if should_retry in ("true", "false"):
        return should_retry == "true"
    if exc.status_code == 429 and getattr(exc, "code", None) == "insufficient_quota":
        return False
    return exc.status_code in _RETRY_STATUSES or exc.status_code >= 500


def _asked_wait(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    return retry_after(response.headers) if response is not None else None


_RETRY_AFTER_HEADERS = (
    ("retry-after-ms", 0.001),
    ("retry-after", 1.0),
    # LiteLLM passes its upstream's headers on with this prefix, and sends no retry-after
    # of its own when it hands on an upstream 429.
    ("llm_provider-retry-after-ms", 0.001),
    ("llm_provider-retry-after", 1.0),
)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the endpoint asks to wait before a retry: `retry-after-ms`, `retry-after`
    (seconds or an HTTP date), or the same headers of a LiteLLM gateway's upstream
    (`llm_provider-` prefix); None when none is usable. An overflowing number is
    `math.inf`."""
    for name, scale in _RETRY_AFTER_HEADERS:
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if math.isnan(seconds):
            continue
        return max(seconds, 0.0)
    value = headers.get("retry-after")
    try:
        when = email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError):
        return None
    return None if when is None else max(when.timestamp() - time.time(), 0.0)


def _seconds_text(seconds: float) -> str:
    if math.isinf(seconds):
        return "indefinitely"
    if seconds < 120:
        return f"{math.ceil(seconds)} s"
    return f"{math.ceil(seconds / 60)} min"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def _status_message(
    exc: Any,
    endpoint: str,
    base_url: str | None,
    model: str | None,
    settings: ModelSettings | None,
) -> tuple[str, ModelErrorKind, int]:
    status: int = exc.status_code
    subject = _capitalized(endpoint)
    detail = _server_detail(exc)
    answered = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
    named_model = f"model {model!r}" if model else "the model"
    if str(getattr(exc, "code", None) or "").startswith(GATEWAY_REFUSAL_PREFIX) and detail:
        return detail, "refused", status
    if status == 401:
        # The endpoint's own 401 text is left out: some echo (part of) the key.
        upstream = _upstream_provider(exc)
        if upstream is not None:
            provider = f" ({upstream})" if upstream else ""
            return (
                f"{subject} accepted your API key, but its upstream provider{provider} "
                "refused the gateway's own key (HTTP 401). Your key is not the problem: tell "
                "the administrator of the gateway.",
                "upstream_auth",
                status,
            )
        if settings is not None and not settings.api_key.get_secret_value():
            advice = f"No API key is set: set one ({SETTING_HELP['api_key']})."
        else:
            advice = f"Check the API key ({SETTING_HELP['api_key']})."
        return f"{subject} rejected the API key (HTTP 401). {advice}", "auth", status
    if status == 403:
        return (
            f"{subject} refused the request ({answered}). Check that the API key "
            f"({SETTING_HELP['api_key']}) may use {named_model}.",
            "forbidden",
            status,
        )
    if status == 404:
        return (
            f"{_capitalized(named_model)} was not found at {base_url or 'the endpoint'} "
            f"({answered}). Check the model name ({SETTING_HELP['model']}) and the base "
            f"URL ({SETTING_HELP['base_url']}).",
            "not_found",
            status,
        )
    if status == 429:
        if getattr(exc, "code", None) == "insufficient_quota":
            return (
                f"{subject} says the account has no quota left ({answered}). Check the "
                "account's plan and billing.",
                "quota",
                status,
            )
        return (
            f"{subject} is limiting the request rate ({answered}). Wait a moment "
            "and try again, or check the account's rate limits.",
            "rate_limit",
            status,
        )
    if status == 400 and _is_context_overflow(exc):
        return _context_overflow_message(answered, model), "context_length", status
    if status >= 500:
        return (
            f"{subject} failed ({answered}). Try again later; if it persists, check the "
            "model server.",
            "server_error",
            status,
        )
    return f"{subject} rejected the request ({answered}).", "bad_request", status


def _context_overflow_message(answered: str, model: str | None) -> str:
    named_model = f"model {model!r}" if model else "the model"
    shown = f" ({answered})" if answered else ""
    return (
        f"The conversation is too long for {named_model}{shown}. Start a new chat "
        f"or lower the context limit ({SETTING_HELP['context_limit']})."
    )


def _upstream_provider(exc: Any) -> str | None:
    """For a 401 refused upstream of a gateway: the provider's name if the body names it,
    else ""; None when the body does not say the refusal came from upstream."""
    message = _server_detail(exc)
    match = _UPSTREAM_AUTH.search(message)
    if match is None:
        return None
    named = re.search(r"\b([A-Z][A-Za-z]*)Exception - ", message)
    return named.group(1) if named else ""


def _is_stream_error_event(exc: BaseException) -> bool:
    """An error the endpoint sent inside a stream (`data: {"error": {...}}`), which the
    openai client raises as a bare `APIError` (no HTTP status, no broken connection)."""
    import openai

    return isinstance(exc, openai.APIError) and not isinstance(
        exc, (openai.APIStatusError, openai.APIConnectionError, openai.APIResponseValidationError)
    )


def _failed_request(exc: BaseException) -> Any:
    for error in _chain(exc):
        request = getattr(error, "request", None)
        if request is not None and hasattr(request, "url"):
            return request
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from (causes and contexts), without cycles."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _base_url(request: Any) -> str | None:
    if request is None:
        return None
    url = str(request.url)
    for suffix in ("/chat/completions", "/completions", "/models", "/responses"):
        if suffix in url:
            return url.split(suffix, 1)[0]
    return url


_REQUEST_ID_HEADERS = ("x-request-id", "request-id")


def _request_id(exc: BaseException) -> str | None:
    """The id the endpoint gave the failed answer (its request id header), if any."""
    for error in _chain(exc):
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
        if headers is None:
            continue
        for name in _REQUEST_ID_HEADERS:
            value = headers.get(name)
            if value:
                return str(value)[:200]
    return None


def _requested_model(request: Any) -> str | None:
    try:
        model = json.loads(request.content).get("model")
    except Exception:
        return None
    return model if isinstance(model, str) else None


def _secrets(exc: BaseException, settings: ModelSettings | None) -> list[str]:
    """The keys that must not appear in a message about `exc`: the settings' key, and the
    bearer token of every request in its chain (recent openai releases give the error a
    copy of the request without its Authorization header; the HTTP library's own error
    further down the chain still has it)."""
    secrets = []
    if settings is not None:
        secrets.append(settings.api_key.get_secret_value())
    for error in _chain(exc):
        headers = getattr(getattr(error, "request", None), "headers", None)
        if headers is not None:
            authorization = str(headers.get("authorization", ""))
            secrets.append(authorization.removeprefix("Bearer ").strip())
    # A key shorter than 4 characters is no secret, and scrubbing it would garble the text.
    return [secret for secret in secrets if len(secret) >= 4]


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[API key hidden]")
    return text


def _server_detail(exc: Any, *, first_line: bool = False) -> str:
    """The error body's message on one line, at most 300 characters (only its first line
    with `first_line`: gateways append tracebacks)."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        return ""
    if first_line:
        message = message.strip().split("\n", 1)[0]
    message = " ".join(message.split())
    return message if len(message) <= 300 else message[:297] + "..."


def _is_html_answer(exc: BaseException) -> bool:
    """An endpoint that sent a web page: an error page, or a 200 page where JSON belonged."""
    response = getattr(exc, "response", None)
    content_type = ""
    if response is not None:
        content_type = str(response.headers.get("content-type", "")).lower()
    body = getattr(exc, "body", None)
    if "text/html" in content_type:
        return True
    if isinstance(body, str) and body.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return True
    # langchain-openai's complaint when a 200 answer was not JSON at all.
    message = str(exc)
    return isinstance(exc, ValueError) and "Unexpected response type" in message and "<" in message


def _is_context_overflow(exc: Any) -> bool:
    if getattr(exc, "code", None) == "context_length_exceeded":
        return True
    from langchain_core.exceptions import ContextOverflowError

    return isinstance(exc, ContextOverflowError)


def _transport_errors() -> tuple[type[BaseException], ...]:
    import httpx

    try:
        import httpx2  # what openai 3.x sends through
    except ImportError:
        return (httpx.TransportError,)
    return (httpx.TransportError, httpx2.TransportError)


def _is_transport_error(exc: BaseException) -> bool:
    return isinstance(exc, _transport_errors())


def _broke_midway(exc: BaseException) -> bool:
    """A connection that was made and then lost (not refused, not an unknown host)."""
    chain = _chain(exc)
    transport = [error for error in chain if _is_transport_error(error)]
    return bool(transport) and not any(
        type(error).__name__ == "ConnectError"
        or isinstance(error, (ConnectionRefusedError, socket.gaierror))
        for error in chain
    )


def _transport_reason(exc: BaseException) -> str:
    """The innermost readable cause (e.g. "connection refused")."""
    for error in reversed(_chain(exc)):
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        text = str(error).strip()
        if text and text != "Connection error.":
            return text
    return type(exc).__name__
