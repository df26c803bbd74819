"""Store (chat sessions and checkpoints) on real SQLite files and a real AsyncSqliteSaver."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import uuid
from pathlib import Path

import pytest
from support.store import PROJECT, echo_graph, run_turn

from jupyter_gns3_copilot.store import (
    DATABASE_NAME,
    InvalidProjectId,
    InvalidTitle,
    ProjectStore,
    SecretInMetadata,
    SessionExists,
    StatsDelta,
    TurnCounters,
    database_path,
    validate_project_id,
)


def rows(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Read with a separate plain sqlite3 connection, as another process would."""
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


def thread_rows(path: Path, thread_id: str) -> tuple[int, int]:
    checkpoints = rows(path, "SELECT count(*) FROM checkpoints WHERE thread_id = ?", thread_id)
    writes = rows(path, "SELECT count(*) FROM writes WHERE thread_id = ?", thread_id)
    return int(checkpoints[0][0]), int(writes[0][0])  # type: ignore[call-overload]


# --- opening ------------------------------------------------------------------------------


async def test_open_creates_the_database_with_wal_tables_and_indexes(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT.upper()) as store:
        assert store.path == tmp_path / "projects" / PROJECT / DATABASE_NAME
        assert store.path == database_path(tmp_path, PROJECT)
        assert store.project_id == PROJECT
    tables = {r[0] for r in rows(store.path, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"checkpoints", "writes", "chat_sessions"} <= tables
    assert rows(store.path, "PRAGMA journal_mode") == [("wal",)]
    indexes = {r[1]: r[2] for r in rows(store.path, "PRAGMA index_list(chat_sessions)")}
    assert indexes["idx_thread_id"] == 1  # unique
    assert {"idx_user_project", "idx_pinned_updated"} <= indexes.keys()
    columns = [r[1] for r in rows(store.path, "PRAGMA table_info(chat_sessions)")]
    assert columns == [
        "id",
        "thread_id",
        "user_id",
        "project_id",
        "title",
        "message_count",
        "llm_calls_count",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "last_message_at",
        "created_at",
        "updated_at",
        "metadata",
        "stats",
        "pinned",
    ]


@pytest.mark.parametrize(
    "bad", ["", "..", "../etc", "a0f46d81/e564", "not-a-uuid", PROJECT + "/x", f" {PROJECT}x"]
)
def test_project_id_must_be_a_uuid(bad: str) -> None:
    with pytest.raises(InvalidProjectId, match="expected a GNS3 project UUID"):
        validate_project_id(bad)


async def test_an_old_table_without_pinned_is_migrated(tmp_path: Path) -> None:
    path = database_path(tmp_path, PROJECT)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE chat_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, thread_id TEXT, "
            "user_id TEXT, project_id TEXT, title TEXT, message_count INTEGER DEFAULT 0, "
            "llm_calls_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0, "
            "output_tokens INTEGER DEFAULT 0, total_tokens INTEGER DEFAULT 0, "
            "last_message_at TIMESTAMP, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, "
            "updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, metadata TEXT, stats TEXT)"
        )
        conn.execute(
            "INSERT INTO chat_sessions (thread_id, user_id, project_id, title) "
            "VALUES ('old', 'alice', ?, 'Before pins')",
            (PROJECT,),
        )
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        old = await store.sessions.get_session_by_thread("old")
        assert old is not None and old.title == "Before pins" and old.pinned is False
        assert old.metadata == {} and old.created_at is not None
        pinned = await store.sessions.pin_session("old", user_id="alice")
        assert pinned is not None and pinned.pinned
    assert "pinned" in [r[1] for r in rows(path, "PRAGMA table_info(chat_sessions)")]
    assert "idx_pinned_updated" in {r[1] for r in rows(path, "PRAGMA index_list(chat_sessions)")}
    # Opening again is a no-op.
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        assert len(await store.sessions.list_sessions()) == 1


async def test_close_is_idempotent_and_stops_the_connection_thread(tmp_path: Path) -> None:
    threads_before = set(threading.enumerate())
    store = await ProjectStore.open(tmp_path, PROJECT)
    # Other tests' threads may come and go meanwhile: look at the ones this store started.
    [worker] = [
        thread
        for thread in threading.enumerate()
        if thread not in threads_before and "_connection_worker_thread" in thread.name
    ]
    assert worker.daemon
    await store.close()
    await store.close()
    assert store.closed
    worker.join(timeout=5)
    assert not worker.is_alive()


