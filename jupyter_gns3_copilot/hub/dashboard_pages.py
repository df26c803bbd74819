"""The instructor dashboard's pages (`dashboard.html`, `grades.html`) and their forms
(routed by `dashboard.py`, whose docstring lists them): staff only, a browser with nobody
logged in sent to the hub's login, every POST checked with tornado's XSRF token and
answered with a redirect to the page, which says what was done.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import ValidationError
from tornado.web import Finish, RequestHandler

from ..gns3.errors import GNS3Error
from ..objectives.service import LAB_FILE
from . import templates
from .budgets import DailyTokens
from .caller import Caller
from .dashboard_data import (
    ActionError,
    AssignBody,
    DashboardDeps,
    ResetBody,
    assign,
    clear_budget,
    forbidden_message,
    gns3_status,
    may_use_dashboard,
    overview,
    reset,
    set_budget,
    validation_error,
)
from .grades import GradesCheckBody, check_everyone, grades_view
from .placement import describe_placement
from .templates import EditTemplateBody, NewTemplateBody, SaveTemplateBody, TemplateLabBody
from .usage import OverrideKind, Question

_TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
QUESTIONS_SHOWN = 200
"""Questions on the page (the API takes `limit`, up to `dashboard_api.MAX_QUESTIONS`)."""


class PageHandler(RequestHandler):
    """The HTML page and its forms (tornado's XSRF check on every POST); only the staff
    get past `prepare` (`self.caller` is set then)."""

    deps: DashboardDeps
    prefix: str
    caller: Caller

    def initialize(self, deps: DashboardDeps, prefix: str) -> None:
        self.deps = deps
        self.prefix = prefix

    async def prepare(self) -> None:
        caller = await self.deps.current_caller(self)
        if caller is None or not may_use_dashboard(caller, self.deps.instructor_groups):
            self.forbidden(caller)
            raise Finish()
        self.caller = caller
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
                message=forbidden_message(caller, self.deps.instructor_groups),
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


class DashboardPage(PageHandler):
    async def get(self) -> None:
        await self.render_page(notice=_NOTICES.pop(self.get_query_argument("done", "")))


class FormHandler(PageHandler):
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


class BudgetForm(FormHandler):
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


class AssignForm(FormHandler):
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


class ResetForm(FormHandler):
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


class NewTemplateForm(FormHandler):
    """Fields `name`, `project` (one of the caller's; empty: an empty template)."""

    async def perform(self) -> str:
        body = NewTemplateBody(name=self.field("name"), project=self.field("project") or None)
        made = await templates.create(self.deps, self.caller, body)
        source = f" from your project {body.project}" if body.project else " (empty)"
        return (
            f"Template '{made.name}' made{source}. To change it, press Edit: you get a copy "
            "in your own labs; save it back here when it is ready."
        )


class EditTemplateForm(FormHandler):
    """Field `template`."""

    async def perform(self) -> str:
        copy = await templates.edit(
            self.deps, self.caller, EditTemplateBody(template=self.field("template"))
        )
        return (
            f"Your copy is '{copy.name}': open it with your copilot (it is one of your labs), "
            "change it, then save it here as the template."
        )


class SaveTemplateForm(FormHandler):
    """Fields `template`, `project` (one of the caller's)."""

    async def perform(self) -> str:
        body = SaveTemplateBody(template=self.field("template"), project=self.field("project"))
        await templates.save(self.deps, self.caller, body)
        return (
            f"Template '{body.template}' is now a copy of your project {body.project}. "
            "Students keep the copies they have: reset one to give it the new version."
        )


class DeleteTemplateForm(FormHandler):
    """Field `template`."""

    async def perform(self) -> str:
        body = EditTemplateBody(template=self.field("template"))
        await templates.delete(self.deps, self.caller, body)
        return f"Template '{body.template}' deleted; students keep their copies."


class TemplateLabForm(FormHandler):
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


class GradesPageHandler(PageHandler):
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


class GradesPage(GradesPageHandler):
    async def get(self) -> None:
        await self.render_page(notice=_NOTICES.pop(self.get_query_argument("done", "")))


class GradesCheckForm(FormHandler, GradesPageHandler):
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
