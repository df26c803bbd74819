"""The project's LangGraph checkpointer: LangGraph's SQLite saver that can read a
thread's latest checkpoint ahead of time.

A chat turn starts by checking with GNS3 that the project is open (one round trip of
10-20 ms); `prefetch(thread_id)` reads the session's latest checkpoint meanwhile, and the
graph's own read of it at the start of the run (`aget_tuple` without a checkpoint id)
then takes the prefetched result instead of querying again. A prefetched result is used
once, and only if nothing was written to that thread through this saver since the
prefetch began (a write of the thread's previous turn still finishing, a deletion):
otherwise the checkpoint is read again, as it would be without prefetching. Writes are
untouched: every step is still committed before the next one runs.

Each read and write of a checkpoint is one hand-over to the connection's worker thread
(`worker_thread.run_on_worker`): LangGraph's synchronous `SqliteSaver`, on the same
sqlite3 connection there, runs the statements, the fetch and the commit that the
asynchronous saver hands over one by one (three to six thread switches each, about 50 of
them in a one-tool turn). Same SQL, same serializer, same tables.

Loaded only where LangGraph is (`ProjectStore.open`).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from .worker_thread import run_on_worker

_Prefetched = tuple[int, "asyncio.Future[CheckpointTuple | None]"]


class ProjectSaver(AsyncSqliteSaver):
    """`AsyncSqliteSaver` plus `prefetch` / `forget` of a thread's latest checkpoint, with
    a checkpoint's read, write, pending writes and a thread's deletion each one hand-over
    to the connection's worker thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writes: dict[str, int] = {}
        """Writes (checkpoints, pending writes, deletions) per thread through this saver."""
        self._prefetched: dict[str, _Prefetched] = {}
        self._on_worker: SqliteSaver | None = None

    def _sqlite(self, connection: sqlite3.Connection) -> SqliteSaver:
        """The synchronous saver on the worker thread's sqlite3 connection (made there at
        first use, on the tables `setup()` made)."""
        if self._on_worker is None:
            saver = SqliteSaver(connection, serde=self.serde)
            saver.is_setup = True
            saver._has_task_path = self._has_task_path
            self._on_worker = saver
        return self._on_worker

    async def _read(self, config: RunnableConfig) -> CheckpointTuple | None:
        await self.setup()
        async with self.lock:
            return await run_on_worker(
                self.conn, lambda connection: self._sqlite(connection).get_tuple(config)
            )

    def prefetch(
        self, thread_id: str, *, new: bool = False
    ) -> asyncio.Future[CheckpointTuple | None]:
        """Start reading the thread's latest checkpoint for the next run on it (returned:
        the read); `new`: the thread id was just made up (a new session), so it has none
        and nothing is read."""
        self.forget(thread_id)
        if new:
            empty: asyncio.Future[CheckpointTuple | None] = (
                asyncio.get_running_loop().create_future()
            )
            empty.set_result(None)
            reading = empty
        else:
            reading = asyncio.ensure_future(self._read(_latest(thread_id)))
        self._prefetched[thread_id] = (self._writes.get(thread_id, 0), reading)
        return reading

    def forget(
        self, thread_id: str, read: asyncio.Future[CheckpointTuple | None] | None = None
    ) -> None:
        """Drop the thread's prefetched checkpoint, if any (its turn was refused or is
        over); with `read` (what `prefetch` returned), only if it is that one, not a
        later request's."""
        prefetched = self._prefetched.get(thread_id)
        if prefetched is None or (read is not None and prefetched[1] is not read):
            return
        del self._prefetched[thread_id]
        if not prefetched[1].done():
            prefetched[1].cancel()

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config.get("configurable", {})
        thread_id = str(configurable.get("thread_id", ""))
        prefetched = self._prefetched.pop(thread_id, None)
        latest = not configurable.get("checkpoint_id") and not configurable.get("checkpoint_ns")
        if prefetched is not None and latest:
            writes, reading = prefetched
            if writes == self._writes.get(thread_id, 0) and not reading.cancelled():
                try:
                    return await asyncio.shield(reading)
                except Exception:
                    pass  # read again below: a failure is reported by the real read
        elif prefetched is not None and not prefetched[1].done():
            prefetched[1].cancel()
        return await self._read(config)

    def _wrote(self, thread_id: object) -> None:
        # Counted when the write has ended: a prefetch begun while it was in progress
        # may have read what was there before.
        key = str(thread_id)
        self._writes[key] = self._writes.get(key, 0) + 1

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self.setup()
        try:
            async with self.lock:
                return await run_on_worker(
                    self.conn,
                    lambda connection: self._sqlite(connection).put(
                        config, checkpoint, metadata, new_versions
                    ),
                )
        finally:
            self._wrote(config["configurable"]["thread_id"])

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.setup()
        try:
            async with self.lock:
                await run_on_worker(
                    self.conn,
                    lambda connection: self._sqlite(connection).put_writes(
                        config, writes, task_id, task_path
                    ),
                )
        finally:
            self._wrote(config["configurable"]["thread_id"])

    async def adelete_thread(self, thread_id: str) -> None:
        self.forget(str(thread_id))
        await self.setup()
        try:
            async with self.lock:
                await run_on_worker(
                    self.conn,
                    lambda connection: self._sqlite(connection).delete_thread(thread_id),
                )
        finally:
            self._wrote(thread_id)


def _latest(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