async def test_destroy_removes_the_project_files(tmp_path: Path) -> None:
    store = await ProjectStore.open(tmp_path, PROJECT)
    await run_turn(store, "t1")
    await store.destroy()
    assert not (tmp_path / "projects" / PROJECT).exists()


# --- sessions -------------------------------------------------------------------------------


async def test_create_get_and_duplicate(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        created = await store.sessions.create_session(
            "t1", "alice", metadata={"mode": "teaching_assistant"}
        )
        assert created.thread_id == "t1" and created.user_id == "alice"
        assert created.project_id == PROJECT and created.title is None
        assert created.message_count == 0 and created.pinned is False
        assert created.metadata == {"mode": "teaching_assistant"} and created.stats == {}
        assert created.created_at == created.updated_at
        assert created.created_at is not None and created.created_at.tzinfo is not None
        assert await store.sessions.get_session_by_thread("t1", "alice") == created
        assert await store.sessions.get_session_by_thread("t1", "bob") is None
        assert await store.sessions.get_session_by_thread("nope") is None
        with pytest.raises(SessionExists):
            await store.sessions.create_session("t1", "bob")


async def test_list_is_pinned_first_then_most_recently_updated(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        repo = store.sessions
        for thread_id in ("s1", "s2", "s3", "s4"):
            await repo.create_session(thread_id, "alice")
        await repo.create_session("other", "bob")
        await repo.add_stats("s1", StatsDelta(messages=2))  # s1 becomes the most recent
        await repo.pin_session("s3")
        await repo.pin_session("s2")
        assert [s.thread_id for s in await repo.list_sessions("alice")] == ["s2", "s3", "s1", "s4"]
        assert [s.thread_id for s in await repo.list_sessions("alice", limit=2)] == ["s2", "s3"]
        assert [s.thread_id for s in await repo.list_sessions("alice", limit=2, offset=2)] == [
            "s1",
            "s4",
        ]
        await repo.pin_session("s2", False)
        assert [s.thread_id for s in await repo.list_sessions("alice")] == ["s3", "s2", "s1", "s4"]
        assert [s.thread_id for s in await repo.list_sessions("bob")] == ["other"]
        assert len(await repo.list_sessions()) == 5


async def test_rename_validates_and_respects_the_owner(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        repo = store.sessions
        await repo.create_session("t1", "alice")
        renamed = await repo.rename_session("t1", "  OSPF troubleshooting  ", user_id="alice")
        assert renamed is not None and renamed.title == "OSPF troubleshooting"
        assert await repo.rename_session("t1", "Mine now", user_id="bob") is None
        assert await repo.pin_session("t1", user_id="bob") is None
        assert await repo.rename_session("missing", "x") is None
        for bad in ("", "   ", "x" * 256):
            with pytest.raises(InvalidTitle):
                await repo.rename_session("t1", bad)
        assert (await repo.rename_session("t1", "x" * 255)) is not None
        session = await repo.get_session_by_thread("t1")
        assert session is not None and session.title == "x" * 255


async def test_metadata_and_stats_merge_and_refuse_secrets(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        repo = store.sessions
        await repo.create_session("t1", "alice", metadata={"mode": "teaching_assistant"})
        await repo.update_session("t1", metadata={"status": "ok"}, stats={"tool_calls": 2})
        await repo.update_session("t1", stats={"tool_calls": 3, "aborts": 1})
        session = await repo.get_session_by_thread("t1")
        assert session is not None
        assert session.metadata == {"mode": "teaching_assistant", "status": "ok"}
        assert session.stats == {"tool_calls": 3, "aborts": 1}
        for secret in ({"api_key": "sk-x"}, {"llm": {"Api-Key": "sk-x"}}, {"gns3_password": "p"}):
            with pytest.raises(SecretInMetadata):
                await repo.update_session("t1", metadata=secret)
        with pytest.raises(SecretInMetadata):
            await repo.create_session("t2", "alice", metadata={"jwt": "eyJ"})
        await repo.update_session("t1", metadata={"max_tokens": 100})  # not a credential
    assert b"sk-x" not in store.path.read_bytes()


async def test_delete_removes_the_row_checkpoints_and_writes(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        repo = store.sessions
        for thread_id in ("gone", "kept"):
            await repo.create_session(thread_id, "alice")
            await run_turn(store, thread_id)
            await run_turn(store, thread_id, "again")
        before = thread_rows(store.path, "gone")
        assert before[0] > 0 and before[1] > 0

        assert await repo.delete_session("gone", user_id="bob") is False
        assert thread_rows(store.path, "gone") == before

        assert await repo.delete_session("gone", user_id="alice") is True
        assert thread_rows(store.path, "gone") == (0, 0)
        assert await repo.get_session_by_thread("gone") is None
        assert thread_rows(store.path, "kept") == before
        assert await store.checkpointer.aget_tuple({"configurable": {"thread_id": "gone"}}) is None
        state = await echo_graph(store).aget_state({"configurable": {"thread_id": "kept"}})
        assert len(state.values["messages"]) == 4


async def test_delete_all_removes_every_session_and_thread(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        for thread_id in ("a", "b"):
            await store.sessions.create_session(thread_id, "alice")
            await run_turn(store, thread_id)
        await run_turn(store, "orphan")  # checkpointed, no session row
        assert await store.sessions.delete_all_sessions() == 2
    assert rows(store.path, "SELECT count(*) FROM chat_sessions") == [(0,)]
    assert rows(store.path, "SELECT count(*) FROM checkpoints") == [(0,)]
    assert rows(store.path, "SELECT count(*) FROM writes") == [(0,)]


# --- statistics -------------------------------------------------------------------------------


async def test_increments_add_up_and_total_is_input_plus_output(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        repo = store.sessions
        await repo.create_session("t1", "alice")
        await repo.add_stats("t1", StatsDelta(llm_calls=1, input_tokens=100, output_tokens=7))
        session = await repo.get_session_by_thread("t1")
        assert session is not None and session.last_message_at is None  # no message yet
        await repo.add_stats("t1", StatsDelta(messages=3, llm_calls=1, input_tokens=50))
        session = await repo.get_session_by_thread("t1")
        assert session is not None
        assert (session.message_count, session.llm_calls_count) == (3, 2)
        assert (session.input_tokens, session.output_tokens, session.total_tokens) == (150, 7, 157)
        assert session.last_message_at == session.updated_at
        assert await repo.add_stats("missing", StatsDelta(messages=1)) is False


def test_turn_stats_count_model_calls_tools_and_tokens() -> None:
    stats = TurnCounters()
    stats.user_message()
    stats.model_started("llm_call")
    stats.model_finished("llm_call", {"input_tokens": 100, "output_tokens": 20})
    stats.tool_finished()
    stats.tool_finished()
    stats.model_started("llm_call")
    stats.model_finished("llm_call", {"prompt_tokens": 180, "completion_tokens": 40})
    stats.model_started("title_generator_node")
    stats.model_finished("title_generator_node", {"input_tokens": 999, "output_tokens": 9})
    stats.model_started("llm_call")
    stats.model_finished("llm_call", None)  # a model that reports no usage
    # user + one AI reply for the turn + two tool results; the title node counts for nothing.
    assert stats.totals == StatsDelta(messages=4, llm_calls=3, input_tokens=280, output_tokens=60)


async def test_turn_stats_flush_saves_only_what_is_new(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        await store.sessions.create_session("t1", "alice")
        stats = TurnCounters()
        stats.user_message()
        stats.model_started("llm_call")
        await stats.flush(store.sessions, "t1")
        await stats.flush(store.sessions, "t1")  # nothing new
        stats.model_finished("llm_call", {"input_tokens": 10, "output_tokens": 5})
        await stats.flush(store.sessions, "t1")
        assert stats.pending.is_empty
        session = await store.sessions.get_session_by_thread("t1")
        assert session is not None
        assert (session.message_count, session.llm_calls_count, session.total_tokens) == (2, 1, 15)


async def test_stats_are_saved_when_the_reader_stops_midway(tmp_path: Path) -> None:
    """A stream that flushes as it goes, read for two events and then closed."""
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        await store.sessions.create_session("t1", "alice")

        async def stream():  # type: ignore[no-untyped-def]
            stats = TurnCounters()
            stats.user_message()
            try:
                for _ in range(5):
                    stats.model_started("llm_call")
                    stats.model_finished("llm_call", {"input_tokens": 10, "output_tokens": 1})
                    await stats.flush(store.sessions, "t1")
                    yield "event"
                    stats.tool_finished()
            finally:
                await stats.flush(store.sessions, "t1")

        events = stream()
        assert [await anext(events), await anext(events)] == ["event", "event"]
        await events.aclose()
        session = await store.sessions.get_session_by_thread("t1")
        assert session is not None
        assert (session.llm_calls_count, session.input_tokens) == (2, 20)
        assert session.message_count == 1 + 1 + 1  # user, AI reply, the one tool result


async def test_a_cancelled_flush_still_writes_once(tmp_path: Path) -> None:
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        await store.sessions.create_session("t1", "alice")
        stats = TurnCounters()
        stats.model_started("llm_call")
        task = asyncio.ensure_future(stats.flush(store.sessions, "t1"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await stats.flush(store.sessions, "t1")
        for _ in range(100):  # the shielded write finishes in the background
            session = await store.sessions.get_session_by_thread("t1")
            assert session is not None
            if session.llm_calls_count:
                break
            await asyncio.sleep(0.01)
        assert session.llm_calls_count == 1


# --- concurrency --------------------------------------------------------------------------------


async def test_twenty_concurrent_sessions_stream_without_locking(tmp_path: Path) -> None:
    """20 sessions each checkpoint turns and add statistics at the same time."""
    async with await ProjectStore.open(tmp_path, PROJECT) as store:
        repo = store.sessions
        thread_ids = [f"t{i}" for i in range(20)]
        for thread_id in thread_ids:
            await repo.create_session(thread_id, "alice")

        async def chat(thread_id: str) -> None:
            for turn in range(3):
                await run_turn(store, thread_id, f"turn {turn}")
                for _ in range(5):
                    await repo.add_stats(
                        thread_id, StatsDelta(messages=1, llm_calls=1, input_tokens=3)
                    )

        await asyncio.gather(*(chat(t) for t in thread_ids))
        for session in await repo.list_sessions("alice"):
            assert (session.message_count, session.llm_calls_count) == (15, 15)
            assert session.total_tokens == 45
        counts = rows(store.path, "SELECT count(DISTINCT thread_id) FROM checkpoints")
        assert counts == [(20,)]


async def test_two_connections_to_one_project_wait_instead_of_failing(tmp_path: Path) -> None:
    """Two stores on the same file (e.g. two servers): busy_timeout serialises them."""
    first = await ProjectStore.open(tmp_path, PROJECT)
    second = await ProjectStore.open(tmp_path, PROJECT)
    try:
        await first.sessions.create_session("shared", "alice")

        async def writer(store: ProjectStore, index: int) -> None:
            for turn in range(3):
                await run_turn(store, f"{index}", f"turn {turn}")
                await store.sessions.add_stats("shared", StatsDelta(messages=1, output_tokens=2))

        await asyncio.gather(*(writer((first, second)[i % 2], i) for i in range(20)))
        session = await second.sessions.get_session_by_thread("shared")
        assert session is not None
        assert (session.message_count, session.total_tokens) == (60, 120)
    finally:
        await first.close()
        await second.close()


async def test_project_ids_get_separate_databases(tmp_path: Path) -> None:
    other = str(uuid.uuid4())
    async with (
        await ProjectStore.open(tmp_path, PROJECT) as one,
        await ProjectStore.open(tmp_path, other) as two,
    ):
        await one.sessions.create_session("t1", "alice")
        assert await two.sessions.get_session_by_thread("t1") is None
        assert one.path != two.path


UNCLOSED_STORE = """
import asyncio, sys
from jupyter_gns3_copilot.store import ProjectStore

async def main():
    store = await ProjectStore.open(sys.argv[1], sys.argv[2])
    await store.sessions.create_session("s1", "u1")
    # Like jupyter_server ending on an interrupt: the loop stops, nothing is closed.
    asyncio.get_running_loop().stop()

loop = asyncio.new_event_loop()
loop.create_task(main())
loop.run_forever()
print("exiting")
"""


def test_a_store_never_closed_does_not_keep_the_process_alive(tmp_path: Path) -> None:
    """Given a process whose loop ends with a store still open; then it exits (an aiosqlite
    worker thread used to keep it waiting forever) and the committed row is on disk."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", UNCLOSED_STORE, str(tmp_path), PROJECT],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "exiting", done.stderr
    path = database_path(tmp_path, PROJECT)
    assert rows(path, "SELECT thread_id, user_id FROM chat_sessions") == [("s1", "u1")]
