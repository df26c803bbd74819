"""The instructor dashboard of the hub service: a server-rendered page and a JSON API.

    routes = dashboard_handlers("/services/gns3-copilot/", deps)
    app = tornado.web.Application(routes, cookie_secret=..., **dashboard_settings(prefix))

`deps` (`DashboardDeps`, in `dashboard_data.py` with what the page shows and the actions
it takes; this module is the web part) brings everything in: the class's `LabAccounts`, the
`UsageStore`, the `BudgetPolicy`, the GNS3 admin client the template projects come from,
and `current_caller(handler)`, which says who is asking (the hub service: HubOAuth's
browser login, or a hub token for API calls), and `log_in(handler)`, which redirects a
page's GET with nobody logged in to the hub's login. Hub admins and members of
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
- make, edit (a copy of one in the caller's own pool), save and delete template projects,
  and attach a lab file to one (`templates.py`): forms `templates/new|edit|save|delete|lab`
  (`lab`: a file upload); `POST api/templates` and `api/templates/edit|save|delete|lab`;
- read: `GET api/students` (the overview), `api/usage.csv`, `api/questions`;
- lab progress (`grades.py`): the page `grades` (a grid per lab: students x objectives),
  its form `grades/check` ("check everyone now"); `GET api/grades` (`?lab=`),
  `api/grades.csv`, `POST api/grades/check` and `api/grades/report` (one student's
  report, what an autograding kernel asks for).

Forms are POSTs checked with tornado's XSRF token.
A group means the students seen in it: the groups recorded with each student's last
model call. API errors are `{"error": {"message", "type", "field"?}}`: 400 naming the
field, 403, 404 (unknown project, snapshot, or the question log is off), 409 (a GNS3
conflict), 422 (a lab file that cannot be used: `errors` lists each problem's `source`,
`line`, `field` and `message`, as the copilot's lab routes do), 502 (GNS3 failed). The
API checks no XSRF cookie: it takes JSON bodies only (a browser cannot send those
cross-site without CORS) and refuses a foreign `Origin`.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel, ValidationError
from tornado.web import Finish, HTTPError, RequestHandler, StaticFileHandler

from ..gns3.errors import GNS3Error
from ..objectives.errors import LabFileError
from ..objectives.service import LAB_FILE
from . import templates
from .api_models import GradeReportRequest
from .budgets import DailyTokens
from .caller import Caller
from .dashboard_data import (
    ActionError,
    AssignBody,
    BudgetBody,
    DashboardDeps,
    ResetBody,
    assign,
    clear_budget,
    gns3_status,
    may_use_dashboard,
    overview,
    reset,
    set_budget,
    validation_error,
)
from .grades import GradesCheckBody, check_everyone, grade_report, grades_csv, grades_view
from .lab_handlers import lab_file_error
from .placement import describe_placement
from .templates import EditTemplateBody, NewTemplateBody, SaveTemplateBody, TemplateLabBody
from .usage import OverrideKind, Question

Route = tuple[str, type[RequestHandler], dict[str, Any]]
_HERE = Path(__file__).parent
_TEMPLATES = Environment(
    loader=FileSystemLoader(_HERE / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
_Body = TypeVar("_Body", bound=BaseModel)
QUESTIONS_SHOWN = 200
"""Questions on the page (the API takes `limit`, up to `MAX_QUESTIONS`)."""
MAX_QUESTIONS = 5000


def dashboard_settings(cookie_path: str) -> dict[str, Any]:
    """tornado `Application` settings the dashboard's forms want: the XSRF cookie scoped to
    the service's URL prefix, so that it does not clash with the hub's own `_xsrf`."""
    return {"xsrf_cookie_kwargs": {"path": cookie_path, "httponly": True, "samesite": "Strict"}}


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

    def send_csv(self, content: str, name: str) -> None:
        """`content` as the download `<name>-<today>.csv`."""
        stamp = self.deps.clock().date().isoformat()
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", f'attachment; filename="{name}-{stamp}.csv"')
        self.finish(content)

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
            raise validation_error(exc) from None

    async def act(self, action: Callable[[], Awaitable[Any]]) -> None:
        """Run an action (its body read inside) and answer its result (a pydantic model or
        a dict of them; None: 204), or the error it met."""
        try:
            result = await action()
        except ActionError as exc:
            self.send_json_error(exc.status, exc.message, "bad_request", exc.field)
            return
        except LabFileError as exc:
            self.send_json({"error": lab_file_error(exc)}, 422)
            return
        except ValueError as exc:
            self.send_json_error(400, str(exc), "bad_request")
            return
        except GNS3Error as exc:
            self.send_json_error(gns3_status(exc), str(exc), "gns3")
            return
        if self._finished:  # the action answered itself (a CSV)
            return
        if result is None:
            self.set_status(204)
            self.finish()
        else:
            self.send_json(_jsonable(result))


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


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


class TemplatesApi(_ApiHandler):
    """`POST api/templates` (make one) and `api/templates/{edit,save,delete,lab}`."""

    async def post(self, action: str | None = None) -> None:
        deps, caller = self.deps, self.caller
        if action is None:
            await self.act(lambda: templates.create(deps, caller, self.body(NewTemplateBody)))
        elif action == "edit":
            await self.act(lambda: templates.edit(deps, caller, self.body(EditTemplateBody)))
        elif action == "save":
            await self.act(lambda: templates.save(deps, caller, self.body(SaveTemplateBody)))
        elif action == "lab":
            await self.act(lambda: templates.attach_lab(deps, caller, self.body(TemplateLabBody)))
        else:
            await self.act(lambda: templates.delete(deps, caller, self.body(EditTemplateBody)))


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
        self.send_csv(await self.deps.usage.export_csv(since, until), "copilot-usage")


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


class GradesApi(_ApiHandler):
    async def get(self) -> None:
        await self.act(lambda: grades_view(self.deps, self.get_query_argument("lab", "") or None))


class GradesCsvApi(_ApiHandler):
    async def get(self) -> None:
        await self.act(self._csv)

    async def _csv(self) -> None:
        lab = self.get_query_argument("lab", "") or None
        self.send_csv(await grades_csv(self.deps, lab), "lab-grades")


class GradesCheckApi(_ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: check_everyone(self.deps, self.body(GradesCheckBody)))


class GradeReportApi(_ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: grade_report(self.deps, self.body(GradeReportRequest)))


# -- the page -------------------------------------------------------------------------------


class _PageHandler(_DashboardHandler):
    """The HTML page and its forms (tornado's XSRF check on every POST)."""

    async def prepare(self) -> None:
        await super().prepare()
        if self.request.method == "POST" and not self.settings.get("xsrf_cookies"):
            self.check_xsrf_cookie()  # tornado checks only when the app says so

    def forbidden(self, caller: Caller | None) -> None:
        if caller is None and self.deps.log_in and self.request.method in ("GET", "HEAD"):
            self.deps.log_in(self)
            return
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
                placement_text=describe_placement(self.deps.placement),
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

    page = "/"
    """The page the form is on (under the prefix)."""

    async def post(self) -> None:
        try:
            notice = await self.perform()
        except ActionError as exc:
            self.set_status(exc.status if exc.status < 500 else 502)
            await self.render_page(problem=exc.message)
            return
        except ValidationError as exc:
            self.set_status(400)
            await self.render_page(problem=validation_error(exc).message)
            return
        except ValueError as exc:
            self.set_status(400)
            await self.render_page(problem=str(exc))
            return
        except GNS3Error as exc:
            self.set_status(gns3_status(exc))
            await self.render_page(problem=str(exc))
            return
        self.redirect(f"{self.prefix}{self.page}?done={_NOTICES.put(notice)}", status=303)

    async def perform(self) -> str:
        raise NotImplementedError

    def field(self, name: str) -> str:
        return self.get_body_argument(name, "").strip()


class BudgetForm(_FormHandler):
    """Fields `kind` (user, group), `name`, `daily_tokens`: a number, "unlimited", or
    empty for the policy's budget."""

    async def perform(self) -> str:
        given, name, value = self.field("kind"), self.field("name"), self.field("daily_tokens")
        if given not in ("user", "group"):
            raise ActionError(400, "kind: user or group", "kind")
        kind: OverrideKind = "user" if given == "user" else "group"
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


class NewTemplateForm(_FormHandler):
    """Fields `name`, `project` (one of the caller's; empty: an empty template)."""

    async def perform(self) -> str:
        body = NewTemplateBody(name=self.field("name"), project=self.field("project") or None)
        made = await templates.create(self.deps, self.caller, body)
        source = f" from your project {body.project}" if body.project else " (empty)"
        return (
            f"Template '{made.name}' made{source}. To change it, press Edit: you get a copy "
            "in your own labs; save it back here when it is ready."
        )


class EditTemplateForm(_FormHandler):
    """Field `template`."""

    async def perform(self) -> str:
        copy = await templates.edit(
            self.deps, self.caller, EditTemplateBody(template=self.field("template"))
        )
        return (
            f"Your copy is '{copy.name}': open it with your copilot (it is one of your labs), "
            "change it, then save it here as the template."
        )


class SaveTemplateForm(_FormHandler):
    """Fields `template`, `project` (one of the caller's)."""

    async def perform(self) -> str:
        body = SaveTemplateBody(template=self.field("template"), project=self.field("project"))
        await templates.save(self.deps, self.caller, body)
        return (
            f"Template '{body.template}' is now a copy of your project {body.project}. "
            "Students keep the copies they have: reset one to give it the new version."
        )


class DeleteTemplateForm(_FormHandler):
    """Field `template`."""

    async def perform(self) -> str:
        body = EditTemplateBody(template=self.field("template"))
        await templates.delete(self.deps, self.caller, body)
        return f"Template '{body.template}' deleted; students keep their copies."


class TemplateLabForm(_FormHandler):
    """Field `template` and the file `lab` (a `lab.yaml`): the template's lab file."""

    async def perform(self) -> str:
        upload = next(iter(self.request.files.get("lab", [])), None)
        if upload is None or not upload.body:
            raise ActionError(400, "lab: choose the lab file (lab.yaml) to attach.", "lab")
        try:
            text = upload.body.decode("utf-8")
        except UnicodeDecodeError:
            raise ActionError(400, f"lab: {upload.filename} is not a text file.", "lab") from None
        body = TemplateLabBody(
            template=self.field("template"), lab=text, source=upload.filename or LAB_FILE
        )
        made = await templates.attach_lab(self.deps, self.caller, body)
        stages = len(made.stages)
        return (
            f"Template '{made.template.name}' now has the lab '{made.title}' "
            f"({stages} stage{'' if stages == 1 else 's'}, {made.objectives} objectives, "
            f"{made.max_score:g} points). Every copy of it is graded with this lab file from "
            "now on (see Lab progress)."
        )


class _GradesPageHandler(_PageHandler):
    """The lab progress page (`grades.html`)."""

    async def render_page(self, notice: str | None = None, problem: str | None = None) -> None:
        try:
            view = await grades_view(self.deps)
        except (ActionError, GNS3Error) as exc:
            self.set_status(exc.status if isinstance(exc, ActionError) else gns3_status(exc))
            view, problem = None, str(exc)
        self.set_header("Cache-Control", "no-store")
        self.finish(
            _TEMPLATES.get_template("grades.html").render(
                prefix=self.prefix,
                hub_url=self.deps.hub_url,
                caller=self.caller,
                view=view or {"labs": []},
                notice=notice,
                problem=problem,
                xsrf_form_html=self.xsrf_form_html(),
            )
        )


class GradesPage(_GradesPageHandler):
    async def get(self) -> None:
        await self.render_page(notice=_NOTICES.pop(self.get_query_argument("done", "")))


class GradesCheckForm(_FormHandler, _GradesPageHandler):
    """Field `lab` (empty: every lab): check everyone now."""

    page = "/grades"

    async def perform(self) -> str:
        result = await check_everyone(self.deps, GradesCheckBody(lab=self.field("lab") or None))
        count = len(result.checked)
        done = f"Checked {count} student lab{'' if count == 1 else 's'}."
        if result.skipped:
            done += " Not checked: " + "; ".join(
                f"{s.user} ({s.project}): {s.reason}" for s in result.skipped
            )
            done += "."
        return done


def dashboard_handlers(prefix: str, deps: DashboardDeps) -> list[Route]:
    """The dashboard's tornado routes under `prefix` (the service: its own prefix):
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
        (rf"{root}/templates/new", NewTemplateForm, kwargs),
        (rf"{root}/templates/edit", EditTemplateForm, kwargs),
        (rf"{root}/templates/save", SaveTemplateForm, kwargs),
        (rf"{root}/templates/delete", DeleteTemplateForm, kwargs),
        (rf"{root}/templates/lab", TemplateLabForm, kwargs),
        (rf"{root}/static/(dashboard\.css)", StaticFileHandler, {"path": str(_HERE / "static")}),
        (rf"{root}/api/students", StudentsApi, kwargs),
        (rf"{root}/api/budgets/(users|groups)/{name}", BudgetApi, kwargs),
        (rf"{root}/api/labs/assign", AssignApi, kwargs),
        (rf"{root}/api/labs/reset", ResetApi, kwargs),
        (rf"{root}/api/templates", TemplatesApi, kwargs),
        (rf"{root}/api/templates/(edit|save|delete|lab)", TemplatesApi, kwargs),
        (rf"{root}/api/usage\.csv", UsageCsvApi, kwargs),
        (rf"{root}/api/questions", QuestionsApi, kwargs),
        (rf"{root}/grades", GradesPage, kwargs),
        (rf"{root}/grades/check", GradesCheckForm, kwargs),
        (rf"{root}/api/grades", GradesApi, kwargs),
        (rf"{root}/api/grades\.csv", GradesCsvApi, kwargs),
        (rf"{root}/api/grades/check", GradesCheckApi, kwargs),
        (rf"{root}/api/grades/report", GradeReportApi, kwargs),
    ]
