"""One student's lab report for an autograding kernel (nbgrader), `POST api/grades/report`:
their copy checked now when it is opened, then every objective passed once counts as
passed. Only what the service checked itself counts (see `grades.py`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..gns3.errors import GNS3NotFound
from ..objectives.errors import NoLab
from ..objectives.model import Objective
from ..objectives.results import CheckReport, ObjectiveResult, summarize
from .api_models import GradeReportRequest
from .class_labs import ClassLabs, StudentLab
from .dashboard_data import ActionError
from .grade_store import ObjectiveGrade
from .grades import service_labs
from .lab_accounts import lab_name

if TYPE_CHECKING:
    from .dashboard_data import DashboardDeps

log = logging.getLogger(__name__)


async def grade_report(deps: DashboardDeps, body: GradeReportRequest) -> CheckReport:
    """`body.student`'s graded lab: their copy checked now when opened (`body.check`),
    then each selected objective as the service recorded it: passed once, passed (when,
    from the record); else its last check's status, or an error saying it was never
    checked. 404 without such a copy, 400 for a project that is no copy of a template with
    a lab file, or an unknown stage or objective."""
    from ..objectives.runner import select

    labs = service_labs(deps)
    lab = await _student_copy(labs, body.student, body.project)
    if not lab.graded:
        raise ActionError(
            400,
            f"project: {lab.project.name} is not a copy of a template with a lab file, so "
            "the service grades nothing there.",
            "project",
        )
    rendered = labs.render(lab)
    chosen = select(rendered, body.stage, body.objectives)
    if body.check and lab.project.status == "opened":
        async for _ in labs.check(lab, stage=body.stage, objectives=body.objectives):
            pass
    grades = {g.objective: g for g in await labs.grades.grades(lab.lab, lab.user)}
    results = [
        _graded(stage.id, objective, grades.get(objective.id)) for stage, objective in chosen
    ]
    log.info("grade report of %s's %s: %d objectives", lab.user, lab.lab, len(results))
    return CheckReport(results=results, **summarize(rendered, results).model_dump())


async def _student_copy(labs: ClassLabs, student: str, project: str) -> StudentLab:
    try:
        try:
            return await labs.student_lab(student, project)
        except GNS3NotFound:
            return await labs.student_lab(student, lab_name(project, student))
    except NoLab as exc:
        raise ActionError(404, f"project: {exc}", "project") from None


def _graded(stage: str, objective: Objective, grade: ObjectiveGrade | None) -> ObjectiveResult:
    base: dict[str, Any] = {
        "id": objective.id,
        "stage": stage,
        "text": objective.text,
        "points": objective.points,
    }
    if grade is None:
        return ObjectiveResult(
            **base,
            status="error",
            points_awarded=0,
            explanation="The copilot hub service never checked it (the lab was closed).",
            duration_ms=0,
        )
    last = grade.last
    if grade.first_passed_at is not None:
        when = grade.first_passed_at.strftime("%Y-%m-%d %H:%M")
        since = "" if last.status == "pass" else f"; the last check: {last.explanation}"
        return ObjectiveResult(
            **base,
            status="pass",
            points_awarded=objective.points,
            explanation=f"Passed the service's check on {when} UTC{since}",
            evidence=last.evidence,
            duration_ms=last.duration_ms,
        )
    return last.model_copy(update={**base, "points_awarded": 0})
