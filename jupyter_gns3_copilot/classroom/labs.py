"""A student's server's labs in hub mode: what `objectives.service.ProjectLabs` gives the
routes and the chat elsewhere, asked of the hub service, which holds the salt, renders
each student's lab and checks it itself (`hub/class_labs.py`).

`GNS3Copilot.project_labs()` is a `HubProjectLabs` in hub mode: the lab route's view, the
chosen stage, and a chat turn's `TurnObjectives` (the current stage's texts and statuses for
the teaching prompt, `check_objectives` through the service, a `nudge` stage's filter of
configuration lines). The lab file itself, and its checks, never reach the student's
server. Checks, attaching and catching up have flows of their own
(`server/handlers/lab.py` forwards them).

`watch` tells the Objectives panel's live stream of each change this server asked the
service for (a check through it, from the panel, a notebook or the chat; a stage chosen; a
catch-up). The service does not tell it of checks asked of it otherwise: the panel shows
those when it reads the lab again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ..objectives.api import LabCheckSelection, LabView
from ..objectives.errors import UnknownSelection
from ..objectives.hints import TurnObjectives, configuring_judge
from ..objectives.results import ObjectiveResult
from ..objectives.service import project_dialects
from ..objectives.watch import ProgressWatch
from ..tools.policy import CommandPolicy
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

    async def choose_stage(self, project_id: str, user: str, stage: str | None) -> LabView:
        """Make `stage` the one the student works on (None: follow their checks)."""
        view = await self.hub.choose_stage(project_id, stage)
        self.watch.changed(project_id, user)
        return view

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
        dialects = await project_dialects(self.lab, project_id) if stage.hints == "nudge" else {}
        policy = self.lab.policy or CommandPolicy()

        def refused(command: str, dialect: str) -> str | None:
            return policy.check(command, dialect=dialect, read_only=True)

        async def checker(
            stage_id: str | None, abort: asyncio.Event | None
        ) -> list[ObjectiveResult]:
            # An abort cancels this request (the tool's `until_aborted`): the service stops.
            selection = LabCheckSelection(stage=stage_id)
            try:
                report = await self.hub.lab_check_report(project_id, selection)
            except HubServiceRefused as exc:
                if exc.status == 400 or exc.error_type == "UnknownStage":
                    # an unknown stage: the message lists the stages there are
                    raise UnknownSelection(exc.detail) from None
                raise
            finally:
                self.watch.changed(project_id, user)
            return report.results

        return TurnObjectives(
            lab=view,
            stage=stage,
            results={o.id: o for s in view.stages for o in s.objectives if o.status},
            checker=checker,
            is_configuring=configuring_judge(refused, dialects),
        )
