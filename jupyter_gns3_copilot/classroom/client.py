"""The client of the hub service, from a student's server: `GET api/session` and its renewal,
`GET api/usage` (the budget left today), and the lab routes (`api/labs/{project_id}...`:
in hub mode the service renders, checks and catches up labs, see `hub/class_labs.py`).

    hub = HubServiceClient("http://hub:8000/services/gns3-copilot/", hub_token)
    session = await hub.session()            # fetched once, renewed before the GNS3 token expires
    gns3 = GNS3Client(session.gns3_url, token_provider=hub.gns3_token)
    view = await hub.lab(project_id)                        # LabView, the student's values
    async with hub.lab_checks(project_id, LabCheckSelection()) as results:
        async for item in results: ...                      # ObjectiveResult..., CheckSummary
    view = await hub.start_exercise(project_id, ExerciseRequest(random=True))  # the symptom

`HubSession` (`hub/api_models.py`) is the wire model of `api/session` (the service builds
it, this client reads it): who the caller is, the GNS3 URL and the student's own GNS3
token with its expiry, the model gateway's base URL and model names, and the class policy.
It never carries the model key or the GNS3 admin password. No Jupyter or tornado import:
the server extension uses it as glue.

Also the request of a kernel that nbgrader runs to autograde a student's notebook
(`request_grade_report`, synchronous: a kernel's code): the service's report of that
student's lab, from the checks it ran itself.

A service that took the request but did not answer within the timeout is slow, not
unreachable: a student's first session makes their GNS3 account, and GNS3 hashes each new
password on its event loop (about 0.4 s), so when a whole class starts together the last
ones wait. The session fetch is then asked again (`SLOW_ATTEMPTS` in all; the service
goes on making the account meanwhile, so the next attempt finds it) and, if still slow,
fails with `HubServiceSlow`, which says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from ..gns3.errors import GNS3AuthError
from ..hub.api_models import GradeReportRequest, HubSession
from ..hub.budgets import BudgetLeft
from ..objectives.api import (
    CatchUpDone,
    CatchUpRequest,
    ExerciseRequest,
    ExerciseView,
    GiveUpAnswer,
    LabAttachRequest,
    LabCheckSelection,
    LabStageRequest,
    LabView,
)
from ..objectives.results import CheckReport, CheckSummary, ObjectiveResult
from ..tls import shared_tls_context

_Answer = TypeVar("_Answer", bound=BaseModel)
log = logging.getLogger(__name__)

SESSION_PATH = "api/session"
USAGE_PATH = "api/usage"
LABS_PATH = "api/labs"
GRADE_REPORT_PATH = "api/grades/report"
LAB_CHECK_TIMEOUT = httpx.Timeout(15.0, read=None)
"""Checks and catch-ups take as long as the devices do (the service bounds each objective):
no read timeout, the connection's own limits only."""
DEFAULT_RENEW_BEFORE = timedelta(minutes=5)
"""How long before the GNS3 token's expiry the session is fetched again (the service
itself renews 10 minutes before, so a fetched token always has longer to live)."""
SLOW_ATTEMPTS = 3
"""Times a session fetch is asked while the service takes it but answers too late (with
the server's default 15 s timeout: 45 s, within the kernel client's 60 s)."""


class HubServiceError(Exception):
    """The hub service could not be asked, or refused; the message says what to do."""


