"""The hub service's own routes (the gateway's are in `gateway_handlers.py`), all under the service
prefix and answering JSON, errors as `{"error": {"message", "type", ...}}`:

- `GET api/session`: for the caller (a student's server, with its hub token): hub name and
  groups, the GNS3 URL and the student's own GNS3 token and expiry (their account and pool
  created on the first call), the gateway's base URL as the caller reached the service,
  the model names and the class policy. Never the model key or the GNS3 admin password.
  `?renew=1` (GNS3 refused the token) logs the student in again, at most once per
  `RENEW_INTERVAL` per student: a login costs GNS3 about 0.4 s of its event loop.
- `GET api/projects`: the caller's GNS3 projects (their pool's); `POST api/projects`
  `{"name"}`: a new project in the caller's pool (students cannot create projects in GNS3
  themselves), at most `max_projects_per_student`.
- `GET api/usage`: the caller's model budget today (`BudgetLeft`: daily tokens, used, left
  with the course-wide cap; None where no limit applies), for the copilot's status.
- `GET api/health`: no authentication, no secrets: the service runs, and whether GNS3
  answers.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timezone
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tornado.web import RequestHandler

from ..gns3.errors import GNS3Conflict, GNS3Error
from .api_models import HubPolicy, HubSession
from .caller import Caller
from .gateway import openai_error
from .runtime import HubRuntime

log = logging.getLogger(__name__)
_Body = TypeVar("_Body", bound=BaseModel)

RENEW_INTERVAL = 60.0
"""Seconds between two renewals of a student's GNS3 token asked with `?renew=1`."""


class NewProject(BaseModel):
    """The body of `POST api/projects`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)


class ServiceHandler(RequestHandler):
    """Authenticated JSON routes of the service: `self.caller` is set before the verb."""

    runtime: HubRuntime
    caller: Caller
    needs_caller = True

    def initialize(self, runtime: HubRuntime) -> None:
        self.runtime = runtime

    def check_xsrf_cookie(self) -> None:
        """Token-authenticated API: no XSRF cookie."""

    async def prepare(self) -> None:
        if not self.needs_caller:
            return
        caller = await self.runtime.identity.authenticate(self.request)
        if caller is None:
            self.fail(
                401,
                "The copilot hub service needs a hub token allowed to use it "
                "(Authorization: token $JUPYTERHUB_API_TOKEN).",
                "authentication_error",
            )
            return
        self.caller = caller

    def fail(self, status: int, message: str, error_type: str) -> None:
        self.clear()
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(openai_error(message, error_type)))

    def body_as(self, model: type[_Body]) -> _Body | None:
        """The request's JSON body as `model`; None after answering a 400 naming the
        fields at fault."""
        try:
            return model.model_validate_json(self.request.body or b"{}")
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
            )
            self.fail(400, f"Invalid request: {problems}.", "invalid_request_error")
            return None

    def write_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(data.model_dump_json() if isinstance(data, BaseModel) else json.dumps(data))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, GNS3Error):
            status = 409 if isinstance(exc, GNS3Conflict) else 502
            self.fail(status, str(exc), type(exc).__name__)
            return
        message = "Error" if status_code < 500 else "The copilot hub service failed here."
        self.fail(status_code, message, "server_error")

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, GNS3Error):  # expected: one line, no traceback
            log.warning("%s %s: %s", self.request.method, self.request.path, value)
        else:
            super().log_exception(typ, value, tb)


class SessionHandler(ServiceHandler):
    """`GET api/session` (see the module docstring)."""

    async def get(self) -> None:
        runtime = self.runtime
        settings = runtime.settings
        name = self.caller.name
        if self.get_query_argument("renew", "") not in ("", "0"):
            now = time.monotonic()
            if now - runtime.renewed.get(name, -RENEW_INTERVAL) >= RENEW_INTERVAL:
                runtime.renewed[name] = now
                runtime.accounts.students.forget_token(name)
        token = await runtime.accounts.students.student_token(name)
        gateway = settings.gateway_url or (
            f"{self.request.protocol}://{self.request.host}{settings.prefix}v1"
        )
        session = HubSession(
            user=name,
            groups=tuple(sorted(self.caller.groups)),
            gns3_url=settings.gns3_url,
            gns3_username=runtime.accounts.students.username(name),
            gns3_token=token.token,
            gns3_token_expires_at=token.expires_at,
            model_base_url=gateway,
            model=settings.model,
            title_model=settings.title_model,
            models=settings.models,
            policy=HubPolicy(
                allowed_modes=settings.allowed_modes,
                default_mode=settings.default_mode,
                questions_logged=settings.log_questions,
            ),
        )
        self.write_json(session)


class UsageHandler(ServiceHandler):
    """`GET api/usage` (see the module docstring)."""

    async def get(self) -> None:
        self.write_json(
            await self.runtime.gateway.budget_left(self.caller, datetime.now(timezone.utc))
        )


class ProjectsHandler(ServiceHandler):
    """`GET`/`POST api/projects` (see the module docstring)."""

    async def get(self) -> None:
        projects = await self.runtime.accounts.student_projects(self.caller.name)
        self.write_json([p.model_dump(mode="json") for p in projects])

    async def post(self) -> None:
        body = self.body_as(NewProject)
        if body is None:
            return
        accounts = self.runtime.accounts
        cap = self.runtime.settings.max_projects_per_student
        owned = await accounts.student_projects(self.caller.name)
        if len(owned) >= cap:
            self.fail(
                409,
                f"You have {len(owned)} GNS3 projects, the most allowed per student ({cap}): "
                "delete one first.",
                "project_limit",
            )
            return
        project = await accounts.create_project_for(self.caller.name, body.name.strip())
        log.info("project %s created for %s", project.name, self.caller.name)
        self.write_json(project.model_dump(mode="json"), status=201)


class HealthHandler(ServiceHandler):
    """`GET api/health`: `{"status": "ok", "gns3": {"url", "reachable"}}`."""

    needs_caller = False

    async def get(self) -> None:
        client = self.runtime.accounts.admin
        try:
            await client.version()
            reachable = True
        except GNS3Error:
            reachable = False
        self.write_json({"status": "ok", "gns3": {"url": client.url, "reachable": reachable}})
