"""The copilot API over HTTP from a kernel: JSON requests and SSE event streams.

Synchronous on purpose: ipykernel runs its own asyncio loop, and a cell must block until
its turn ends, so the kernel side uses a sync `httpx.Client` (a blocked read is
interrupted by the kernel's interrupt, which the caller turns into an abort). Errors
become `CopilotError`s with what to do (`errors.py`); a 404 that is not the copilot's own
JSON error means the extension is not loaded on that server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx
from httpx_sse import SSEError, connect_sse
from pydantic import ValidationError

from ..events import ChatEvent, parse_event
from .discovery import ServerInfo
from .errors import (
    ENABLE_HINT,
    ApiError,
    CopilotError,
    ExtensionNotLoaded,
    NotAuthorized,
    ServerUnreachable,
)

log = logging.getLogger(__name__)

REQUEST_TIMEOUT = 60.0
"""Seconds for a JSON request (opening a project or reading a topology asks GNS3)."""
STREAM_READ_TIMEOUT = 300.0
"""Seconds an event stream may stay silent (the server sends heartbeats every 15 s by
default, so only a dead server or a heartbeat-less configuration waits this long)."""
CONNECT_TIMEOUT = 10.0


JsonObject = dict[str, Any]
"""A JSON object as a route answers it."""


class CopilotClient:
    """HTTP access to the copilot routes (`{base_url}copilot/...`) of one Jupyter server.

    `path` arguments are the route's parts after `copilot/` (each part is quoted), e.g.
    `client.get("projects", project_id, "topology", params={"format": "text"})`.
    """

    def __init__(
        self,
        server: ServerInfo,
        *,
        timeout: float = REQUEST_TIMEOUT,
        stream_read_timeout: float = STREAM_READ_TIMEOUT,
    ) -> None:
        self.server = server
        self.timeout = timeout
        self.stream_read_timeout = stream_read_timeout
        base_url, transport = _base_url_and_transport(server.url)
        self._http = httpx.Client(
            base_url=base_url,
            headers=server.headers(),
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
            transport=transport,
            trust_env=False,
        )

    @classmethod
    def checked(cls, server: ServerInfo) -> CopilotClient:
        """A client of `server`, once `check` passed there (closed, and the error raised,
        otherwise)."""
        client = cls(server)
        try:
            client.check()
        except CopilotError:
            client.close()
            raise
        return client

    def check(self) -> None:
        """Check that the copilot extension answers (and accepts the token): the user's
        model settings, a route that needs neither GNS3 nor a model."""
        self.get("llm-config")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> CopilotClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @staticmethod
    def path(*parts: str) -> str:
        """The route's path relative to the server's base URL."""
        return "copilot/" + "/".join(quote(str(part), safe="") for part in parts)

    # -- JSON ------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        *parts: str,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        """One request; an error status raises the matching `CopilotError`."""
        path = self.path(*parts)
        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from None
        if response.status_code >= 400:
            raise self._http_error(response)
        return response

    def get(self, *parts: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET, the JSON body."""
        return _json_or_text(self.request("GET", *parts, params=params))

    def post(self, *parts: str, json: Any = None) -> Any:
        """POST, the JSON body (None for an empty answer)."""
        return _json_or_text(self.request("POST", *parts, json=json))

    def put(self, *parts: str, json: Any = None) -> Any:
        return _json_or_text(self.request("PUT", *parts, json=json))

    def patch(self, *parts: str, json: Any = None) -> Any:
        return _json_or_text(self.request("PATCH", *parts, json=json))

    def delete(self, *parts: str) -> Any:
        return _json_or_text(self.request("DELETE", *parts))

    # -- SSE -------------------------------------------------------------------------------

    def stream(
        self,
        *parts: str,
        json: Any,
        on_open: Callable[[], None] | None = None,
        on_json: Callable[[Any], None] | None = None,
    ) -> Iterator[ChatEvent]:
        """POST `json` and yield the answer's events as they arrive (heartbeats included).

        `on_open` is called once the server has accepted the request (status 200), before
        the first event: a refusal raises before it. Closing the generator early closes
        the connection (the server then ends the turn as configured by `on_disconnect`).
        Events of an unknown type are skipped. A route that may answer JSON instead (an
        approval decision) passes that body to `on_json` and yields nothing.
        """
        path = self.path(*parts)
        timeout = httpx.Timeout(
            self.timeout, connect=CONNECT_TIMEOUT, read=self.stream_read_timeout
        )
        try:
            with connect_sse(self._http, "POST", path, json=json, timeout=timeout) as source:
                response = source.response
                if response.status_code >= 400:
                    response.read()
                    raise self._http_error(response)
                content_type = response.headers.get("content-type", "")
                if on_json is not None and content_type.startswith("application/json"):
                    response.read()
                    on_json(_json_or_text(response))
                    return
                if on_open is not None:
                    on_open()
                for message in source.iter_sse():
                    if not message.data:
                        continue
                    event = _parse(message.data)
                    if event is not None:
                        yield event
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from None
        except SSEError as exc:
            raise CopilotError(
                f"The server at {self.server.url} did not answer with an event stream: {exc}."
            ) from None

    # -- errors ----------------------------------------------------------------------------

    def _transport_error(self, exc: httpx.TransportError) -> CopilotError:
        url = self.server.url
        if isinstance(exc, httpx.TimeoutException):
            return ServerUnreachable(
                f"The Jupyter server at {url} did not answer in time ({type(exc).__name__})."
            )
        return ServerUnreachable(
            f"Cannot reach the Jupyter server at {url}: {exc or type(exc).__name__}. "
            "Is it still running? Connect to another one with "
            "`%copilot connect <url> --token <token>`."
        )

    def _http_error(self, response: httpx.Response) -> CopilotError:
        status = response.status_code
        body = _json_or_text(response)
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and "message" in error:
            details = {k: v for k, v in error.items() if k not in ("message", "type")}
            return ApiError(status, str(error["message"]), str(error.get("type", "")), **details)
        url = self.server.url
        if status == 404:
            path = response.request.url.raw_path.decode()
            return ExtensionNotLoaded(
                f"The Jupyter server at {url} answers, but the GNS3 Copilot extension is not "
                f"loaded on it (HTTP 404 for {path}). Enable it with "
                f"`{ENABLE_HINT}` and restart that server (check with "
                "`jupyter server extension list`)."
            )
        if status in (401, 403):
            return NotAuthorized(
                f"The Jupyter server at {url} refused this kernel's credentials "
                f"(HTTP {status}). Connect with its token: "
                "`%copilot connect <url> --token <token>`."
            )
        text = body.get("message") if isinstance(body, dict) else None
        text = text or (str(body)[:300] if body else response.reason_phrase)
        return ApiError(status, f"HTTP {status} from {url}: {text}")


def _parse(data: str) -> ChatEvent | None:
    try:
        return parse_event(data)
    except ValidationError as exc:
        if any(error["type"] == "union_tag_invalid" for error in exc.errors()):
            log.debug("skipping an event of an unknown type: %s", data[:200])
            return None
        raise CopilotError(
            f"The server sent an event this client cannot read: {data[:300]}"
        ) from None


def _json_or_text(response: httpx.Response) -> Any:
    if not response.content:
        return None
    if response.headers.get("content-type", "").startswith("application/json"):
        try:
            return response.json()
        except ValueError:
            pass
    return response.text


def _base_url_and_transport(url: str) -> tuple[str, httpx.HTTPTransport | None]:
    """httpx's base URL and transport for a server URL (`http+unix://` uses the socket)."""
    parts = urlsplit(url)
    if parts.scheme != "http+unix":
        return url, None
    socket_path = unquote(parts.netloc)
    return f"http://localhost{parts.path}", httpx.HTTPTransport(uds=socket_path)
