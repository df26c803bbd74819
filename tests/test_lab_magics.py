"""Lab objectives from the notebook: `%copilot lab`, `lab attach`, `check`, `catch-up` and
`Copilot.check_lab`, in a real IPython shell against a real Jupyter server subprocess and
the REAL local GNS3 lab (two addressed VPCS behind the lab kit's switch)."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from support.server import recipe_project, server_magics_shell

from jupyter_gns3_copilot.events import CheckResultEvent, CheckSummaryEvent, parse_event
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.notebook.errors import ApiError
from jupyter_gns3_copilot.notebook.lab_report import CHECKS_MIME, Checklist, LabReport, collect
from jupyter_gns3_copilot.notebook.subcommands import context as magic_context
from jupyter_gns3_copilot.objectives.api import LabView
from jupyter_gns3_copilot.objectives.results import CheckSummary, ObjectiveResult, StageScore
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
        hints: "off"
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
    assert str(refused.error_in_exec) == (
        "Attaching a lab file needs automation mode: add `--mode automation` "
        f"(`%copilot lab attach {path} --mode automation`), or switch your mode with "
        "`%copilot config copilot_mode=automation`."
    )
    typo = tmp_path / "typo.yaml"
    typo.write_text(LAB.replace("to: PC2}", "to: PC9}"))
    unknown = shell.run_cell(f"%copilot lab attach {typo} --mode lab")
    assert str(unknown.error_in_exec) == (
        f"{typo.name}, line 20, stages[1].objectives[0].check.to: the project has no node "
        "called PC9 (its nodes are PC1, PC2, Switch1)"
    )
    capsys.readouterr()
    line(shell, f"%copilot lab attach {path} --mode automation")  # this request only
    attached = capsys.readouterr().out
    assert f"Attached {path} to {PROJECT}: 2 stages, 3 objectives." in attached
    assert "automation mode" in str(shell.run_cell(f"%copilot lab attach {path}").error_in_exec)
    line(shell, "%copilot config copilot_mode=lab")  # switched for good (the old word)
    line(shell, f"%copilot lab attach {path}")
    capsys.readouterr()
    line(shell, "%copilot lab")
    shown = capsys.readouterr().out
    assert "**Two PCs** (5 points)" in shown
    assert "- PC1 reaches PC2 (3)" in shown and "catch-up addressing" in shown
    assert "**Reachability** (`reach`) · the copilot gives no hints here" in shown
    assert "**Addressing** (`addressing`) · you are here ·" in shown

    # a bare check: the checklist once, not again as the cell's Out[]
    shell.run_cell("%copilot check", store_history=True)
    printed = capsys.readouterr().out
    assert "✅ **PC1 has 10.0.0.1/24** (1/1)" in printed and "**Score 4/5**" in printed
    assert "LabReport" not in printed and printed.count("Score 4/5") == 1
    line(shell, "report = %copilot check")
    report = shell.user_ns["report"]
    assert isinstance(report, LabReport)
    assert [(r.id, r.status) for r in report.results] == [
        ("pc1", "pass"),
        ("pc2", "fail"),
        ("ping", "pass"),
    ]
    assert (report.score, report.max_score, report.passed) == (4, 5, False)
    capsys.readouterr()
    line(shell, "report")  # shown in a later cell: the checklist as text
    assert "❌ PC2 has 10.0.0.9/24 (0/1)" in capsys.readouterr().out
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
    caught_up = capsys.readouterr().out
    assert "restored snapshot 'fresh'" in caught_up
    assert "once they are up (a few seconds), check again with `%copilot check addressing`" in (
        caught_up
    )
    typo = shell.run_cell("%copilot catch-up")
    assert "Name the stage" in str(typo.error_in_exec)


EXERCISE_LAB = textwrap.dedent(
    """\
    title: Two PCs exercise
    stages:
      - id: reach
        title: Reachability
        objectives:
          - id: pc1
            text: PC1 has 10.0.0.1/24
            check: {kind: address, node: PC1, address: 10.0.0.1/24}
          - id: ping
            text: PC1 reaches PC2
            check: {kind: reachable, from: PC1, to: PC2}
    faults:
      - id: pc1-moved
        description: PC1 was moved to another address of the same LAN.
        breaks: [pc1]
        apply: [{kind: config, node: PC1, lines: ["ip 10.0.0.99/24"]}]
        diagnosis: {device: PC1, cause: wrong address, words: [address]}
    """
)


@pytest.mark.lab
@pytest.mark.slow
def test_an_exercise_is_started_checked_and_given_up_from_the_notebook(
    shell: InteractiveShell, project: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`%copilot exercise start FAULT` shows what fails and not the fault, a second start
    is a readable error, `%copilot check` grades it, `give-up` tells the fault."""
    path = tmp_path / "lab.yaml"
    path.write_text(EXERCISE_LAB)
    line(shell, f'%copilot use "{PROJECT}"')
    line(shell, f"%copilot lab attach {path} --mode automation")
    capsys.readouterr()
    line(shell, "%copilot exercise")
    assert "No exercise yet" in capsys.readouterr().out
    line(shell, "%copilot exercise start pc1-moved")
    started = capsys.readouterr().out
    assert "Exercise started" in started and "- PC1 has 10.0.0.1/24" in started
    assert "pc1-moved" not in started and "another address" not in started
    again = shell.run_cell("%copilot exercise start --random")
    assert "You have an exercise going already" in str(again.error_in_exec)
    line(shell, "%copilot check")
    assert "Exercise not solved yet (still failing: pc1)" in capsys.readouterr().out
    line(shell, "%copilot exercise give-up")
    gave_up = capsys.readouterr().out
    assert "The fault: PC1 was moved to another address of the same LAN." in gave_up
    assert "A diagnosis names PC1: wrong address." in gave_up
    line(shell, "%copilot exercise")
    assert "Last exercise (ended)" in capsys.readouterr().out
    wrong = shell.run_cell("%copilot exercise stop")
    assert "`%copilot exercise give-up`" in str(wrong.error_in_exec)


