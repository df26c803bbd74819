"""`GNS3Connection`: the GNS3 client's HTTP transport, authentication and error mapping,
on which the resource parts (`projects.py`, `nodes.py`, `links.py`, `captures.py`,
`snapshots.py`) and `GNS3Client` are built.

Authentication: with a username and password the client logs in on its first authenticated
request (POST /v3/access/users/authenticate), caches the JWT, and logs in again once when
GNS3 answers 401 (expired or revoked token); a second 401 is a `GNS3AuthError`. A `token`
given to the constructor is used as is (and replaced by a fresh login on 401 when
credentials are also given). A `token_provider` (an async callable, `force` -> JWT) is asked
before every request (it caches and renews the token itself, e.g. the hub service's
per-student token) and once more with `force=True` on a 401.

Every failure is a `GNS3Error` subclass (see errors.py); no httpx exception escapes. Every
request is bounded by `timeout` seconds.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx

from ..tls import shared_tls_context
from .errors import (
    CREDENTIALS_HELP,
    URL_HELP,
    GNS3APIError,
    GNS3AuthError,
    GNS3Conflict,
    GNS3Error,
    GNS3NotFound,
    GNS3Timeout,
    GNS3Unreachable,
)
from .models import Version
from .topology import natural_key

DEFAULT_TIMEOUT = 30.0
"""Seconds a request may take (starting many nodes or restoring a snapshot takes a while)."""
CONNECT_TIMEOUT = 5.0
"""Seconds to wait for the TCP connection itself."""
MAX_REQUESTS_IN_FLIGHT = 8
"""Requests one client sends to GNS3 at once (until their answer's headers); more wait
their turn. httpx's connection pool looks at every pooled connection for every waiting
request each time a request starts or ends, so fifty requests at once (a class pressing
Enter together) cost it quadratic time on the event loop, which capped a server's turns
per second. GNS3 serves requests on one CPU anyway."""
KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is kept for reuse: less than the 5 s after which GNS3's HTTP
server (uvicorn) closes it. With httpx's default, also 5 s, a request sent on a connection
idle for just under 5 s could meet GNS3 closing it ("Server disconnected without sending
a response"): a class's turns at once hit that."""

TokenProvider = Callable[[bool], Awaitable[str]]
"""`provider(force)` -> a GNS3 JWT; `force=True` after GNS3 refused the last one."""

_Subject = tuple[str, str]
"""What a request is about, for not-found errors: (kind, name or id), e.g. ("node", "PC1")."""


def names_text(names: Sequence[str]) -> str:
    """Names in natural order, comma-separated ("none" for none), for error messages."""
    return ", ".join(sorted(names, key=natural_key)) or "none"


def _detail(response: httpx.Response) -> str:
    """GNS3's own error message: the `message` of its JSON body, else the body text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500]
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return str(body)[:500]


def _short(detail: str, limit: int = 200) -> str:
    """The first line of `detail`, cut to `limit` characters (the error keeps it whole)."""
    line = detail.strip().splitlines()[0] if detail.strip() else "(no message)"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def transport_reason(exc: BaseException) -> str:
    """A short reason for a transport failure ("connection refused", "unknown host"...)."""
    cause: BaseException | None = exc
    for _ in range(10):
        if cause is None:
            break
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"unknown host: {cause.strerror}"
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


_Connection = TypeVar("_Connection", bound="GNS3Connection")


class GNS3Connection:
    """The connection to one GNS3 server (see `GNS3Client`, built on it)."""

    def __init__(
        self,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        token: str | None = None,
        token_provider: TokenProvider | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        base = url.strip().rstrip("/")
        if "://" not in base:
            base = f"http://{base}"
        self.url = base.removesuffix("/v3")
        self.username = username
        self._password = password
        self._token = token
        self._token_provider = token_provider
        self.timeout = timeout
        self._auth_lock = asyncio.Lock()
        self._http = httpx.AsyncClient(
            base_url=f"{self.url}/v3",
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            transport=transport,
            verify=shared_tls_context(),
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY),
        )
        self._slots = asyncio.Semaphore(MAX_REQUESTS_IN_FLIGHT)

    async def __aenter__(self: _Connection) -> _Connection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections. The client cannot be used afterwards."""
        await self._http.aclose()

    @property
    def token(self) -> str | None:
        """The JWT currently used, or None before the first login."""
        return self._token

    # -- transport and errors ------------------------------------------------------------

    @property
    def _can_login(self) -> bool:
        return self.username is not None and self._password is not None

    @property
    def _can_renew(self) -> bool:
        return self._token_provider is not None or self._can_login

    async def _send(
        self,
        method: str,
        path: str,
        json: Any,
        token: str | None,
        *,
        stream: bool = False,
        content: bytes | None = None,
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            request = self._http.build_request(
                method, path, json=json, content=content, headers=headers
            )
            async with self._slots:
                return await self._http.send(request, stream=stream)
        except httpx.ConnectTimeout as exc:
            raise GNS3Unreachable(
                f"Cannot reach the GNS3 server at {self.url} (no answer to the connection "
                f"within {CONNECT_TIMEOUT:g} s). {URL_HELP}.",
                url=self.url,
                detail=str(exc) or type(exc).__name__,
            ) from exc
        except httpx.TimeoutException as exc:
            raise GNS3Timeout(
                f"GNS3 at {self.url} did not answer {method} {path} within {self.timeout:g} s.",
                url=f"{self.url}/v3{path}",
                detail=str(exc) or type(exc).__name__,
            ) from exc
        except httpx.TransportError as exc:
            reason = transport_reason(exc)
            raise GNS3Unreachable(
                f"Cannot reach the GNS3 server at {self.url} ({reason}). {URL_HELP}.",
                url=self.url,
                detail=reason,
            ) from exc

    async def _login(self) -> str:
        response = await self._send(
            "POST",
            "/access/users/authenticate",
            {"username": self.username, "password": self._password},
            None,
        )
        if response.status_code == 401:
            raise GNS3AuthError(
                f"GNS3 at {self.url} refused the login of user '{self.username}'. "
                f"{CREDENTIALS_HELP}.",
                status=401,
                url=str(response.request.url),
                detail=_detail(response),
            )
        if response.is_error:
            raise self._error(response, ())
        return str(response.json()["access_token"])

    async def authenticate(self) -> str:
        """Log in with the username and password now and return the new JWT.

        Not needed before other calls (they log in when needed); useful to check
        credentials early. Raises `GNS3AuthError` when they are wrong or missing. With a
        `token_provider`, the provider's current token.
        """
        if self._token_provider is not None:
            self._token = await self._token_provider(False)
            return self._token
        if not self._can_login:
            raise GNS3AuthError(
                f"No GNS3 username and password to log in to {self.url} with. "
                f"Set GNS3_USER and GNS3_PASSWORD.",
                url=self.url,
            )
        async with self._auth_lock:
            self._token = await self._login()
            return self._token

    async def access_token(self, renew: bool = False) -> str | None:
        """The JWT this client sends (logging in, or asking the token provider, when
        needed), for GNS3 routes outside this client such as a console websocket.

        `renew=True` after GNS3 did not accept it: a new one when this client can get
        one (credentials or a token provider), else the same. None without any means to
        authenticate. Raises `GNS3Error` when the login or the provider fails.
        """
        token = await self._current_token()
        if renew and self._can_renew:
            token = await self._renewed_token(token)
        return token

    async def _current_token(self) -> str | None:
        if self._token_provider is not None:
            self._token = await self._token_provider(False)
            return self._token
        if self._token is None and self._can_login:
            async with self._auth_lock:
                if self._token is None:
                    self._token = await self._login()
        return self._token

    async def _renewed_token(self, rejected: str | None) -> str:
        async with self._auth_lock:
            # Another request may already have logged in again while we waited.
            if self._token is None or self._token == rejected:
                self._token = (
                    await self._token_provider(True)
                    if self._token_provider is not None
                    else await self._login()
                )
            return self._token

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        auth: bool = True,
        subjects: Sequence[_Subject] = (),
        stream: bool = False,
        content: bytes | None = None,
    ) -> httpx.Response:
        """Send one request and return the successful response; raise a `GNS3Error` else.

        The client's own calls and `GNS3Access` go through here: login, one renewal of the
        token on a 401 and the error mapping included.

        `subjects` names what the request is about, most general first (e.g. the project,
        then the node) so that a 404 can say which one GNS3 did not find. With `stream`
        the body is not read yet: the caller reads it and closes the response. `content`
        is a raw body (instead of `json`).
        """
        token = await self._current_token() if auth else None
        response = await self._send(method, path, json, token, stream=stream, content=content)
        if response.status_code == 401 and auth and self._can_renew:
            await response.aclose()
            token = await self._renewed_token(token)
            response = await self._send(method, path, json, token, stream=stream, content=content)
        if response.is_error:
            if stream:
                await response.aread()
                await response.aclose()
            raise self._error(response, subjects)
        return response

    def _error(self, response: httpx.Response, subjects: Sequence[_Subject]) -> GNS3Error:
        status = response.status_code
        detail = _detail(response)
        url = str(response.request.url)
        request = f"{response.request.method} {response.request.url.path}"
        if status == 401:
            if self._can_login:
                message = (
                    f"GNS3 at {self.url} still refused the request after logging in again "
                    f"as '{self.username}'."
                )
            elif self._token:
                message = f"GNS3 at {self.url} refused the access token. {CREDENTIALS_HELP}."
            else:
                message = f"GNS3 at {self.url} requires a login. Set GNS3_USER and GNS3_PASSWORD."
            return GNS3AuthError(message, status=status, url=url, detail=detail)
        if status == 403:
            who = f"User '{self.username}'" if self.username else "This token"
            return GNS3AuthError(
                f"{who} may not do that on GNS3 ({request}): {_short(detail)}",
                status=status,
                url=url,
                detail=detail,
            )
        if status == 404:
            kind, name = next(
                (s for s in subjects if s[1] in detail),
                subjects[-1] if subjects else ("resource", request),
            )
            return GNS3NotFound(
                f"GNS3 {kind} '{name}' not found.",
                kind=kind,
                name=name,
                status=status,
                url=url,
                detail=detail,
            )
        if status == 408:
            return GNS3Timeout(
                f"GNS3 timed out: {_short(detail)}", status=status, url=url, detail=detail
            )
        if status == 409:
            return GNS3Conflict(
                f"GNS3 refused: {_short(detail)}", status=status, url=url, detail=detail
            )
        return GNS3APIError(
            f"GNS3 answered HTTP {status} to {request}: {_short(detail)}",
            status=status,
            url=url,
            detail=detail,
        )

    async def request_json(self, method: str, path: str, **kwargs: Any) -> Any:
        """`request` (same arguments), and the answer's decoded JSON body."""
        return (await self.request(method, path, **kwargs)).json()

    @staticmethod
    def check_id(kind: str, value: str) -> None:
        """Refuse a name where GNS3 wants a UUID (GNS3 itself would answer an opaque 422)."""
        if not is_uuid(value):
            raise GNS3NotFound(
                f"'{value}' is not a GNS3 {kind} id (ids are UUIDs); "
                f"look the {kind} up by name first.",
                kind=kind,
                name=value,
            )

    # -- server ------------------------------------------------------------------------

    async def version(self) -> Version:
        """The server's version (needs no login)."""
        return Version.model_validate(await self.request_json("GET", "/version", auth=False))
