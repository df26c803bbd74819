"""Each project's lab: its `lab.yaml` in the GNS3 project, as each student sees it, its
checks, and catching up to a stage.

The file lives in the project's directory (GNS3's project-files API), so a template project
duplicated for every student carries it. The routes read it again on every use (one small
GNS3 request; a student or instructor may have replaced it); a chat turn takes a read at
most `TURN_MAX_AGE` seconds old (most projects have no lab, and every turn would ask).
It is parsed once per content.

`ProjectLabs` is a student's server's `provider.LabProvider` outside hub mode (the hub
service's `ClassLabs` uses it too, for each student's project).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from ..devices.access import Devices
from ..devices.policy import CommandPolicy
from ..gns3 import GNS3NotFound, Snapshot
from .api import (
    CatchUpDone,
    ExerciseRequest,
    ExerciseView,
    GiveUpAnswer,
    LabAttachRequest,
    LabCheckSelection,
    LabView,
)
from .errors import ConfirmationNeeded, LabFileError, NoLab, StageWithoutSnapshot
from .exercise_model import ExerciseGrade
from .exercises import Exercises
from .hints import TurnObjectives, configuring_judge
from .loader import LabDocument, load_lab
from .model import LabFile, Stage
from .progress import StudentProgress
from .results import CheckReport, CheckSummary, ObjectiveResult, summarize
from .runner import check_lab, collect, select
from .view import lab_view

LAB_FILE = "lab.yaml"
"""The lab file's path in the project's directory."""
CACHED_DOCUMENTS = 64
"""Parsed lab files kept (by content), across projects."""
TURN_MAX_AGE = 30.0
"""Seconds a chat turn may use the last read of a project's lab file."""


@dataclass(frozen=True)
class CatchUpPlan:
    """What a catch-up to `stage` restores: the snapshot named by the stage."""

    stage: Stage
    snapshot: Snapshot

    @property
    def description(self) -> str:
        """What the person approves by confirming."""
        return (
            f"Catching up to stage {self.stage.id} ({self.stage.title}) restores the "
            f"snapshot {self.snapshot.name!r}: the whole lab goes back to the start of that "
            "stage, every change made since is lost, and the nodes are started again."
        )


