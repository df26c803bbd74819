"""Which sessions are streaming, and their abort flags.

One `asyncio.Event` per running turn: the graph checks it at its conditional edges and
while a model reply streams, and tools get it (`ToolContext.abort`) so console and boot
waits stop promptly. The registry also refuses a second turn on a session that is already
streaming. It lives in memory only; nothing here is persisted.
"""

from __future__ import annotations

import asyncio


class SessionBusy(RuntimeError):
    """A turn was started on a session whose previous turn is still streaming."""


class AbortRegistry:
    """The running turns of one service, keyed by session id."""

    def __init__(self) -> None:
        self._running: dict[str, asyncio.Event] = {}

    def begin(self, session_id: str) -> asyncio.Event:
        """Register a turn and return its (cleared) abort flag; SessionBusy if one runs."""
        if session_id in self._running:
            raise SessionBusy(
                f"Session {session_id} is already answering a message: wait for it to "
                "finish, or abort it, before sending another."
            )
        flag = asyncio.Event()
        self._running[session_id] = flag
        return flag

    def end(self, session_id: str, flag: asyncio.Event) -> None:
        """Unregister the turn that owns `flag` (a later turn's flag is left alone)."""
        if self._running.get(session_id) is flag:
            del self._running[session_id]

    def request_abort(self, session_id: str) -> bool:
        """Set the running turn's abort flag; False if the session is not streaming."""
        flag = self._running.get(session_id)
        if flag is None:
            return False
        flag.set()
        return True

    def is_running(self, session_id: str) -> bool:
        """Whether a turn of this session is streaming."""
        return session_id in self._running

    def running(self) -> list[str]:
        """The sessions streaming now."""
        return list(self._running)
