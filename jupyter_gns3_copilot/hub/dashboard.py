"""The instructor dashboard of the hub service: a server-rendered page and a JSON API.

    routes = dashboard_handlers("/services/copilot/dashboard", deps)
    app = tornado.web.Application(routes, **dashboard_settings("/services/copilot/"))

`deps` (`DashboardDeps`) brings everything in: the class's `LabAccounts`, the
`UsageStore`, the `BudgetPolicy`, the GNS3 admin client the template projects come from,
and `current_caller(handler)`, which says who is asking (the hub service: HubOAuth's
browser login, or a hub token for API calls; it may finish the response itself, e.g.
redirect to the hub's login, by raising `tornado.web.Finish`). Hub admins and members of
`instructor_groups` get in; anyone else gets 403 (an HTML page, or JSON under `api/`).

What it shows: every hub user the service has seen (in the usage store, or with a GNS3
account in the class's group) with tokens today and in total against their budget, turns,
calls, last activity, their GNS3 projects and the nodes' states (nodes of opened projects;
GNS3 keeps a closed project's nodes on disk only). The template projects offered for
"assign a lab" are the GNS3 projects in no student's pool.

Actions, the same in both forms:

- set (or clear) a user's or a group's daily budget override: form `budgets`;
  `PUT`/`DELETE api/budgets/users/{name}` and `.../groups/{group}`;
- assign a lab (`LabAccounts.assign_lab`) to the students chosen and those of a group:
  form `labs/assign`; `POST api/labs/assign`;
- reset a student's project to the template or a snapshot (`LabAccounts.reset_lab`):
  form `labs/reset`; `POST api/labs/reset`;
- read: `GET api/students` (the overview), `api/usage.csv`, `api/questions`.

Forms are POSTs checked with tornado's XSRF token.
A group means the students seen in it: the groups recorded with each student's last
model call. API errors are `{"error": {"message", "type", "field"?}}`: 400 naming the
field, 403, 404 (unknown project, snapshot, or the question log is off), 409 (a GNS3
conflict), 502 (GNS3 failed). The API checks no XSRF cookie: it takes JSON bodies only
(a browser cannot send those cross-site without CORS) and refuses a foreign `Origin`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from tornado.web import Finish, HTTPError, RequestHandler, StaticFileHandler

from ..gns3.client import GNS3Client
from ..gns3.errors import GNS3Conflict, GNS3Error, GNS3NotFound
from ..gns3.models import Project
from .budgets import BudgetPolicy, DailyTokens
from .caller import Caller
from .lab_accounts import LabAccounts
from .usage import OverrideKind, Question, UsageStore, UserUsage, utc_now

log = logging.getLogger(__name__)

Route = tuple[str, type[RequestHandler], dict[str, Any]]
CurrentCaller = Callable[[RequestHandler], Awaitable[Caller | None]]
_HERE = Path(__file__).parent
_TEMPLATES = Environment(
    loader=FileSystemLoader(_HERE / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
_Body = TypeVar("_Body", bound=BaseModel)
QUESTIONS_SHOWN = 200
"""Questions on the page (the API takes `limit`, up to `MAX_QUESTIONS`)."""
MAX_QUESTIONS = 5000


@dataclass(frozen=True)
class DashboardDeps:
    """What the dashboard works with (see the module docstring)."""

    accounts: LabAccounts
    usage: UsageStore
    policy: BudgetPolicy
    gns3: GNS3Client
    """The GNS3 admin client: template projects, nodes."""
    current_caller: CurrentCaller
    instructor_groups: frozenset[str] = frozenset({"instructors"})
    log_questions: bool = False
    hub_url: str = "/hub/"
    """Where the navbar's "Hub" link points."""
    clock: Callable[[], datetime] = field(default=utc_now)


def may_use_dashboard(caller: Caller | None, instructor_groups: frozenset[str]) -> bool:
    """Hub admins and members of an instructor group."""
    return caller is not None and (caller.admin or bool(caller.groups & instructor_groups))


