"""LLM access: the settings a model is reached with, and the LangChain chat model built
from them, for any OpenAI-compatible endpoint.

`ModelSettings` holds what reaching a model takes (endpoint, key, model name, sampling,
timeouts, retries) and how much of its context window the copilot may fill
(`context_limit`, in thousands of tokens, and `context_strategy`, see `agent.context`);
a model's family (`MODEL_FAMILIES`, by name) gives its default context limit.
`make_chat_model` builds the LangChain chat model, `shared_chat_model` reuses one per
event loop. Its failures are worded by `llm_errors`, retried by `llm_retries`.

The API key is a `SecretStr`: it is never part of a repr, a log line or an error message.

langchain_openai and openai are imported inside the functions that need them, so importing
this module stays cheap.
"""

from __future__ import annotations

import asyncio
import logging
import re
import weakref
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
    `settings.max_retries` is not given to the openai client. Streamed calls are sent by
    `completions.DirectCompletions` (the SDK's request building and typed chunks cost
    more CPU than the call; others go through the SDK with LangChain's messages as
    given), over the process's one TLS context for models (`tls.model_tls_context`: the
    SDK's client otherwise loads the CA store for every model, ~1 MB and 40-60 ms each).
    No per-chunk timer is set (`stream_chunk_timeout`, a task per chunk): `timeout`
    already bounds the wait for each part of an answer, and the turn has its own limit.
    """
    if temperature is not None and not 0.0 <= temperature <= 2.0:
        raise ValueError(f"temperature must be between 0.0 and 2.0, got {temperature}")
    import openai
    from langchain_openai import ChatOpenAI

    from ..tls import model_tls_context
    from .completions import DirectCompletions

    tls = model_tls_context()
    api_key = settings.api_key.get_secret_value() or NO_API_KEY
    http = openai.DefaultAsyncHttpxClient(verify=tls)
    model = ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=SecretStr(api_key),
        temperature=settings.temperature if temperature is None else temperature,
        timeout=settings.timeout,
        max_retries=0,
        streaming=streaming,
        stream_usage=True,
        stream_chunk_timeout=None,
        tiktoken_model_name=tiktoken_model_name(settings.model),
        # Its own connection pool: langchain-openai otherwise shares one per base URL across
        # the whole process, and pooled connections break in any event loop but their own.
        http_async_client=http,
        # Never used (the copilot calls the model asynchronously only), but built anyway:
        # given, it takes the shared context instead of langchain-openai caching a client
        # with a context of its own per base URL for the life of the process.
        http_client=openai.DefaultHttpxClient(verify=tls),
        # Its socket options are for clients it builds itself, never these two; left as
        # they are, it logs a warning that a proxy set in the environment is shadowed,
        # when these clients do go through it.
        http_socket_options=(),
    )
    model.async_client = DirectCompletions(model.async_client, http=http, api_key=api_key)
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
