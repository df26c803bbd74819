"""A lab check's results in the notebook: `LabReport` (what `Copilot.check_lab` returns,
with `assert_passed()` for pytest and nbgrader test cells) and `Checklist`, the cell's
output that fills in while the objectives are decided and stays in the saved notebook.

The checklist is a display with an id, updated in place: a bundle of
`application/vnd.gns3-copilot.checks+json` (the report so far, for the JupyterLab
renderer: `{title, stages, results, pending, summary}`, where `stages` outlines what is
checked: each stage's `id`, `title` and objective ids in the lab's order), Markdown and
plain text (for every other front end, and for nbconvert).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, SerializeAsAny

from ..objectives.results import CheckReport, CheckSummary, ObjectiveResult
from .cell_display import ShownInCell

CHECKS_MIME = "application/vnd.gns3-copilot.checks+json"
MARKS = {"pass": "✅", "fail": "❌", "error": "⚠️", "pending": "⏳"}


class ChecklistOutlineStage(BaseModel):
    """A stage of a checklist's outline: its objective ids in the lab's order."""

    id: str
    title: str
    objectives: list[str]


class PendingObjective(BaseModel):
    """An objective a checklist still waits for."""

    id: str
    stage: str
    text: str
    points: float | None = None
    """None only in checklists saved before points were sent (the front end reads those)."""


class ChecksBundle(BaseModel):
    """The data of a `%copilot check` output (`CHECKS_MIME`): the report so far, updated
    in place while the check runs, then saved with the notebook."""

    title: str
    stages: list[ChecklistOutlineStage] | None = None
    """None only in checklists saved before the outline was sent (the front end reads
    those)."""
    results: list[ObjectiveResult]
    pending: list[PendingObjective]
    summary: SerializeAsAny[CheckSummary] | None
    """Saved as given: `%copilot check` gives its `CheckReport` (results included)."""


class LabReport(ShownInCell):
    """The result of checking a lab: `score`, `max_score`, `passed` (every objective
    checked passed), `results` (`ObjectiveResult`s in the lab's order), `stages`.

    Displayed, it is the checklist as Markdown; returned by the `%copilot check` that
    showed its checklist live, it displays nothing more in that cell (`ShownInCell`)."""

    def __init__(self, report: CheckReport) -> None:
        self.report = report
        self._shown_in = None

    @property
    def score(self) -> float:
        return self.report.score

    @property
    def max_score(self) -> float:
        return self.report.max_score

    @property
    def passed(self) -> bool:
        return self.report.passed

    @property
    def results(self) -> list[ObjectiveResult]:
        return self.report.results

    @property
    def stages(self) -> list[Any]:
        return self.report.stages

    @property
    def failed(self) -> list[ObjectiveResult]:
        """The objectives that did not pass (failed or undecided)."""
        return [r for r in self.results if r.status != "pass"]

    def assert_passed(self) -> None:
        """Raise `AssertionError` listing every objective that did not pass, with why."""
        if self.passed:
            return
        lines = [f"{_points(self.score)} of {_points(self.max_score)} points; not passed:"]
        lines += [f"- {r.id} ({r.stage}): {r.text}: {r.explanation}" for r in self.failed]
        if not self.results:
            lines.append("- no objective was checked")
        raise AssertionError("\n".join(lines))

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else f"{len(self.failed)} not passed"
        return f"<LabReport {_points(self.score)}/{_points(self.max_score)} points, {verdict}>"

    def _repr_markdown_(self) -> str:
        return checklist_markdown(self.results, [], summary=self.report)

    def _display_bundle(self) -> dict[str, Any]:
        markdown = self._repr_markdown_()
        return {"text/markdown": markdown, "text/plain": _plain(markdown)}


def collect(results: Iterable[ObjectiveResult], summary: CheckSummary) -> LabReport:
    """A report of `results` (in the order they were decided) with their `summary`, the
    results in the lab's order."""
    ordered = summary.in_lab_order(list(results))
    return LabReport(CheckReport(results=ordered, **summary.model_dump()))


class Checklist:
    """The live checklist of one `%copilot check` in its cell (module docstring), of the
    objectives of `stages`: the stages checked, as the lab route gives them (`LabView`:
    `id`, `title`, `objectives` with `id`, `text`, `points`). `pending` are the objectives
    still to decide, as `(id, stage, text)`; `results` are kept in the lab's order,
    whatever order they are decided in."""

    def __init__(self, title: str, stages: Sequence[Mapping[str, Any]]) -> None:
        from IPython.display import display

        self.title = title
        self.outline = [
            {"id": s["id"], "title": s["title"], "objectives": [o["id"] for o in s["objectives"]]}
            for s in stages
        ]
        self.pending = [(o["id"], s["id"], o["text"]) for s in stages for o in s["objectives"]]
        self.results: list[ObjectiveResult] = []
        self.summary: CheckSummary | None = None
        self._points = {o["id"]: o["points"] for s in stages for o in s["objectives"]}
        self._order = {objective: at for at, (objective, _, _) in enumerate(self.pending)}
        self._handle = display(self._bundle(), raw=True, display_id=True)

    def add(self, result: ObjectiveResult) -> None:
        """One objective decided."""
        self.results.append(result)
        self.results.sort(key=lambda r: self._order.get(r.id, len(self._order)))
        self.pending = [p for p in self.pending if p[0] != result.id]
        self._update()

    def finish(self, summary: CheckSummary) -> None:
        """Every objective decided: the score."""
        self.summary = summary
        self.pending = []
        self._update()

    def _update(self) -> None:
        if self._handle is not None:
            self._handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, Any]:
        markdown = checklist_markdown(self.results, self.pending, self.summary, self.title)
        data = ChecksBundle(
            title=self.title,
            stages=[ChecklistOutlineStage.model_validate(stage) for stage in self.outline],
            results=self.results,
            pending=[
                PendingObjective(id=i, stage=s, text=t, points=self._points[i])
                for i, s, t in self.pending
            ],
            summary=self.summary,
        )
        return {
            CHECKS_MIME: data.model_dump(mode="json"),
            "text/markdown": markdown,
            "text/plain": _plain(markdown),
        }