def dashboard_settings(cookie_path: str) -> dict[str, Any]:
    """tornado `Application` settings the dashboard's forms want: the XSRF cookie scoped to
    the service's URL prefix, so that it does not clash with the hub's own `_xsrf`."""
    return {"xsrf_cookie_kwargs": {"path": cookie_path, "httponly": True, "samesite": "Strict"}}


# -- bodies ---------------------------------------------------------------------------------

HubUserName = Annotated[
    str, StringConstraints(min_length=1, max_length=255, pattern=r"^[^\s/\x00-\x1f]+$")
]
"""A hub user name (JupyterHub allows no whitespace or / in them)."""


class BudgetBody(BaseModel):
    """`PUT api/budgets/...`: a daily budget in tokens; null is unlimited."""

    model_config = ConfigDict(extra="forbid")

    daily_tokens: DailyTokens = Field(...)


class AssignBody(BaseModel):
    """`POST api/labs/assign`: a template project (id or name) for the students named and
    those of `group`."""

    model_config = ConfigDict(extra="forbid")

    template: str = Field(min_length=1, max_length=255)
    students: list[HubUserName] = Field(default_factory=list, max_length=1000)
    group: str | None = Field(default=None, min_length=1, max_length=255)

    @model_validator(mode="after")
    def _someone(self) -> AssignBody:
        if not self.students and self.group is None:
            raise ValueError("students or group: name at least one student or a group")
        return self


class ResetBody(BaseModel):
    """`POST api/labs/reset`: one of a student's projects (id or name) back to the template
    project (id or name) or to one of its snapshots (name or id): exactly one of the two."""

    model_config = ConfigDict(extra="forbid")

    student: HubUserName
    project: str = Field(min_length=1, max_length=255)
    template: str | None = Field(default=None, min_length=1, max_length=255)
    snapshot: str | None = Field(default=None, min_length=1, max_length=255)

    @model_validator(mode="after")
    def _one_target(self) -> ResetBody:
        if (self.template is None) == (self.snapshot is None):
            raise ValueError("template or snapshot: give exactly one of the two")
        return self


# -- what the page and `api/students` show ----------------------------------------------------


class NodeView(BaseModel):
    name: str
    node_type: str
    status: str


class ProjectView(BaseModel):
    project_id: str
    name: str
    status: str | None
    nodes: list[NodeView] | None = None
    """None for a closed project (GNS3 lists no nodes of it)."""
    template: str | None = None
    """The template it was assigned from, when its name says so."""


class StudentView(BaseModel):
    user: str
    groups: list[str]
    daily_budget: DailyTokens
    budget_source: str
    tokens_today: int = 0
    tokens_total: int = 0
    calls_today: int = 0
    turns_today: int = 0
    turns_total: int = 0
    last_activity: datetime | None = None
    gns3_account: bool = False
    projects: list[ProjectView] = Field(default_factory=list)


class GroupBudgetView(BaseModel):
    group: str
    daily_tokens: DailyTokens
    source: Literal["policy", "override"]


class TemplateView(BaseModel):
    project_id: str
    name: str


class Overview(BaseModel):
    """`GET api/students`."""

    day: date
    students: list[StudentView]
    templates: list[TemplateView]
    groups: list[GroupBudgetView]
    default_daily_tokens: DailyTokens
    course_daily_tokens: DailyTokens
    course_tokens_today: int
    questions_logged: bool
    gns3_error: str | None = None
    """Why the GNS3 part is missing (GNS3 unreachable...), else None."""


def _template_of(project: Project, user: str, templates: Sequence[TemplateView]) -> str | None:
    suffix = f" - {user}"
    if not project.name.endswith(suffix):
        return None
    name = project.name[: -len(suffix)]
    return name if any(t.name == name for t in templates) else None


async def _project_view(gns3: GNS3Client, project: Project) -> ProjectView:
    view = ProjectView(project_id=project.project_id, name=project.name, status=project.status)
    if project.status == "opened":
        nodes = await gns3.list_nodes(project.project_id)
        view.nodes = [
            NodeView(name=n.name, node_type=n.node_type, status=n.status)
            for n in sorted(nodes, key=lambda n: n.name)
        ]
    return view


