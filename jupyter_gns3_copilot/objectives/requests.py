"""The bodies of the lab routes, shared by the copilot's routes (`copilot/projects/{p}/lab`,
`.../lab/checks`, `.../lab/stages/{s}/catch-up`) and the hub service's, to which a
student's server in hub mode forwards them (`hub/lab_handlers.py`). Unknown fields are
refused. No tornado here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

LAB_TEXT_MAX = 512 * 1024
"""The longest lab file a request may carry (the loader's own limit)."""


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
