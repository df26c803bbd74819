"""Where each student is in each project's lab: their latest result per objective, and the
stage they chose to work on.

Kept in memory by the server (a restart forgets it: the next check tells again). The
current stage is the one the student chose (`%copilot lab stage S`), else the first stage
with an objective their latest check did not pass (never checked: the first stage; all
passed: the last).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .model import LabFile, Stage
from .results import ObjectiveResult

Key = tuple[str, str]
"""(project id, user)."""


class StudentProgress:
    """The latest results and chosen stage of every (project, user) (module docstring)."""

    def __init__(self) -> None:
        self._results: dict[Key, dict[str, ObjectiveResult]] = {}
        self._chosen: dict[Key, str] = {}

    def record(self, project_id: str, user: str, results: Iterable[ObjectiveResult]) -> None:
        """Remember `results` as the user's latest for their objectives."""
        self._results.setdefault((project_id, user), {}).update({r.id: r for r in results})

    def forget(self, project_id: str) -> None:
        """Forget every user's latest results in the project (its lab was restored); the
        stages they chose stay chosen."""
        for key in [key for key in self._results if key[0] == project_id]:
            del self._results[key]

    def results(self, project_id: str, user: str) -> Mapping[str, ObjectiveResult]:
        """The user's latest result per objective id."""
        return self._results.get((project_id, user), {})

    def choose(self, project_id: str, user: str, stage: str | None) -> None:
        """Work on `stage` (None: follow the checks again)."""
        if stage is None:
            self._chosen.pop((project_id, user), None)
        else:
            self._chosen[(project_id, user)] = stage

    def current_stage(self, project_id: str, user: str, lab: LabFile) -> Stage:
        """The stage the user works on in `lab` (module docstring)."""
        chosen = lab.stage(self._chosen.get((project_id, user), ""))
        if chosen is not None:
            return chosen
        latest = self.results(project_id, user)
        for stage in lab.stages:
            if any(o.id not in latest or latest[o.id].status != "pass" for o in stage.objectives):
                return stage
        return lab.stages[-1]
