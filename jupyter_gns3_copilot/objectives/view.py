"""The lab as a student sees it (`api.LabView`): stages and objective texts with their
values filled in, never the checks (which would give the answers away)."""

from __future__ import annotations

from collections.abc import Mapping

from .api import LabView, ObjectiveView, StageView
from .model import LabFile
from .results import ObjectiveResult


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
        exercises=bool(lab.faults),
    )
