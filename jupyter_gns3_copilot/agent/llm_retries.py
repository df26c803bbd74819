"""LLM retries: the copilot's own, not the openai client's (`make_chat_model` turns those
off). `ModelRetries` decides, for one model call, whether a failure that came before the
answer began is tried again, honouring the endpoint's `retry-after-ms` / `retry-after` and
never retrying later than `retry_budget` seconds after the first attempt started. The
openai client would wait up to two minutes per retry, and a gateway that retries too
multiplies the wait.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping

from .llm_access import ModelSettings
from .llm_errors import ModelCallError

_RETRY_STATUSES = frozenset({408, 409, 429})
"""Statuses retried besides 5xx (the openai client's choice too)."""
_BACKOFF_FIRST = 0.5
_BACKOFF_MAX = 8.0
"""Seconds of the exponential backoff used when the endpoint names no wait."""


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
