"""Chat sessions of one project: the `ChatSession` model and its repository.

Every write runs under the project's write lock (shared with the checkpointer, which uses
the same connection), is run and committed on the connection's worker thread in one
hand-over (`worker_thread.run_on_worker`), and is shielded from cancellation: a caller
that goes away mid-write does not leave half a transaction behind. Counters are
added in SQL (`message_count = message_count + ?`), never read, changed and written back.
Only the table's columns are stored; metadata that looks like a credential is refused.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timezone
from typing import Any

import aiosqlite
from pydantic import BaseModel, Field, field_validator

from .errors import InvalidTitle, SecretInMetadata, SessionExists
from .worker_thread import first_row, run_on_worker, write_committed

TITLE_MAX_LENGTH = 255
DEFAULT_LIST_LIMIT = 100

_COLUMNS = (
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
)
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM chat_sessions"
_SECRET_KEY = re.compile(
    r"(^|_)(api_?key|password|passwd|secret|token|access_token|jwt|authorization|bearer)($|_)"
)


def utc_now() -> str:
    """The current UTC time as stored: ISO 8601 with microseconds and `+00:00`."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _json_object(raw: object) -> dict[str, Any]:
    if not isinstance(raw, str) or not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _refuse_secrets(value: Mapping[str, Any], where: str) -> None:
    for key, item in value.items():
        if _SECRET_KEY.search(str(key).lower().replace("-", "_")):
            raise SecretInMetadata(
                f"Refusing to store {where} key {key!r}: credentials must never be written "
                "to the session database (pass them per request instead)."
            )
        if isinstance(item, Mapping):
            _refuse_secrets(item, where)


def validate_title(title: str) -> str:
    """`title` stripped; InvalidTitle unless 1-255 characters remain."""
    cleaned = title.strip()
    if not 1 <= len(cleaned) <= TITLE_MAX_LENGTH:
        raise InvalidTitle(
            f"A session title must be 1-{TITLE_MAX_LENGTH} characters (got {len(cleaned)})."
        )
    return cleaned


class ChatSession(BaseModel):
    """One chat session's metadata and statistics."""

    id: int
    thread_id: str
    user_id: str
    project_id: str
    title: str | None = None
    message_count: int = 0
    llm_calls_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    last_message_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    stats: dict[str, Any] = Field(default_factory=dict)
    pinned: bool = False

    @field_validator("metadata", "stats", mode="before")
    @classmethod
    def _parse_json(cls, value: object) -> object:
        return value if isinstance(value, dict) else _json_object(value)

    @field_validator("pinned", mode="before")
    @classmethod
    def _null_is_false(cls, value: object) -> object:
        return bool(value)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> ChatSession:
        """A session from a row selected with this module's column list."""
        return cls.model_validate(dict(zip(_COLUMNS, row, strict=True)))


