"""LLM error wording: whatever a model call raised, as a `ModelCallError` whose text says
what went wrong and which setting to fix (`describe_model_error`), and the answer with
neither text nor tool calls (`empty_answer_error`).

The endpoint's HTTP status and request id are kept on the error for the server log
(`ModelCallError.log_line`); the API key is scrubbed from any text an endpoint sends back.
openai is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import json
import re
import socket
from typing import TYPE_CHECKING, Any, Literal

from .llm_access import SETTING_HELP

if TYPE_CHECKING:
    from .llm_access import ModelSettings

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
