"""The instructor dashboard's JSON API (`api/...`, routed by `dashboard.py`, whose docstring
lists the routes and their errors): staff only, JSON bodies, no XSRF cookie but a
same-origin check.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from tornado.web import Finish, HTTPError, RequestHandler

from ..gns3.errors import GNS3Error
from ..objectives.errors import LabFileError
from . import templates
from .api_models import GradeReportRequest
from .caller import Caller
from .dashboard_data import (
    ActionError,
    AssignBody,
    BudgetBody,
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
from .grade_report import grade_report
from .grades import GradesCheckBody, check_everyone, grades_csv, grades_view
from .lab_handlers import lab_file_error
from .templates import EditTemplateBody, NewTemplateBody, SaveTemplateBody, TemplateLabBody
from .usage import OverrideKind

_Body = TypeVar("_Body", bound=BaseModel)
MAX_QUESTIONS = 5000
"""The most questions `api/questions` gives at once (its `limit`)."""


class ApiHandler(RequestHandler):
    """JSON in and out; errors as `{"error": {...}}`; only the staff get past `prepare`
    (`self.caller` is set then)."""

    deps: DashboardDeps
    prefix: str
    caller: Caller

    def initialize(self, deps: DashboardDeps, prefix: str) -> None:
        self.deps = deps
        self.prefix = prefix

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
        caller = await self.deps.current_caller(self)
        if caller is None or not may_use_dashboard(caller, self.deps.instructor_groups):
            message = forbidden_message(caller, self.deps.instructor_groups)
            self.send_json_error(403, message, "forbidden")
            raise Finish()
        self.caller = caller

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


class StudentsApi(ApiHandler):
    async def get(self) -> None:
        await self.act(lambda: overview(self.deps))


class BudgetApi(ApiHandler):
    async def put(self, kind: str, name: str) -> None:
        async def action() -> None:
            body = self.body(BudgetBody)
            await set_budget(self.deps, _kind(kind), name, body.daily_tokens)

        await self.act(action)

    async def delete(self, kind: str, name: str) -> None:
        await self.act(lambda: clear_budget(self.deps, _kind(kind), name))


def _kind(path_part: str) -> OverrideKind:
    return "user" if path_part == "users" else "group"


class AssignApi(ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: assign(self.deps, self.body(AssignBody)))


class ResetApi(ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: reset(self.deps, self.body(ResetBody)))


class TemplatesApi(ApiHandler):
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


class UsageCsvApi(ApiHandler):
    async def get(self) -> None:
        await self.act(self._csv)

    async def _csv(self) -> None:
        since, until = _date_argument(self, "since"), _date_argument(self, "until")
        self.send_csv(await self.deps.usage.export_csv(since, until), "copilot-usage")


class QuestionsApi(ApiHandler):
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


class GradesApi(ApiHandler):
    async def get(self) -> None:
        await self.act(lambda: grades_view(self.deps, self.get_query_argument("lab", "") or None))


class GradesCsvApi(ApiHandler):
    async def get(self) -> None:
        await self.act(self._csv)

    async def _csv(self) -> None:
        lab = self.get_query_argument("lab", "") or None
        self.send_csv(await grades_csv(self.deps, lab), "lab-grades")


class GradesCheckApi(ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: check_everyone(self.deps, self.body(GradesCheckBody)))


class GradeReportApi(ApiHandler):
    async def post(self) -> None:
        await self.act(lambda: grade_report(self.deps, self.body(GradeReportRequest)))
