"""`make lab` (scripts/lab.py) as a person runs it: the real script in a subprocess, with
its own local GNS3 lab, JupyterLab and the scripted model (a TEST DOUBLE of the OpenAI
API replaying the example notebooks' scripts). It runs with approvals on, as the
extension's default, and its banner says so.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
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
    """`scripts/lab.py` running, its output read line by line as it comes."""

    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env["GNS3_COPILOT_LAB_PORT"] = str(free_port())
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "lab.py")],
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


@pytest.fixture
def lab_script() -> Iterator[LabScript]:
    script = LabScript()
    try:
        yield script
    finally:
        script.stop()


@pytest.mark.lab
@pytest.mark.slow
def test_make_lab_asks_before_changes_and_says_so(lab_script: LabScript) -> None:
    """Given `make lab` with no real model; then its banner names the approval setting;
    and when the build notebook's message is sent, the first change waits for a decision
    instead of running."""
    banner = lab_script.until("Press Ctrl+C", READY_TIMEOUT)
    assert 'APPROVALS: require_approval = "changes"' in banner
    match = re.search(r"(http://127\.0\.0\.1:\d+/)lab\?token=(\w+)", banner)
    assert match, banner
    with Copilot(match[1], match[2]) as copilot:
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
    assert "Stopped." in lab_script.stop()
