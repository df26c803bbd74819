"""A class's labs as the hub service checks them, so that grades cannot be forged.

A student controls their own server, and their GNS3 user may write files in their own
projects: neither can be trusted with a grade. So the service checks students' labs itself:

- **which lab file**: a student's copy of a template ("<template> - <hub user>", made by
  `LabAccounts.assign_lab`) is checked against the TEMPLATE's lab file
  (`template_document`): the one attached on the dashboard, kept in the service's store
  (`grade_store.py`), else the template project's own `lab.yaml` (a template made in
  GNS3 with its lab file; no student's GNS3 token reaches a template). The copy itself
  carries no lab file a student could read for the answers (`LabAccounts.hide_lab_file`),
  and a student who writes one into it changes nothing. Such a lab is *graded*: its
  results are recorded under the template's name. Any other project of the student's is
  checked against its own lab file (practice), and nothing is recorded;
- **on which devices**: the student's project, through the service's own GNS3 access
  (the administrator's client; consoles through GNS3's console websocket with its token),
  with `objectives.runner.check_lab`: the same checks, read-only command screening and
  timeouts as everywhere. One check run at a time per project (a second one waits), each
  with its own console connections, closed when it ends;
- **with whose values**: the lab rendered for the student with the class's salt, which
  only the service holds.

Troubleshooting exercises run here too, on these labs (`class_exercises.py`).

`hints_used` of a first pass: the student's copilot turns (gateway usage records, any
project: the gateway does not know the project of a call) from the start of the stage to
the pass. A stage starts when the stage before it was completed (every objective of it
passed), else when the student started the lab (it was assigned to them on the
dashboard, else their first check).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..console import ConsolePool, ConsoleTransport
from ..devices.access import Devices
from ..devices.policy import CommandPolicy
from ..gns3.models import Project
from ..objectives.api import LabView
from ..objectives.errors import LabFileError, NoLab
from ..objectives.loader import LabDocument
from ..objectives.model import LabFile
from ..objectives.results import ObjectiveResult
from ..objectives.runner import check_lab
from ..objectives.service import LAB_FILE, CatchUpPlan, ProjectLabs
from ..objectives.view import lab_view
from .grade_store import GradeStore, ObjectiveGrade
from .lab_accounts import LabAccounts, lab_name
from .usage import UsageStore, utc_now

CONSOLE_TRANSPORT: ConsoleTransport = "websocket"
"""How the service reaches consoles: GNS3's console websocket, with its own token."""


class ProjectNotOpened(Exception):
    """The project is closed: its devices cannot be checked."""


@dataclass(frozen=True)
class StudentLab:
    """One student's project with the lab file it is checked against."""

    user: str
    project: Project
    document: LabDocument
    template: Project | None
    """The template whose lab file it is; None: the project's own (not graded)."""

    @property
    def graded(self) -> bool:
        return self.template is not None

    @property
    def lab(self) -> str:
        """The name grades are recorded under: the template's."""
        return self.template.name if self.template is not None else self.project.name