def checklist_markdown(
    results: Sequence[ObjectiveResult],
    pending: Sequence[tuple[str, str, str]],
    summary: CheckSummary | None = None,
    title: str | None = None,
) -> str:
    """The checklist as Markdown: a line per objective (mark, text, why), the score."""
    lines = [f"**{_escape(title)}**", ""] if title else []
    for result in results:
        lines.append(
            f"- {MARKS[result.status]} **{_escape(result.text)}** "
            f"({_points(result.points_awarded)}/{_points(result.points)}): "
            f"{_escape(result.explanation)}"
        )
    for _, _, text in pending:
        lines.append(f"- {MARKS['pending']} {_escape(text)}: checking…")
    if summary is not None:
        stages = ", ".join(
            f"{s.title} {'passed' if s.passed else 'not yet'}" for s in summary.stages
        )
        lines += ["", f"**Score {_points(summary.score)}/{_points(summary.max_score)}** · {stages}"]
    return "\n".join(lines)


def lab_markdown(lab: dict[str, Any]) -> str:
    """The lab as the lab route gives it (`LabView`), as Markdown: each stage (the current
    one marked, one without hints said so) with its objectives, their latest status and
    points."""
    lines = [f"**{_escape(lab['title'])}** ({_points(lab['max_score'])} points)"]
    for stage in lab["stages"]:
        current = " · you are here" if stage["id"] == lab.get("current_stage") else ""
        catch_up = (
            f" · `%copilot catch-up {stage['id']}` restores its start" if stage["catch_up"] else ""
        )
        hints = " · the copilot gives no hints here" if stage.get("hints") == "off" else ""
        lines += [
            "",
            f"**{_escape(stage['title'])}** (`{stage['id']}`){current}{hints}{catch_up}",
        ]
        for objective in stage["objectives"]:
            mark = MARKS.get(objective.get("status") or "")
            shown = f"{mark} " if mark else ""
            lines.append(f"- {shown}{_escape(objective['text'])} ({_points(objective['points'])})")
    return "\n".join(lines)


def _plain(markdown: str) -> str:
    return markdown.replace("**", "")


def _escape(text: str) -> str:
    return text.replace("*", "\\*").replace("_", "\\_")


def _points(value: float) -> str:
    return f"{value:g}"