async def _class_projects(deps: DashboardDeps) -> tuple[dict[str, list[Project]], list[Project]]:
    """The projects in each student account's pool (by hub user, every account listed) and
    the template projects (those in no student's pool), by name."""
    accounts, access = deps.accounts, deps.accounts.access
    group = await access.group_named(accounts.group)
    members = await access.group_members(group.user_group_id) if group else []
    hub_users = {
        m.username: m.full_name
        for m in members
        if m.full_name and accounts.username(m.full_name) == m.username
    }
    pools = [p for p in await access.list_pools() if p.name in hub_users]
    contents = await asyncio.gather(*(access.pool_resources(p.resource_pool_id) for p in pools))
    projects = {p.project_id: p for p in await deps.gns3.list_projects()}
    owned: dict[str, list[Project]] = {user: [] for user in hub_users.values()}
    for pool, rows in zip(pools, contents, strict=True):
        owned[hub_users[pool.name]] = sorted(
            (projects[r.resource_id] for r in rows if r.resource_id in projects),
            key=lambda p: p.name,
        )
    pooled = {p.project_id for mine in owned.values() for p in mine}
    templates = sorted(
        (p for p in projects.values() if p.project_id not in pooled),
        key=lambda p: p.name.lower(),
    )
    return owned, templates


async def _gns3_side(
    deps: DashboardDeps,
) -> tuple[dict[str, list[ProjectView]], list[TemplateView]]:
    """Each student account's projects with their nodes, and the template projects."""
    owned, projects = await _class_projects(deps)
    templates = [TemplateView(project_id=p.project_id, name=p.name) for p in projects]
    pairs = [(user, project) for user, mine in owned.items() for project in mine]
    shown = await asyncio.gather(*(_project_view(deps.gns3, p) for _, p in pairs))
    views: dict[str, list[ProjectView]] = {user: [] for user in owned}
    for (user, project), view in zip(pairs, shown, strict=True):
        view.template = _template_of(project, user, templates)
        views[user].append(view)
    return views, templates


async def overview(deps: DashboardDeps) -> Overview:
    """Everything the page shows (GNS3's part left out, with the reason, if GNS3 fails)."""
    day = deps.clock().date()
    usage: dict[str, UserUsage] = {u.user: u for u in await deps.usage.user_usage(day)}
    overrides = await deps.usage.overrides()
    gns3_error = None
    try:
        projects, templates = await _gns3_side(deps)
    except GNS3Error as exc:
        gns3_error, projects, templates = str(exc), {}, []
    students = []
    for name in sorted(set(usage) | set(projects), key=str.lower):
        used = usage.get(name) or UserUsage(user=name)
        budget = deps.policy.daily_budget(
            Caller(name=name, groups=frozenset(used.groups)), overrides
        )
        students.append(
            StudentView(
                user=name,
                groups=used.groups,
                daily_budget=budget.daily_tokens,
                budget_source=budget.source,
                tokens_today=used.tokens_today,
                tokens_total=used.tokens_total,
                calls_today=used.calls_today,
                turns_today=used.turns_today,
                turns_total=used.turns_total,
                last_activity=used.last_activity,
                gns3_account=name in projects,
                projects=projects.get(name, []),
            )
        )
    seen_groups = {g for u in usage.values() for g in u.groups}
    group_budgets = [
        GroupBudgetView(
            group=group,
            daily_tokens=overrides.groups.get(group, deps.policy.group_daily_tokens.get(group)),
            source="override" if group in overrides.groups else "policy",
        )
        for group in sorted(
            set(deps.policy.group_daily_tokens) | set(overrides.groups) | seen_groups
        )
        if group in overrides.groups or group in deps.policy.group_daily_tokens
    ]
    return Overview(
        day=day,
        students=students,
        templates=templates,
        groups=group_budgets,
        default_daily_tokens=deps.policy.default_daily_tokens,
        course_daily_tokens=deps.policy.course_budget(overrides),
        course_tokens_today=await deps.usage.tokens_used(day),
        questions_logged=deps.log_questions,
        gns3_error=gns3_error,
    )


