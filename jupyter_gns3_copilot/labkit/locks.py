"""A bounded, exclusive file lock between processes."""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Iterator
from pathlib import Path

from .errors import LabError


@contextlib.contextmanager
def file_lock(path: Path, timeout: float, holder: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) for the ``with`` body.

    Waits at most ``timeout`` seconds; then raises LabError naming ``holder``, what the
    other process is presumably doing (e.g. "another process is installing gns3-server").
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LabError(
                        f"waited {timeout:.0f} s for the lock {path} ({holder}); retry later"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
