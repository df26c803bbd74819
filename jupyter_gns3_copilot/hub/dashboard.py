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

import re
from pathlib import Path
from typing import Any

from tornado.web import RequestHandler, StaticFileHandler

from .dashboard_api import (
    AssignApi,
    BudgetApi,
    GradeReportApi,
    GradesApi,
    GradesCheckApi,
    GradesCsvApi,
    QuestionsApi,
    ResetApi,
    StudentsApi,
    TemplatesApi,
    UsageCsvApi,
)
from .dashboard_data import DashboardDeps
from .dashboard_pages import (
    AssignForm,
    BudgetForm,
    DashboardPage,
    DeleteTemplateForm,
    EditTemplateForm,
    GradesCheckForm,
    GradesPage,
    NewTemplateForm,
    ResetForm,
    SaveTemplateForm,
    TemplateLabForm,
)

Route = tuple[str, type[RequestHandler], dict[str, Any]]
_STATIC = Path(__file__).parent / "static"


def dashboard_settings(cookie_path: str) -> dict[str, Any]:
    """tornado `Application` settings the dashboard's forms want: the XSRF cookie scoped to
    the service's URL prefix, so that it does not clash with the hub's own `_xsrf`."""
    return {"xsrf_cookie_kwargs": {"path": cookie_path, "httponly": True, "samesite": "Strict"}}


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
        (rf"{root}/static/(dashboard\.css)", StaticFileHandler, {"path": str(_STATIC)}),
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