# -- the actions ----------------------------------------------------------------------------


class ActionError(Exception):
    """An action refused for a reason the instructor can fix; `status` is the HTTP one."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


async def set_budget(
    deps: DashboardDeps, kind: OverrideKind, name: str, daily_tokens: DailyTokens
) -> None:
    """Override a user's or a group's daily budget (None: unlimited)."""
    await deps.usage.set_override(kind, name, daily_tokens)
    log.info("dashboard: %s %s daily budget set to %s", kind, name, daily_tokens)


async def clear_budget(deps: DashboardDeps, kind: OverrideKind, name: str) -> None:
    """Back to the policy's budget for that user or group."""
    await deps.usage.clear_override(kind, name)
    log.info("dashboard: %s %s daily budget back to the policy's", kind, name)


async def _group_students(deps: DashboardDeps, group: str) -> list[str]:
    day = deps.clock().date()
    return [u.user for u in await deps.usage.user_usage(day) if group in u.groups]


async def assign(deps: DashboardDeps, body: AssignBody) -> dict[str, ProjectView]:
    """Give the students of `body` a copy of the template; each student's copy."""
    students = list(dict.fromkeys(body.students))
    if body.group is not None:
        members = await _group_students(deps, body.group)
        if not members and not students:
            raise ActionError(
                400, f"group: no student has been seen in the group '{body.group}'.", "group"
            )
        students += [m for m in members if m not in students]
    template = await deps.gns3.resolve_project(body.template)
    owned, templates = await _class_projects(deps)
    if all(t.project_id != template.project_id for t in templates):
        owner = next(user for user, mine in owned.items() if template in mine)
        raise ActionError(
            400,
            f"template: '{template.name}' is a project of {owner}'s, not a template.",
            "template",
        )
    copies = await deps.accounts.assign_lab(template.project_id, students)
    log.info("dashboard: lab %s assigned to %s", template.name, ", ".join(students))
    return {
        user: ProjectView(project_id=p.project_id, name=p.name, status=p.status)
        for user, p in copies.items()
    }


async def reset(deps: DashboardDeps, body: ResetBody) -> ProjectView:
    """Reset one of a student's projects; the project as it is afterwards."""
    project = await deps.accounts.reset_lab(
        body.student, body.project, template=body.template, snapshot=body.snapshot
    )
    log.info("dashboard: %s's project %s reset", body.student, project.name)
    return ProjectView(project_id=project.project_id, name=project.name, status=project.status)


def _gns3_status(exc: GNS3Error) -> int:
    if isinstance(exc, GNS3NotFound):
        return 404
    if isinstance(exc, GNS3Conflict):
        return 409
    return 502


# -- handlers -------------------------------------------------------------------------------


class _DashboardHandler(RequestHandler):
    """Shared: the deps, and the access check before anything else."""

    deps: DashboardDeps
    prefix: str
    caller: Caller

    def initialize(self, deps: DashboardDeps, prefix: str) -> None:
        self.deps = deps
        self.prefix = prefix

    async def prepare(self) -> None:
        caller = await self.deps.current_caller(self)
        if not may_use_dashboard(caller, self.deps.instructor_groups):
            self.forbidden(caller)
            raise Finish()
        assert caller is not None
        self.caller = caller

    def forbidden(self, caller: Caller | None) -> None:
        raise NotImplementedError

    def forbidden_message(self, caller: Caller | None) -> str:
        groups = ", ".join(sorted(self.deps.instructor_groups)) or "none"
        who = f"You are logged in as {caller.name}. " if caller else "You are not logged in. "
        return (
            f"{who}The copilot dashboard is for the course's instructors: hub admins and "
            f"members of the hub groups: {groups}."
        )


