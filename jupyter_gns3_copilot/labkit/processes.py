"""Find and end a lab's processes by the lab-id marker in their environment.

The lab server is started with ``GNS3_COPILOT_LAB_ID=<id>`` in its environment; every
process it starts (VPCS nodes, uBridge and Dynamips stand-ins) inherits it. Scanning
``/proc/<pid>/environ`` for that marker finds them all, even ones that left the
process group, and never matches a process some other lab or user started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

LAB_ID_ENV = "GNS3_COPILOT_LAB_ID"


def _marker(lab_id: str) -> bytes:
    return f"{LAB_ID_ENV}={lab_id}".encode()


def has_marker(pid: int, lab_id: str) -> bool:
    """True when process ``pid`` exists and carries this lab's marker."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return _marker(lab_id) in environ.split(b"\0")


def lab_processes(lab_id: str) -> list[int]:
    """PIDs of live (non-zombie) processes carrying this lab's marker, except our own."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            pid = int(entry.name)
            if has_marker(pid, lab_id) and not _is_zombie(pid):
                found.append(pid)
    return sorted(found)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X")


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def wait_gone(pids: list[int], lab_id: str, timeout: float) -> list[int]:
    """Wait until none of ``pids`` is a live marked process; return the ones still alive."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive:
        alive = [pid for pid in alive if has_marker(pid, lab_id) and not _is_zombie(pid)]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return alive


def terminate(pids: list[int], lab_id: str, grace: float) -> list[int]:
    """SIGTERM ``pids`` (only those still carrying the marker), SIGKILL what outlives
    ``grace`` seconds; return the PIDs that are still alive after that (normally none)."""
    marked = [pid for pid in pids if has_marker(pid, lab_id)]
    for pid in marked:
        _signal(pid, signal.SIGTERM)
    survivors = wait_gone(marked, lab_id, grace)
    for pid in survivors:
        _signal(pid, signal.SIGKILL)
    return wait_gone(survivors, lab_id, 5.0)
