"""`store.checkpoints.ProjectSaver`: a thread's latest checkpoint read ahead of a run, on
real SQLite files (a plain sqlite3 connection stands for another process)."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from support.store import PROJECT, run_turn

from jupyter_gns3_copilot.store import ProjectStore


def latest(thread_id: str) -> dict[str, Any]:
    """The config LangGraph reads a run's starting checkpoint with."""
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def message_count(checkpoint_tuple: Any) -> int:
    return len(checkpoint_tuple.checkpoint["channel_values"]["messages"])


async def test_the_next_read_takes_the_prefetched_checkpoint_once(tmp_path: Path) -> None:
    """Given a thread with one turn, prefetched; when another process then deletes its
    checkpoints and the saver is asked twice; then the first answer is the prefetched
    checkpoint (no second query, so the change is not seen: the documented limit) and
    the second reads the database again."""
    thread = str(uuid.uuid4())
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        await run_turn(store, thread)
        prefetched = await store.checkpointer.prefetch(thread)
        with sqlite3.connect(store.path) as other:
            other.execute("DELETE FROM checkpoints WHERE thread_id = ?", (thread,))
        first = await store.checkpointer.aget_tuple(latest(thread))
        assert first is prefetched
        assert first is not None and message_count(first) == 2
        assert await store.checkpointer.aget_tuple(latest(thread)) is None


async def test_a_write_after_the_prefetch_makes_the_read_fresh(tmp_path: Path) -> None:
    """Given a prefetched thread; when something is written to it through the saver
    before the next run starts (a pending write; a deletion); then the run's read sees
    it, not the prefetched checkpoint. Another thread's writes change nothing."""
    thread, other = str(uuid.uuid4()), str(uuid.uuid4())
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        saver = store.checkpointer
        await run_turn(store, thread, "one")
        stale = await saver.prefetch(thread)
        assert stale is not None and not stale.pending_writes
        await saver.aput_writes(stale.config, [("messages", [HumanMessage("late")])], "t1")
        fresh = await saver.aget_tuple(latest(thread))
        assert fresh is not stale
        assert fresh is not None and [w[1] for w in fresh.pending_writes] == ["messages"]

        prefetched = await saver.prefetch(thread)
        await run_turn(store, other, "elsewhere")
        assert await saver.aget_tuple(latest(thread)) is prefetched

        await saver.prefetch(thread)
        await store.sessions.create_session(thread, "u1")
        await store.sessions.delete_session(thread)  # its checkpoints too
        assert await saver.aget_tuple(latest(thread)) is None


async def test_a_new_thread_reads_nothing_and_forget_drops_a_prefetch(tmp_path: Path) -> None:
    """A made-up thread id (`new`) answers None without a query; a prefetch forgotten
    (its turn was refused) leaves the next read to the database; a run after a prefetch
    continues the thread's history."""
    thread = str(uuid.uuid4())
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        store.checkpointer.prefetch(thread, new=True)
        assert await store.checkpointer.aget_tuple(latest(thread)) is None
        await run_turn(store, thread)
        store.checkpointer.prefetch(thread, new=True)
        store.checkpointer.forget(thread)
        read = await store.checkpointer.aget_tuple(latest(thread))
        assert read is not None and message_count(read) == 2
        store.checkpointer.prefetch(thread)
        await run_turn(store, thread, "again")
        after = await store.checkpointer.aget_tuple(latest(thread))
        assert after is not None and message_count(after) == 4


async def test_forgetting_an_earlier_prefetch_keeps_a_later_one(tmp_path: Path) -> None:
    """A turn ending after the next request on its session prefetched drops only its
    own prefetch: the later request's is still taken."""
    thread = str(uuid.uuid4())
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        await run_turn(store, thread)
        earlier = store.checkpointer.prefetch(thread)
        later = store.checkpointer.prefetch(thread)
        store.checkpointer.forget(thread, earlier)
        assert await store.checkpointer.aget_tuple(latest(thread)) is await later


async def test_each_read_and_write_is_one_hand_over_to_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given a store whose connection counts what it hands to its worker thread; when a
    turn runs (checkpoints and pending writes) and a session is made, updated and read;
    then each call of the saver and of the repository was one hand-over, and LangGraph's
    own asynchronous saver reads back exactly what the turn stored."""
    thread = str(uuid.uuid4())
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        saver = store.checkpointer
        handed: list[object] = []
        queue = saver.conn._execute

        async def counted(work: Any, *args: Any, **kwargs: Any) -> Any:
            handed.append(work)
            return await queue(work, *args, **kwargs)

        monkeypatch.setattr(saver.conn, "_execute", counted)
        calls: list[str] = []
        for name in ("aget_tuple", "aput", "aput_writes"):
            method = getattr(saver, name)

            def spy(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
                calls.append(_name)
                return _method(*args, **kwargs)

            monkeypatch.setattr(saver, name, spy)

        await run_turn(store, thread)
        assert {"aget_tuple", "aput", "aput_writes"} <= set(calls)
        assert len(handed) == len(calls)

        handed.clear()
        await store.sessions.create_session(thread, "u1")  # the insert, then its row
        await store.sessions.update_session(thread, title="Ping R1")
        session = await store.sessions.get_session_by_thread(thread)
        assert session is not None and session.title == "Ping R1"
        assert len(handed) == 4

        ours = await saver.aget_tuple(latest(thread))
        langgraphs = await AsyncSqliteSaver(saver.conn).aget_tuple(latest(thread))
        assert ours is not None and langgraphs is not None
        assert ours.config == langgraphs.config
        assert ours.checkpoint == langgraphs.checkpoint
        assert ours.metadata == langgraphs.metadata
        assert ours.pending_writes == langgraphs.pending_writes
        assert message_count(ours) == 2
