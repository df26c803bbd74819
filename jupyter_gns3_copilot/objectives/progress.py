"""Where each student is in each project's lab: their latest result per objective, the
stage they chose to work on, and their latest troubleshooting exercise.

With a `store` (`store.lab_progress.LabProgressStore`: outside hub mode, the project's
database) it outlives the server: a project's progress is read from the store on first
use and every change is written before the call returns. Without one (the hub service,
whose grades keep what counts) it is kept in memory. Every change is told to `watch`.

The current stage is the one the student chose (`%copilot lab stage S`), else the first
stage with an objective their latest check did not pass (never checked: the first stage;
all passed: the last).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import ValidationError

from ..single_flight import SingleFlight
from ..store.lab_progress import LabProgressStore
from .exercise_model import ExerciseRecord
from .model import LabFile, Stage
from .results import ObjectiveResult
from .watch import ProgressWatch

Key = tuple[str, str]
"""(project id, user)."""


class StudentProgress:
    """The latest results and chosen stage of every (project, user) (module docstring)."""

    def __init__(self, store: LabProgressStore | None = None) -> None:
        self.store = store
        self.watch = ProgressWatch()
        self._results: dict[Key, dict[str, ObjectiveResult]] = {}
        self._chosen: dict[Key, str] = {}
        self._exercises: dict[Key, ExerciseRecord] = {}
        self._loaded: set[str] = set()
        """Projects read from the store."""
        self._reads = SingleFlight(self._read)
        """A project's first read, shared by the callers that need it meanwhile."""

    async def record(self, project_id: str, user: str, results: Iterable[ObjectiveResult]) -> None:
        """Remember `results` as the user's latest for their objectives."""
        await self._load(project_id)
        results = list(results)
        self._results.setdefault((project_id, user), {}).update({r.id: r for r in results})
        if self.store is not None:
            rows = [(r.id, r.model_dump_json()) for r in results]
            await self.store.save_results(project_id, user, rows)
        self.watch.changed(project_id, user)

    async def forget(self, project_id: str) -> None:
        """Forget every user's latest results in the project (its lab was restored); the
        stages they chose stay chosen."""
        await self._load(project_id)
        for key in [key for key in self._results if key[0] == project_id]:
            del self._results[key]
        if self.store is not None:
            await self.store.forget_results(project_id)
        self.watch.changed(project_id)

    async def drop(self, project_id: str) -> None:
        """Forget everything of the project and close its store (the project is being
        deleted with its folder)."""
        for mapping in (self._results, self._chosen, self._exercises):
            for key in [key for key in mapping if key[0] == project_id]:
                del mapping[key]
        self._loaded.discard(project_id)
        self._reads.forget(project_id)
        if self.store is not None:
            await self.store.close_project(project_id)

    async def close(self, project_id: str) -> None:
        """Close the project's store (the project was closed: its connection's thread is
        not kept); what was read stays, and the next change opens it again."""
        if self.store is not None:
            await self.store.close_project(project_id)

    async def results(self, project_id: str, user: str) -> Mapping[str, ObjectiveResult]:
        """The user's latest result per objective id."""
        await self._load(project_id)
        return self._results.get((project_id, user), {})

    async def choose(self, project_id: str, user: str, stage: str | None) -> None:
        """Work on `stage` (None: follow the checks again)."""
        await self._load(project_id)
        if stage is None:
            self._chosen.pop((project_id, user), None)
        else:
            self._chosen[(project_id, user)] = stage
        if self.store is not None:
            await self.store.save_stage(project_id, user, stage)
        self.watch.changed(project_id, user)

    async def exercise(self, project_id: str, user: str) -> ExerciseRecord | None:
        """The user's latest exercise in the project (going or ended), if any."""
        await self._load(project_id)
        return self._exercises.get((project_id, user))

    async def save_exercise(self, project_id: str, user: str, exercise: ExerciseRecord) -> None:
        """Remember `exercise` as the user's latest."""
        await self._load(project_id)
        self._exercises[(project_id, user)] = exercise
        if self.store is not None:
            await self.store.save_exercise(project_id, user, exercise.model_dump_json())
        self.watch.changed(project_id, user)

    async def model_calls(self, project_id: str, user: str) -> int:
        """The model calls the copilot made for the user in the project, as its chat
        store counts them (0 without a store)."""
        if self.store is None:
            return 0
        return await self.store.model_calls(project_id, user)

    async def current_stage(self, project_id: str, user: str, lab: LabFile) -> Stage:
        """The stage the user works on in `lab` (module docstring)."""
        latest = await self.results(project_id, user)
        chosen = lab.stage(self._chosen.get((project_id, user), ""))
        if chosen is not None:
            return chosen
        for stage in lab.stages:
            if any(o.id not in latest or latest[o.id].status != "pass" for o in stage.objectives):
                return stage
        return lab.stages[-1]

    async def _load(self, project_id: str) -> None:
        """Read the project's progress from the store, once."""
        if self.store is not None and project_id not in self._loaded:
            await self._reads(project_id)

    async def _read(self, project_id: str) -> None:
        assert self.store is not None
        saved = await self.store.load(project_id)
        for user, rows in saved.results.items():
            self._results[(project_id, user)] = _parsed(rows)
        for user, stage in saved.chosen.items():
            self._chosen[(project_id, user)] = stage
        for user, text in saved.exercises.items():
            try:
                self._exercises[(project_id, user)] = ExerciseRecord.model_validate_json(text)
            except ValidationError:
                continue
        self._loaded.add(project_id)


def _parsed(rows: Mapping[str, str]) -> dict[str, ObjectiveResult]:
    """The stored results that still read as results (one an older version wrote in
    another shape is dropped: the next check tells again)."""
    parsed = {}
    for objective, text in rows.items():
        try:
            parsed[objective] = ObjectiveResult.model_validate_json(text)
        except ValidationError:
            continue
    return parsed