class ProjectLabs:
    """The labs of the projects whose devices `devices` reaches (module docstring), a
    `provider.LabProvider`. `salt` makes each student's parameter values (never shown to
    students); `policy` judges check commands (default: the devices' command policy);
    `progress` keeps each student's results and stage (default: in memory)."""

    def __init__(
        self,
        devices: Devices,
        salt: str | bytes,
        policy: CommandPolicy | None = None,
        progress: StudentProgress | None = None,
    ) -> None:
        self.devices = devices
        self._salt = salt
        self.policy = policy or devices.policy
        self.progress = progress or StudentProgress()
        self.watch = self.progress.watch
        self._documents: dict[str, LabDocument | LabFileError] = {}
        self._recent: dict[str, tuple[float, LabDocument | NoLab | LabFileError]] = {}
        self.exercises = Exercises(devices, self.progress, self.for_student, salt)

    async def document(self, project_id: str, *, max_age: float | None = None) -> LabDocument:
        """The project's lab file, checked (a read at most `max_age` seconds old, when
        given). Raises `NoLab`, or `LabFileError` for an invalid file (the same problems
        each time, until the file changes)."""
        recent = self._recent.get(project_id)
        if max_age is not None and recent and time.monotonic() - recent[0] <= max_age:
            found = recent[1]
        else:
            found = await self._read(project_id)
            self._recent[project_id] = (time.monotonic(), found)
        if isinstance(found, Exception):
            raise found
        return found

    async def _read(self, project_id: str) -> LabDocument | NoLab | LabFileError:
        try:
            raw = await self.devices.gns3.read_project_file(project_id, LAB_FILE)
        except GNS3NotFound as exc:
            if exc.kind != "file":
                raise
            return NoLab(f"this project has no lab file ({LAB_FILE})")
        if _blank(raw):
            return NoLab(f"this project's lab file ({LAB_FILE}) is empty")
        try:
            return self.loaded(raw)
        except LabFileError as exc:
            return exc

    def loaded(self, text: str | bytes, source: str = LAB_FILE) -> LabDocument:
        """`text` read as a lab file (parsed once per content). Raises `LabFileError`
        (the same problems each time)."""
        raw = text.encode() if isinstance(text, str) else text
        key = _content_key(raw, source)
        cached = self._documents.get(key)
        if cached is None:
            try:
                cached = self._load(raw, source)
            except LabFileError as exc:
                cached = exc
            self._remember(key, cached)
        if isinstance(cached, LabFileError):
            raise cached
        return cached

    async def for_student(self, project_id: str, user: str) -> LabFile:
        """The project's lab as `user` sees it (their parameter values filled in)."""
        return self.render(await self.document(project_id), user)

    async def checked_against(
        self, project_id: str, text: str | bytes, source: str = LAB_FILE
    ) -> LabDocument:
        """`text` read as a lab file and checked against the project: every node a check
        names is one of the project's, and its nodes' dialects judge the check commands.
        Raises `LabFileError`."""
        document = self._load(text, source)
        dialects = await self.devices.node_dialects(project_id)
        problems = [
            *document.node_problems([*dialects, *self.devices.console_targets]),
            *document.command_problems(self._refused, dialects.get),
        ]
        if problems:
            raise LabFileError(sorted(problems, key=lambda p: p.line))
        return document

    def render(self, document: LabDocument, user: str) -> LabFile:
        """`document` as `user` sees it."""
        return document.for_student(user, self._salt)

    async def attach(self, project_id: str, text: str | bytes, source: str = LAB_FILE) -> LabFile:
        """Check `text` against the project (`checked_against`) and write it as the
        project's lab file. Raises `LabFileError`."""
        document = await self.checked_against(project_id, text, source)
        raw = text.encode() if isinstance(text, str) else text
        await self.devices.gns3.write_project_file(project_id, LAB_FILE, raw)
        self._remember(_content_key(raw, LAB_FILE), document)
        self._recent[project_id] = (time.monotonic(), document)
        return document.lab

    async def check(
        self,
        project_id: str,
        user: str,
        lab: LabFile,
        *,
        stage: str | None = None,
        objectives: Sequence[str] | None = None,
        abort: asyncio.Event | None = None,
    ) -> AsyncIterator[ObjectiveResult]:
        """Check `lab` (as `for_student` gave it to `user`) on the project's devices,
        yielding each result as it is decided and remembering it as the user's latest.
        Raises `UnknownSelection` (`UnknownStage` for a stage) before checking anything."""
        results = check_lab(
            self.devices, project_id, lab, abort=abort, stage=stage, objectives=objectives
        )
        async for result in results:
            await self.progress.record(project_id, user, [result])
            yield result

    async def view(self, project_id: str, user: str) -> LabView:
        """The lab as `user` sees it, with their latest results and current stage."""
        lab = await self.for_student(project_id, user)
        stage = await self.progress.current_stage(project_id, user, lab)
        return lab_view(lab, await self.progress.results(project_id, user), stage.id)

    async def attach_lab(self, project_id: str, user: str, request: LabAttachRequest) -> LabView:
        """Attach `request.text` (`attach`); the lab as `user` sees it then."""
        await self.attach(project_id, request.text, request.source)
        return await self.view(project_id, user)

    async def prepare_check(
        self, project_id: str, user: str, selection: LabCheckSelection
    ) -> LocalCheck:
        """A check of `selection` as `user` sees the lab (the project's, or `selection.lab`
        checked against the project). Raises `NoLab`, `LabFileError` or
        `UnknownSelection` before anything runs."""
        if selection.lab is not None:
            document = await self.checked_against(project_id, selection.lab, selection.source)
            lab = self.render(document, user)
        else:
            lab = await self.for_student(project_id, user)
        select(lab, selection.stage, selection.objectives)
        return LocalCheck(self, project_id, user, lab, selection)

    async def prepare_catch_up(
        self, project_id: str, user: str, stage: str, *, confirm: bool
    ) -> LocalCatchUp:
        """A catch-up to `stage` (`catch_up_plan`); `ConfirmationNeeded` saying what it
        would restore when not `confirm`."""
        plan = await self.catch_up_plan(project_id, user, stage)
        if not confirm:
            raise ConfirmationNeeded(plan.description)
        return LocalCatchUp(self, project_id, plan)

    async def choose_stage(self, project_id: str, user: str, stage: str | None) -> LabView:
        """Make `stage` the one `user` works on (None: follow their checks again).
        Raises `UnknownStage` for a stage the lab does not have."""
        lab = await self.for_student(project_id, user)
        if stage is not None:
            lab.require_stage(stage)
        await self.progress.choose(project_id, user, stage)
        return await self.view(project_id, user)

    async def start_exercise(
        self, project_id: str, user: str, request: ExerciseRequest
    ) -> ExerciseView:
        """`exercises.Exercises.start`."""
        return await self.exercises.start(project_id, user, request)

    async def exercise(self, project_id: str, user: str) -> ExerciseView:
        """`exercises.Exercises.current`."""
        return await self.exercises.current(project_id, user)

    async def give_up(self, project_id: str, user: str) -> GiveUpAnswer:
        """`exercises.Exercises.give_up`."""
        return await self.exercises.give_up(project_id, user)

    async def turn_objectives(self, project_id: str, user: str) -> TurnObjectives | None:
        """The user's lab for a chat turn (`hints.TurnObjectives`), None when the project
        has no usable lab file (a turn goes on without objectives). The lab carries no
        faults: the copilot diagnoses an exercise from the devices, as the student does."""
        try:
            document = await self.document(project_id, max_age=TURN_MAX_AGE)
        except (NoLab, LabFileError):
            return None
        lab = self.render(document, user).model_copy(update={"faults": []})
        stage = await self.progress.current_stage(project_id, user, lab)
        dialects = (
            await project_dialects(self.devices, project_id) if stage.hints == "nudge" else {}
        )

        async def checker(
            stage_id: str | None, abort: asyncio.Event | None
        ) -> list[ObjectiveResult]:
            results = self.check(project_id, user, lab, stage=stage_id, abort=abort)
            return (await collect(lab, results)).results

        return TurnObjectives(
            lab=lab,
            stage=stage,
            results=dict(await self.progress.results(project_id, user)),
            checker=checker,
            is_configuring=configuring_judge(self._refused, dialects),
        )

    async def catch_up_plan(self, project_id: str, user: str, stage_id: str) -> CatchUpPlan:
        """What catching up to `stage_id` would restore. Raises `NoLab`, `LabFileError`,
        `UnknownStage` or `StageWithoutSnapshot`."""
        lab = await self.for_student(project_id, user)
        return await self.plan_catch_up(project_id, lab, stage_id)

    async def plan_catch_up(self, project_id: str, lab: LabFile, stage_id: str) -> CatchUpPlan:
        """What catching up to `stage_id` of `lab` (another project's lab file, e.g. the
        template's) would restore in the project. Raises `UnknownStage` or
        `StageWithoutSnapshot`."""
        stage = lab.require_stage(stage_id)
        if not stage.snapshot:
            raise StageWithoutSnapshot(f"stage {stage.id} has no snapshot to catch up to")
        snapshots = await self.devices.gns3.list_snapshots(project_id)
        snapshot = next((s for s in snapshots if s.name == stage.snapshot), None)
        if snapshot is None:
            raise StageWithoutSnapshot(
                f"the snapshot {stage.snapshot!r} of stage {stage.id} is not in this project "
                "(ask your instructor)"
            )
        return CatchUpPlan(stage, snapshot)

    async def catch_up(self, project_id: str, plan: CatchUpPlan) -> None:
        """Restore the plan's snapshot and start every node again. The latest results of
        the project are forgotten: the devices they were read from went back in time."""
        gns3 = self.devices.gns3
        await gns3.restore_snapshot(project_id, plan.snapshot.snapshot_id)
        await self.progress.forget(project_id)
        await gns3.start_all(project_id)

    # -- internals -----------------------------------------------------------------------

    def _load(self, text: str | bytes, source: str = LAB_FILE) -> LabDocument:
        return load_lab(text, source, refused=self._refused)

    def _refused(self, command: str, dialect: str) -> str | None:
        return self.policy.check(command, dialect=dialect, read_only=True)

    def _remember(self, key: str, value: LabDocument | LabFileError) -> None:
        if len(self._documents) >= CACHED_DOCUMENTS:
            self._documents.pop(next(iter(self._documents)))
        self._documents[key] = value


