"""The lab routes' request bodies and answers, in one place: the copilot's routes
(`copilot/projects/{p}/lab`, `.../lab/stage`, `.../lab/checks`,
`.../lab/stages/{s}/catch-up`), the hub service's, to which a student's server in hub mode
forwards them (`hub/lab_handlers.py`), and their clients. Bodies refuse unknown fields.
The answers show the lab as a student sees it: stages and objective texts with their
values filled in, never the checks (which would give the answers away); a check's results
are `results.ObjectiveResult`, `CheckSummary` and `CheckReport`. `RunNaming`, a lab
check's run id, is the tool runs' too (`server/schemas.py`). No tornado here."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .exercise_model import ExerciseGrade
from .model_base import IDENTIFIER, HintPolicy
from .results import Status

LAB_TEXT_MAX = 512 * 1024
"""The longest lab file a request may carry (the loader's own limit)."""
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
"""Session and run ids are UUIDs when the server makes them; a client may choose its own."""


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LabAttachRequest(_Request):
    """`PUT .../lab`: the lab file's text (YAML) and the name its problems give it
    (default `lab.yaml`). `copilot_mode`: the mode of this request (as a chat turn's,
    within the allowed modes) instead of the caller's setting; attaching needs
    lab_automation_assistant."""

    text: str = Field(min_length=1, max_length=LAB_TEXT_MAX)
    source: str = Field(default="lab.yaml", min_length=1, max_length=255)
    copilot_mode: str | None = None


class LabCheckSelection(_Request):
    """`POST .../lab/checks`: which objectives (default: all; a `stage`'s, or those named),
    how to answer (SSE, or one JSON report), and optionally the lab file's text to check
    against instead of the project's (`lab`, named `source` in its problems)."""

    lab: str | None = Field(default=None, min_length=1, max_length=LAB_TEXT_MAX)
    source: str = Field(default="lab.yaml", min_length=1, max_length=255)
    stage: str | None = Field(default=None, min_length=1, max_length=64)
    objectives: list[str] | None = Field(default=None, min_length=1, max_length=500)
    stream: bool = True


class RunNaming(BaseModel):
    """The id a client gives a run (a direct tool run, a lab check): `run_id` names it in
    its events' `session_id` and on the run routes (`.../runs/{run_id}/abort`,
    `.../runs/{run_id}/approvals`); default a new UUID. A run is no chat session.
    `session_id` is its deprecated old name, still accepted (not both, unless equal)."""

    run_id: str | None = Field(default=None, pattern=ID_PATTERN)
    session_id: str | None = Field(
        default=None,
        pattern=ID_PATTERN,
        deprecated="the run's id under its old name: send run_id",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_name(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("session_id") is None:
            return data
        if data.get("run_id") not in (None, data["session_id"]):
            raise ValueError("give run_id only (session_id is its deprecated old name)")
        return {**data, "run_id": data["session_id"], "session_id": None}


class LabCheckRequest(LabCheckSelection, RunNaming):
    """`POST copilot/projects/{project_id}/lab/checks`: which objectives (default: all; a
    `stage`'s, or those named), how to answer (SSE, or one JSON report), and optionally
    the lab file's text to check against instead of the project's (`lab`, named
    `source` in its problems); `run_id` as in `RunNaming` (for the run's abort route)."""

    def selection(self) -> LabCheckSelection:
        """The request without its run's name: what the hub service's route takes."""
        return LabCheckSelection(**self.model_dump(exclude={"run_id", "session_id"}))


class LabStageRequest(_Request):
    """`PUT .../lab/stage`: the stage the caller works on (the copilot's hints follow it);
    null: follow the caller's checks again."""

    stage: str | None = Field(min_length=1, max_length=64)


class CatchUpRequest(_Request):
    """`POST .../lab/stages/{stage}/catch-up`: `confirm` is the person's approval (without
    it the answer says what would be restored)."""

    confirm: bool = False


class CatchUpDone(BaseModel):
    """The answer of a confirmed catch-up."""

    stage: str
    snapshot: str
    """The snapshot restored."""
    restored: bool


class ObjectiveView(BaseModel):
    id: str
    text: str
    points: float
    status: Status | None = None
    """The student's latest check of it (None: not checked, or not since a catch-up)."""


class StageView(BaseModel):
    id: str
    title: str
    hints: HintPolicy
    catch_up: bool
    """Whether the stage names a snapshot to catch up to."""
    objectives: list[ObjectiveView]


class LabView(BaseModel):
    """`GET copilot/projects/{project_id}/lab`."""

    title: str
    max_score: float
    current_stage: str | None = None
    """The stage the student works on (the copilot's hints follow it)."""
    stages: list[StageView]
    exercises: bool = False
    """Whether the lab file has faults, so a student may start a troubleshooting
    exercise on it (`POST .../lab/exercises`)."""


class ExerciseRequest(_Request):
    """`POST .../lab/exercises`: the fault to put in the lab (`fault`, the instructor's
    id), or `random: true` for one drawn for the caller; exactly one of the two."""

    fault: str | None = Field(default=None, pattern=IDENTIFIER)
    random: bool = False

    @model_validator(mode="after")
    def _one_way(self) -> ExerciseRequest:
        if (self.fault is None) == (not self.random):
            raise ValueError('give either "fault" or "random": true')
        return self


class SymptomView(BaseModel):
    """An objective the exercise's fault broke: what the student sees failing."""

    id: str
    text: str


class ExerciseView(BaseModel):
    """The caller's exercise (`POST .../lab/exercises`, `GET .../lab/exercises/current`):
    when it started, the symptom (the objectives that fail because of it), whether it is
    still `active`, and its latest `grade`; never which fault it is."""

    started_at: str
    active: bool
    symptom: list[SymptomView]
    grade: ExerciseGrade | None = None


class GiveUpAnswer(BaseModel):
    """`POST .../lab/exercises/current/give-up`: what the fault was (the instructor's
    description, the device and cause a diagnosis had to name), and what of it could not
    be undone (`not_undone`: changes on a device that keeps no saved configuration)."""

    description: str
    device: str
    interface: str | None = None
    cause: str
    not_undone: list[str] = Field(default_factory=list)
