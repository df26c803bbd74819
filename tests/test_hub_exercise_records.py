"""The grade store's exercise records (`hub/grade_store.py`) on real SQLite: a store an
older version made (no `exercises` table) is migrated on opening, an exercise is recorded
at each change under one row, and its latest record reads back whole."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_gns3_copilot.hub.grade_store import DATABASE_NAME, GradeStore
from jupyter_gns3_copilot.objectives.exercise_model import ExerciseGrade, ExerciseRecord

STARTED = datetime(2026, 12, 1, 15, 0, tzinfo=timezone.utc)


async def test_an_older_store_gains_exercises_recorded_once_each(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / DATABASE_NAME) as older:
        older.execute(
            "CREATE TABLE lab_starts (hub_user TEXT NOT NULL, lab TEXT NOT NULL, "
            "started_at TEXT NOT NULL, PRIMARY KEY (hub_user, lab))"
        )
        older.execute("INSERT INTO lab_starts VALUES ('alice', 'two PCs', '2026-12-01')")
    store = await GradeStore.open(tmp_path)
    try:
        going = ExerciseRecord(
            fault="pc2-address-cleared",
            started_at=STARTED,
            broken=["pc1-pc2", "pc2-address"],
            passed_before=["pc1-address", "pc1-pc2", "pc2-address"],
            calls_at_start=4,
            saved=["PC1", "PC2"],
        )
        await store.record_exercise("alice", "two PCs", going, turns=0, calls=0)
        grade = ExerciseGrade(
            fixed=True, regressions=["pc1-address"], seconds=90, copilot_calls=3, done=False
        )
        ended = going.model_copy(
            update={"grade": grade, "ended_at": STARTED + timedelta(minutes=2), "how": "given up"}
        )
        await store.record_exercise("alice", "two PCs", ended, turns=2, calls=3)
        [entry] = await store.exercises("two PCs")
        assert (entry.user, entry.fault, entry.how, entry.number) == (
            "alice",
            "pc2-address-cleared",
            "given up",
            1,
        )
        assert (entry.fixed, entry.regressions, entry.seconds) == (True, ["pc1-address"], 120)
        assert (entry.copilot_turns, entry.copilot_calls) == (2, 3)
        assert await store.latest_exercise("alice", "two PCs") == ended
        assert await store.latest_exercise("bob", "two PCs") is None
        assert await store.started_at("alice", "two PCs") is not None  # the older rows stay
    finally:
        await store.close()
