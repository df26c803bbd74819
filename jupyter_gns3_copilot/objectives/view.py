"""The lab as a student sees it: stages and objective texts with their values filled in,
never the checks (which would give the answers away)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from .model import HintPolicy, LabFile
from .results import ObjectiveResult, Status


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


def lab_view(
    lab: LabFile,
    results: Mapping[str, ObjectiveResult] | None = None,
    current_stage: str | None = None,
) -> LabView:
    """`lab` (rendered for one student) without its checks, with their latest `results`
    and `current_stage` when given."""
    results = results or {}
    stages = [
        StageView(
            id=stage.id,
            title=stage.title,
            hints=stage.hints,
            catch_up=stage.snapshot is not None,
            objectives=[
                ObjectiveView(
                    id=o.id,
                    text=o.text,
                    points=o.points,
                    status=results[o.id].status if o.id in results else None,
                )
                for o in stage.objectives
            ],
        )
        for stage in lab.stages
    ]
    return LabView(
        title=lab.title,
        max_score=sum(o.points for stage in lab.stages for o in stage.objectives),
        current_stage=current_stage,
        stages=stages,
    )
