"""openai's chat completions resource with the copilot's own path for streamed calls.

Every model call of a turn is streamed, and the openai SDK's path costs more CPU than the
call itself: it walks the request's parameters through their typed descriptions (about
0.35 ms per message), builds the request through its retry and auth layers, decodes the
server-sent events in pure Python and builds a typed object per chunk, which
langchain-openai turns straight back into a dict. With thirty students on one Jupyter
server that was about a third of the server's time.

`DirectCompletions.create(stream=True, ...)` sends the same JSON body over the same httpx
client (`http_async_client`, the process's model TLS context), reads the events with
httpx-sse (as the copilot's other event streams are read) and yields each one's JSON object
as a dict, which langchain-openai reads as it is. What callers depend on is kept:

- a failed request raises what the SDK raises: the SDK's own status error for an HTTP
  error (`RateLimitError` for 429, ... with `status_code`, `body`, `code` and the response
  and its headers), `APITimeoutError` or `APIConnectionError` (from the transport error)
  when no answer came;
- an event carrying `error` (a gateway whose upstream failed mid-answer) raises a bare
  `openai.APIError` with the error as its `body`, as the SDK does;
- a connection lost or a part that did not come in time during the answer raises
  `APIConnectionError` or `APITimeoutError` (from the transport's error), as the SDK does.

Requests that are not streamed (a separate title model, LangChain's raw-response path)
go through the SDK, with the messages given in `extra_body` so it does not walk them.

It is the `async_client` of the `ChatOpenAI` made by `llm_access.make_chat_model` (the
field LangChain offers for supplying the client); every other attribute is the wrapped
resource's.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import aclosing, contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from httpx_sse import ServerSentEvent

SDK_OPTIONS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
"""`create` parameters that shape the request rather than its body."""


def _given(value: Any) -> bool:
    import openai

    return not isinstance(value, (openai.NotGiven, openai.Omit))


def _given_only(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` without the SDK's "not given" and "omit" markers."""
    return {key: value for key, value in values.items() if _given(value)}


@contextmanager
def _as_sdk_errors(request: Any) -> Iterator[None]:
    """The transport's errors raised as the SDK raises them (from the original)."""
    import anyio
    import httpx2
    import openai

    try:
        yield
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request=request) from exc
    except (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream) as exc:
        raise openai.APIConnectionError(request=request) from exc


class DirectCompletions:
    """Wraps openai's `AsyncCompletions` (or its `with_raw_response` view).

    `http` is the httpx client the SDK's own client was given, and `api_key` the key it
    was given (sent as `Authorization: Bearer`).
    """

    def __init__(self, completions: Any, *, http: Any, api_key: str) -> None:
        self._completions = completions
        self._http = http
        self._api_key = api_key

    async def create(self, **params: Any) -> Any:
        """`completions.create(**params)`: a streamed call sent directly (module
        docstring), any other through the SDK with the messages as given."""
        if params.get("stream") is True:
            return await self._stream(params)
        messages = params.pop("messages", None)
        if messages is not None:
            params["extra_body"] = {**(params.get("extra_body") or {}), "messages": messages}
            params["messages"] = []
        return await self._completions.create(**params)

    async def _stream(self, params: dict[str, Any]) -> EventStream:
        import httpx2

        client = self._completions._client
        merged = {**params, **(params.get("extra_body") or {})}
        body = {key: value for key, value in merged.items() if key not in SDK_OPTIONS}
        headers = {**self._headers, **(params.get("extra_headers") or {})}
        timeout = params.get("timeout")
        request = self._http.build_request(
            "POST",
            f"{client.base_url}chat/completions",
            content=json.dumps(_given_only(body), ensure_ascii=False).encode(),
            headers=_given_only(headers),
            params=params.get("extra_query"),
            timeout=timeout if timeout is not None and _given(timeout) else client.timeout,
        )
        with _as_sdk_errors(request):
            response = await self._http.send(request, stream=True)
        try:
            response.raise_for_status()
        except httpx2.HTTPStatusError as exc:
            try:
                await response.aread()
            finally:
                await response.aclose()
            # From the HTTP library's error, as the SDK does: the SDK's error holds a copy
            # of the request without its key, so only the chain tells what to scrub.
            raise client._make_status_error_from_response(response) from exc
        return EventStream(response)

    @functools.cached_property
    def _headers(self) -> dict[str, Any]:
        """The SDK client's default headers (fixed for its life), the key and `Accept`."""
        return {
            **self._completions._client.default_headers,
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "text/event-stream",
        }

    @property
    def with_raw_response(self) -> DirectCompletions:
        """The raw-response view (never streamed by LangChain here), messages as given."""
        return DirectCompletions(
            self._completions.with_raw_response, http=self._http, api_key=self._api_key
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


class EventStream:
    """A streamed answer: iterate for each event's JSON object (a dict) until `[DONE]`;
    `async with` closes the response."""

    def __init__(self, response: Any) -> None:
        self.response = response

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.response.aclose()

    async def __aiter__(self) -> AsyncIterator[Any]:
        done = False
        # Read to the end, past `[DONE]`, so the connection can serve the next call.
        async with aclosing(self._events()) as events:
            async for event in events:
                if done or event.event not in ("message", "error"):
                    continue
                if event.data.startswith("[DONE]"):
                    done = True
                    continue
                chunk = json.loads(event.data)
                if isinstance(chunk, Mapping) and chunk.get("error"):
                    raise self._error_event(chunk["error"])
                yield chunk

    async def _events(self) -> AsyncGenerator[ServerSentEvent, None]:
        """The answer's server-sent events (httpx-sse's reading). A body that is not an
        event stream (a web page answered with 200) holds none, as the SDK reads it."""
        from httpx_sse import EventSource

        with _as_sdk_errors(self.response.request):
            if "text/event-stream" not in self.response.headers.get("content-type", ""):
                await self.response.aread()
                return
            async with aclosing(EventSource(self.response).aiter_sse()) as events:
                async for event in events:
                    yield event

    def _error_event(self, error: Any) -> Exception:
        import openai

        message = error.get("message") if isinstance(error, Mapping) else None
        return openai.APIError(
            message
            if isinstance(message, str) and message
            else "An error occurred during streaming",
            request=self.response.request,
            body=error,
        )
