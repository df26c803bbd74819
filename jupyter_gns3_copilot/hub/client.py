"""A student's server's side of the hub service: `GET api/session` and its renewal, and
`GET api/usage` (the budget left today).

    hub = HubServiceClient("http://hub:8000/services/gns3-copilot/", hub_token)
    session = await hub.session()            # fetched once, renewed before the GNS3 token expires
    gns3 = GNS3Client(session.gns3_url, token_provider=hub.gns3_token)

`HubSession` is the wire model of `api/session` (the service builds it, this client reads
it): who the caller is, the GNS3 URL and the student's own GNS3 token with its expiry, the
model gateway's base URL and model names, and the class policy. It never carries the
model key or the GNS3 admin password. No Jupyter or tornado import: the server extension
uses it as glue.

A service that took the request but did not answer within the timeout is slow, not
unreachable: a student's first session makes their GNS3 account, and GNS3 hashes each new
password on its event loop (about 0.4 s), so when a whole class starts together the last
ones wait. The session fetch is then asked again (`SLOW_ATTEMPTS` in all; the service
goes on making the account meanwhile, so the next attempt finds it) and, if still slow,
fails with `HubServiceSlow`, which says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, field_serializer

from ..gns3.errors import GNS3AuthError
from ..tls import shared_tls_context
from .budgets import BudgetLeft

_Answer = TypeVar("_Answer", bound=BaseModel)
log = logging.getLogger(__name__)

SESSION_PATH = "api/session"
USAGE_PATH = "api/usage"
DEFAULT_RENEW_BEFORE = timedelta(minutes=5)
"""How long before the GNS3 token's expiry the session is fetched again (the service
itself renews 10 minutes before, so a fetched token always has longer to live)."""
SLOW_ATTEMPTS = 3
"""Times a session fetch is asked while the service takes it but answers too late (with
the server's default 15 s timeout: 45 s, within the kernel client's 60 s)."""


class HubPolicy(BaseModel):
    """What students may choose."""

    model_config = ConfigDict(frozen=True)

    allowed_modes: tuple[str, ...]
    default_mode: str
    users_may_choose_endpoints: bool = False
    questions_logged: bool = False
    """Whether the course staff keep a log of the questions asked (students are told)."""


class HubSession(BaseModel):
    """The answer of `GET api/session` for one hub user."""

    model_config = ConfigDict(frozen=True)

    user: str
    groups: tuple[str, ...] = ()
    gns3_url: str
    gns3_username: str
    gns3_token: SecretStr
    gns3_token_expires_at: datetime | None = None
    model_base_url: str
    """The gateway, as the caller reached the service; the key is the caller's hub token."""
    model: str
    title_model: str = ""
    models: tuple[str, ...] = ()
    policy: HubPolicy

    @field_serializer("gns3_token", when_used="json")
    def _token_on_the_wire(self, token: SecretStr) -> str:
        return token.get_secret_value()


class HubServiceError(Exception):
    """The hub service could not be asked, or refused; the message says what to do."""


