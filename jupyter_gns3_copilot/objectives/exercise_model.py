"""A student's troubleshooting exercise as stored and as graded (`objectives.exercises`
runs them). What is stored names the fault; what a student receives
(`api.ExerciseView`, `ExerciseGrade`) never does."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class ExerciseGrade(BaseModel):
    """How the student's exercise stands after a check: `fixed` when every objective the
    fault broke passes, `still_failing` those that do not, `regressions` the objectives
    that passed before the fault and fail now, `seconds` since it started,
    `copilot_calls` the model calls the copilot made for the student meanwhile (a chat
    turn makes one or more), `done` when it ended with this check (fixed, no
    regressions)."""

    fixed: bool
    still_failing: list[str] = Field(default_factory=list)
    regressions: list[str] = Field(default_factory=list)
    seconds: float
    copilot_calls: int
    done: bool


class ExerciseRecord(BaseModel):
    """One exercise of one student in a project, as the project's store keeps it: the
    `fault`, when it started, the objectives it broke and those that passed before it,
    the model calls counted at the start, the nodes whose configuration was saved
    before the fault (a give-up restarts them to undo it), its grade once `ended`
    (`how`: fixed or given up)."""

    fault: str
    started_at: datetime
    broken: list[str]
    passed_before: list[str]
    calls_at_start: int
    saved: list[str]
    ended_at: datetime | None = None
    how: str | None = None
    grade: ExerciseGrade | None = None
    number: int = 1
    """How many exercises the student started in the project, this one included."""