@dataclass(frozen=True)
class LocalCheck:
    """A check of `lab` (as `user` sees it) on the project's devices: the
    `provider.PreparedCheck` of `ProjectLabs.prepare_check`."""

    labs: ProjectLabs
    project_id: str
    user: str
    lab: LabFile
    selection: LabCheckSelection

    @contextlib.asynccontextmanager
    async def results(
        self, abort: asyncio.Event
    ) -> AsyncIterator[AsyncIterator[ObjectiveResult | CheckSummary]]:
        """Each result as it is decided, then their summary (with the user's exercise
        graded, when one is going)."""
        yield _summed(self.lab, self._checked(abort), self._graded)

    async def report(self, abort: asyncio.Event | None = None) -> CheckReport:
        """The check as one report (with the user's exercise graded, when one is going)."""
        report = await collect(self.lab, self._checked(abort))
        report.exercise = await self._graded()
        return report

    async def _graded(self) -> ExerciseGrade | None:
        return await self.labs.exercises.grade(self.project_id, self.user)

    def _checked(self, abort: asyncio.Event | None) -> AsyncIterator[ObjectiveResult]:
        selection = self.selection
        return self.labs.check(
            self.project_id,
            self.user,
            self.lab,
            stage=selection.stage,
            objectives=selection.objectives,
            abort=abort,
        )


