"""What the class used: one record per model call through the gateway, daily totals per
user, and the budget overrides set at run time.

`UsageStore` is the interface the gateway and the dashboard use; `SqliteUsageStore` is the
one implementation: one SQLite file (`<data_dir>/usage.db`, WAL) written by the hub
service's single process. For a hub with several service replicas, another implementation
(PostgreSQL, say) would take its place behind the same interface, and the overrides, cached
in memory here, would be read per call; nothing needs this today (the hub is one pod).

A call counts on the UTC day it started (`ModelCall.day`): budgets reset at 00:00 UTC.

The question log (off by default: the service's `log_questions` setting, which students
are told about) is the `question` of the calls that carried one: the gateway fills it in
only when the setting is on.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import sqlite3
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Literal, Protocol

import aiosqlite
from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, field_validator

from ..store.database import open_private_database
from ..store.schema import ensure_tables
from ..store.worker_thread import first_row, run_on_worker
from .budgets import BudgetOverrides, DailyTokens, Override

CallStatus = Literal["ok", "refused", "error"]
OverrideKind = Literal["user", "group", "course"]
DATABASE_NAME = "usage.db"
QUESTION_CHARS = 1000
"""A logged question is cut to this many characters."""
CSV_COLUMNS = (
    "started_at",
    "ended_at",
    "day",
    "user",
    "groups",
    "model",
    "status",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "usage_reported",
    "turn_id",
    "detail",
)


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC (the default clock of the hub service)."""
    return datetime.now(timezone.utc)


