"""The lab as a student sees it: stages and objective texts with their values filled in,
never the checks (which would give the answers away)."""

from __future__ import annotations

from pydantic import BaseModel

from .model import HintPolicy, LabFile


class ObjectiveView(BaseModel):
    id: str
    text: str
    points: float


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
    stages: list[StageView]


def lab_view(lab: LabFile) -> LabView:
    """`lab` (rendered for one student) without its checks."""
    stages = [
        StageView(
            id=stage.id,
            title=stage.title,
            hints=stage.hints,
            catch_up=stage.snapshot is not None,
            objectives=[
                ObjectiveView(id=o.id, text=o.text, points=o.points) for o in stage.objectives
            ],
        )
        for stage in lab.stages
    ]
    return LabView(
        title=lab.title,
        max_score=sum(o.points for stage in lab.stages for o in stage.objectives),
        stages=stages,
    )
