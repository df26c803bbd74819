"""The template projects an instructor makes and edits on the dashboard (no web part here:
`dashboard.py` has the forms and `api/templates...`).

A template is a GNS3 project in no student's pool (`LabAccounts.class_projects`). The
ones made here live in the class's templates pool (`LabAccounts.publish_template`): no
GNS3 token of a student or an instructor reaches them, only the service's administrator
client. So an instructor edits a template by working on a copy in their own pool, which
their copilot (hub mode, on their own Jupyter server) lists like any lab of theirs:

- `create`: a new template, empty or a copy of one of the caller's own projects;
- `edit`: the caller's copy "<template> - <caller>" (`LabAccounts.assign_lab`: a copy
  they already have is kept);
- `save`: the template replaced by a copy of one of the caller's projects (students keep
  the copies they have; resetting one to the template gives them the new version); it
  keeps its lab file, unless the project saved has one of its own, which replaces it;
- `delete`: the template goes, with the lab file the service kept for it; students'
  copies stay theirs;
- `attach_lab`: a lab file (`lab.yaml`, the lab's objectives) checked against the
  template's nodes and kept by the service (`ClassLabs.attach_to_template`), for any
  template, made here or in GNS3: the GNS3 project is not changed. The service grades
  every copy of the template with it from then on (`class_labs.py`), copies made before
  included.

Only templates made here may be replaced or deleted: another project in no student's pool
(the GNS3 administrator's own, another course's) can be assigned and given a lab file,
never changed in GNS3.

`edit` notes the caller as course staff (`GradeStore.note_staff`): their working copy is
never graded (`grades.py`).
"""

from __future__ import annotations

import logging
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..gns3.models import Project
from ..objectives.api import LAB_TEXT_MAX
from ..objectives.service import LAB_FILE
from .caller import Caller
from .dashboard_data import ActionError, DashboardDeps, ProjectView, TemplateView, template_project
from .grades import service_labs

log = logging.getLogger(__name__)

ProjectName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
"""A GNS3 project's id or name."""


class NewTemplateBody(BaseModel):
    """`POST api/templates`: a template named `name`, a copy of the caller's `project`
    (id or name) or empty."""

    model_config = ConfigDict(extra="forbid")

    name: ProjectName
    project: ProjectName | None = None


class EditTemplateBody(BaseModel):
    """`POST api/templates/edit` and `api/templates/delete`: the template (id or name)."""

    model_config = ConfigDict(extra="forbid")

    template: ProjectName


class SaveTemplateBody(BaseModel):
    """`POST api/templates/save`: the template (id or name) becomes a copy of the caller's
    `project` (id or name)."""

    model_config = ConfigDict(extra="forbid")

    template: ProjectName
    project: ProjectName


class TemplateLabBody(BaseModel):
    """`POST api/templates/lab`: `lab`, a lab file's text (YAML), becomes the template's
    (id or name) lab file; `source` names it in its problems."""

    model_config = ConfigDict(extra="forbid")

    template: ProjectName
    lab: str = Field(min_length=1, max_length=LAB_TEXT_MAX)
    source: str = Field(default=LAB_FILE, min_length=1, max_length=255)


class TemplateLabView(BaseModel):
    """The lab file a template now has: its title, stages (ids), objectives and points."""

    template: TemplateView
    title: str
    stages: list[str]
    objectives: int
    max_score: float


def _view(project: Project, made_here: bool = True) -> TemplateView:
    return TemplateView(project_id=project.project_id, name=project.name, made_here=made_here)


async def _made_here(deps: DashboardDeps, name: str) -> Project:
    template = await template_project(deps, name)
    if template.project_id not in await deps.accounts.made_templates():
        raise ActionError(
            400,
            f"template: '{template.name}' was not made on this dashboard, so it is not changed "
            "here: save your copy as a new template instead.",
            "template",
        )
    return template


async def create(deps: DashboardDeps, caller: Caller, body: NewTemplateBody) -> TemplateView:
    """A new template (409 when GNS3 has a project of that name)."""
    source = (
        await deps.accounts.student_project(caller.name, body.project)
        if body.project is not None
        else None
    )
    made = await deps.accounts.publish_template(source, body.name)
    log.info(
        "dashboard: %s made the template %s%s",
        caller.name,
        made.name,
        f" from {source.name}" if source else "",
    )
    return _view(made)


async def edit(deps: DashboardDeps, caller: Caller, body: EditTemplateBody) -> ProjectView:
    """The caller's own copy of the template, to change with their copilot."""
    template = await template_project(deps, body.template)
    if deps.labs is not None:
        await deps.labs.grades.note_staff(caller.name, deps.clock())
    copies = await deps.accounts.assign_lab(template.project_id, [caller.name])
    copy = copies[caller.name]
    return ProjectView(project_id=copy.project_id, name=copy.name, status=copy.status)


async def save(deps: DashboardDeps, caller: Caller, body: SaveTemplateBody) -> TemplateView:
    """The template replaced by a copy of one of the caller's projects."""
    template = await _made_here(deps, body.template)
    source = await deps.accounts.student_project(caller.name, body.project)
    if deps.labs is not None:
        await deps.labs.keep_template_lab(template, source)
    replaced = await deps.accounts.replace_template(template, source)
    log.info("dashboard: %s saved %s as the template %s", caller.name, source.name, template.name)
    return _view(replaced)


async def delete(deps: DashboardDeps, caller: Caller, body: EditTemplateBody) -> None:
    """The template deleted."""
    template = await _made_here(deps, body.template)
    await deps.accounts.delete_template(template)
    if deps.labs is not None:
        await deps.labs.grades.forget_lab_file(template.name)
    log.info("dashboard: %s deleted the template %s", caller.name, template.name)


async def attach_lab(deps: DashboardDeps, caller: Caller, body: TemplateLabBody) -> TemplateLabView:
    """The lab file checked against the template (its nodes judge the checks' commands) and
    kept by the service as its lab file; any template, made here or not. Raises
    `LabFileError` (each problem with its line and field)."""
    labs = service_labs(deps)
    template = await template_project(deps, body.template)
    lab = await labs.attach_to_template(template, body.lab, body.source)
    objectives = [o for stage in lab.stages for o in stage.objectives]
    log.info(
        "dashboard: %s attached the lab file %s to the template %s",
        caller.name,
        body.source,
        template.name,
    )
    made_here = template.project_id in await deps.accounts.made_templates()
    return TemplateLabView(
        template=_view(template, made_here),
        title=lab.title,
        stages=[stage.id for stage in lab.stages],
        objectives=len(objectives),
        max_score=sum(o.points for o in objectives),
    )
