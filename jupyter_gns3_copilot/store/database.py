"""One project's database: `<data_dir>/projects/<project_id>/copilot_checkpoints.db`.

It holds the LangGraph checkpointer's tables (`checkpoints`, `writes`) and `chat_sessions`.
`ProjectStore.open()` makes one aiosqlite connection in WAL mode and shares it between the
checkpointer (`checkpoints.ProjectSaver`, LangGraph's `AsyncSqliteSaver` that can read a
thread's latest checkpoint ahead of a run) and the sessions repository. aiosqlite runs a
connection's statements one at a time on its own thread, and every write transaction (the
saver's and the repository's) holds the saver's lock until it commits, so any number of
sessions of one project can stream at once without "database is locked". `busy_timeout`
covers a second process (another Jupyter server on the same data directory).

Close the store when done (`close()` waits for writes in progress). A host that exits
without closing it (jupyter_server ends on an interrupt without running its extensions'
cleanup) is not held up: the connection's worker thread is a daemon thread, and SQLite
rolls back a transaction left unfinished, as after a crash.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import aiosqlite

from .errors import InvalidProjectId
from .schema import ensure_chat_sessions_schema
from .sessions import ChatSessionsRepository

if TYPE_CHECKING:
    from .checkpoints import ProjectSaver

log = logging.getLogger(__name__)
_T = TypeVar("_T")

DATABASE_NAME = "copilot_checkpoints.db"
BUSY_TIMEOUT_SECONDS = 10.0
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def validate_project_id(project_id: str) -> str:
    """The project id in canonical (lowercase) UUID form; InvalidProjectId otherwise.

    Only a UUID is accepted, so the id is always a safe single directory name.
    """
    canonical = project_id.strip().lower() if isinstance(project_id, str) else ""
    if not _UUID.fullmatch(canonical):
        raise InvalidProjectId(
            f"Invalid project id {project_id!r}: expected a GNS3 project UUID such as "
            "'a0f46d81-e564-443c-b321-2cdebe80e321'."
        )
    return canonical


def project_dir(data_dir: str | Path, project_id: str) -> Path:
    """`<data_dir>/projects/<project_id>` for a validated project id."""
    return Path(data_dir).expanduser() / "projects" / validate_project_id(project_id)


def database_path(data_dir: str | Path, project_id: str) -> Path:
    """`<data_dir>/projects/<project_id>/copilot_checkpoints.db`."""
    return project_dir(data_dir, project_id) / DATABASE_NAME


class ProjectStore:
    """An open project database: `.checkpointer` for LangGraph, `.sessions` for chat_sessions.

    Create it with `await ProjectStore.open(data_dir, project_id)` inside a running event
    loop (the saver binds to it); use it as an async context manager or call `close()`.
    """

    def __init__(
        self,
        project_id: str,
        path: Path,
        conn: aiosqlite.Connection,
        checkpointer: ProjectSaver,
    ) -> None:
        self.project_id = project_id
        self.path = path
        self.checkpointer = checkpointer
        self.sessions = ChatSessionsRepository(
            conn, checkpointer.lock, project_id, checkpointer.adelete_thread
        )
        self._conn = conn
        self._closed = False

    @classmethod
    async def open(
        cls,
        data_dir: str | Path,
        project_id: str,
        *,
        busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    ) -> ProjectStore:
        """Open (creating or migrating as needed) the project's database."""
        from .checkpoints import ProjectSaver

        project_id = validate_project_id(project_id)
        path = database_path(data_dir, project_id)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        conn = await connect_wal(path, busy_timeout)
        try:
            checkpointer = ProjectSaver(conn)
            await checkpointer.setup()
            async with checkpointer.lock:
                await ensure_chat_sessions_schema(conn)
        except BaseException:
            await conn.close()
            raise
        return cls(project_id, path, conn, checkpointer)

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    async def close(self) -> None:
        """Close the connection (idempotent); waits for writes in progress."""
        if self._closed:
            return
        self._closed = True
        async with self.checkpointer.lock:
            await self._conn.close()

    async def destroy(self) -> None:
        """Close, then delete the project's database files (for project deletion)."""
        await self.close()
        shutil.rmtree(self.path.parent, ignore_errors=True)

    async def __aenter__(self) -> ProjectStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


async def connect_wal(
    path: Path, busy_timeout: float = BUSY_TIMEOUT_SECONDS
) -> aiosqlite.Connection:
    """An aiosqlite connection to `path` in WAL mode (`synchronous = NORMAL`), waiting up to
    `busy_timeout` seconds for another process's lock, on a daemon worker thread."""
    conn = await _daemon_connection(aiosqlite.connect(path, timeout=busy_timeout))
    try:
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        async with conn.execute("PRAGMA journal_mode = WAL") as cursor:
            row = await cursor.fetchone()
        if not row or str(row[0]).lower() != "wal":
            log.warning(
                "%s could not switch to WAL mode (journal_mode=%s); concurrent writers "
                "will wait on each other more",
                path,
                row[0] if row else None,
            )
        await conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        await conn.close()
        raise
    return conn


async def open_private_database(
    path: Path, prepare: Callable[[aiosqlite.Connection], Awaitable[_T]]
) -> tuple[aiosqlite.Connection, _T]:
    """A `connect_wal` connection to `path` (its directory made, private, when missing)
    once `prepare(conn)` (tables, migrations, first reads) is done, with what it returned;
    the connection is closed again when `prepare` fails (the hub service's stores)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = await connect_wal(path)
    try:
        return conn, await prepare(conn)
    except BaseException:
        await conn.close()
        raise


def _daemon_connection(conn: aiosqlite.Connection) -> aiosqlite.Connection:
    """`conn` (not yet started) with a daemon worker thread.

    aiosqlite starts a non-daemon thread per connection; one never closed keeps the
    interpreter waiting forever at exit. aiosqlite offers no option for this, so the
    thread object it made is marked before it starts (left as is if that ever changes).
    """
    thread = getattr(conn, "_thread", None)
    if isinstance(thread, threading.Thread) and not thread.is_alive():
        thread.daemon = True
    return conn
