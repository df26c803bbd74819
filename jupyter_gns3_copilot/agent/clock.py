"""A turn's execution time limit (`max_execution_time_seconds`), paused while the turn
waits for a person's approval.

The limit bounds the copilot's own work; a wait for a decision has its own bound
(`approval_timeout`). The seconds used so far go into each `ApprovalRequest`, so a turn
resumed later (its client left, the server restarted) runs the rest with the time left.

No Jupyter import here (the core).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

RESUME_FLOOR = 1.0
"""Seconds a turn gets at least after a decision (the limit's minimum): an approved change
is started rather than stopped unseen when the limit was all but used before the wait."""


class TurnClock:
    """The limit of one turn's run on the running loop: `on_expiry` is called once the
    running time reaches `limit` (`used` seconds of it spent before this run).

    `start()` runs the clock, `pause()` stops it keeping the time used; a start gives the
    turn `left()` seconds, at least `RESUME_FLOOR`.
    """

    def __init__(self, limit: int, on_expiry: Callable[[], None], used: float = 0.0) -> None:
        self.limit = limit
        self._on_expiry = on_expiry
        self._used = max(used, 0.0)
        self._loop = asyncio.get_running_loop()
        self._started: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    def used(self) -> float:
        """Seconds of the limit used so far (the waits for decisions not counted)."""
        running = self._loop.time() - self._started if self._started is not None else 0.0
        return self._used + running

    def left(self) -> float:
        """Seconds the turn gets when the clock (re)starts."""
        return max(self.limit - self.used(), RESUME_FLOOR)

    def start(self) -> None:
        """Run the clock (no-op while it runs)."""
        if self._started is None:
            self._timer = self._loop.call_later(self.left(), self._on_expiry)
            self._started = self._loop.time()

    def pause(self) -> None:
        """Stop the clock, keeping the time used (no-op while paused)."""
        if self._started is not None:
            self._used = self.used()
            self._started = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