class StatsDelta(BaseModel):
    """Amounts to add to a session's counters (`total_tokens` grows by input + output)."""

    messages: int = Field(default=0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    @property
    def is_empty(self) -> bool:
        """Whether there is nothing to add."""
        return not (self.messages or self.llm_calls or self.input_tokens or self.output_tokens)

    def __add__(self, other: StatsDelta) -> StatsDelta:
        return StatsDelta(
            messages=self.messages + other.messages,
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


DeleteThread = Callable[[str], Awaitable[None]]


class ChatSessionsRepository:
    """CRUD for `chat_sessions` in one project's database.

    `user_id`, where a method takes it, restricts the call to that user's sessions
    (None: any user, for administration and project deletion). Methods that target one
    session return None / False when it does not exist or belongs to someone else.
    `delete_thread` removes a thread's checkpoints and writes (the checkpointer's
    `adelete_thread`).
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        write_lock: asyncio.Lock,
        project_id: str,
        delete_thread: DeleteThread,
    ) -> None:
        self._conn = conn
        self._lock = write_lock
        self.project_id = project_id
        self._delete_thread = delete_thread

    async def _write_now(self, sql: str, params: tuple[Any, ...]) -> int:
        async with self._lock:
            return await run_on_worker(self._conn, write_committed, sql, params)

    async def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        """Run one statement in its own transaction; returns the changed row count."""
        return await asyncio.shield(self._write_now(sql, params))

    async def _fetch_one(self, where: str, params: tuple[Any, ...]) -> ChatSession | None:
        row = await run_on_worker(self._conn, first_row, f"{_SELECT} WHERE {where}", params)
        return ChatSession.from_row(tuple(row)) if row else None

    @staticmethod
    def _owner_clause(user_id: str | None) -> tuple[str, tuple[Any, ...]]:
        return ("", ()) if user_id is None else (" AND user_id = ?", (user_id,))

    async def create_session(
        self,
        thread_id: str,
        user_id: str,
        *,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> ChatSession:
        """Insert a new session; SessionExists if `thread_id` is taken."""
        if title is not None:
            title = validate_title(title)
        _refuse_secrets(metadata or {}, "metadata")
        now = utc_now()
        try:
            await self._write(
                "INSERT INTO chat_sessions (thread_id, user_id, project_id, title, "
                "created_at, updated_at, metadata, stats, pinned) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, '{}', FALSE)",
                (
                    thread_id,
                    user_id,
                    self.project_id,
                    title,
                    now,
                    now,
                    json.dumps(dict(metadata or {}), ensure_ascii=False),
                ),
            )
        except aiosqlite.IntegrityError as exc:
            raise SessionExists(
                f"Chat session {thread_id!r} already exists in project {self.project_id}."
            ) from exc
        session = await self.get_session_by_thread(thread_id)
        assert session is not None
        return session

    async def get_session_by_thread(
        self, thread_id: str, user_id: str | None = None
    ) -> ChatSession | None:
        """The session with this thread id (and owner, when `user_id` is given)."""
        clause, owner = self._owner_clause(user_id)
        return await self._fetch_one(f"thread_id = ?{clause}", (thread_id, *owner))

    async def list_sessions(
        self, user_id: str | None = None, *, limit: int = DEFAULT_LIST_LIMIT, offset: int = 0
    ) -> list[ChatSession]:
        """Sessions of this project (of `user_id`, if given): pinned first, newest first."""
        clause, owner = self._owner_clause(user_id)
        async with self._conn.execute(
            f"{_SELECT} WHERE project_id = ?{clause} "
            "ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT ? OFFSET ?",
            (self.project_id, *owner, max(limit, 0), max(offset, 0)),
        ) as cursor:
            rows = await cursor.fetchall()
        return [ChatSession.from_row(tuple(row)) for row in rows]

    async def update_session(
        self,
        thread_id: str,
        *,
        user_id: str | None = None,
        title: str | None = None,
        pinned: bool | None = None,
        increments: StatsDelta | None = None,
        metadata: Mapping[str, Any] | None = None,
        stats: Mapping[str, Any] | None = None,
    ) -> bool:
        """Change a session in one statement; False if no such session (for `user_id`).

        `increments` are added to the counters in SQL and move `last_message_at` when
        they count messages. `metadata` and `stats` are merged into the stored JSON
        objects (JSON merge patch: a None value removes the key). `updated_at` is always
        set to now.
        """
        now = utc_now()
        assignments = ["updated_at = ?"]
        params: list[Any] = [now]
        if title is not None:
            assignments.append("title = ?")
            params.append(validate_title(title))
        if pinned is not None:
            assignments.append("pinned = ?")
            params.append(bool(pinned))
        if increments is not None and not increments.is_empty:
            assignments += [
                "message_count = message_count + ?",
                "llm_calls_count = llm_calls_count + ?",
                "input_tokens = input_tokens + ?",
                "output_tokens = output_tokens + ?",
                "total_tokens = (input_tokens + ?) + (output_tokens + ?)",
            ]
            params += [
                increments.messages,
                increments.llm_calls,
                increments.input_tokens,
                increments.output_tokens,
                increments.input_tokens,
                increments.output_tokens,
            ]
            if increments.messages:
                assignments.append("last_message_at = ?")
                params.append(now)
        for column, patch in (("metadata", metadata), ("stats", stats)):
            if patch is not None:
                _refuse_secrets(patch, column)
                assignments.append(f"{column} = json_patch(COALESCE({column}, '{{}}'), ?)")
                params.append(json.dumps(dict(patch), ensure_ascii=False))
        clause, owner = self._owner_clause(user_id)
        changed = await self._write(
            f"UPDATE chat_sessions SET {', '.join(assignments)} WHERE thread_id = ?{clause}",
            (*params, thread_id, *owner),
        )
        return changed > 0

    async def add_stats(self, thread_id: str, delta: StatsDelta) -> bool:
        """Add `delta` to the session's counters (safe to call many times per turn)."""
        if delta.is_empty:
            return await self.get_session_by_thread(thread_id) is not None
        return await self.update_session(thread_id, increments=delta)

    async def rename_session(
        self, thread_id: str, title: str, *, user_id: str | None = None
    ) -> ChatSession | None:
        """Set the title (1-255 characters, InvalidTitle otherwise); the updated session."""
        if not await self.update_session(thread_id, user_id=user_id, title=title):
            return None
        return await self.get_session_by_thread(thread_id, user_id)

    async def pin_session(
        self, thread_id: str, pinned: bool = True, *, user_id: str | None = None
    ) -> ChatSession | None:
        """Pin (or unpin) the session; the updated session."""
        if not await self.update_session(thread_id, user_id=user_id, pinned=pinned):
            return None
        return await self.get_session_by_thread(thread_id, user_id)

    async def delete_session(self, thread_id: str, *, user_id: str | None = None) -> bool:
        """Delete the session row and the thread's checkpoints and writes.

        With `user_id`, nothing is deleted unless the session is that user's. Without it,
        the thread's checkpoints go even if no session row exists. True if a row went.
        """
        clause, owner = self._owner_clause(user_id)
        deleted = await self._write(
            f"DELETE FROM chat_sessions WHERE thread_id = ?{clause}", (thread_id, *owner)
        )
        if deleted or user_id is None:
            await asyncio.shield(self._delete_thread(thread_id))
        return deleted > 0

    async def delete_all_sessions(self) -> int:
        """Delete every session and every checkpointed thread of the project; row count."""
        async with self._conn.execute(
            "SELECT thread_id FROM chat_sessions UNION SELECT thread_id FROM checkpoints "
            "UNION SELECT thread_id FROM writes"
        ) as cursor:
            thread_ids = [row[0] for row in await cursor.fetchall()]
        deleted = await self._write("DELETE FROM chat_sessions", ())
        for thread_id in thread_ids:
            await asyncio.shield(self._delete_thread(thread_id))
        return deleted