class _ApiHandler(_DashboardHandler):
    """JSON in and out; errors as `{"error": {...}}`."""

    def check_xsrf_cookie(self) -> None:
        """JSON bodies and a same-origin check instead (see the module docstring)."""

    async def prepare(self) -> None:
        origin = self.request.headers.get("Origin")
        if (
            self.request.method not in ("GET", "HEAD")
            and origin
            and origin != f"{self.request.protocol}://{self.request.host}"
        ):
            self.send_json_error(403, f"Cross-origin request from {origin} refused.", "forbidden")
            raise Finish()
        await super().prepare()

    def forbidden(self, caller: Caller | None) -> None:
        self.send_json_error(403, self.forbidden_message(caller), "forbidden")

    def send_json_error(
        self, status: int, message: str, error_type: str, field: str | None = None
    ) -> None:
        self.clear()
        self.set_status(status)
        error: dict[str, Any] = {"message": message, "type": error_type}
        if field is not None:
            error["field"] = field
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": error}))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None))[1]
        if isinstance(exc, HTTPError) and exc.log_message and status_code < 500:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        elif status_code < 500:
            message = self._reason
        else:
            message = "The copilot dashboard failed on this request (see the service's log)."
        self.send_json_error(
            status_code, message, "server_error" if status_code >= 500 else "error"
        )

    def send_json(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data, default=str))

    def body(self, model: type[_Body]) -> _Body:
        """The request's JSON body as `model`; a 400 naming the field otherwise."""
        content_type = self.request.headers.get("Content-Type", "").split(";")[0].strip()
        if content_type != "application/json":
            raise ActionError(400, "Send the body as JSON (Content-Type: application/json).")
        try:
            raw = json.loads(self.request.body or b"null")
        except ValueError:
            raise ActionError(400, "The request body is not valid JSON.") from None
        if not isinstance(raw, dict):
            raise ActionError(400, "The request body must be a JSON object.")
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            raise _validation_error(exc) from None

    async def act(self, action: Callable[[], Awaitable[Any]]) -> None:
        """Run an action (its body read inside) and answer its result (a pydantic model or
        a dict of them; None: 204), or the error it met."""
        try:
            result = await action()
        except ActionError as exc:
            self.send_json_error(exc.status, exc.message, "bad_request", exc.field)
            return
        except ValueError as exc:
            self.send_json_error(400, str(exc), "bad_request")
            return
        except GNS3Error as exc:
            self.send_json_error(_gns3_status(exc), str(exc), "gns3")
            return
        if result is None:
            self.set_status(204)
            self.finish()
        elif not self._finished:
            self.send_json(_jsonable(result))


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _validation_error(exc: ValidationError) -> ActionError:
    first = exc.errors()[0]
    location = ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if location:
        return ActionError(400, f"{location}: {message}", location)
    field_name = message.split(":", 1)[0] if ":" in message else None
    return ActionError(400, message, field_name)


class StudentsApi(_ApiHandler):
    async def get(self) -> None:
        await self.act(lambda: overview(self.deps))


class BudgetApi(_ApiHandler):
    async def put(self, kind: str, name: str) -> None:
        async def action() -> None:
            body = self.body(BudgetBody)
            await set_budget(self.deps, _kind(kind), name, body.daily_tokens)

        await self.act(action)

    async def delete(self, kind: str, name: str) -> None:
        await self.act(lambda: clear_budget(self.deps, _kind(kind), name))


def _kind(path_part: str) -> OverrideKind:
    return "user" if path_part == "users" else "group"


class AssignApi(_ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: assign(self.deps, self.body(AssignBody)))


class ResetApi(_ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: reset(self.deps, self.body(ResetBody)))


def _date_argument(handler: RequestHandler, name: str) -> date | None:
    value = handler.get_query_argument(name, "").strip()
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ActionError(400, f"{name}: not a date (YYYY-MM-DD): {value!r}", name) from None


