"""`make lab` (scripts/lab.py) as a person runs it: the real script in a subprocess, with
its own local GNS3 lab, JupyterLab and the scripted model (a TEST DOUBLE of the OpenAI
API replaying the example notebooks' scripts). It runs with approvals on, as the
extension's default, and its banner says so; stopped and started again it keeps its lab
(the same projects, PC configurations, lab values and progress), and `--reset` starts
anew. Its first run on a new directory (`first_run`) is shared: the banner and the asked
approval are read from it, then it is stopped and started again for the restart.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jupyter_gns3_copilot.events import ApprovalRequiredEvent
from jupyter_gns3_copilot.notebook.copilot import Copilot
from jupyter_gns3_copilot.testing.local_stack import free_port

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT = 300.0
STOP_TIMEOUT = 60.0
BUILD = "Build two VPCS PCs, PC1 and PC2, on one Ethernet switch and start them."


class LabScript:
    """`scripts/lab.py` running, its output read line by line as it comes; its lab in
    `work`."""

    def __init__(self, work: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env["GNS3_COPILOT_LAB_PORT"] = str(free_port())
        self.work = work
        env["GNS3_COPILOT_LAB_DIR"] = str(self.work)
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "lab.py"), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        self._ended = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def until(self, text: str, timeout: float) -> str:
        """The output up to the first line containing `text`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(
                    f"no {text!r} within {timeout:.0f} s:\n{''.join(self.output)}"
                ) from None
            if line is None:
                self._ended = True
                raise AssertionError(f"lab.py exited before {text!r}:\n{''.join(self.output)}")
            self.output.append(line)
            if text in line:
                return "".join(self.output)

    def stop(self) -> str:
        """Ctrl+C, as a person stops it; the rest of the output."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT)
        while not self._ended:
            line = self.lines.get(timeout=STOP_TIMEOUT)
            if line is None:
                self._ended = True
            else:
                self.output.append(line)
        return "".join(self.output)


@dataclass(frozen=True)
class Running:
    """A started `LabScript` and its banner (its output up to "Press Ctrl+C")."""

    script: LabScript
    banner: str


def ready(script: LabScript) -> Running:
    """`script` once it is ready."""
    return Running(script, script.until("Press Ctrl+C", READY_TIMEOUT))


def connect(running: Running) -> Copilot:
    """A client of the running script's JupyterLab."""
    match = re.search(r"(http://127\.0\.0\.1:\d+/)lab\?token=(\w+)", running.banner)
    assert match, running.banner
    return Copilot(match[1], match[2])


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """`make lab` started on a new directory, for this module's tests in their order: the
    restart test stops it (a later test would find it stopped)."""
    script = LabScript(tmp_path_factory.mktemp("lab") / "lab")
    try:
        yield ready(script)
    finally:
        script.stop()
        shutil.rmtree(script.work, ignore_errors=True)


@pytest.mark.lab
@pytest.mark.slow
def test_make_lab_asks_before_changes_and_says_so(first_run: Running) -> None:
    """Given `make lab` with no real model; then its banner names the approval setting;
    and when the build notebook's message is sent, the first change waits for a decision
    instead of running. (Its stopping on Ctrl+C is the restart test's.)"""
    assert 'APPROVALS: require_approval = "changes"' in first_run.banner
    with connect(first_run) as copilot:
        copilot.use("Copilot build")
        asked = None
        for event in copilot.stream(BUILD, mode="lab"):
            if isinstance(event, ApprovalRequiredEvent):
                asked = event
                break
            assert event.type not in ("tool_start", "done"), event
        assert asked is not None and asked.tool_name == "create_nodes"
        assert "PC1" in asked.summary
        assert copilot.approvals()[0]["approval_id"] == asked.approval_id


def _state(copilot: Copilot) -> dict[str, object]:
    """What a restart must keep: the projects' ids, PC1's address in the demo project,
    the graded lab's texts (the student's values) and statuses."""
    projects = {p.name: p.project_id for p in copilot.projects()}
    copilot.use("Copilot demo")
    shown = copilot.run("PC1", "show ip")
    copilot.use("Copilot graded lab")
    lab = copilot.lab()
    objectives = [o for stage in lab["stages"] for o in stage["objectives"]]
    return {
        "projects": projects,
        "pc1": "10.0.0.1" in json.dumps(shown.tool_calls[0].output),
        "texts": [o["text"] for o in objectives],
        "statuses": [o["status"] for o in objectives],
    }


@pytest.mark.lab
@pytest.mark.slow
def test_make_lab_keeps_its_lab_across_restarts(first_run: Running) -> None:
    """Given `make lab` run once, the graded lab checked; when it is stopped (Ctrl+C) and
    started again on the same directory; then it says it stopped and reuses the lab, and
    the projects (same ids), PC1's address, the student's values and their latest statuses
    are as they were; the class secret is a file only this user reads."""
    work = first_run.script.work
    try:
        with connect(first_run) as copilot:
            copilot.use("Copilot graded lab")
            copilot.check_lab("addressing")
            before = _state(copilot)
    finally:
        stopped = first_run.script.stop()
    assert "Stopped." in stopped and "kept in" in stopped, stopped
    assert "Not saved" not in stopped, stopped
    assert (work / "lab.salt").stat().st_mode & 0o777 == 0o600
    salt = (work / "lab.salt").read_text()

    again = LabScript(work)
    try:
        with connect(ready(again)) as copilot:
            after = _state(copilot)
        assert "Reusing the lab of the last run" in "".join(again.output)
    finally:
        again.stop()
    assert before["pc1"] is True
    assert any(status is not None for status in before["statuses"]), before  # type: ignore[attr-defined]
    assert after == before
    assert (work / "lab.salt").read_text() == salt


def test_reset_deletes_what_a_restart_reuses_and_keeps_the_notebooks(tmp_path: Path) -> None:
    """`scripts/lab.py --reset` (`make lab RESET=1`) deletes the lab, the Jupyter data and
    the class secret; the notebook copies stay."""
    spec = importlib.util.spec_from_file_location("lab_script", ROOT / "scripts" / "lab.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for name in ("gns3/projects", "jupyter/data", "notebooks"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "kept").write_text("x")
    (tmp_path / "lab.salt").write_text("secret")
    script.reset(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks"]
    assert "--reset" in (ROOT / "Makefile").read_text()
