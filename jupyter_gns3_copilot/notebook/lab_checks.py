"""A lab check from the notebook: the check's stream read into a `LabReport`, or the hub
service's report of the student nbgrader grades (`Copilot.check_lab`)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..events import CheckResultEvent, CheckSummaryEvent, ErrorEvent
from ..objectives.results import CheckSummary, ObjectiveResult
from .api_client import CopilotClient
from .errors import CopilotError, UsageError
from .grading import Autograding
from .lab_report import LabReport, collect
from .options import copilot_mode
from .turn_reading import abort_quietly, run_abort

if TYPE_CHECKING:
    from .owner import CopilotOwner

ResultCallback = Callable[[ObjectiveResult], None]


def lab_file_body(path: str | os.PathLike[str], mode: str | None) -> dict[str, Any]:
    """The body that attaches the lab file at `path` (`Copilot.attach_lab`)."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read the lab file {file}: {exc}") from None
    body = {"text": text, "source": file.name}
    chosen = copilot_mode(mode)
    if chosen is not None:
        body["copilot_mode"] = chosen
    return body


def check_lab(
    copilot: CopilotOwner,
    request: dict[str, Any],
    *,
    on_open: Callable[[], None] | None,
    on_result: ResultCallback | None,
) -> LabReport:
    """`Copilot.check_lab`: the check `request` asks for (`stage`, `objectives`, `lab`,
    `source`) on the project in use; while nbgrader autogrades, the hub service's report."""
    if copilot.autograding is not None:
        if request["lab"] is not None:
            raise UsageError("While nbgrader autogrades, labs are checked as assigned.")
        project = copilot.current_project().name
        return graded_report(
            copilot.autograding,
            project,
            request["stage"],
            request["objectives"],
            on_open=on_open,
            on_result=on_result,
        )
    project_id = copilot.current_project().project_id
    return run_checks(copilot.client, project_id, request, on_open=on_open, on_result=on_result)


def run_checks(
    client: CopilotClient,
    project_id: str,
    request: dict[str, Any],
    *,
    on_open: Callable[[], None] | None = None,
    on_result: ResultCallback | None = None,
) -> LabReport:
    """Check the project's lab as `request` asks (`stage`, `objectives`, `lab`, `source`;
    None left out) and return the report; a kernel interrupt stops the check on the
    server."""
    run_id = str(uuid.uuid4())
    body = {"run_id": run_id, **{k: v for k, v in request.items() if v is not None}}
    events = client.stream("projects", project_id, "lab", "checks", json=body, on_open=on_open)
    results: list[ObjectiveResult] = []
    summary: CheckSummary | None = None
    try:
        for event in events:
            if isinstance(event, CheckResultEvent):
                results.append(event.result)
                if on_result is not None:
                    on_result(event.result)
            elif isinstance(event, CheckSummaryEvent):
                summary = event.summary
            elif isinstance(event, ErrorEvent):
                raise CopilotError(event.error)
    except KeyboardInterrupt:
        abort_quietly(client, run_abort(project_id, run_id))
        raise
    if summary is None:
        raise CopilotError("The check ended before its score was sent; run it again.")
    return collect(results, summary)


def graded_report(
    autograding: Autograding,
    project: str,
    stage: str | None,
    objectives: list[str] | None,
    *,
    on_open: Callable[[], None] | None = None,
    on_result: ResultCallback | None = None,
) -> LabReport:
    """While nbgrader autogrades: the hub service's report of the graded student's copy
    of `project`."""
    report = autograding.report(project, stage, objectives)
    if on_open is not None:
        on_open()
    for result in report.results:
        if on_result is not None:
            on_result(result)
    return LabReport(report)
