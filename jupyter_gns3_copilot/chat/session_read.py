"""`SessionRead`: what a turn reads of its session before the graph runs."""

from __future__ import annotations

import asyncio

from ..store import ChatSession, ProjectStore


class SessionRead:
    """What a turn reads of its session before the graph runs, started as soon as the
    session id is known (the server starts it alongside its GNS3 project check): the
    `chat_sessions` row and the latest checkpoint (`ProjectSaver.prefetch`, taken by the
    graph's own read when the run starts). Made by `TurnEngine.read_session`; the turn
    it is handed to owns it; `close()` it if no turn follows.
    """

    def __init__(self, store: ProjectStore, session_id: str, *, new: bool) -> None:
        self.store = store
        self.session_id = session_id
        self.new = new
        """The session id was just made up: no row or checkpoint to read."""
        self._checkpoint = store.checkpointer.prefetch(session_id, new=new)
        self._row: asyncio.Future[ChatSession | None] | None = (
            None if new else asyncio.ensure_future(store.sessions.get_session_by_thread(session_id))
        )

    async def row(self) -> ChatSession | None:
        """The session's row, whoever owns it (None: no such session yet)."""
        return None if self._row is None else await asyncio.shield(self._row)

    def close(self) -> None:
        """Stop the reads still running and drop the prefetched checkpoint."""
        if self._row is not None:
            if not self._row.done():
                self._row.cancel()
            elif not self._row.cancelled():
                self._row.exception()  # read: a failure was reported where awaited
        self.store.checkpointer.forget(self.session_id, self._checkpoint)
