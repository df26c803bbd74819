"""What the instructor dashboard shows and does, without the web part (`dashboard.py`).

`overview(deps)` gathers every student's usage, budget, GNS3 projects and node states and
the template projects; `set_budget`, `clear_budget`, `assign` and `reset` are the actions.
Bad input is an `ActionError` (with the HTTP status and the field) or a `ValueError`;
GNS3's failures stay `GNS3Error`s (`gns3_status` maps them to HTTP).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from ..gns3.client import GNS3Client
from ..gns3.computes import LOCAL_COMPUTE
from ..gns3.errors import GNS3Conflict, GNS3Error, GNS3NotFound
from ..gns3.models import Project
from .budgets import BudgetPolicy, DailyTokens
from .caller import Caller
from .lab_accounts import LabAccounts
from .placement import TEMPLATE, ComputePlacement, PlacementError, PlacementRule
from .usage import OverrideKind, UsageStore, UserUsage, utc_now

if TYPE_CHECKING:
    from tornado.web import RequestHandler

    from .class_labs import ClassLabs

log = logging.getLogger(__name__)

CurrentCaller = Callable[["RequestHandler"], Awaitable[Caller | None]]
LogIn = Callable[["RequestHandler"], None]
GroupMembers = Callable[[str], Awaitable[list[str] | None]]


@dataclass(frozen=True)
class DashboardDeps:
    """What the dashboard works with (see the module docstring)."""

    accounts: LabAccounts
    usage: UsageStore
    policy: BudgetPolicy
    gns3: GNS3Client
    """The GNS3 admin client: template projects, nodes."""
    current_caller: CurrentCaller
    log_in: LogIn | None = None
    """Sends a browser that is not logged in (a page's GET) to log in, by redirecting it
    (the service: the hub's OAuth login); None: a 403 page."""
    group_members: GroupMembers | None = None
    """The hub's members of a group (None: the hub did not say); without it, or when it
    says nothing, "the students of a group" are those seen in it in the usage records."""
    instructor_groups: frozenset[str] = frozenset({"instructors"})
    log_questions: bool = False
    hub_url: str = "/hub/"
    """Where the navbar's "Hub" link points."""
    clock: Callable[[], datetime] = field(default=utc_now)
    labs: ClassLabs | None = None
    """The service's lab checks and grades (`class_labs.py`, `grades.py`); None: no lab
    progress on the dashboard."""
    placement: PlacementRule = TEMPLATE
    """Where assigned copies of a lab go (`placement.py`)."""


def may_use_dashboard(caller: Caller | None, instructor_groups: frozenset[str]) -> bool:
    """Hub admins and members of an instructor group."""
    return caller is not None and (caller.admin or bool(caller.groups & instructor_groups))


def forbidden_message(caller: Caller | None, instructor_groups: frozenset[str]) -> str:
    """Why `caller` (None: nobody logged in) may not use the dashboard."""
    groups = ", ".join(sorted(instructor_groups)) or "none"
    who = f"You are logged in as {caller.name}. " if caller else "You are not logged in. "
    return (
        f"{who}The copilot dashboard is for the course's instructors: hub admins and "
        f"members of the hub groups: {groups}."
    )


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
    compute_id: str | None = None


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
    made_here: bool = False
    """Made on the dashboard (in the templates pool): it may be replaced or deleted here."""


class ComputeView(BaseModel):
    """A GNS3 compute: the load it reports (None: it did not answer) and the nodes of
    students' opened projects on it."""

    compute_id: str
    name: str
    cpu_usage_percent: float | None = None
    memory_usage_percent: float | None = None
    students: list[str] = Field(default_factory=list)
    nodes: int = 0


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
    computes: list[ComputeView] = Field(default_factory=list)


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
            NodeView(name=n.name, node_type=n.node_type, status=n.status, compute_id=n.compute_id)
            for n in sorted(nodes, key=lambda n: n.name)
        ]
    return view


async def _gns3_side(
    deps: DashboardDeps,
) -> tuple[dict[str, list[ProjectView]], list[TemplateView]]:
    """Each student account's projects with their nodes, and the template projects."""
    (owned, projects), made = await asyncio.gather(
        deps.accounts.class_projects(), deps.accounts.made_templates()
    )
    templates = [
        TemplateView(project_id=p.project_id, name=p.name, made_here=p.project_id in made)
        for p in projects
    ]
    pairs = [(user, project) for user, mine in owned.items() for project in mine]
    shown = await asyncio.gather(*(_project_view(deps.gns3, p) for _, p in pairs))
    views: dict[str, list[ProjectView]] = {user: [] for user in owned}
    for (user, project), view in zip(pairs, shown, strict=True):
        view.template = _template_of(project, user, templates)
        views[user].append(view)
    return views, templates


async def _computes(gns3: GNS3Client, projects: dict[str, list[ProjectView]]) -> list[ComputeView]:
    """Each compute with its load and the students' nodes on it (opened projects)."""
    computes, loads = await asyncio.gather(gns3.list_computes(), gns3.compute_loads())
    reported = {load.compute_id: load for load in loads}
    views = {c.compute_id: ComputeView(compute_id=c.compute_id, name=c.name) for c in computes}
    for compute_id, view in views.items():
        if compute_id in reported:
            view.cpu_usage_percent = reported[compute_id].cpu_usage_percent
            view.memory_usage_percent = reported[compute_id].memory_usage_percent
    for user, mine in projects.items():
        for project in mine:
            for node in project.nodes or []:
                host = views.get(node.compute_id or LOCAL_COMPUTE)
                if host is None:
                    continue
                host.nodes += 1
                if user not in host.students:
                    host.students.append(user)
    return list(views.values())


async def overview(deps: DashboardDeps) -> Overview:
    """Everything the page shows (GNS3's part left out, with the reason, if GNS3 fails)."""
    day = deps.clock().date()
    usage: dict[str, UserUsage] = {u.user: u for u in await deps.usage.user_usage(day)}
    overrides = await deps.usage.overrides()
    gns3_error = None
    computes: list[ComputeView] = []
    try:
        projects, templates = await _gns3_side(deps)
    except GNS3Error as exc:
        gns3_error, projects, templates = str(exc), {}, []
    else:
        try:
            computes = await _computes(deps.gns3, projects)
        except GNS3Error as exc:  # the labs are still worth showing
            log.warning("dashboard: GNS3 did not list its computes: %s", exc)
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
        computes=computes,
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


async def _group_students(deps: DashboardDeps, group: str) -> tuple[list[str], str]:
    """The students of `group` and where that comes from: the hub's members when the hub
    says, else those whose model calls were made as members of it."""
    if deps.group_members is not None:
        members = await deps.group_members(group)
        if members is not None:
            return members, f"the hub's group '{group}' has no members."
    day = deps.clock().date()
    seen = [u.user for u in await deps.usage.user_usage(day) if group in u.groups]
    return seen, f"no student has been seen in the group '{group}'."


async def course_staff(deps: DashboardDeps) -> set[str]:
    """The members of the instructor groups (the hub's, else as seen in the usage
    records): course staff, whose copies of a lab are no student's."""
    staff: set[str] = set()
    for group in deps.instructor_groups:
        members, _ = await _group_students(deps, group)
        staff.update(members)
    return staff


async def assign(deps: DashboardDeps, body: AssignBody) -> dict[str, ProjectView]:
    """Give the students of `body` a copy of the template; each student's copy."""
    students = list(dict.fromkeys(body.students))
    if body.group is not None:
        members, none = await _group_students(deps, body.group)
        if not members and not students:
            raise ActionError(400, f"group: {none}", "group")
        students += [m for m in members if m not in students]
    template = await template_project(deps, body.template)
    placement = ComputePlacement(deps.gns3, deps.placement)
    day = deps.clock().date()
    seen_groups = {u.user: u.groups for u in await deps.usage.user_usage(day)}

    async def compute_for(user: str) -> str | None:
        groups = [body.group] if body.group is not None else []
        return await placement.compute_for([*groups, *seen_groups.get(user, [])])

    try:
        copies = await deps.accounts.assign_lab(template.project_id, students, compute_for)
    except PlacementError as exc:
        raise ActionError(409, str(exc)) from None
    if deps.labs is not None:  # the lab starts now for each student (hints are counted since)
        for user in copies:
            await deps.labs.grades.start(user, template.name, deps.clock())
    log.info("dashboard: lab %s assigned to %s", template.name, ", ".join(students))
    return {
        user: ProjectView(project_id=p.project_id, name=p.name, status=p.status)
        for user, p in copies.items()
    }


async def template_project(deps: DashboardDeps, name: str) -> Project:
    """The template project (id or name) `name`; a 400 naming `template` when it is a
    student's project, `GNS3NotFound` when there is none."""
    template = await deps.gns3.resolve_project(name)
    owned, templates = await deps.accounts.class_projects()
    if all(t.project_id != template.project_id for t in templates):
        owner = next(user for user, mine in owned.items() if template in mine)
        raise ActionError(
            400,
            f"template: '{template.name}' is a project of {owner}'s, not a template.",
            "template",
        )
    return template


async def reset(deps: DashboardDeps, body: ResetBody) -> ProjectView:
    """Reset one of a student's projects; the project as it is afterwards."""
    project = await deps.accounts.reset_lab(
        body.student, body.project, template=body.template, snapshot=body.snapshot
    )
    log.info("dashboard: %s's project %s reset", body.student, project.name)
    return ProjectView(project_id=project.project_id, name=project.name, status=project.status)


def gns3_status(exc: GNS3Error) -> int:
    if isinstance(exc, GNS3NotFound):
        return 404
    if isinstance(exc, GNS3Conflict):
        return 409
    return 502


def validation_error(exc: ValidationError) -> ActionError:
    first = exc.errors()[0]
    location = ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if location:
        return ActionError(400, f"{location}: {message}", location)
    field_name = message.split(":", 1)[0] if ":" in message else None
    return ActionError(400, message, field_name)