@pytest.mark.lab
@pytest.mark.slow
def test_a_mistyped_stage_is_named_with_the_closest_one_and_nothing_else_shown(
    shell: InteractiveShell,
    project: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`check`, `catch-up` (asked or confirmed) and `lab stage` of a stage the lab does
    not have: the server's 404, never an internal error; in a kernel, no empty checklist
    is displayed before it."""
    path = tmp_path / "lab.yaml"
    path.write_text(LAB)
    line(shell, f'%copilot use "{PROJECT}"')
    line(shell, f"%copilot lab attach {path} --mode lab")
    monkeypatch.setattr(magic_context, "in_kernel", lambda _shell: True)
    expected = (
        "the lab has no stage 'adressing' (stages: addressing, reach); did you mean addressing?"
    )
    for command in (
        "check adressing",
        "catch-up adressing",
        "catch-up adressing --confirm",
        "lab stage adressing",
    ):
        with capture_output() as captured:
            failed = shell.run_cell(f"%copilot {command}")
        assert isinstance(failed.error_in_exec, ApiError), command
        assert (failed.error_in_exec.status, str(failed.error_in_exec)) == (404, expected)
        assert captured.outputs == [], command  # no checklist displayed
        assert captured.stdout.strip() == f"\x1b[0;31m{expected}\x1b[0m", command


def objective_result(
    objective: str, stage: str, status: Any = "fail", explanation: str = "No."
) -> ObjectiveResult:
    """A result of a 1-point objective whose text is its id in capitals."""
    return ObjectiveResult(
        id=objective,
        stage=stage,
        text=objective.upper(),
        status=status,
        points=1,
        points_awarded=1 if status == "pass" else 0,
        explanation=explanation,
        duration_ms=3,
    )


def test_the_checklist_fills_in_and_keeps_its_report() -> None:
    """The cell's display is updated in place; each bundle carries the report so far for
    the JupyterLab renderer and Markdown for every other front end."""
    InteractiveShell.instance()
    result = objective_result("a", "s", "pass", "Fine.")
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


def test_a_report_lists_results_in_the_lab_order_whatever_order_they_came_in() -> None:
    """Results stream in as they are decided; the report (and `assert_passed`'s message)
    follows the lab file, as the summary's stages list their objectives."""

    summary = CheckSummary(
        score=0,
        max_score=3,
        passed=False,
        stages=[
            StageScore(
                id="s", title="S", passed=False, score=0, max_score=2, objectives=["b", "a"]
            ),
            StageScore(id="t", title="T", passed=False, score=0, max_score=1, objectives=["c"]),
        ],
    )
    report = collect(
        [objective_result(o, t) for o, t in (("c", "t"), ("a", "s"), ("b", "s"))], summary
    )
    assert [r.id for r in report.results] == ["b", "a", "c"]
    with pytest.raises(AssertionError) as failed:
        report.assert_passed()
    assert str(failed.value).splitlines()[1:] == [
        "- b (s): B: No.",
        "- a (s): A: No.",
        "- c (t): C: No.",
    ]


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


def _read_until(
    fd: int, wanted: str, seen: list[str], limit: float = 60.0, *, required: bool = True
) -> bool:
    """Read what the terminal shows into `seen` until `wanted` appears; whether it did
    within `limit` seconds (a hang fails the test when `required`)."""
    deadline = time.monotonic() + limit
    while wanted not in "".join(seen):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            assert not required, f"never saw {wanted!r} in {''.join(seen)!r}"
            return False
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                seen.append(os.read(fd, 4096).decode("utf-8", "replace"))
            except OSError:  # the command ended and closed the terminal
                return wanted in "".join(seen)
    return True


@pytest.mark.lab
@pytest.mark.slow
def test_the_console_command_opens_a_device_console_in_a_terminal(
    gns3_lab: Any, scripted_llm: Any, project: str, tmp_path: Path
) -> None:
    """`gns3-copilot-console PC1` in a terminal (a real pty, as JupyterLab's Terminal
    gives): the real VPCS console, typed on in raw mode, left with Ctrl+]."""
    model = ModelEndpoint.scripted_model(scripted_llm)
    with JupyterServer(gns3_lab, model, tmp_path / "server") as server:
        env = {**os.environ, **server.kernel_env()}
        command = [sys.executable, "-m", "jupyter_gns3_copilot.notebook.console_cli"]
        terminal, device = pty.openpty()
        console = subprocess.Popen(
            [*command, "PC1", "--project", PROJECT],
            stdin=device,
            stdout=device,
            stderr=device,
            env=env,
            start_new_session=True,
        )
        os.close(device)
        try:
            seen: list[str] = []
            _read_until(terminal, "Ctrl+] quits.", seen)
            for _ in range(10):  # Enter, again if a console just opened missed it
                os.write(terminal, b"\r")
                if _read_until(terminal, "PC1>", seen, 3, required=False):
                    break
            seen.clear()
            os.write(terminal, b"show ip\r")
            _read_until(terminal, "10.0.0.1/24", seen)
            assert "IP/MASK" in "".join(seen)
            os.write(terminal, b"\x1d")  # Ctrl+]
            assert console.wait(timeout=30) == 0
            _read_until(terminal, "Console closed.", seen)
        finally:
            console.kill()
            os.close(terminal)

        def refused(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*command, *args], env=env, capture_output=True, text=True, timeout=120
            )

        unknown = refused("PC9", "--project", PROJECT)
        assert unknown.returncode == 2
        assert f"Project '{PROJECT}' has no node 'PC9' (nodes: " in unknown.stderr

        async def stop_pc2() -> None:
            async with GNS3Client(
                gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password
            ) as gns3:
                nodes = await gns3.list_nodes(project)
                await gns3.stop_node(project, next(n.node_id for n in nodes if n.name == "PC2"))

        asyncio.run(stop_pc2())
        stopped = refused("pc2", "--project", PROJECT)  # a name in other capitals too
        assert stopped.returncode == 2
        assert "PC2 is stopped: start it first" in stopped.stderr
