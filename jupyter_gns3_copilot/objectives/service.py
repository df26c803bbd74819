"""Each project's lab: its `lab.yaml` in the GNS3 project, as each student sees it, its
checks, and catching up to a stage.

The file lives in the project's directory (GNS3's project-files API), so a template project
duplicated for every student carries it. It is read again on every use (one small GNS3
request; a student or instructor may have replaced it) and parsed once per content.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from ..console import ConsoleTargetError, DialectError
from ..gns3 import GNS3NotFound, Node, Snapshot
from ..tools.base import ToolContext
from ..tools.lab_access import LabAccess
from ..tools.modes import TEACHING
from ..tools.policy import CommandPolicy
from .errors import LabFileError, NoLab, StageWithoutSnapshot
from .loader import LabDocument, load_lab
from .model import LabFile, Stage
from .results import ObjectiveResult
from .runner import check_lab

LAB_FILE = "lab.yaml"
"""The lab file's path in the project's directory."""
CACHED_DOCUMENTS = 64
"""Parsed lab files kept (by content), across projects."""


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
    """The labs of the projects reached through `lab` (module docstring). `salt` makes each
    student's parameter values (never shown to students); `policy` judges check commands
    (the server's command policy)."""

    def __init__(
        self, lab: LabAccess, salt: str | bytes, policy: CommandPolicy | None = None
    ) -> None:
        self.lab = lab
        self._salt = salt
        self.policy = policy or lab.policy or CommandPolicy()
        self._documents: dict[str, LabDocument | LabFileError] = {}

    async def document(self, project_id: str) -> LabDocument:
        """The project's lab file, checked. Raises `NoLab`, or `LabFileError` for an
        invalid file (the same problems each time, until the file changes)."""
        try:
            raw = await self.lab.gns3.read_project_file(project_id, LAB_FILE)
        except GNS3NotFound as exc:
            if exc.kind != "file":
                raise
            raise NoLab(f"this project has no lab file ({LAB_FILE})") from None
        key = hashlib.sha256(raw).hexdigest()
        cached = self._documents.get(key)
        if cached is None:
            try:
                cached = self._load(raw)
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
        """`text` read as a lab file and checked against the project: its nodes' dialects
        judge the check commands. Raises `LabFileError`."""
        document = self._load(text, source)
        ctx = self.lab.tool_context(project_id, TEACHING, asyncio.Event())
        dialects = {node.name: await _dialect(ctx, node) for node in await ctx.nodes()}
        document.check_commands(self._refused, dialects.get)
        return document

    def render(self, document: LabDocument, user: str) -> LabFile:
        """`document` as `user` sees it."""
        return document.for_student(user, self._salt)

    async def attach(self, project_id: str, text: str | bytes, source: str = LAB_FILE) -> LabFile:
        """Check `text` against the project (`checked_against`) and write it as the
        project's lab file. Raises `LabFileError`."""
        document = await self.checked_against(project_id, text, source)
        raw = text.encode() if isinstance(text, str) else text
        await self.lab.gns3.write_project_file(project_id, LAB_FILE, raw)
        self._remember(hashlib.sha256(raw).hexdigest(), document)
        return document.lab

    async def check(
        self,
        project_id: str,
        lab: LabFile,
        *,
        stage: str | None = None,
        objectives: Sequence[str] | None = None,
        abort: asyncio.Event | None = None,
    ) -> AsyncIterator[ObjectiveResult]:
        """Check `lab` (as `for_student` gave it) on the project's devices, yielding each
        result as it is decided. Raises `UnknownSelection` before checking anything."""
        ctx = self.lab.tool_context(project_id, TEACHING, abort or asyncio.Event())
        async for result in check_lab(ctx, lab, stage=stage, objectives=objectives):
            yield result

    async def catch_up_plan(self, project_id: str, user: str, stage_id: str) -> CatchUpPlan:
        """What catching up to `stage_id` would restore. Raises `NoLab`, `LabFileError`,
        `KeyError` (no such stage) or `StageWithoutSnapshot`."""
        lab = await self.for_student(project_id, user)
        stage = lab.stage(stage_id)
        if stage is None:
            known = ", ".join(s.id for s in lab.stages)
            raise KeyError(f"the lab has no stage {stage_id!r} (stages: {known})")
        if not stage.snapshot:
            raise StageWithoutSnapshot(f"stage {stage.id} has no snapshot to catch up to")
        snapshots = await self.lab.gns3.list_snapshots(project_id)
        snapshot = next((s for s in snapshots if s.name == stage.snapshot), None)
        if snapshot is None:
            raise StageWithoutSnapshot(
                f"the snapshot {stage.snapshot!r} of stage {stage.id} is not in this project "
                "(ask your instructor)"
            )
        return CatchUpPlan(stage, snapshot)

    async def catch_up(self, project_id: str, plan: CatchUpPlan) -> None:
        """Restore the plan's snapshot and start every node again."""
        gns3 = self.lab.gns3
        await gns3.restore_snapshot(project_id, plan.snapshot.snapshot_id)
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


async def _dialect(ctx: ToolContext, node: Node) -> str | None:
    """The node's console dialect as the tools decide it; None for a node without one."""
    try:
        return (await ctx.console_target(node)).dialect
    except (ConsoleTargetError, DialectError):
        return None