class UsageCsvApi(_ApiHandler):
    async def get(self) -> None:
        await self.act(self._csv)

    async def _csv(self) -> None:
        since, until = _date_argument(self, "since"), _date_argument(self, "until")
        content = await self.deps.usage.export_csv(since, until)
        stamp = self.deps.clock().date().isoformat()
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="copilot-usage-{stamp}.csv"')
        self.finish(content)


class QuestionsApi(_ApiHandler):
    async def get(self) -> None:
        await self.act(self._questions)

    async def _questions(self) -> dict[str, Any]:
        if not self.deps.log_questions:
            raise ActionError(404, "The question log is off (the service's log_questions setting).")
        raw_limit = self.get_query_argument("limit", "500")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_QUESTIONS:
            raise ActionError(400, f"limit: a number from 1 to {MAX_QUESTIONS}", "limit")
        user = self.get_query_argument("user", "") or None
        questions = await self.deps.usage.questions(int(raw_limit), user)
        return {"questions": questions}


# -- the page -------------------------------------------------------------------------------


class _PageHandler(_DashboardHandler):
    """The HTML page and its forms (tornado's XSRF check on every POST)."""

    async def prepare(self) -> None:
        await super().prepare()
        if self.request.method == "POST" and not self.settings.get("xsrf_cookies"):
            self.check_xsrf_cookie()  # tornado checks only when the app says so

    def forbidden(self, caller: Caller | None) -> None:
        self.set_status(403)
        self.finish(
            _TEMPLATES.get_template("forbidden.html").render(
                prefix=self.prefix,
                hub_url=self.deps.hub_url,
                caller=caller,
                message=self.forbidden_message(caller),
            )
        )

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        message = (
            "The dashboard failed on this request (see the service's log)."
            if status_code >= 500
            else f"{status_code} {self._reason}"
        )
        self.finish(
            _TEMPLATES.get_template("forbidden.html").render(
                prefix=self.prefix,
                hub_url=self.deps.hub_url,
                caller=None,
                message=message,
                title="Error",
            )
        )

    async def render_page(self, notice: str | None = None, problem: str | None = None) -> None:
        data = await overview(self.deps)
        questions: list[Question] = (
            await self.deps.usage.questions(QUESTIONS_SHOWN) if self.deps.log_questions else []
        )
        self.set_header("Cache-Control", "no-store")
        self.finish(
            _TEMPLATES.get_template("dashboard.html").render(
                prefix=self.prefix,
                hub_url=self.deps.hub_url,
                caller=self.caller,
                view=data,
                questions=questions,
                notice=notice,
                problem=problem,
                xsrf_form_html=self.xsrf_form_html(),
            )
        )


class _Notices:
    """What a form did, kept until the page it redirects to shows it (post/redirect/get:
    reloading that page repeats nothing). Bounded; one service process."""

    LIMIT = 200

    def __init__(self) -> None:
        self._kept: OrderedDict[str, str] = OrderedDict()

    def put(self, text: str) -> str:
        key = secrets.token_urlsafe(12)
        self._kept[key] = text
        while len(self._kept) > self.LIMIT:
            self._kept.popitem(last=False)
        return key

    def pop(self, key: str) -> str | None:
        return self._kept.pop(key, None)


_NOTICES = _Notices()


class DashboardPage(_PageHandler):
    async def get(self) -> None:
        await self.render_page(notice=_NOTICES.pop(self.get_query_argument("done", "")))


class _FormHandler(_PageHandler):
    """A form's POST: do it, then redirect (303) to the page, which says what was done; a
    refused one shows the page with the reason (400, 403, 404, 409 or 502)."""

    async def post(self) -> None:
        try:
            notice = await self.perform()
        except ActionError as exc:
            self.set_status(exc.status if exc.status < 500 else 502)
            await self.render_page(problem=exc.message)
            return
        except ValidationError as exc:
            self.set_status(400)
            await self.render_page(problem=_validation_error(exc).message)
            return
        except ValueError as exc:
            self.set_status(400)
            await self.render_page(problem=str(exc))
            return
        except GNS3Error as exc:
            self.set_status(_gns3_status(exc))
            await self.render_page(problem=str(exc))
            return
        self.redirect(f"{self.prefix}/?done={_NOTICES.put(notice)}", status=303)

    async def perform(self) -> str:
        raise NotImplementedError

    def field(self, name: str) -> str:
        return self.get_body_argument(name, "").strip()


