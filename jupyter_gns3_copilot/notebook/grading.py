"""Autograding a student's notebook with nbgrader in hub mode: the lab is the service's to
grade.

`nbgrader autograde` runs each student's submitted notebook in a kernel of the person
grading (`NBGRADER_EXECUTION=autograde`), in the directory nbgrader made for that student
and assignment (`autograded/<student>/<assignment>`, nbgrader's default layout). There,
when the kernel is in hub mode (`GNS3_COPILOT_HUB_URL`, as every server of a hub class
has it), `Copilot(project=...).check_lab(stage)` does not check anything itself: it asks
the hub service, with the grader's hub token (`JUPYTERHUB_API_TOKEN`, a member of the
course staff), for that student's report (`POST api/grades/report`): their copy checked
now if it is opened, then every objective the service ever saw passed counts as passed.
The student's own server, notebook outputs or lab file play no part in it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..classroom import HUB_URL_ENV
from ..objectives.results import CheckReport
from .errors import CopilotError, UsageError

EXECUTION_ENV = "NBGRADER_EXECUTION"
"""Set by nbgrader while it runs a notebook: `autograde`, or `validate` (a student's own
check: then the copilot checks as usual, through the student's server)."""
AUTOGRADED_STEP = "autograded"
"""nbgrader's directory of autograded submissions (`CourseDirectory.autograded_directory`)."""
HUB_TOKEN_ENV = "JUPYTERHUB_API_TOKEN"


class GradingError(CopilotError):
    """The hub service gave no grade report (the message says why)."""


class GradingOnlyClient:
    """The server client while nbgrader autogrades: there is none; every use but
    `close()` is refused with a `UsageError`."""

    def close(self) -> None:
        """Nothing to close."""

    def __getattr__(self, name: str) -> Any:
        raise UsageError(
            "While nbgrader autogrades in hub mode, the copilot only grades the student's "
            "lab: Copilot(project=...).check_lab(...)."
        )


@dataclass(frozen=True)
class Autograding:
    """The student whose notebook nbgrader autogrades here, and the service to ask."""

    student: str
    service_url: str
    hub_token: str

    @classmethod
    def detect(
        cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> Autograding | None:
        """The autograding under way in this kernel (None: not autograding in hub mode);
        `UsageError` when nbgrader autogrades but who or how cannot be told."""
        env = os.environ if environ is None else environ
        url = env.get(HUB_URL_ENV, "")
        if env.get(EXECUTION_ENV) != "autograde" or not url:
            return None
        where = cwd or Path.cwd()
        if where.parent.parent.name != AUTOGRADED_STEP:
            raise UsageError(
                f"nbgrader is autograding in {where}, not in its {AUTOGRADED_STEP}/<student>/"
                "<assignment> directory: the copilot cannot tell whose lab to grade."
            )
        token = env.get(HUB_TOKEN_ENV, "")
        if not token:
            raise UsageError(
                f"Autograding a lab needs a hub token of the course staff in {HUB_TOKEN_ENV} "
                "(run nbgrader in a terminal of your JupyterHub server)."
            )
        return cls(student=where.parent.name, service_url=url, hub_token=token)

    def report(
        self, project: str, stage: str | None, objectives: Sequence[str] | None
    ) -> CheckReport:
        """The service's report of the student's lab `project` (the template's name or
        their copy's)."""
        from ..classroom.client import HubServiceError, request_grade_report
        from ..hub.api_models import GradeReportRequest

        request = GradeReportRequest(
            student=self.student,
            project=project,
            stage=stage,
            objectives=list(objectives) if objectives else None,
        )
        try:
            return request_grade_report(self.service_url, self.hub_token, request)
        except HubServiceError as exc:
            detail = getattr(exc, "detail", None) or str(exc)
            raise GradingError(f"No lab grade for {self.student}: {detail}") from None
