"""What a student's server asks of the labs, as one interface (`LabProvider`), whoever does
the lab's work: `GNS3Copilot.project_labs()` is an `objectives.service.ProjectLabs` (the
server renders each project's lab file with its salt and checks the devices itself) or, in
hub mode, a `classroom.labs.HubProjectLabs` (the hub service does, asked with the server's
hub token: the server has no salt, and neither the lab file nor its checks reach it). The
lab routes (`server/handlers/lab.py`) and a chat turn (`turn_objectives`) know only this.

A check and a catch-up come in two steps, so that a route answers the request's own
mistakes (an unknown stage or objective, an invalid lab file, a catch-up not confirmed)
before it checks that the project is opened and nobody else uses it: `prepare_check`
gives a `PreparedCheck` (run as a stream, or as one report), `prepare_catch_up` a
`PreparedCatchUp` (restored once). In hub mode the service judges the request itself
when asked (a catch-up not confirmed at once, a check when it runs).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio
    from collections.abc import AsyncIterator

    from .api import (
        CatchUpDone,
        ExerciseRequest,
        ExerciseView,
        GiveUpAnswer,
        LabAttachRequest,
        LabCheckSelection,
        LabView,
    )
    from .hints import TurnObjectives
    from .results import CheckReport, CheckSummary, ObjectiveResult
    from .watch import ProgressWatch


class PreparedCheck(Protocol):
    """A check of the caller's lab (`LabProvider.prepare_check`), not started yet."""

    def results(
        self, abort: asyncio.Event
    ) -> AbstractAsyncContextManager[AsyncIterator[ObjectiveResult | CheckSummary]]:
        """The check as it goes: each `ObjectiveResult` as it is decided (and remembered as
        the caller's latest), then the `CheckSummary`. Entering may refuse (in hub mode,
        the service's refusal) before any result; `abort` set stops the check
        (`tools.base.ToolAborted`)."""
        ...

    async def report(self, abort: asyncio.Event | None = None) -> CheckReport:
        """The whole check as one report (results in the lab's order, scores)."""
        ...


class PreparedCatchUp(Protocol):
    """A confirmed catch-up to a stage (`LabProvider.prepare_catch_up`), not done yet."""

    async def restore(self) -> CatchUpDone:
        """Restore the stage's snapshot and start the nodes again; the project's latest
        results are forgotten (the devices went back in time)."""
        ...


class LabProvider(Protocol):
    """The labs of the projects a student's server reaches (module docstring). `user` is
    the caller (in hub mode the hub token says who it is). Errors: `objectives.errors`
    (`NoLab`, `LabFileError`, `UnknownSelection`, `UnknownStage`, `StageWithoutSnapshot`,
    `ConfirmationNeeded`), GNS3's, or in hub mode the service's (`classroom.client`)."""

    @property
    def watch(self) -> ProgressWatch:
        """Told of each change of a student's progress made through this provider (the
        lab events stream waits on it)."""
        ...

    async def view(self, project_id: str, user: str) -> LabView:
        """The lab as `user` sees it, with their latest results and current stage."""
        ...

    async def attach_lab(self, project_id: str, user: str, request: LabAttachRequest) -> LabView:
        """Check `request.text` against the project and make it the project's lab file;
        the lab as `user` sees it then."""
        ...

    async def choose_stage(self, project_id: str, user: str, stage: str | None) -> LabView:
        """Make `stage` the one `user` works on (None: follow their checks again)."""
        ...

    async def prepare_check(
        self, project_id: str, user: str, selection: LabCheckSelection
    ) -> PreparedCheck:
        """A check of `selection` (of the project's lab, or of `selection.lab`'s text) as
        `user` sees it. Raises the request's mistakes before anything runs, where this
        provider can judge them."""
        ...

    async def prepare_catch_up(
        self, project_id: str, user: str, stage: str, *, confirm: bool
    ) -> PreparedCatchUp:
        """A catch-up of the project to `stage`. Raises `ConfirmationNeeded` (what would be
        restored) when not `confirm`, and the stage's problems."""
        ...

    async def start_exercise(
        self, project_id: str, user: str, request: ExerciseRequest
    ) -> ExerciseView:
        """Start a troubleshooting exercise for `user`: one of the lab's faults put into
        the working lab (`objectives.exercises`); its symptom. Raises `UnknownFault` and
        `ExerciseRefused`."""
        ...

    async def exercise(self, project_id: str, user: str) -> ExerciseView:
        """`user`'s latest exercise (going or ended). Raises `NoExercise`."""
        ...

    async def give_up(self, project_id: str, user: str) -> GiveUpAnswer:
        """End `user`'s going exercise: what the fault was, the lab restored. Raises
        `NoExercise`."""
        ...

    async def turn_objectives(self, project_id: str, user: str) -> TurnObjectives | None:
        """`user`'s lab for a chat turn (`hints.TurnObjectives`); None when the project has
        no usable lab (the turn goes on without objectives)."""
        ...
