"""A student's server's labs in hub mode: the `objectives.provider.LabProvider` that
`objectives.service.ProjectLabs` is elsewhere, asked of the hub service, which holds the
salt, renders each student's lab and checks it itself (`hub/class_labs.py`).

`GNS3Copilot.project_labs()` is a `HubProjectLabs` in hub mode: the lab route's view,
attaching, the chosen stage, checks (the service's results relayed as they come, its
grade of a going exercise in the summary), catch-ups and troubleshooting exercises
(started, read, given up: the service holds the faults and applies them) forwarded to the
service, and a chat turn's `TurnObjectives` (the current stage's texts and statuses for
the teaching prompt, `check_objectives` through the service, a `nudge` stage's filter of
configuration lines). The lab file itself, its checks and its
faults, never reach the student's server.

`watch` tells the Objectives panel's live stream of each change this server asked the
service for (a check through it, from the panel, a notebook or the chat; a stage chosen; a
catch-up; an exercise started or given up). The service does not tell it of checks asked
of it otherwise: the panel shows those when it reads the lab again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..console import ConsoleAborted
from ..console.pool import abortable
from ..devices.policy import CommandPolicy
from ..objectives.api import (
    CatchUpDone,
    CatchUpRequest,
    ExerciseRequest,
    ExerciseView,
    GiveUpAnswer,
    LabAttachRequest,
    LabCheckSelection,
    LabView,
)
from ..objectives.errors import UnknownSelection
from ..objectives.hints import TurnObjectives, configuring_judge
from ..objectives.results import CheckReport, CheckSummary, ObjectiveResult
from ..objectives.service import project_dialects
from ..objectives.watch import ProgressWatch
from ..tools.base import ToolAborted
from .client import HubServiceClient, HubServiceError, HubServiceRefused

if TYPE_CHECKING:
    from ..tools.lab_access import LabAccess

log = logging.getLogger(__name__)

NO_LAB = (404, 422)
"""The service's answers for a project without a usable lab file."""


class HubProjectLabs:
    """Each project's lab through the hub service (module docstring). `lab` is the
    student's own lab access (their GNS3 token): the nodes' dialects for a `nudge` filter
    and the command policy judging command lines."""

    def __init__(self, hub: HubServiceClient, lab: LabAccess) -> None:
        self.hub = hub
        self.lab = lab
        self.watch = ProgressWatch()

    async def view(self, project_id: str, user: str) -> LabView:
        """The lab as the student sees it (`user` is the hub token's: the service knows)."""
        return await self.hub.lab(project_id)

    async def attach_lab(self, project_id: str, user: str, request: LabAttachRequest) -> LabView:
        """The service attaches `request.text` to the project; the lab as the student sees
        it then."""
        return await self.hub.attach_lab(project_id, request)

    async def prepare_check(
        self, project_id: str, user: str, selection: LabCheckSelection
    ) -> HubCheck:
        """A check the service runs (it judges the selection then)."""
        return HubCheck(self, project_id, user, selection)

    async def prepare_catch_up(
        self, project_id: str, user: str, stage: str, *, confirm: bool
    ) -> HubCatchUp:
        """A catch-up the service does. Not confirmed, the service is asked at once: its
        refusal (a 400 `ConfirmationNeeded`) says what would be restored."""
        if not confirm:
            await self.hub.catch_up(project_id, stage, CatchUpRequest(confirm=False))
            raise HubServiceError(
                "The copilot hub service caught up a stage without confirmation: "
                "is it the same version?"
            )
        return HubCatchUp(self, project_id, stage)

    async def choose_stage(self, project_id: str, user: str, stage: str | None) -> LabView:
        """Make `stage` the one the student works on (None: follow their checks)."""
        view = await self.hub.choose_stage(project_id, stage)
        self.watch.changed(project_id, user)
        return view

    async def start_exercise(
        self, project_id: str, user: str, request: ExerciseRequest
    ) -> ExerciseView:
        """The service starts an exercise in the project (it applies the fault): the
        symptom."""
        try:
            return await self.hub.start_exercise(project_id, request)
        finally:
            self.watch.changed(project_id, user)

    async def exercise(self, project_id: str, user: str) -> ExerciseView:
        """The student's latest exercise, as the service keeps it."""
        return await self.hub.exercise(project_id)

    async def give_up(self, project_id: str, user: str) -> GiveUpAnswer:
        """The service ends the exercise and undoes its fault: what it was."""
        try:
            return await self.hub.give_up(project_id)
        finally:
            self.watch.changed(project_id, user)

    async def turn_objectives(self, project_id: str, user: str) -> TurnObjectives | None:
        """The student's lab for a chat turn, from the service's view of it; None when the
        project has no usable lab file, or the service cannot say now (logged: the turn
        goes on without objectives)."""
        try:
            view = await self.hub.lab(project_id)
        except HubServiceRefused as exc:
            if exc.status not in NO_LAB:
                log.warning("Copilot: the hub service gave no lab for %s: %s", project_id, exc)
            return None
        except HubServiceError as exc:
            log.warning("Copilot: the hub service gave no lab for %s: %s", project_id, exc)
            return None
        stage = next((s for s in view.stages if s.id == view.current_stage), view.stages[0])
        dialects = (
            await project_dialects(self.lab.devices, project_id) if stage.hints == "nudge" else {}
        )
        policy = self.lab.policy or CommandPolicy()

        def refused(command: str, dialect: str) -> str | None:
            return policy.check(command, dialect=dialect, read_only=True)

        async def checker(
            stage_id: str | None, abort: asyncio.Event | None
        ) -> list[ObjectiveResult]:
            # An abort cancels this request (the tool's `until_aborted`): the service stops.
            check = HubCheck(self, project_id, user, LabCheckSelection(stage=stage_id))
            try:
                report = await check.report(abort)
            except HubServiceRefused as exc:
                if exc.status == 400 or exc.error_type == "UnknownStage":
                    # an unknown stage: the message lists the stages there are
                    raise UnknownSelection(exc.detail) from None
                raise
            return report.results

        return TurnObjectives(
            lab=view,
            stage=stage,
            results={o.id: o for s in view.stages for o in s.objectives if o.status},
            checker=checker,
            is_configuring=configuring_judge(refused, dialects),
        )