class BudgetForm(_FormHandler):
    """Fields `kind` (user, group), `name`, `daily_tokens`: a number, "unlimited", or
    empty for the policy's budget."""

    async def perform(self) -> str:
        kind, name, value = self.field("kind"), self.field("name"), self.field("daily_tokens")
        if kind not in ("user", "group"):
            raise ActionError(400, "kind: user or group", "kind")
        if not name:
            raise ActionError(400, f"name: which {kind}?", "name")
        if not value:
            await clear_budget(self.deps, kind, name)
            return f"The {kind} {name} is back on the policy's budget."
        tokens: DailyTokens
        if value.lower() == "unlimited":
            tokens = None
        else:
            digits = value.replace(",", "").replace("_", "").replace(" ", "")
            if not digits.isdigit():
                raise ActionError(
                    400,
                    f"daily_tokens: a number of tokens or 'unlimited', not {value!r}",
                    "daily_tokens",
                )
            tokens = int(digits)
        await set_budget(self.deps, kind, name, tokens)
        shown = "unlimited" if tokens is None else f"{tokens:,} tokens a day"
        return f"The {kind} {name} now has a budget of {shown}."


class AssignForm(_FormHandler):
    """Fields `template`, `students` (repeated), `group` (optional)."""

    async def perform(self) -> str:
        body = AssignBody(
            template=self.field("template"),
            students=[s.strip() for s in self.get_body_arguments("students") if s.strip()],
            group=self.field("group") or None,
        )
        copies = await assign(self.deps, body)
        return (
            f"Lab '{body.template}' assigned to: "
            + ", ".join(f"{user} ({copy.name})" for user, copy in copies.items())
            + "."
        )


class ResetForm(_FormHandler):
    """Fields `student`, `project`, `to` ("template" or "snapshot"), `template`,
    `snapshot`."""

    async def perform(self) -> str:
        target = self.field("to")
        if target not in ("template", "snapshot"):
            raise ActionError(400, "to: template or snapshot", "to")
        value = self.field(target)
        if not value:
            raise ActionError(400, f"{target}: which {target}?", target)
        body = ResetBody(
            student=self.field("student"), project=self.field("project"), **{target: value}
        )
        project = await reset(self.deps, body)
        return f"{body.student}'s project {project.name} was reset to the {target} {value}."


def dashboard_handlers(prefix: str, deps: DashboardDeps) -> list[Route]:
    """The dashboard's tornado routes under `prefix` (e.g. "/services/copilot/dashboard"):
    the page at `{prefix}/`, its forms, its stylesheet at `{prefix}/static/`, and the JSON
    API at `{prefix}/api/...`."""
    prefix = prefix.rstrip("/")
    root = re.escape(prefix)
    kwargs = {"deps": deps, "prefix": prefix}
    name = r"([^/]+)"
    return [
        (rf"{root}/?", DashboardPage, kwargs),
        (rf"{root}/budgets", BudgetForm, kwargs),
        (rf"{root}/labs/assign", AssignForm, kwargs),
        (rf"{root}/labs/reset", ResetForm, kwargs),
        (rf"{root}/static/(dashboard\.css)", StaticFileHandler, {"path": str(_HERE / "static")}),
        (rf"{root}/api/students", StudentsApi, kwargs),
        (rf"{root}/api/budgets/(users|groups)/{name}", BudgetApi, kwargs),
        (rf"{root}/api/labs/assign", AssignApi, kwargs),
        (rf"{root}/api/labs/reset", ResetApi, kwargs),
        (rf"{root}/api/usage\.csv", UsageCsvApi, kwargs),
        (rf"{root}/api/questions", QuestionsApi, kwargs),
    ]
