"""Where each student is in a project's lab, kept in the project's database (the file
`ProjectStore` opens): their latest result per objective, the stage they chose and their
latest troubleshooting exercise.

Three tables: `lab_results` (one row per user and objective: the result as JSON, as the
caller serializes it, and when it was recorded), `lab_stages` (one row per user who
chose a stage) and `lab_exercises` (one row per user: their latest exercise as JSON).
This module stores text; `objectives.progress` says what it means.

Each project has its own connection (WAL, `busy_timeout`: the project's chat store may
write the same file), opened on first use. Every read and write is one hand-over to the
connection's thread (`worker_thread.run_on_worker`), committed before it returns.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiosqlite

from .database import database_path, open_private_database, validate_project_id
from .schema import ensure_tables
from .worker_thread import run_on_worker

_TABLES = {
    "lab_results": (
        (
            ("user_id", "TEXT NOT NULL"),
            ("objective_id", "TEXT NOT NULL"),
            ("result", "TEXT NOT NULL"),
            ("recorded_at", "TIMESTAMP DEFAULT CURRENT_TIMESTAMP"),
        ),
        ", PRIMARY KEY (user_id, objective_id)",
    ),
    "lab_stages": (
        (("user_id", "TEXT NOT NULL PRIMARY KEY"), ("stage", "TEXT NOT NULL")),
        "",
    ),
    "lab_exercises": (
        (("user_id", "TEXT NOT NULL PRIMARY KEY"), ("exercise", "TEXT NOT NULL")),
        "",
    ),
}


@dataclass
class SavedProgress:
    """A project's stored progress: each user's results (objective id -> JSON text),
    chosen stage and latest exercise (JSON text)."""

    results: dict[str, dict[str, str]] = field(default_factory=dict)
    chosen: dict[str, str] = field(default_factory=dict)
    exercises: dict[str, str] = field(default_factory=dict)


class LabProgressStore:
    """The lab progress of the projects under `data_dir` (module docstring). Close it
    when done (`close()`); `close_project` before the project's folder is deleted."""

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir).expanduser()
        self._conns: dict[str, aiosqlite.Connection] = {}
        self._lock = asyncio.Lock()

    async def load(self, project_id: str) -> SavedProgress:
        """Everything stored for the project (nothing when it has no database yet:
        reading creates none)."""
        project_id = validate_project_id(project_id)
        if project_id not in self._conns and not database_path(self.data_dir, project_id).exists():
            return SavedProgress()
        return await run_on_worker(await self._conn(project_id), _load)

    async def save_results(
        self, project_id: str, user: str, results: Sequence[tuple[str, str]]
    ) -> None:
        """Store `(objective id, result JSON)` as the user's latest."""
        rows = [(user, objective, text) for objective, text in results]
        await run_on_worker(await self._conn(project_id), _write_many, _UPSERT_RESULT, rows)

    async def save_stage(self, project_id: str, user: str, stage: str | None) -> None:
        """Store the stage the user chose (None: none chosen)."""
        conn = await self._conn(project_id)
        if stage is None:
            await run_on_worker(conn, _write_many, _DELETE_STAGE, [(user,)])
        else:
            await run_on_worker(conn, _write_many, _UPSERT_STAGE, [(user, stage)])

    async def save_exercise(self, project_id: str, user: str, exercise: str) -> None:
        """Store `exercise` (JSON) as the user's latest."""
        conn = await self._conn(project_id)
        await run_on_worker(conn, _write_many, _UPSERT_EXERCISE, [(user, exercise)])

    async def model_calls(self, project_id: str, user: str) -> int:
        """The model calls the copilot made in the user's chat sessions of the project
        (the chat store's counters, in the same database; 0 before any chat)."""
        return await run_on_worker(await self._conn(project_id), _model_calls, user)

    async def forget_results(self, project_id: str) -> None:
        """Delete every user's results in the project (the stages chosen stay)."""
        await run_on_worker(
            await self._conn(project_id), _write_many, "DELETE FROM lab_results", [()]
        )

    async def close_project(self, project_id: str) -> None:
        """Close the project's connection, if open (its folder is about to go)."""
        conn = self._conns.pop(validate_project_id(project_id), None)
        if conn is not None:
            await conn.close()

    async def close(self) -> None:
        """Close every connection."""
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            await conn.close()

    async def _conn(self, project_id: str) -> aiosqlite.Connection:
        project_id = validate_project_id(project_id)
        conn = self._conns.get(project_id)
        if conn is not None:
            return conn
        async with self._lock:
            conn = self._conns.get(project_id)
            if conn is None:
                path = database_path(self.data_dir, project_id)
                conn, _ = await open_private_database(
                    path, lambda conn: ensure_tables(conn, _TABLES)
                )
                self._conns[project_id] = conn
            return conn


_UPSERT_RESULT = (
    "INSERT INTO lab_results (user_id, objective_id, result) VALUES (?, ?, ?) "
    "ON CONFLICT (user_id, objective_id) DO UPDATE SET result = excluded.result, "
    "recorded_at = CURRENT_TIMESTAMP"
)
_UPSERT_EXERCISE = (
    "INSERT INTO lab_exercises (user_id, exercise) VALUES (?, ?) "
    "ON CONFLICT (user_id) DO UPDATE SET exercise = excluded.exercise"
)
_DELETE_STAGE = "DELETE FROM lab_stages WHERE user_id = ?"
_UPSERT_STAGE = (
    "INSERT INTO lab_stages (user_id, stage) VALUES (?, ?) "
    "ON CONFLICT (user_id) DO UPDATE SET stage = excluded.stage"
)


def _write_many(connection: sqlite3.Connection, sql: str, rows: Sequence[tuple[str, ...]]) -> None:
    try:
        connection.executemany(sql, rows)
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def _load(connection: sqlite3.Connection) -> SavedProgress:
    saved = SavedProgress()
    for user, objective, text in connection.execute(
        "SELECT user_id, objective_id, result FROM lab_results"
    ):
        saved.results.setdefault(user, {})[objective] = text
    saved.chosen = dict(connection.execute("SELECT user_id, stage FROM lab_stages").fetchall())
    saved.exercises = dict(
        connection.execute("SELECT user_id, exercise FROM lab_exercises").fetchall()
    )
    return saved


def _model_calls(connection: sqlite3.Connection, user: str) -> int:
    try:
        row = connection.execute(
            "SELECT COALESCE(SUM(llm_calls_count), 0) FROM chat_sessions WHERE user_id = ?",
            (user,),
        ).fetchone()
    except sqlite3.OperationalError:  # no chat in the project yet: no table
        return 0
    return int(row[0])