@dataclass(frozen=True)
class LocalCatchUp:
    """The confirmed catch-up `plan` of the project: the `provider.PreparedCatchUp` of
    `ProjectLabs.prepare_catch_up`."""

    labs: ProjectLabs
    project_id: str
    plan: CatchUpPlan

    async def restore(self) -> CatchUpDone:
        """`ProjectLabs.catch_up`, and what was restored."""
        await self.labs.catch_up(self.project_id, self.plan)
        return CatchUpDone(
            stage=self.plan.stage.id, snapshot=self.plan.snapshot.name, restored=True
        )


async def _summed(
    lab: LabFile,
    results: AsyncIterator[ObjectiveResult],
    graded: Callable[[], Awaitable[ExerciseGrade | None]],
) -> AsyncIterator[ObjectiveResult | CheckSummary]:
    """`results` (of `lab`), then their summary with the exercise `graded` then."""
    seen = []
    async for result in results:
        seen.append(result)
        yield result
    summary = summarize(lab, seen)
    summary.exercise = await graded()
    yield summary


def _content_key(raw: bytes, source: str) -> str:
    """A parsed lab file's cache key (its problems name `source`)."""
    return hashlib.sha256(source.encode() + b"\0" + raw).hexdigest()


def _blank(raw: bytes) -> bool:
    """Nothing but blank lines and comments: no lab (a lab file emptied on purpose, as
    the hub service does in students' copies)."""
    return all(not line.strip() or line.lstrip().startswith(b"#") for line in raw.splitlines())


async def project_dialects(devices: Devices, project_id: str) -> dict[str, str]:
    """The console dialect of each of the project's nodes that has one, by node name (what
    a `nudge` stage's filter judges command lines for)."""
    found = await devices.node_dialects(project_id)
    return {name: dialect for name, dialect in found.items() if dialect}
