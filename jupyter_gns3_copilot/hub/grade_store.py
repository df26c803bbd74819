"""What the hub service's lab checks found, per student, lab and objective: the grades.

One row per (hub user, lab, objective), where the lab is the template project's name (a
student's copy is checked against its template's lab file, `class_labs.py`): the last
result (status, explanation, evidence), when it was last checked, how many times, the
time of the first pass and the copilot turns the student had taken in that stage by then
(`hints_used`). A first pass is never undone by a later failure: a stage is a checkpoint.
And one row per (hub user, lab) with when the student started it (the lab was assigned to
them, or, for a copy made otherwise, their first check).

And one row per troubleshooting exercise the service ran in a student's copy (`exercises`,
by hub user, lab and start time): the fault, when it started and ended and how (fixed or
given up), whether the last check found it fixed, the regressions it found, the time
taken, and the copilot turns and model calls of the student meanwhile (the gateway's
records); with the whole `ExerciseRecord`, so that an exercise going when the service
restarts goes on.

Two more things only the service may know are kept beside them: each template's lab file
attached on the dashboard (`lab_files`, by template name: its checks would give the answers
away, so it is kept out of GNS3, where a student's copy would carry it), and the course
staff who took a working copy of a template ("Edit a copy"): their copies are not graded.

Only the service writes here (`<data_dir>/grades.db`, SQLite in WAL mode), and only with
the results of checks it ran itself on the devices: nothing a student's server says is
recorded.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from pathlib import Path

import aiosqlite
from pydantic import BaseModel

from ..objectives.exercise_model import ExerciseRecord
from ..objectives.results import ObjectiveResult, Status
from ..store.database import open_private_database
from ..store.schema import ensure_tables

DATABASE_NAME = "grades.db"

_TABLES = {
    "objective_grades": (
        (
            ("hub_user", "TEXT NOT NULL"),
            ("lab", "TEXT NOT NULL"),
            ("objective", "TEXT NOT NULL"),
            ("stage", "TEXT NOT NULL"),
            ("status", "TEXT NOT NULL"),
            ("first_passed_at", "TEXT"),
            ("hints_used", "INTEGER"),
            ("last_checked_at", "TEXT NOT NULL"),
            ("checks", "INTEGER NOT NULL DEFAULT 0"),
            ("last_result", "TEXT NOT NULL"),
        ),
        ", PRIMARY KEY (hub_user, lab, objective)",
    ),
    "lab_starts": (
        (("hub_user", "TEXT NOT NULL"), ("lab", "TEXT NOT NULL"), ("started_at", "TEXT NOT NULL")),
        ", PRIMARY KEY (hub_user, lab)",
    ),
    "lab_files": (
        (
            ("lab", "TEXT NOT NULL PRIMARY KEY"),
            ("text", "TEXT NOT NULL"),
            ("source", "TEXT NOT NULL"),
            ("attached_at", "TEXT NOT NULL"),
        ),
        "",
    ),
    "staff": ((("hub_user", "TEXT NOT NULL PRIMARY KEY"), ("noted_at", "TEXT NOT NULL")), ""),
    "exercises": (
        (
            ("hub_user", "TEXT NOT NULL"),
            ("lab", "TEXT NOT NULL"),
            ("started_at", "TEXT NOT NULL"),
            ("number", "INTEGER NOT NULL"),
            ("fault", "TEXT NOT NULL"),
            ("ended_at", "TEXT"),
            ("how", "TEXT"),
            ("fixed", "INTEGER NOT NULL DEFAULT 0"),
            ("regressions", "TEXT NOT NULL DEFAULT '[]'"),
            ("seconds", "REAL"),
            ("copilot_turns", "INTEGER NOT NULL DEFAULT 0"),
            ("copilot_calls", "INTEGER NOT NULL DEFAULT 0"),
            ("record", "TEXT NOT NULL"),
        ),
        ", PRIMARY KEY (hub_user, lab, started_at)",
    ),
}
_INDEXES = ("CREATE INDEX IF NOT EXISTS idx_grades_lab ON objective_grades(lab, hub_user)",)


class ObjectiveGrade(BaseModel):
    """One student's record of one objective of one lab."""

    user: str
    lab: str
    objective: str
    stage: str
    status: Status
    """The last check's status."""
    first_passed_at: datetime | None = None
    hints_used: int | None = None
    """Copilot turns taken in the stage by the first pass (None: not passed yet)."""
    last_checked_at: datetime
    checks: int
    last: ObjectiveResult
    """The last check's result (its text as this student reads it, explanation, evidence)."""

    @property
    def passed(self) -> bool:
        """Whether a check ever passed it."""
        return self.first_passed_at is not None


