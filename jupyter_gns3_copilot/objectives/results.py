"""What checking a lab gives: one result per objective and a score per stage and in all.

These are the contract of the checks route, its `check_result` / `check_summary` events
and the notebook's report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from .exercise_model import ExerciseGrade

if TYPE_CHECKING:  # the lab file's models are costly to build; the event models need none
    from .model import LabFile

Status = Literal["pass", "fail", "error"]
"""`error`: the check could not be decided (a node stopped, a console unreachable)."""

MAX_EVIDENCE_LINES = 6
"""Output lines kept as a check's evidence."""


def summary_lines(output: str) -> list[str]:
    """The last `MAX_EVIDENCE_LINES` non-blank lines of `output` (evidence when no line
    says more)."""
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-MAX_EVIDENCE_LINES:]


def inline_code(text: str) -> str:
    """`text` as Markdown inline code (longer fences around a text holding backticks)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


class Evidence(BaseModel):
    """What decided a check: the node, the command, and the lines of its output that
    counted (or the fact read from GNS3, e.g. the node's status, with no command)."""

    node: str
    command: str | None = None
    lines: list[str] = Field(default_factory=list)


class CheckVerdict(BaseModel):
    """One check decided: its status, a sentence a student understands, the evidence.
    `settled`: waiting cannot change a failure, for the device lacks the configuration it
    needs (a protocol that does not run, a neighbour not configured, a PC without a
    gateway); a check's `wait` is for the network to converge, not for someone to
    configure it, so it stops there (never part of a result)."""

    status: Status
    explanation: str
    evidence: list[Evidence] = Field(default_factory=list)
    settled: bool = Field(False, exclude=True)


class ObjectiveResult(BaseModel):
    """One objective checked."""

    id: str
    stage: str
    text: str
    status: Status
    points: float
    points_awarded: float
    explanation: str
    evidence: list[Evidence] = Field(default_factory=list)
    duration_ms: int


class StageScore(BaseModel):
    id: str
    title: str
    passed: bool
    score: float
    max_score: float
    objectives: list[str] = Field(default_factory=list)
    """The ids of the stage's objectives checked, in the lab's order (results stream in
    the order they are decided: this puts them back in the lab's)."""


class CheckSummary(BaseModel):
    """The score of the objectives checked; `passed` when every one of them passed."""

    score: float
    max_score: float
    passed: bool
    stages: list[StageScore]
    exercise: ExerciseGrade | None = Field(default=None, exclude_if=lambda grade: grade is None)
    """The checker's troubleshooting exercise graded after this check; left out when none
    is going (a summary reads as before exercises)."""

    def in_lab_order(self, results: Sequence[ObjectiveResult]) -> list[ObjectiveResult]:
        """`results` (of this summary, in any order) in the lab's order (`stages`); a
        result the summary does not list (a summary of an older server) keeps its place
        after those."""
        order = {o: i for i, o in enumerate(o for s in self.stages for o in s.objectives)}
        return sorted(results, key=lambda r: order.get(r.id, len(order)))


class CheckReport(CheckSummary):
    """The results and their summary (the answer of a non-streamed check)."""

    results: list[ObjectiveResult]


def summarize(lab: LabFile, results: Sequence[ObjectiveResult]) -> CheckSummary:
    """The summary of `results` (of `lab`'s objectives; stages without a result are left
    out)."""
    stages = []
    for stage in lab.stages:
        mine = [r for r in results if r.stage == stage.id]
        if not mine:
            continue
        checked = {r.id for r in mine}
        stages.append(
            StageScore(
                id=stage.id,
                title=stage.title,
                passed=all(r.status == "pass" for r in mine),
                score=sum(r.points_awarded for r in mine),
                max_score=sum(r.points for r in mine),
                objectives=[o.id for o in stage.objectives if o.id in checked],
            )
        )
    return CheckSummary(
        score=sum(r.points_awarded for r in results),
        max_score=sum(r.points for r in results),
        passed=bool(results) and all(r.status == "pass" for r in results),
        stages=stages,
    )


def combined(way: Literal["all", "any"], verdicts: Sequence[CheckVerdict]) -> CheckVerdict:
    """The verdict of an objective decided by `all` or `any` of several checks: a failed
    check fails `all`, a passed one passes `any`; otherwise an undecided check makes the
    objective undecided."""
    statuses = [v.status for v in verdicts]
    decisive: Status = "fail" if way == "all" else "pass"
    if decisive in statuses:
        status = decisive
    elif "error" in statuses:
        status = "error"
    else:
        status = "pass" if way == "all" else "fail"
    chosen = [v for v in verdicts if v.status == status] or list(verdicts)
    # one sentence: "PC1 is running; PC2 is running."
    sentences = [v.explanation.rstrip(". ") for v in chosen]
    return CheckVerdict(
        status=status,
        explanation="; ".join(sentences) + ("." if sentences else ""),
        evidence=[e for v in chosen for e in v.evidence],
    )
