"""The class's lab progress for the course staff (no web part here: `dashboard_pages.py` has
the page and its form, `dashboard_api.py` `api/grades...`):

- `grades_view`: per lab (a template project with a lab file), the grid of students x
  objectives: passed (and when first, and the copilot turns taken in that stage by then),
  failed, undecided or never checked, each stage's completion and the score; and the
  troubleshooting exercises the students did in it (the fault and its description, how
  it went, the time and the copilot's use);
- `check_everyone`: the service checks every student's opened copy now ("check everyone
  now"); closed copies are said, not opened;
- `grades_csv`: the grid as CSV, one row per student and objective.

One student's report for an autograding kernel is `grade_report.py`'s.

Only what the service checked itself counts (`class_labs.py`, `grade_store.py`). A stage
is completed when each of its objectives has passed once: a stage is a checkpoint, a
student who breaks it later while working on the next one keeps it. So two scores: the
KEPT score (`kept_score`, the grid's `score`: the points of every objective passed once)
and the LIVE score (`live_score`: the points of the objectives the last check passed).

Students only: the course staff's working copies ("Edit a copy" on the dashboard, and
anyone in an instructor group) are neither checked by "check everyone now" nor shown in
the grid and the CSV (`_staff`).
"""

from __future__ import annotations

import asyncio
import csv
import io
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..gns3.errors import GNS3Error, GNS3NotFound
from ..gns3.models import Project
from ..objectives.errors import LabFileError, NoLab
from ..objectives.loader import LabDocument
from ..objectives.model import LabFile
from .class_exercises import ClassExercises
from .class_labs import ClassLabs
from .dashboard_data import ActionError, course_staff
from .grade_store import ExerciseEntry, ObjectiveGrade
from .lab_accounts import lab_name
from .usage import csv_cell

if TYPE_CHECKING:
    from .dashboard_data import DashboardDeps

log = logging.getLogger(__name__)

CLASS_CHECKS_AT_ONCE = 4
"""Students' labs the service checks at the same time when checking everyone."""
CSV_COLUMNS = (
    "lab",
    "student",
    "project",
    "stage",
    "objective",
    "points",
    "status",
    "points_awarded",
    "first_passed_at",
    "hints_used",
    "last_checked_at",
    "checks",
)
CellStatus = Literal["pass", "fail", "error", "unchecked"]


class ObjectiveColumn(BaseModel):
    id: str
    text: str
    """As the lab file writes it (students read it with their own values)."""
    points: float


class StageColumn(BaseModel):
    id: str
    title: str
    objectives: list[ObjectiveColumn]


class Cell(BaseModel):
    """One student's objective: `pass` once a check passed it, else the last check's
    status, `unchecked` before any check."""

    status: CellStatus
    first_passed_at: datetime | None = None
    hints_used: int | None = None
    """Copilot turns taken in the stage by the first pass."""
    last_checked_at: datetime | None = None
    checks: int = 0
    explanation: str = ""
    """The last check's, as the student read it."""


class StageProgress(BaseModel):
    id: str
    passed: bool
    completed_at: datetime | None = None
    score: float
    max_score: float


class StudentRow(BaseModel):
    user: str
    project: str | None
    """Their copy of the template (None: gone, grades kept)."""
    project_status: str | None = None
    score: float = Field(
        description="The kept score: the points of every objective passed once (a first "
        "pass is kept), the same as `kept_score`."
    )
    kept_score: float = Field(
        default=0, description="The points of every objective passed once (first passes kept)."
    )
    live_score: float = Field(
        default=0,
        description="The points of the objectives the last check passed: what the devices "
        "show now (as `api/grades/check` reports it).",
    )
    max_score: float
    stages_passed: int
    stages: list[StageProgress]
    objectives: dict[str, Cell]


class ExerciseLine(ExerciseEntry):
    """One student's troubleshooting exercise in the lab, with the fault's description
    (as that student's lab file reads it; empty when the fault left the lab file)."""

    description: str


class LabGrid(BaseModel):
    """One lab: its stages and objectives (columns) and its students (rows), and their
    troubleshooting exercises."""

    lab: str
    """The template project's name (students' copies are "<lab> - <student>")."""
    template_id: str
    title: str = ""
    max_score: float = 0
    stages: list[StageColumn] = Field(default_factory=list)
    students: list[StudentRow] = Field(default_factory=list)
    problem: str | None = None
    """Why the lab's file cannot be used (its students cannot be checked until fixed)."""
    exercises: list[ExerciseLine] = Field(default_factory=list)
    """By student and start."""


class GradesView(BaseModel):
    """`GET api/grades`."""

    labs: list[LabGrid]


class GradesCheckBody(BaseModel):
    """`POST api/grades/check`: every lab, or the lab (template name) named."""

    model_config = ConfigDict(extra="forbid")

    lab: str | None = Field(default=None, min_length=1, max_length=255)