class HubServiceRefused(HubServiceError):
    """The hub service answered with an error: `status`, and its `detail` (the service's
    own message), `error_type`, `field`, `rule` and `errors` (as the copilot routes'
    errors)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        detail: str,
        error_type: str = "error",
        field: str | None = None,
        rule: str | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail
        self.error_type = error_type
        self.field = field
        self.rule = rule
        self.errors = errors


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

    # -- labs (the service renders and checks them) ----------------------------------------

    async def lab(self, project_id: str) -> LabView:
        """The lab of the student's project as they see it (`GET api/labs/{id}`)."""
        return await self._call("GET", _lab_path(project_id), LabView)

    async def attach_lab(self, project_id: str, request: LabAttachRequest) -> LabView:
        """Make `request.text` the project's lab file (`PUT api/labs/{id}`)."""
        return await self._call("PUT", _lab_path(project_id), LabView, json=request)

    async def choose_stage(self, project_id: str, stage: str | None) -> LabView:
        """The stage the student works on (`PUT api/labs/{id}/stage`; None: follow their
        checks); the lab as they see it."""
        body = LabStageRequest(stage=stage)
        return await self._call("PUT", _lab_path(project_id, "stage"), LabView, json=body)

    async def lab_check_report(self, project_id: str, selection: LabCheckSelection) -> CheckReport:
        """The service's check of the project's lab (`POST api/labs/{id}/checks`, one
        report)."""
        body = selection.model_copy(update={"stream": False})
        return await self._call(
            "POST", _lab_path(project_id, "checks"), CheckReport, json=body, long=True
        )

    @contextlib.asynccontextmanager
    async def lab_checks(
        self, project_id: str, selection: LabCheckSelection
    ) -> AsyncIterator[AsyncIterator[ObjectiveResult | CheckSummary]]:
        """The service's check of the project's lab as it goes: entering raises
        `HubServiceRefused` (unknown stage, no lab, invalid file, closed project...)
        before any result; then each `ObjectiveResult` as it is decided and the
        `CheckSummary`. Leaving early closes the request (the service stops checking)."""
        from httpx_sse import EventSource

        body = selection.model_copy(update={"stream": True}).model_dump(mode="json")
        path = _lab_path(project_id, "checks")
        request = self._http.build_request(
            "POST", self.url + path, json=body, timeout=LAB_CHECK_TIMEOUT
        )
        response = await self._send(request, path, stream=True)
        try:
            if response.status_code != 200:
                await response.aread()
                raise self._refused(response, path)
            yield _check_events(EventSource(response), self.url, path)
        finally:
            await response.aclose()

    async def catch_up(self, project_id: str, stage: str, request: CatchUpRequest) -> CatchUpDone:
        """Catch the project up to `stage` (`POST api/labs/{id}/stages/{stage}/catch-up`);
        without `confirm`, `HubServiceRefused` (400) says what would be restored."""
        path = _lab_path(project_id, "stages", stage, "catch-up")
        return await self._call("POST", path, CatchUpDone, json=request, long=True)

    async def start_exercise(self, project_id: str, request: ExerciseRequest) -> ExerciseView:
        """The service starts a troubleshooting exercise in the project (`POST
        api/labs/{id}/exercises`): the symptom, never the fault."""
        path = _lab_path(project_id, "exercises")
        return await self._call("POST", path, ExerciseView, json=request, long=True)

    async def exercise(self, project_id: str) -> ExerciseView:
        """The student's latest exercise in the project (`GET
        api/labs/{id}/exercises/current`)."""
        path = _lab_path(project_id, "exercises", "current")
        return await self._call("GET", path, ExerciseView)

    async def give_up(self, project_id: str) -> GiveUpAnswer:
        """The service ends the student's exercise and undoes its fault (`POST
        api/labs/{id}/exercises/current/give-up`): what the fault was."""
        path = _lab_path(project_id, "exercises", "current", "give-up")
        return await self._call("POST", path, GiveUpAnswer, long=True)

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
        return await self._call("GET", path, model, params=params)

    async def _call(
        self,
        method: str,
        path: str,
        model: type[_Answer],
        *,
        params: dict[str, str] | None = None,
        json: BaseModel | None = None,
        long: bool = False,
    ) -> _Answer:
        request = self._http.build_request(
            method,
            self.url + path,
            params=params,
            json=json.model_dump(mode="json") if json is not None else None,
            timeout=LAB_CHECK_TIMEOUT if long else httpx.USE_CLIENT_DEFAULT,
        )
        response = await self._send(request, path)
        if not response.is_success:
            raise self._refused(response, path)
        return _answer(response.content, model, self.url, path)

    async def _send(
        self, request: httpx.Request, path: str, stream: bool = False
    ) -> httpx.Response:
        try:
            return await self._http.send(request, stream=stream)
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

    def _refused(self, response: httpx.Response, path: str) -> HubServiceRefused:
        return refused(response, self.url, path)

    async def aclose(self) -> None:
        await self._http.aclose()