class ExerciseEntry(BaseModel):
    """One troubleshooting exercise of one student in one lab, as the service ran it."""

    user: str
    lab: str
    number: int
    """The student's how-manieth exercise in their copy."""
    fault: str
    started_at: datetime
    ended_at: datetime | None = None
    how: str | None = None
    """"fixed" or "given up"; None while it is going."""
    fixed: bool
    """Whether the last check found every objective the fault broke passing again."""
    regressions: list[str]
    """Objectives that passed before the fault and failed at the last check."""
    seconds: float | None = None
    """The time taken, once ended."""
    copilot_turns: int
    copilot_calls: int
    """The student's copilot turns and model calls from the start to the end (or now)."""


def database_path(data_dir: str | Path) -> Path:
    """`<data_dir>/grades.db`."""
    return Path(data_dir).expanduser() / DATABASE_NAME


def _timestamp(value: datetime) -> str:
    # One fixed format, so that text order is time order.
    return value.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


class GradeStore:
    """The grades in one SQLite file; open with `await GradeStore.open(data_dir)`."""

    def __init__(self, path: Path, conn: aiosqlite.Connection) -> None:
        self.path = path
        self._conn = conn
        self._write_lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def open(cls, data_dir: str | Path) -> GradeStore:
        """Open (creating or migrating) `<data_dir>/grades.db`."""
        path = database_path(data_dir)
        conn, _ = await open_private_database(
            path, lambda conn: ensure_tables(conn, _TABLES, _INDEXES)
        )
        return cls(path, conn)

    async def start(self, user: str, lab: str, at: datetime) -> None:
        """Note that `user` started `lab` at `at` (kept if they started it before)."""
        async with self._write_lock:
            await self._conn.execute(
                "INSERT OR IGNORE INTO lab_starts (hub_user, lab, started_at) VALUES (?, ?, ?)",
                (user, lab, _timestamp(at)),
            )
            await self._conn.commit()

    async def started_at(self, user: str, lab: str) -> datetime | None:
        """When `user` started `lab` (None: never)."""
        query = "SELECT started_at FROM lab_starts WHERE hub_user = ? AND lab = ?"
        async with self._conn.execute(query, (user, lab)) as cursor:
            row = await cursor.fetchone()
        return _time(row[0]) if row else None

    async def record(
        self,
        user: str,
        lab: str,
        result: ObjectiveResult,
        at: datetime,
        hints_used: int | None = None,
    ) -> None:
        """Record a result the service decided at `at`. A pass sets the first pass time
        (and `hints_used`) unless an earlier one did; the lab counts as started."""
        passed = _timestamp(at) if result.status == "pass" else None
        async with self._write_lock:
            await self._conn.execute(
                "INSERT INTO objective_grades (hub_user, lab, objective, stage, status, "
                "first_passed_at, hints_used, last_checked_at, checks, last_result) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?) "
                "ON CONFLICT (hub_user, lab, objective) DO UPDATE SET "
                "stage = excluded.stage, status = excluded.status, "
                "hints_used = CASE WHEN first_passed_at IS NULL THEN excluded.hints_used "
                "ELSE hints_used END, "
                "first_passed_at = COALESCE(first_passed_at, excluded.first_passed_at), "
                "last_checked_at = excluded.last_checked_at, checks = checks + 1, "
                "last_result = excluded.last_result",
                (
                    user,
                    lab,
                    result.id,
                    result.stage,
                    result.status,
                    passed,
                    hints_used if passed else None,
                    _timestamp(at),
                    result.model_dump_json(),
                ),
            )
            await self._conn.execute(
                "INSERT OR IGNORE INTO lab_starts (hub_user, lab, started_at) VALUES (?, ?, ?)",
                (user, lab, _timestamp(at)),
            )
            await self._conn.commit()

    async def grades(self, lab: str | None = None, user: str | None = None) -> list[ObjectiveGrade]:
        """The records of `lab` and `user` (None: every one), by lab, user and objective."""
        query = (
            "SELECT hub_user, lab, objective, stage, status, first_passed_at, hints_used, "
            "last_checked_at, checks, last_result FROM objective_grades "
            "WHERE (:lab IS NULL OR lab = :lab) AND (:user IS NULL OR hub_user = :user) "
            "ORDER BY lab, hub_user, objective"
        )
        async with self._conn.execute(query, {"lab": lab, "user": user}) as cursor:
            rows = await cursor.fetchall()
        return [
            ObjectiveGrade(
                user=row[0],
                lab=row[1],
                objective=row[2],
                stage=row[3],
                status=row[4],
                first_passed_at=_time(row[5]),
                hints_used=row[6],
                last_checked_at=datetime.fromisoformat(row[7]),
                checks=row[8],
                last=ObjectiveResult.model_validate_json(row[9]),
            )
            for row in rows
        ]

    async def record_exercise(
        self, user: str, lab: str, record: ExerciseRecord, turns: int, calls: int
    ) -> None:
        """Record `user`'s exercise `record` in `lab` as it stands, with the copilot turns
        and model calls counted over it."""
        grade = record.grade
        ended = record.ended_at
        seconds = (ended - record.started_at).total_seconds() if ended else None
        async with self._write_lock:
            await self._conn.execute(
                "INSERT INTO exercises (hub_user, lab, started_at, number, fault, ended_at, "
                "how, fixed, regressions, seconds, copilot_turns, copilot_calls, record) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (hub_user, lab, started_at) DO UPDATE SET "
                "ended_at = excluded.ended_at, how = excluded.how, fixed = excluded.fixed, "
                "regressions = excluded.regressions, seconds = excluded.seconds, "
                "copilot_turns = excluded.copilot_turns, "
                "copilot_calls = excluded.copilot_calls, record = excluded.record",
                (
                    user,
                    lab,
                    _timestamp(record.started_at),
                    record.number,
                    record.fault,
                    _timestamp(ended) if ended else None,
                    record.how,
                    int(grade is not None and grade.fixed),
                    json.dumps(grade.regressions if grade else []),
                    seconds,
                    turns,
                    calls,
                    record.model_dump_json(),
                ),
            )
            await self._conn.commit()

    async def exercises(
        self, lab: str | None = None, user: str | None = None
    ) -> list[ExerciseEntry]:
        """The exercises of `lab` and `user` (None: every one), by lab, user and start."""
        query = (
            "SELECT hub_user, lab, number, fault, started_at, ended_at, how, fixed, "
            "regressions, seconds, copilot_turns, copilot_calls FROM exercises "
            "WHERE (:lab IS NULL OR lab = :lab) AND (:user IS NULL OR hub_user = :user) "
            "ORDER BY lab, hub_user, started_at"
        )
        async with self._conn.execute(query, {"lab": lab, "user": user}) as cursor:
            rows = await cursor.fetchall()
        return [
            ExerciseEntry(
                user=row[0],
                lab=row[1],
                number=row[2],
                fault=row[3],
                started_at=datetime.fromisoformat(row[4]),
                ended_at=_time(row[5]),
                how=row[6],
                fixed=bool(row[7]),
                regressions=json.loads(row[8]),
                seconds=row[9],
                copilot_turns=row[10],
                copilot_calls=row[11],
            )
            for row in rows
        ]

    async def latest_exercise(self, user: str, lab: str) -> ExerciseRecord | None:
        """`user`'s latest exercise in `lab` as it was recorded (None: none)."""
        query = (
            "SELECT record FROM exercises WHERE hub_user = ? AND lab = ? "
            "ORDER BY started_at DESC LIMIT 1"
        )
        async with self._conn.execute(query, (user, lab)) as cursor:
            row = await cursor.fetchone()
        return ExerciseRecord.model_validate_json(row[0]) if row else None

    async def keep_lab_file(self, lab: str, text: str, source: str, at: datetime) -> None:
        """Make `text` (named `source`) the lab file of the template named `lab`."""
        async with self._write_lock:
            await self._conn.execute(
                "INSERT INTO lab_files (lab, text, source, attached_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (lab) DO UPDATE SET text = excluded.text, "
                "source = excluded.source, attached_at = excluded.attached_at",
                (lab, text, source, _timestamp(at)),
            )
            await self._conn.commit()

    async def lab_file(self, lab: str) -> tuple[str, str] | None:
        """The lab file kept for the template named `lab`: its text and source name."""
        query = "SELECT text, source FROM lab_files WHERE lab = ?"
        async with self._conn.execute(query, (lab,)) as cursor:
            row = await cursor.fetchone()
        return (row[0], row[1]) if row else None

    async def forget_lab_file(self, lab: str) -> None:
        """The template named `lab` has no kept lab file any more (it was deleted)."""
        async with self._write_lock:
            await self._conn.execute("DELETE FROM lab_files WHERE lab = ?", (lab,))
            await self._conn.commit()

    async def note_staff(self, user: str, at: datetime) -> None:
        """`user` is course staff (took a working copy of a template): never graded."""
        async with self._write_lock:
            await self._conn.execute(
                "INSERT OR IGNORE INTO staff (hub_user, noted_at) VALUES (?, ?)",
                (user, _timestamp(at)),
            )
            await self._conn.commit()

    async def staff(self) -> set[str]:
        """The hub users noted as course staff."""
        async with self._conn.execute("SELECT hub_user FROM staff") as cursor:
            return {row[0] for row in await cursor.fetchall()}

    async def close(self) -> None:
        """Release the store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        async with self._write_lock:
            await self._conn.close()