@dataclass(frozen=True)
class HubCheck:
    """A check the hub service runs (`objectives.provider.PreparedCheck`); the watch is
    told of each result relayed, and when the check ends."""

    labs: HubProjectLabs
    project_id: str
    user: str
    selection: LabCheckSelection

    @contextlib.asynccontextmanager
    async def results(
        self, abort: asyncio.Event
    ) -> AsyncIterator[AsyncIterator[ObjectiveResult | CheckSummary]]:
        """The service's results as they come (`HubServiceRefused` on entering, before the
        first); `abort` set leaves the request (the service stops) with `ToolAborted`."""
        try:
            async with self.labs.hub.lab_checks(self.project_id, self.selection) as items:
                yield _until_aborted(_telling(items, self._changed), abort)
        finally:
            self._changed()

    async def report(self, abort: asyncio.Event | None = None) -> CheckReport:
        """The service's report of the check (cancelling the call leaves the request)."""
        try:
            return await self.labs.hub.lab_check_report(self.project_id, self.selection)
        finally:
            self._changed()

    def _changed(self) -> None:
        self.labs.watch.changed(self.project_id, self.user)


@dataclass(frozen=True)
class HubCatchUp:
    """A confirmed catch-up the hub service does (`objectives.provider.PreparedCatchUp`)."""

    labs: HubProjectLabs
    project_id: str
    stage: str

    async def restore(self) -> CatchUpDone:
        """The service restores the stage's snapshot (as the lab it checks names it)."""
        done = await self.labs.hub.catch_up(
            self.project_id, self.stage, CatchUpRequest(confirm=True)
        )
        self.labs.watch.changed(self.project_id)
        return done


async def _telling(
    items: AsyncIterator[ObjectiveResult | CheckSummary], tell: Callable[[], None]
) -> AsyncIterator[ObjectiveResult | CheckSummary]:
    """`items`, calling `tell()` as each result comes (the service has recorded it)."""
    async for item in items:
        if isinstance(item, ObjectiveResult):
            tell()
        yield item


async def _until_aborted(
    items: AsyncIterator[ObjectiveResult | CheckSummary], abort: asyncio.Event
) -> AsyncIterator[ObjectiveResult | CheckSummary]:
    """`items` until `abort` is set (then `ToolAborted`, as a local run stops)."""
    while True:
        try:
            item = await abortable(anext(items), abort)
        except StopAsyncIteration:
            return
        except ConsoleAborted:
            raise ToolAborted() from None
        yield item