class ModelCall(BaseModel):
    """One call through the gateway, as recorded.

    `status`: "ok" (the upstream answered), "refused" (by the gateway: budget,
    concurrency, model not allowed; no tokens), "error" (the upstream failed, or the
    client left before the end). `usage_reported` is False when the upstream sent no
    usage and the token counts are the gateway's estimate.
    """

    model_config = ConfigDict(frozen=True)

    user: str
    groups: frozenset[str] = frozenset()
    model: str
    started_at: datetime
    ended_at: datetime
    status: CallStatus
    prompt_tokens: NonNegativeInt = 0
    completion_tokens: NonNegativeInt = 0
    usage_reported: bool = True
    detail: str | None = None
    """Why it was refused or failed, in a few words."""
    turn_id: str | None = None
    """The copilot's turn the call belongs to (header `x-copilot-turn-id`), if it said."""
    question: str | None = Field(default=None, max_length=QUESTION_CHARS)
    """The student's question that started this call, when questions are logged."""

    @field_validator("started_at", "ended_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("must be timezone-aware")
        return value.astimezone(timezone.utc)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def day(self) -> date:
        """The UTC day the call counts on (the day it started)."""
        return self.started_at.date()


class UserUsage(BaseModel):
    """One user's usage: today (a given UTC day) and in total. Refused calls are not
    counted as calls; turns are counted only for calls that named their turn."""

    user: str
    tokens_today: int = 0
    tokens_total: int = 0
    calls_today: int = 0
    calls_total: int = 0
    turns_today: int = 0
    turns_total: int = 0
    last_activity: datetime | None = None
    groups: list[str] = Field(default_factory=list)
    """The groups at the user's last call."""


class Question(BaseModel):
    """A question a student asked (the question log)."""

    user: str
    asked_at: datetime
    text: str
    turn_id: str | None = None


class UsageStore(Protocol):
    """Where the gateway records calls and reads budgets' state (see the module docstring)."""

    async def record(self, call: ModelCall) -> None:
        """Add one call to the records and to its user's daily total."""

    async def tokens_used(self, day: date, user: str | None = None) -> int:
        """Tokens used on UTC `day` by `user`, or by everyone when `user` is None."""

    async def user_usage(self, day: date) -> list[UserUsage]:
        """Every user who ever called, by name, with `day` as "today"."""

    async def questions(self, limit: int = 500, user: str | None = None) -> list[Question]:
        """The last `limit` logged questions (of `user`, or of everyone), newest first."""

    async def turns_between(self, user: str, since: datetime, until: datetime) -> int:
        """The copilot turns of `user` (distinct named turns with a call answered) whose
        calls started from `since` to `until`, inclusive."""

    async def calls_between(self, user: str, since: datetime, until: datetime) -> int:
        """The model calls of `user` answered (status ok) that started from `since` to
        `until`, inclusive."""

    async def overrides(self) -> BudgetOverrides:
        """The budgets set at run time."""

    async def set_override(self, kind: OverrideKind, name: str, daily_tokens: DailyTokens) -> None:
        """Set a user's, a group's or (name "") the course's daily budget (None: unlimited)."""

    async def clear_override(self, kind: OverrideKind, name: str) -> None:
        """Go back to the policy's budget for that user, group or the course."""

    async def export_csv(self, since: date | None = None, until: date | None = None) -> str:
        """The calls of UTC days `since`..`until` (inclusive; open-ended when None) as CSV
        with a header row (`CSV_COLUMNS`), oldest first."""

    async def close(self) -> None:
        """Release the store (idempotent)."""


_MODEL_CALLS_COLUMNS = (
    ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
    ("hub_user", "TEXT NOT NULL"),
    ("hub_groups", "TEXT NOT NULL DEFAULT '[]'"),
    ("model", "TEXT NOT NULL"),
    ("day", "TEXT NOT NULL"),
    ("started_at", "TEXT NOT NULL"),
    ("ended_at", "TEXT NOT NULL"),
    ("status", "TEXT NOT NULL"),
    ("prompt_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("completion_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("usage_reported", "INTEGER NOT NULL DEFAULT 1"),
    ("detail", "TEXT"),
    ("turn_id", "TEXT"),
    ("question", "TEXT"),
)
_DAILY_USAGE_COLUMNS = (
    ("day", "TEXT NOT NULL"),
    ("hub_user", "TEXT NOT NULL"),
    ("tokens", "INTEGER NOT NULL DEFAULT 0"),
)
_OVERRIDES_COLUMNS = (
    ("kind", "TEXT NOT NULL"),
    ("name", "TEXT NOT NULL"),
    ("daily_tokens", "INTEGER"),
    ("updated_at", "TEXT"),
)
_TABLES = {
    "model_calls": (_MODEL_CALLS_COLUMNS, ""),
    "daily_usage": (_DAILY_USAGE_COLUMNS, ", PRIMARY KEY (day, hub_user)"),
    "budget_overrides": (_OVERRIDES_COLUMNS, ", PRIMARY KEY (kind, name)"),
}
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_calls_user_day ON model_calls(hub_user, day)",
    "CREATE INDEX IF NOT EXISTS idx_calls_day ON model_calls(day)",
)


async def ensure_usage_schema(conn: aiosqlite.Connection) -> None:
    """Create the tables, or add the columns an older version of them lacks; commits."""
    await ensure_tables(conn, _TABLES, _INDEXES)


def database_path(data_dir: str | Path) -> Path:
    """`<data_dir>/usage.db`."""
    return Path(data_dir).expanduser() / DATABASE_NAME


def _timestamp(value: datetime) -> str:
    # One fixed format, so that text order is time order.
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def csv_cell(value: object) -> str:
    """A cell a spreadsheet shows as text: user names and model names come from users, and
    a leading =, +, - or @ would make a formula of them."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


class SqliteUsageStore:
    """`UsageStore` in one SQLite file; open with `await SqliteUsageStore.open(data_dir)`."""

    def __init__(self, path: Path, conn: aiosqlite.Connection, overrides: BudgetOverrides) -> None:
        self.path = path
        self._conn = conn
        self._overrides = overrides
        self._write_lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def open(cls, data_dir: str | Path) -> SqliteUsageStore:
        """Open (creating or migrating) `<data_dir>/usage.db`."""
        path = database_path(data_dir)

        async def prepare(conn: aiosqlite.Connection) -> BudgetOverrides:
            await ensure_usage_schema(conn)
            return await _read_overrides(conn)

        conn, overrides = await open_private_database(path, prepare)
        return cls(path, conn, overrides)

    async def record(self, call: ModelCall) -> None:
        async with self._write_lock:
            await run_on_worker(self._conn, _insert_call, call)

    async def tokens_used(self, day: date, user: str | None = None) -> int:
        args: tuple[str, ...]
        if user is None:
            query, args = "SELECT SUM(tokens) FROM daily_usage WHERE day = ?", (day.isoformat(),)
        else:
            query = "SELECT tokens FROM daily_usage WHERE day = ? AND hub_user = ?"
            args = (day.isoformat(), user)
        row = await run_on_worker(self._conn, first_row, query, args)
        return int(row[0]) if row and row[0] is not None else 0

    async def user_usage(self, day: date) -> list[UserUsage]:
        today = day.isoformat()
        query = """
            SELECT hub_user,
                SUM(CASE WHEN day = :today THEN prompt_tokens + completion_tokens ELSE 0 END),
                SUM(prompt_tokens + completion_tokens),
                SUM(day = :today AND status != 'refused'),
                SUM(status != 'refused'),
                COUNT(DISTINCT CASE WHEN day = :today THEN turn_id END),
                COUNT(DISTINCT turn_id),
                MAX(ended_at),
                (SELECT hub_groups FROM model_calls AS last WHERE last.hub_user = calls.hub_user
                 ORDER BY started_at DESC LIMIT 1)
            FROM model_calls AS calls GROUP BY hub_user ORDER BY hub_user
        """
        async with self._conn.execute(query, {"today": today}) as cursor:
            rows = await cursor.fetchall()
        return [
            UserUsage(
                user=row[0],
                tokens_today=row[1],
                tokens_total=row[2],
                calls_today=row[3],
                calls_total=row[4],
                turns_today=row[5],
                turns_total=row[6],
                last_activity=datetime.fromisoformat(row[7]) if row[7] else None,
                groups=json.loads(row[8] or "[]"),
            )
            for row in rows
        ]

    async def questions(self, limit: int = 500, user: str | None = None) -> list[Question]:
        query = (
            "SELECT hub_user, started_at, question, turn_id FROM model_calls "
            "WHERE question IS NOT NULL AND (:user IS NULL OR hub_user = :user) "
            "ORDER BY started_at DESC, id DESC LIMIT :limit"
        )
        async with self._conn.execute(query, {"user": user, "limit": limit}) as cursor:
            rows = await cursor.fetchall()
        return [
            Question(
                user=row[0], asked_at=datetime.fromisoformat(row[1]), text=row[2], turn_id=row[3]
            )
            for row in rows
        ]

    async def turns_between(self, user: str, since: datetime, until: datetime) -> int:
        return await self._answered("COUNT(DISTINCT turn_id)", user, since, until)

    async def calls_between(self, user: str, since: datetime, until: datetime) -> int:
        return await self._answered("COUNT(*)", user, since, until)

    async def _answered(self, count: str, user: str, since: datetime, until: datetime) -> int:
        """`count` over the user's answered calls started from `since` to `until`."""
        query = (
            f"SELECT {count} FROM model_calls WHERE hub_user = ? "
            "AND status = 'ok' AND started_at >= ? AND started_at <= ?"
        )
        args = (user, _timestamp(since), _timestamp(until))
        async with self._conn.execute(query, args) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def overrides(self) -> BudgetOverrides:
        return self._overrides

    async def set_override(self, kind: OverrideKind, name: str, daily_tokens: DailyTokens) -> None:
        Override(daily_tokens=daily_tokens)  # validates
        async with self._write_lock:
            await self._conn.execute(
                "INSERT INTO budget_overrides (kind, name, daily_tokens, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (kind, name) DO UPDATE SET "
                "daily_tokens = excluded.daily_tokens, updated_at = excluded.updated_at",
                (kind, _override_name(kind, name), daily_tokens, _timestamp(utc_now())),
            )
            await self._conn.commit()
            self._overrides = await _read_overrides(self._conn)

    async def clear_override(self, kind: OverrideKind, name: str) -> None:
        async with self._write_lock:
            await self._conn.execute(
                "DELETE FROM budget_overrides WHERE kind = ? AND name = ?",
                (kind, _override_name(kind, name)),
            )
            await self._conn.commit()
            self._overrides = await _read_overrides(self._conn)

    async def export_csv(self, since: date | None = None, until: date | None = None) -> str:
        query = (
            "SELECT started_at, ended_at, day, hub_user, hub_groups, model, status, prompt_tokens, "
            "completion_tokens, prompt_tokens + completion_tokens, usage_reported, turn_id, "
            "detail FROM model_calls WHERE day >= ? AND day <= ? ORDER BY started_at, id"
        )
        bounds = (since.isoformat() if since else "", until.isoformat() if until else "9999")
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        async with self._conn.execute(query, bounds) as cursor:
            async for row in cursor:
                cells = list(row)
                cells[4] = " ".join(json.loads(cells[4]))
                cells[10] = "yes" if cells[10] else "no"
                writer.writerow([csv_cell(cell) for cell in cells])
        return out.getvalue()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        async with self._write_lock:
            await self._conn.close()


def _insert_call(connection: sqlite3.Connection, call: ModelCall) -> None:
    """`record`'s two statements and their commit (rolled back if one fails), in one
    hand-over to the connection's worker thread."""
    day = call.day.isoformat()
    try:
        connection.execute(
            "INSERT INTO model_calls (hub_user, hub_groups, model, day, started_at, ended_at, "
            "status, prompt_tokens, completion_tokens, usage_reported, detail, turn_id, "
            "question) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                call.user,
                json.dumps(sorted(call.groups)),
                call.model,
                day,
                _timestamp(call.started_at),
                _timestamp(call.ended_at),
                call.status,
                call.prompt_tokens,
                call.completion_tokens,
                int(call.usage_reported),
                call.detail,
                call.turn_id,
                call.question,
            ),
        )
        connection.execute(
            "INSERT INTO daily_usage (day, hub_user, tokens) VALUES (?, ?, ?) "
            "ON CONFLICT (day, hub_user) DO UPDATE SET tokens = tokens + excluded.tokens",
            (day, call.user, call.total_tokens),
        )
        connection.commit()
    except BaseException:
        connection.rollback()
        raise


def _override_name(kind: OverrideKind, name: str) -> str:
    if kind == "course":
        return ""
    if not name:
        raise ValueError(f"a {kind} override needs the {kind}'s name")
    return name


async def _read_overrides(conn: aiosqlite.Connection) -> BudgetOverrides:
    users: dict[str, DailyTokens] = {}
    groups: dict[str, DailyTokens] = {}
    course: Override | None = None
    async with conn.execute("SELECT kind, name, daily_tokens FROM budget_overrides") as cursor:
        async for kind, name, daily_tokens in cursor:
            if kind == "user":
                users[name] = daily_tokens
            elif kind == "group":
                groups[name] = daily_tokens
            elif kind == "course":
                course = Override(daily_tokens=daily_tokens)
    return BudgetOverrides(users=users, groups=groups, course=course)