class CheckedLab(BaseModel):
    user: str
    lab: str
    project: str
    score: float = Field(
        description="The live score: the points of the objectives this check passed (what "
        "the devices show now), the same as `live_score`; the grid shows `kept_score`."
    )
    live_score: float = Field(
        default=0, description="The points of the objectives this check passed."
    )
    kept_score: float = Field(
        default=0,
        description="The points of every objective passed once, this check included (first "
        "passes are kept): the score the grid and the CSV show.",
    )
    max_score: float
    passed: bool
    """Whether this check passed every objective."""


class SkippedLab(BaseModel):
    user: str
    lab: str
    project: str
    reason: str


class ClassCheck(BaseModel):
    """`POST api/grades/check`: the copies checked, and those not checked with why."""

    checked: list[CheckedLab]
    skipped: list[SkippedLab]


def service_labs(deps: DashboardDeps) -> ClassLabs:
    """The service's lab checks; a 404 where it has none."""
    if deps.labs is None:
        raise ActionError(404, "Lab progress needs the service's lab checks, not set up here.")
    return deps.labs


# -- the grid -------------------------------------------------------------------------------


async def _lab_files(
    labs: ClassLabs, templates: Sequence[Project], lab: str | None
) -> list[tuple[Project, LabDocument | Exception]]:
    """The templates (all, or the one named `lab`) that have a lab file, with it, or with
    why it cannot be used (an invalid file, GNS3 failing to give it). A template deleted
    meanwhile has none."""
    chosen = [t for t in templates if lab in (None, t.name)]
    if lab is not None and not chosen:
        raise ActionError(404, f"lab: no template project is named {lab!r}.", "lab")
    found = await asyncio.gather(
        *(labs.template_document(t) for t in chosen), return_exceptions=True
    )
    files: list[tuple[Project, LabDocument | Exception]] = []
    for template, document in zip(chosen, found, strict=True):
        if isinstance(document, (NoLab, GNS3NotFound)):
            continue
        if isinstance(document, (LabDocument, LabFileError, GNS3Error)):
            files.append((template, document))
        elif isinstance(document, BaseException):
            raise document
    return files


async def _staff(deps: DashboardDeps, labs: ClassLabs) -> set[str]:
    """The course staff: who took a working copy of a template ("Edit a copy") and the
    members of the instructor groups. Their copies are never graded."""
    return await labs.grades.staff() | await course_staff(deps)


def _students_only(
    owned: Mapping[str, Sequence[Project]], staff: set[str]
) -> dict[str, Sequence[Project]]:
    return {user: mine for user, mine in owned.items() if user not in staff}


def _kept(lab: LabFile, grades: Sequence[ObjectiveGrade]) -> float:
    """The points of the objectives of `lab` passed once."""
    passed = {g.objective for g in grades if g.passed}
    return sum(o.points for s in lab.stages for o in s.objectives if o.id in passed)


def _copies(owned: Mapping[str, Sequence[Project]], template: str) -> dict[str, Project]:
    """Each student's copy of `template`."""
    return {
        user: project
        for user, mine in owned.items()
        for project in mine
        if project.name == lab_name(template, user)
    }


def _cell(grade: ObjectiveGrade | None) -> Cell:
    if grade is None:
        return Cell(status="unchecked")
    return Cell(
        status="pass" if grade.passed else grade.status,
        first_passed_at=grade.first_passed_at,
        hints_used=grade.hints_used,
        last_checked_at=grade.last_checked_at,
        checks=grade.checks,
        explanation=grade.last.explanation,
    )


def _row(
    user: str, copy: Project | None, lab: LabFile, grades: Mapping[str, ObjectiveGrade]
) -> StudentRow:
    cells = {o.id: _cell(grades.get(o.id)) for s in lab.stages for o in s.objectives}
    stages = []
    for stage in lab.stages:
        mine = [(o, cells[o.id]) for o in stage.objectives]
        passed = all(c.status == "pass" for _, c in mine)
        stages.append(
            StageProgress(
                id=stage.id,
                passed=passed,
                completed_at=max(c.first_passed_at for _, c in mine if c.first_passed_at)
                if passed
                else None,
                score=sum(o.points for o, c in mine if c.status == "pass"),
                max_score=sum(o.points for o, _ in mine),
            )
        )
    kept = sum(s.score for s in stages)
    return StudentRow(
        user=user,
        project=copy.name if copy else None,
        project_status=copy.status if copy else None,
        score=kept,
        kept_score=kept,
        live_score=sum(
            o.points
            for s in lab.stages
            for o in s.objectives
            if o.id in grades and grades[o.id].status == "pass"
        ),
        max_score=sum(s.max_score for s in stages),
        stages_passed=sum(s.passed for s in stages),
        stages=stages,
        objectives=cells,
    )


def _exercise_lines(
    labs: ClassLabs, document: LabDocument, exercises: Sequence[ExerciseEntry]
) -> list[ExerciseLine]:
    descriptions: dict[str, dict[str, str]] = {}
    for user in {e.user for e in exercises}:
        faults = labs.labs.render(document, user).faults
        descriptions[user] = {f.id: f.description for f in faults}
    return [
        ExerciseLine(**e.model_dump(), description=descriptions[e.user].get(e.fault, ""))
        for e in exercises
    ]


