"""Lab objectives from the notebook: `%copilot lab`, `lab attach`, `check`, `catch-up` and
`Copilot.check_lab`, in a real IPython shell against a real Jupyter server subprocess and
the REAL local GNS3 lab (two addressed VPCS behind the lab kit's switch)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from support.server import recipe_project, server_magics_shell

from jupyter_gns3_copilot.events import CheckResultEvent, CheckSummaryEvent, parse_event
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.notebook.lab_report import CHECKS_MIME, Checklist, LabReport
from jupyter_gns3_copilot.objectives.results import CheckSummary, ObjectiveResult, StageScore
from jupyter_gns3_copilot.objectives.view import LabView
from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
)

PROJECT = "Copilot lab magics"
CHECK_FIXTURES = Path(__file__).parent / "fixtures" / "checks"
LAB = textwrap.dedent(
    """\
    title: Two PCs
    stages:
      - id: addressing
        title: Addressing
        snapshot: fresh
        objectives:
          - id: pc1
            text: PC1 has 10.0.0.1/24
            check: {kind: address, node: PC1, address: 10.0.0.1/24}
          - id: pc2
            text: PC2 has 10.0.0.9/24
            check: {kind: address, node: PC2, address: 10.0.0.9/24}
      - id: reach
        title: Reachability
        objectives:
          - id: ping
            text: PC1 reaches PC2
            points: 3
            check: {kind: reachable, from: PC1, to: PC2}
    """
)


@pytest.fixture
def project(gns3_lab: Any) -> Iterator[str]:
    recipe = ProjectRecipe(PROJECT, {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"})
    with recipe_project(gns3_lab, recipe) as project_id:
        yield project_id


@pytest.fixture
def shell(
    gns3_lab: Any, scripted_llm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InteractiveShell]:
    with server_magics_shell(gns3_lab, scripted_llm, tmp_path, monkeypatch) as ip:
        yield ip


def line(shell: InteractiveShell, text: str) -> Any:
    result = shell.run_cell(text, store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    return result.result


@pytest.mark.lab
@pytest.mark.slow
def test_a_lab_is_attached_shown_checked_and_caught_up(
    shell: InteractiveShell,
    project: str,
    gns3_lab: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB)
    line(shell, f'%copilot use "{PROJECT}"')
    refused = shell.run_cell(f"%copilot lab attach {path}")
    assert "lab automation mode" in str(refused.error_in_exec)
    line(shell, "%copilot config copilot_mode=lab_automation_assistant")
    typo = tmp_path / "typo.yaml"
    typo.write_text(LAB.replace("to: PC2}", "to: PC9}"))
    unknown = shell.run_cell(f"%copilot lab attach {typo}")
    assert str(unknown.error_in_exec) == (
        f"{typo.name}, line 19, stages[1].objectives[0].check.to: the project has no node "
        "called PC9 (its nodes are PC1, PC2, Switch1)"
    )
    capsys.readouterr()
    line(shell, f"%copilot lab attach {path}")
    attached = capsys.readouterr().out
    assert f"Attached {path} to {PROJECT}: 2 stages, 3 objectives." in attached
    line(shell, "%copilot lab")
    shown = capsys.readouterr().out
    assert "**Two PCs** (5 points)" in shown
    assert "- PC1 reaches PC2 (3)" in shown and "catch-up addressing" in shown

    report = line(shell, "%copilot check")
    assert isinstance(report, LabReport)
    assert {r.id: r.status for r in report.results} == {
        "pc1": "pass",
        "pc2": "fail",
        "ping": "pass",
    }
    assert (report.score, report.max_score, report.passed) == (4, 5, False)
    printed = capsys.readouterr().out
    assert "✅ **PC1 has 10.0.0.1/24** (1/1)" in printed and "**Score 4/5**" in printed
    with pytest.raises(AssertionError) as failed:
        report.assert_passed()
    assert str(failed.value) == (
        "4 of 5 points; not passed:\n"
        "- pc2 (addressing): PC2 has 10.0.0.9/24: PC2 has 10.0.0.2/24, not 10.0.0.9/24."
    )
    line(shell, "%copilot check reach").assert_passed()

    # catch-up: the plan first, then the restore once confirmed
    async def snapshot() -> None:
        async with GNS3Client(
            gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password
        ) as gns3:
            await gns3.stop_all(project)
            await gns3.create_snapshot(project, "fresh")

    asyncio.run(snapshot())
    line(shell, "%copilot catch-up addressing")
    plan = capsys.readouterr().out
    assert "restores the snapshot 'fresh'" in plan
    assert "To do it: %copilot catch-up addressing --confirm" in plan
    line(shell, "%copilot catch-up addressing --confirm")
    assert "restored snapshot 'fresh'" in capsys.readouterr().out
    typo = shell.run_cell("%copilot catch-up")
    assert "Name the stage" in str(typo.error_in_exec)


def test_the_checklist_fills_in_and_keeps_its_report() -> None:
    """The cell's display is updated in place; each bundle carries the report so far for
    the JupyterLab renderer and Markdown for every other front end."""
    InteractiveShell.instance()
    result = ObjectiveResult(
        id="a",
        stage="s",
        text="A",
        status="pass",
        points=1,
        points_awarded=1,
        explanation="Fine.",
        duration_ms=3,
    )
    summary = CheckSummary(
        score=1,
        max_score=2,
        passed=False,
        stages=[StageScore(id="s", title="S", passed=False, score=1, max_score=2)],
    )
    objectives = [{"id": i, "text": i.upper(), "points": 1} for i in ("b", "a", "c")]
    with capture_output() as captured:
        checklist = Checklist("Lab", [{"id": "s", "title": "S", "objectives": objectives}])
        checklist.add(result.model_copy(update={"id": "c", "text": "C"}))
        checklist.add(result)
        checklist.finish(summary)
    first, middle, later, last = (output.data for output in captured.outputs)
    assert [p["id"] for p in first[CHECKS_MIME]["pending"]] == ["b", "a", "c"]
    assert first[CHECKS_MIME]["pending"][0] == {"id": "b", "stage": "s", "text": "B", "points": 1}
    outline = {"id": "s", "title": "S", "objectives": ["b", "a", "c"]}
    assert first[CHECKS_MIME]["stages"] == [outline]
    assert "⏳ A: checking…" in first["text/markdown"]
    assert middle[CHECKS_MIME]["results"][0]["status"] == "pass"
    # kept in the lab's order, whatever order they are decided in
    assert [r["id"] for r in later[CHECKS_MIME]["results"]] == ["a", "c"]
    assert last[CHECKS_MIME]["summary"]["score"] == 1 and last[CHECKS_MIME]["pending"] == []
    assert last["text/markdown"].endswith("**Score 1/2** · S not yet")
    assert "**" not in last["text/plain"]


def test_the_shared_checklist_fixture_is_what_the_kernel_displays() -> None:
    """`tests/fixtures/checks/*.json` (read by the front end's tests too): the lab route's
    answer, a check's events (valid events of the server's models) and the bundles the
    kernel's checklist displays for them, one per update, results in the lab's order."""
    InteractiveShell.instance()
    for path in sorted(CHECK_FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        LabView.model_validate(fixture["lab"])
        events = [parse_event(e) for e in fixture["events"]]
        with capture_output() as captured:
            checklist = Checklist(fixture["lab"]["title"], fixture["lab"]["stages"])
            for event in events:
                if isinstance(event, CheckResultEvent):
                    checklist.add(event.result)
                elif isinstance(event, CheckSummaryEvent):
                    checklist.finish(event.summary)
        assert [o.data[CHECKS_MIME] for o in captured.outputs] == fixture["bundles"], path


@pytest.mark.lab
@pytest.mark.slow
def test_the_command_line_checks_and_says_so_in_its_exit_status(
    gns3_lab: Any, scripted_llm: Any, project: str, tmp_path: Path
) -> None:
    """`gns3-copilot-check`: 0 all passed, 1 one did not, 2 the checks could not run."""
    lab = tmp_path / "mine.yaml"
    lab.write_text(LAB)
    model = ModelEndpoint.scripted_model(scripted_llm)
    with JupyterServer(gns3_lab, model, tmp_path / "server") as server:
        env = {**os.environ, **server.kernel_env()}

        def check(*args: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "jupyter_gns3_copilot.notebook.check_cli", *args]
            return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

        failing = check("--project", PROJECT, "--lab", str(lab))
        assert failing.returncode == 1, failing.stderr
        assert (
            "❌ PC2 has 10.0.0.9/24 (0/1): PC2 has 10.0.0.2/24, not 10.0.0.9/24." in failing.stdout
        )
        assert "Score 4/5" in failing.stdout
        passing = check("--project", PROJECT, "--lab", str(lab), "--stage", "reach", "--json")
        assert passing.returncode == 0, passing.stderr
        assert json.loads(passing.stdout)["results"][0]["id"] == "ping"
        no_lab = check("--project", PROJECT)
        assert no_lab.returncode == 2 and "no lab file" in no_lab.stderr
        lab.write_text(LAB.replace("kind: reachable", "kind: reachble"))
        invalid = check("--project", PROJECT, "--lab", str(lab))
        assert invalid.returncode == 2
        assert "mine.yaml, line " in invalid.stderr and "unknown check kind" in invalid.stderr
        unknown = check("--project", "No such project", "--lab", str(lab))
        assert unknown.returncode == 2 and "No such project" in unknown.stderr