def _lab_path(project_id: str, *parts: str) -> str:
    return "/".join([LABS_PATH, *(quote(p, safe="") for p in (project_id, *parts))])


def _answer(content: bytes, model: type[_Answer], url: str, path: str) -> _Answer:
    try:
        return model.model_validate_json(content)
    except ValidationError as exc:
        raise HubServiceError(
            f"The copilot hub service at {url} sent an answer to {path} this copilot "
            f"cannot read ({exc.error_count()} problems): is it the same version?"
        ) from exc


def refused(response: httpx.Response, url: str, path: str) -> HubServiceRefused:
    """The error the service answered `path` with (its message, type, field, errors)."""
    error: dict[str, Any] = {}
    with contextlib.suppress(ValueError):
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            error = body["error"]
    detail = str(error.get("message") or _message(response))
    return HubServiceRefused(
        f"The copilot hub service at {url} answered HTTP {response.status_code} to {path}: "
        f"{detail}",
        status=response.status_code,
        detail=detail,
        error_type=str(error.get("type") or "error"),
        field=error.get("field"),
        rule=error.get("rule"),
        errors=error.get("errors") if isinstance(error.get("errors"), list) else None,
    )


async def _check_events(
    source: Any, url: str, path: str
) -> AsyncIterator[ObjectiveResult | CheckSummary]:
    """The results and the summary of a streamed check (`check_result`, `check_summary`,
    `done`; `error`: `HubServiceError` with the service's message)."""
    from httpx_sse import SSEError

    try:
        async for event in source.aiter_sse():
            if event.event == "check_result":
                yield _answer(event.data.encode(), ObjectiveResult, url, path)
            elif event.event == "check_summary":
                yield _answer(event.data.encode(), CheckSummary, url, path)
            elif event.event == "error":
                raise HubServiceError(f"The copilot hub service stopped checking: {event.data}")
            elif event.event == "done":
                return
    except (httpx.HTTPError, SSEError) as exc:
        raise HubServiceError(
            f"The copilot hub service at {url} broke off the check ({type(exc).__name__})."
        ) from exc
    raise HubServiceError(f"The copilot hub service at {url} ended the check before its end.")


def request_grade_report(
    url: str, hub_token: str, request: GradeReportRequest, *, timeout: float = 15.0
) -> CheckReport:
    """The service's report of a student's lab (`POST api/grades/report`), asked with a
    course staff member's hub token: what a kernel autograding that student's notebook
    checks. Synchronous (a kernel's code). `HubServiceError` (`HubServiceRefused` for the
    service's refusals) when there is no report."""
    base = url.rstrip("/") + "/"
    try:
        with httpx.Client(
            headers={"Authorization": f"token {hub_token}"},
            timeout=httpx.Timeout(timeout, read=None),
            trust_env=False,
            verify=shared_tls_context(trust_env=False),
        ) as http:
            response = http.post(base + GRADE_REPORT_PATH, json=request.model_dump(mode="json"))
    except httpx.HTTPError as exc:
        raise HubServiceError(
            f"The copilot hub service at {base} cannot be reached ({type(exc).__name__})."
        ) from exc
    if not response.is_success:
        raise refused(response, base, GRADE_REPORT_PATH)
    return _answer(response.content, CheckReport, base, GRADE_REPORT_PATH)


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or "(no message)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return str(body)[:200]
