"""The `chat_sessions` table and its migrations.

The LangGraph checkpointer creates and migrates its own `checkpoints` and `writes`
tables; this module owns only `chat_sessions`. Migrations are additive and idempotent:
missing columns are found with `PRAGMA table_info` and added, then indexes are created.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

import aiosqlite

log = logging.getLogger(__name__)

CREATE_CHAT_SESSIONS = """
CREATE TABLE IF NOT EXISTS chat_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    title TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    llm_calls_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    last_message_at TIMESTAMP,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    metadata TEXT,
    stats TEXT,
    pinned BOOLEAN DEFAULT FALSE
)
"""

CREATE_INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_thread_id ON chat_sessions(thread_id)",
    "CREATE INDEX IF NOT EXISTS idx_user_project ON chat_sessions(user_id, project_id)",
)
# Created only once the `pinned` column is guaranteed to exist.
CREATE_PINNED_INDEX = (
    "CREATE INDEX IF NOT EXISTS idx_pinned_updated ON chat_sessions(pinned DESC, updated_at DESC)"
)


async def table_columns(conn: aiosqlite.Connection, table: str) -> list[str]:
    """Column names of `table`, in order (empty if it does not exist)."""
    async with conn.execute(f"PRAGMA table_info({table})") as cursor:
        return [row[1] for row in await cursor.fetchall()]


Columns = Sequence[tuple[str, str]]
"""A table's columns as (name, SQL definition)."""


async def ensure_tables(
    conn: aiosqlite.Connection,
    tables: Mapping[str, tuple[Columns, str]],
    indexes: Iterable[str] = (),
) -> None:
    """Create each table (`name: (columns, constraints)`, the constraints SQL appended
    after the columns), or add the columns an older version of it lacks; then run the
    `CREATE INDEX IF NOT EXISTS` statements; commits."""
    for table, (columns, constraints) in tables.items():
        definition = ", ".join(f"{name} {ddl}" for name, ddl in columns)
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({definition}{constraints})")
        present = set(await table_columns(conn, table))
        for name, ddl in columns:
            if name not in present:
                await conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {ddl}")
    for statement in indexes:
        await conn.execute(statement)
    await conn.commit()


async def ensure_chat_sessions_schema(conn: aiosqlite.Connection) -> None:
    """Create `chat_sessions` with its indexes, or upgrade an older one; commits."""
    await conn.execute(CREATE_CHAT_SESSIONS)
    for statement in CREATE_INDEXES:
        await conn.execute(statement)
    if "pinned" not in await table_columns(conn, "chat_sessions"):
        log.debug("Adding pinned column to existing chat_sessions table")
        await conn.execute("ALTER TABLE chat_sessions ADD COLUMN pinned BOOLEAN DEFAULT FALSE")
    await conn.execute(CREATE_PINNED_INDEX)
    await conn.commit()