class HubServiceSlow(HubServiceError):
    """The hub service took the request but did not answer in time (see the module
    docstring): nothing to fix in the settings, try again later."""


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class HubServiceClient:
    """Asks the copilot hub service for this server's session, with the hub token of the
    single-user server (`JUPYTERHUB_API_TOKEN`). The session is cached and fetched again
    `renew_before` its GNS3 token expires, or when forced (GNS3 refused the token: the
    service is asked to log the student in again); concurrent callers share one fetch.
    Close with `aclose()`.
    """

    def __init__(
        self,
        url: str,
        hub_token: str,
        *,
        timeout: float = 15.0,
        slow_attempts: int = SLOW_ATTEMPTS,
        renew_before: timedelta = DEFAULT_RENEW_BEFORE,
        clock: Callable[[], datetime] = _utcnow,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/") + "/"
        self.timeout = timeout
        self.slow_attempts = slow_attempts
        self.renew_before = renew_before
        self._clock = clock
        self._lock = asyncio.Lock()
        self._session: HubSession | None = None
        self._http = httpx.AsyncClient(
            headers={"Authorization": f"token {hub_token}"},
            timeout=timeout,
            transport=transport,
            trust_env=False,
            verify=shared_tls_context(trust_env=False),
        )

    @property
    def cached(self) -> HubSession | None:
        """The last session fetched, if any (no request)."""
        return self._session

    def _fresh(self, session: HubSession) -> bool:
        expires = session.gns3_token_expires_at
        return expires is None or self._clock() < expires - self.renew_before

    async def session(self, *, force: bool = False) -> HubSession:
        """The session, fetched if none is cached, it is due for renewal, or `force`."""
        seen = self._session
        if seen is not None and not force and self._fresh(seen):
            return seen
        async with self._lock:
            current = self._session
            # Someone else fetched while we waited: theirs is as new as ours would be.
            if current is not None and current is not seen and self._fresh(current):
                return current
            self._session = await self._fetch(renew=force)
            return self._session

    async def gns3_token(self, force: bool = False) -> str:
        """A `GNS3Client` token provider: the student's GNS3 JWT (`GNS3AuthError` when the
        service cannot give one, so GNS3 calls fail the way a refused login does)."""
        try:
            session = await self.session(force=force)
        except HubServiceError as exc:
            raise GNS3AuthError(f"No GNS3 token: {exc}", url=self.url) from exc
        return session.gns3_token.get_secret_value()

    async def budget(self) -> BudgetLeft:
        """The student's model budget today (`GET api/usage`; never cached: every model
        call spends it). `HubServiceError` when the service cannot say."""
        return await self._get(USAGE_PATH, BudgetLeft)

    async def _fetch(self, *, renew: bool) -> HubSession:
        params = {"renew": "1"} if renew else None
        for attempt in range(1, self.slow_attempts + 1):
            try:
                return await self._get(SESSION_PATH, HubSession, params=params)
            except HubServiceSlow:
                if attempt == self.slow_attempts:
                    break
                log.warning(
                    "The copilot hub service at %s took this server's session request but "
                    "did not answer within %g s (attempt %d of %d; it may be making the "
                    "student's GNS3 account, slow when many start at once): asking again.",
                    self.url,
                    self.timeout,
                    attempt,
                    self.slow_attempts,
                )
        raise HubServiceSlow(
            f"The copilot hub service is slow to answer: it did not give this server its "
            f"session in {self.slow_attempts} tries of {self.timeout:g} s. It may still be "
            "setting up your lab account, which takes longer when the whole class starts at "
            "once: try again in a minute, and tell the course staff if it stays slow."
        )

    async def _get(
        self, path: str, model: type[_Answer], params: dict[str, str] | None = None
    ) -> _Answer:
        url = self.url + path
        try:
            response = await self._http.get(url, params=params)
        except (httpx.ReadTimeout, httpx.WriteTimeout) as exc:
            raise HubServiceSlow(
                f"The copilot hub service at {self.url} did not answer {path} within "
                f"{self.timeout:g} s."
            ) from exc
        except httpx.HTTPError as exc:
            raise HubServiceError(
                f"The copilot hub service at {self.url} cannot be reached "
                f"({type(exc).__name__}); check GNS3_COPILOT_HUB_URL or ask the course staff."
            ) from exc
        if response.status_code != 200:
            raise HubServiceError(
                f"The copilot hub service at {self.url} answered HTTP {response.status_code}"
                f" to {path}: {_message(response)}"
            )
        try:
            return model.model_validate_json(response.content)
        except ValidationError as exc:
            raise HubServiceError(
                f"The copilot hub service at {self.url} sent an answer to {path} this copilot "
                f"cannot read ({exc.error_count()} problems): is it the same version?"
            ) from exc

    async def aclose(self) -> None:
        await self._http.aclose()


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or "(no message)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return str(body)[:200]