def _grid(
    template: Project,
    document: LabDocument | Exception,
    copies: Mapping[str, Project],
    grades: Sequence[ObjectiveGrade],
    exercises: Sequence[ExerciseLine] = (),
) -> LabGrid:
    if not isinstance(document, LabDocument):
        return LabGrid(lab=template.name, template_id=template.project_id, problem=str(document))
    lab = document.lab
    by_user: dict[str, dict[str, ObjectiveGrade]] = {}
    for grade in grades:
        by_user.setdefault(grade.user, {})[grade.objective] = grade
    users = sorted(set(copies) | set(by_user), key=str.lower)
    return LabGrid(
        lab=template.name,
        template_id=template.project_id,
        title=lab.title,
        max_score=sum(o.points for s in lab.stages for o in s.objectives),
        stages=[
            StageColumn(
                id=s.id,
                title=s.title,
                objectives=[
                    ObjectiveColumn(id=o.id, text=o.text, points=o.points) for o in s.objectives
                ],
            )
            for s in lab.stages
        ],
        students=[_row(u, copies.get(u), lab, by_user.get(u, {})) for u in users],
        exercises=list(exercises),
    )


async def grades_view(deps: DashboardDeps, lab: str | None = None) -> GradesView:
    """Every lab's grid (or the one named `lab`); 404 for an unknown lab."""
    labs = service_labs(deps)
    owned, templates = await deps.accounts.class_projects()
    staff = await _staff(deps, labs)
    students = _students_only(owned, staff)
    grids = []
    for template, document in await _lab_files(labs, templates, lab):
        grades = [g for g in await labs.grades.grades(template.name) if g.user not in staff]
        done = [e for e in await labs.grades.exercises(template.name) if e.user not in staff]
        lines = _exercise_lines(labs, document, done) if isinstance(document, LabDocument) else []
        copies = _copies(students, template.name)
        grids.append(_grid(template, document, copies, grades, lines))
    return GradesView(labs=grids)


async def grades_csv(deps: DashboardDeps, lab: str | None = None) -> str:
    """The grids as CSV (`CSV_COLUMNS`), one row per student and objective."""
    view = await grades_view(deps, lab)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for grid in view.labs:
        for row in grid.students:
            for stage in grid.stages:
                for objective in stage.objectives:
                    cell = row.objectives[objective.id]
                    awarded = objective.points if cell.status == "pass" else 0
                    cells = (
                        grid.lab,
                        row.user,
                        row.project,
                        stage.id,
                        objective.id,
                        f"{objective.points:g}",
                        cell.status,
                        f"{awarded:g}",
                        cell.first_passed_at.isoformat() if cell.first_passed_at else None,
                        cell.hints_used,
                        cell.last_checked_at.isoformat() if cell.last_checked_at else None,
                        cell.checks,
                    )
                    writer.writerow([csv_cell(value) for value in cells])
    return out.getvalue()


# -- checking everyone ----------------------------------------------------------------------


async def check_everyone(deps: DashboardDeps, body: GradesCheckBody) -> ClassCheck:
    """The service checks every student's opened copy of every lab (or of `body.lab`) now,
    a few at a time; the results are recorded, and a going exercise graded, as when
    students check."""
    from ..objectives.runner import collect

    labs = service_labs(deps)
    owned, templates = await deps.accounts.class_projects()
    students = _students_only(owned, await _staff(deps, labs))
    by_name = {t.name: t for t in templates}
    files = {t.name: d for t, d in await _lab_files(labs, templates, body.lab)}
    checked: list[CheckedLab] = []
    skipped: list[SkippedLab] = []
    gate = asyncio.Semaphore(CLASS_CHECKS_AT_ONCE)

    async def one(user: str, lab: str, copy: Project) -> None:
        def skip(reason: str) -> None:
            skipped.append(SkippedLab(user=user, lab=lab, project=copy.name, reason=reason))

        if not isinstance(files[lab], LabDocument):
            skip(f"the lab file of {lab} cannot be used: {files[lab]}")
            return
        if copy.status != "opened":
            skip(f"the project is {copy.status or 'not opened'}: it is checked once opened")
            return
        async with gate:
            try:
                student_lab = await labs.student_lab(user, copy.project_id, by_name)
                rendered = labs.render(student_lab)
                report = await collect(rendered, labs.check(student_lab))
                await ClassExercises(labs).grade(student_lab)
                kept = _kept(rendered, await labs.grades.grades(lab, user))
            except (GNS3Error, LabFileError, NoLab) as exc:
                skip(str(exc))
                return
        checked.append(
            CheckedLab(
                user=user,
                lab=lab,
                project=copy.name,
                score=report.score,
                live_score=report.score,
                kept_score=kept,
                max_score=report.max_score,
                passed=report.passed,
            )
        )

    await asyncio.gather(
        *(
            one(user, lab, copy)
            for lab in files
            for user, copy in sorted(_copies(students, lab).items())
        )
    )
    log.info("dashboard: checked %d students' labs (%d not checked)", len(checked), len(skipped))
    return ClassCheck(
        checked=sorted(checked, key=lambda c: (c.lab, c.user)),
        skipped=sorted(skipped, key=lambda s: (s.lab, s.user)),
    )