class ClassLabs:
    """The service's lab checks (module docstring) over `accounts`' administrator client,
    recording into `grades`; `usage` gives the turns counted as hints; `salt` makes each
    student's values; `policy` screens check commands (default: the shipped one)."""

    def __init__(
        self,
        accounts: LabAccounts,
        grades: GradeStore,
        usage: UsageStore,
        salt: str | bytes,
        *,
        policy: CommandPolicy | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.accounts = accounts
        self.grades = grades
        self.usage = usage
        self.policy = policy or CommandPolicy()
        self.clock = clock
        self.salt = salt
        # The shared pool only names consoles (attaching judges nodes' dialects); each check
        # run has its own connections (`_run`).
        self.labs = ProjectLabs(self.devices(ConsolePool()), salt, self.policy)
        self._runs: dict[str, asyncio.Lock] = {}

    # -- which lab -----------------------------------------------------------------------

    async def student_lab(
        self, user: str, project: str, templates: Mapping[str, Project] | None = None
    ) -> StudentLab:
        """`user`'s project (id or name; `GNS3NotFound` when it is not theirs) and its lab
        file: its template's when it is a copy of a template with a lab file, else its
        own (`NoLab`, `LabFileError`). `templates` (by name): the class's template
        projects when the caller knows them already."""
        mine = await self.accounts.student_project(user, project)
        template = await self._template_of(mine, user, templates)
        if template is not None:
            with contextlib.suppress(NoLab):
                document = await self.template_document(template)
                return StudentLab(user, mine, document, template)
        return StudentLab(user, mine, await self.labs.document(mine.project_id), None)

    async def template_document(self, template: Project) -> LabDocument:
        """The template's lab file: the one attached on the dashboard (kept by the
        service), else the template project's `lab.yaml`. Raises `NoLab`, `LabFileError`."""
        kept = await self.grades.lab_file(template.name)
        if kept is not None:
            text, source = kept
            return self.labs.loaded(text, source)
        return await self.labs.document(template.project_id)

    async def attach_to_template(self, template: Project, text: str, source: str) -> LabFile:
        """Check `text` against the template's nodes and keep it as its lab file (in the
        service's store, by the template's name: never written into GNS3, where every
        copy would carry it). Raises `LabFileError`."""
        document = await self.labs.checked_against(template.project_id, text, source)
        await self.grades.keep_lab_file(template.name, text, source, self.clock())
        return document.lab

    async def keep_template_lab(self, template: Project, source: Project) -> None:
        """Before `template` is replaced by a copy of `source`: keep the lab file it will
        have in the service's store. `source`'s own lab file when it has one (its owner
        attached it, e.g. `%copilot lab attach`), else the one the template has (kept, or
        its project's own): a working copy made by "Edit a copy" carries none
        (`LabAccounts.hide_lab_file`)."""
        mine = await self._project_lab_text(source)
        if mine is None and await self.grades.lab_file(template.name) is not None:
            return
        text = mine if mine is not None else await self._project_lab_text(template)
        if text is not None:
            await self.grades.keep_lab_file(template.name, text, LAB_FILE, self.clock())

    async def _project_lab_text(self, project: Project) -> str | None:
        """The project's own lab file (None: it has none, or only comments); an invalid
        one too (the lab progress page says what is wrong with it)."""
        try:
            await self.labs.document(project.project_id)
        except NoLab:
            return None
        except LabFileError:
            pass
        raw = await self.accounts.admin.read_project_file(project.project_id, LAB_FILE)
        return raw.decode(errors="replace")

    async def _template_of(
        self, project: Project, user: str, templates: Mapping[str, Project] | None
    ) -> Project | None:
        suffix = lab_name("", user)
        if not project.name.endswith(suffix) or len(project.name) == len(suffix):
            return None
        name = project.name[: -len(suffix)]
        if templates is not None:
            return templates.get(name)
        _, found = await self.accounts.class_projects()
        return next((t for t in found if t.name == name), None)

    def render(self, lab: StudentLab, document: LabDocument | None = None) -> LabFile:
        """The lab (or `document`) as its student sees it."""
        return self.labs.render(document or lab.document, lab.user)

    async def view(self, user: str, project: str) -> LabView:
        """The lab of `user`'s project as they see it: texts with their values, their
        latest status of each objective and their current stage (`ProjectLabs.progress`,
        kept in memory; for a graded lab, the last recorded results after a restart)."""
        lab = await self.student_lab(user, project)
        rendered = self.render(lab)
        results = await self._latest(lab)
        key = lab.project.project_id
        stage = await self.labs.progress.current_stage(key, user, rendered)
        return lab_view(rendered, results, stage.id)

    async def choose_stage(self, user: str, project: str, stage: str | None) -> LabView:
        """Make `stage` the one `user` works on in their project (None: follow their
        checks). Raises `UnknownStage` for a stage the lab does not have."""
        lab = await self.student_lab(user, project)
        rendered = self.render(lab)
        if stage is not None:
            rendered.require_stage(stage)
        await self.labs.progress.choose(lab.project.project_id, user, stage)
        return await self.view(user, project)

    async def _latest(self, lab: StudentLab) -> Mapping[str, ObjectiveResult]:
        """The student's latest results (remembered, else recorded for a graded lab)."""
        progress = self.labs.progress
        key = lab.project.project_id
        if not await progress.results(key, lab.user) and lab.graded:
            recorded = await self.grades.grades(lab.lab, lab.user)
            await progress.record(key, lab.user, [g.last for g in recorded])
        return await progress.results(key, lab.user)

    async def attach(self, user: str, project: str, text: str, source: str) -> LabView:
        """Check `text` against `user`'s project and write it as the project's lab file;
        the file as they see it (a copy of a template is still checked against the
        template's). Raises `LabFileError`."""
        mine = await self.accounts.student_project(user, project)
        await self.labs.attach(mine.project_id, text, source)
        return lab_view(self.labs.render(await self.labs.document(mine.project_id), user))

    async def checked_against(self, lab: StudentLab, text: str, source: str) -> StudentLab:
        """`lab` with `text` as its lab file instead (checked against the project; not
        graded). Raises `LabFileError`."""
        document = await self.labs.checked_against(lab.project.project_id, text, source)
        return StudentLab(lab.user, lab.project, document, None)

    # -- checking ------------------------------------------------------------------------

    async def check(
        self,
        lab: StudentLab,
        *,
        stage: str | None = None,
        objectives: Sequence[str] | None = None,
        abort: asyncio.Event | None = None,
    ) -> AsyncGenerator[ObjectiveResult, None]:
        """Check `lab` (its project must be opened: `ProjectNotOpened`) on its devices,
        yielding each result as it is decided and, when graded, recording it. Raises
        `UnknownSelection` before checking anything."""
        from ..objectives.runner import select

        rendered = self.render(lab)
        select(rendered, stage, objectives)
        require_opened(lab, "check its lab")
        async with self.lock(lab):
            known = await self._known(lab)
            async for result in self._run(lab, rendered, stage, objectives, abort):
                await self.labs.progress.record(lab.project.project_id, lab.user, [result])
                if lab.graded:
                    known = await self._record(lab, rendered, result, known)
                yield result

    async def _run(
        self,
        lab: StudentLab,
        rendered: LabFile,
        stage: str | None,
        objectives: Sequence[str] | None,
        abort: asyncio.Event | None,
    ) -> AsyncIterator[ObjectiveResult]:
        pool = ConsolePool()
        devices = self.devices(pool)
        project_id = lab.project.project_id
        try:
            async for result in check_lab(
                devices, project_id, rendered, abort=abort, stage=stage, objectives=objectives
            ):
                yield result
        finally:
            await pool.aclose()

    async def _known(self, lab: StudentLab) -> dict[str, ObjectiveGrade]:
        if not lab.graded:
            return {}
        return {g.objective: g for g in await self.grades.grades(lab.lab, lab.user)}

    async def _record(
        self,
        lab: StudentLab,
        rendered: LabFile,
        result: ObjectiveResult,
        known: dict[str, ObjectiveGrade],
    ) -> dict[str, ObjectiveGrade]:
        now = self.clock()
        hints = None
        before = known.get(result.id)
        if result.status == "pass" and (before is None or not before.passed):
            since = await self._stage_start(lab, rendered, result.stage, known) or now
            hints = await self.usage.turns_between(lab.user, since, now)
        await self.grades.record(lab.user, lab.lab, result, now, hints)
        return await self._known(lab)

    async def _stage_start(
        self, lab: StudentLab, rendered: LabFile, stage: str, known: Mapping[str, ObjectiveGrade]
    ) -> datetime | None:
        ids = [s.id for s in rendered.stages]
        if ids.index(stage) > 0:
            previous = rendered.stages[ids.index(stage) - 1]
            passes = [known.get(o.id) for o in previous.objectives]
            times = [g.first_passed_at for g in passes if g is not None and g.passed]
            if len(times) == len(previous.objectives) and times:
                return max(t for t in times if t is not None)
        return await self.grades.started_at(lab.user, lab.lab)

    # -- catching up ---------------------------------------------------------------------

    async def catch_up_plan(self, lab: StudentLab, stage: str) -> CatchUpPlan:
        """What catching `lab` up to `stage` restores (the stage's snapshot, as the lab
        file it is checked against names it). Raises `UnknownStage`, `StageWithoutSnapshot`."""
        return await self.labs.plan_catch_up(lab.project.project_id, self.render(lab), stage)

    async def catch_up(self, lab: StudentLab, plan: CatchUpPlan) -> None:
        """Restore the plan's snapshot in the student's project and start its nodes."""
        async with self.lock(lab):
            await self.labs.catch_up(lab.project.project_id, plan)
            if lab.graded:  # a snapshot may hold the template's lab file
                await self.accounts.hide_lab_file(lab.project.project_id)

    def lock(self, lab: StudentLab) -> asyncio.Lock:
        """One run at a time on a project's devices (checks, catch-ups, exercises)."""
        return self._runs.setdefault(lab.project.project_id, asyncio.Lock())

    def devices(self, pool: ConsolePool) -> Devices:
        """The service's device access over `pool` (its own GNS3 access and policy)."""
        return Devices(
            gns3=self.accounts.admin,
            consoles=pool,
            policy=self.policy,
            console_transport=CONSOLE_TRANSPORT,
        )


def require_opened(lab: StudentLab, doing: str) -> None:
    """`ProjectNotOpened` unless the lab's project is opened (its devices are reached)."""
    if lab.project.status != "opened":
        raise ProjectNotOpened(
            f"The project {lab.project.name} is {lab.project.status or 'not opened'}: "
            f"open it to {doing}."
        )
