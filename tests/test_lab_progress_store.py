"""Students' lab progress kept in the project's real SQLite database
(`store.lab_progress`, `objectives.progress.StudentProgress` with a store): a new
`StudentProgress` on the same data directory (a restarted server) has each student's
latest results and chosen stage; a catch-up forgets the results, not the stages; and
watchers hear each change."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from jupyter_gns3_copilot.objectives.progress import StudentProgress
from jupyter_gns3_copilot.objectives.results import ObjectiveResult
from jupyter_gns3_copilot.store import database_path
from jupyter_gns3_copilot.store.lab_progress import LabProgressStore

PROJECT = "6321e0ab-1c2d-4e5f-8a9b-0c1d2e3f4a5b"


def result(objective: str, status: str, explanation: str = "e") -> ObjectiveResult:
    return ObjectiveResult(
        id=objective, stage="s", text="t", status=status, points=1,
        points_awarded=int(status == "pass"), explanation=explanation, duration_ms=1,
    )  # fmt: skip


async def closed(progress: StudentProgress) -> None:
    """Close the progress's store (its connection's thread ends with the test's loop)."""
    assert progress.store is not None
    await progress.store.close()


async def test_a_new_progress_on_the_same_data_dir_has_the_results_and_stages(
    tmp_path: Path,
) -> None:
    """Given alice's and bob's checks and alice's chosen stage; when a second
    `StudentProgress` opens the same data directory; then it has each student's latest
    results (the later check of an objective replacing the earlier) and alice's stage."""
    store = LabProgressStore(tmp_path)
    first = StudentProgress(store)
    await first.record(PROJECT, "alice", [result("a", "fail", "PC1 has no IPv4 address.")])
    await first.record(PROJECT, "alice", [result("a", "pass", "PC1 has 10.0.0.1/24.")])
    await first.record(PROJECT, "bob", [result("a", "fail"), result("b", "pass")])
    await first.choose(PROJECT, "alice", "routing")
    await store.close()

    again = StudentProgress(LabProgressStore(tmp_path))
    alice = await again.results(PROJECT, "alice")
    bob = await again.results(PROJECT, "bob")
    assert {k: (r.status, r.explanation) for k, r in alice.items()} == {
        "a": ("pass", "PC1 has 10.0.0.1/24.")
    }
    assert {k: r.status for k, r in bob.items()} == {"a": "fail", "b": "pass"}
    assert again._chosen == {(PROJECT, "alice"): "routing"}
    assert database_path(tmp_path, PROJECT).exists()
    await closed(again)


async def test_a_catch_up_forgets_the_results_and_keeps_the_stages(tmp_path: Path) -> None:
    store = LabProgressStore(tmp_path)
    progress = StudentProgress(store)
    await progress.record(PROJECT, "alice", [result("a", "pass")])
    await progress.choose(PROJECT, "alice", "routing")
    await progress.choose(PROJECT, "bob", "addressing")
    await progress.choose(PROJECT, "bob", None)
    await progress.forget(PROJECT)
    await store.close()

    again = StudentProgress(LabProgressStore(tmp_path))
    assert await again.results(PROJECT, "alice") == {}
    assert again._chosen == {(PROJECT, "alice"): "routing"}
    await closed(again)


async def test_reading_a_project_without_progress_creates_no_database(tmp_path: Path) -> None:
    progress = StudentProgress(LabProgressStore(tmp_path))
    assert await progress.results(PROJECT, "alice") == {}
    assert not database_path(tmp_path, PROJECT).exists()


async def test_a_stored_result_of_another_shape_is_dropped(tmp_path: Path) -> None:
    """A row an older version wrote in another shape does not break the lab: it is left
    out, the others are read."""
    store = LabProgressStore(tmp_path)
    await StudentProgress(store).record(PROJECT, "alice", [result("a", "pass")])
    await store.close()
    with sqlite3.connect(database_path(tmp_path, PROJECT)) as conn:
        conn.execute(
            "INSERT INTO lab_results (user_id, objective_id, result) VALUES ('alice', 'b', '{}')"
        )
    progress = StudentProgress(LabProgressStore(tmp_path))
    assert list(await progress.results(PROJECT, "alice")) == ["a"]
    await closed(progress)


async def test_dropping_a_project_closes_its_database_so_its_folder_can_go(
    tmp_path: Path,
) -> None:
    store = LabProgressStore(tmp_path)
    progress = StudentProgress(store)
    await progress.record(PROJECT, "alice", [result("a", "pass")])
    await progress.drop(PROJECT)
    assert store._conns == {}
    assert await progress.results(PROJECT, "alice") != {}  # read again: the files are there
    await store.close()


async def test_watchers_hear_the_changes_of_their_student_only(tmp_path: Path) -> None:
    progress = StudentProgress(LabProgressStore(tmp_path))
    with (
        progress.watch.watching(PROJECT, "alice") as alice,
        progress.watch.watching(PROJECT, "bob") as bob,
    ):
        await progress.record(PROJECT, "alice", [result("a", "pass")])
        assert alice.is_set() and not bob.is_set()
        alice.clear()
        await progress.choose(PROJECT, "bob", "routing")
        assert bob.is_set() and not alice.is_set()
        bob.clear()
        await progress.forget(PROJECT)  # a catch-up: everyone's results
        assert alice.is_set() and bob.is_set()
    await asyncio.sleep(0)
    assert progress.watch._watchers == {}
    await closed(progress)


async def test_closing_a_project_closes_its_database_and_the_next_change_opens_it(
    tmp_path: Path,
) -> None:
    store = LabProgressStore(tmp_path)
    progress = StudentProgress(store)
    await progress.record(PROJECT, "alice", [result("a", "fail")])
    await progress.close(PROJECT)
    assert store._conns == {}
    await progress.record(PROJECT, "alice", [result("a", "pass")])
    await store.close()
    again = StudentProgress(LabProgressStore(tmp_path))
    assert {k: r.status for k, r in (await again.results(PROJECT, "alice")).items()} == {
        "a": "pass"
    }
    await closed(again)


async def test_a_students_exercise_outlives_the_server_and_their_model_calls_are_counted(
    tmp_path: Path,
) -> None:
    """An exercise saved for alice is read back by a new `StudentProgress`; the model
    calls are 0 before any chat, then the sum of alice's sessions' counters (not bob's)."""
    from datetime import datetime, timezone

    from jupyter_gns3_copilot.objectives.exercise_model import ExerciseRecord
    from jupyter_gns3_copilot.store import ProjectStore
    from jupyter_gns3_copilot.store.sessions import StatsDelta

    store = LabProgressStore(tmp_path)
    first = StudentProgress(store)
    record = ExerciseRecord(
        fault="pc1-wrong-gateway", started_at=datetime.now(timezone.utc), broken=["a"],
        passed_before=["a", "b"], calls_at_start=0, saved=["PC1"],
    )  # fmt: skip
    assert await first.model_calls(PROJECT, "alice") == 0
    await first.save_exercise(PROJECT, "alice", record)
    await store.close()

    again = StudentProgress(LabProgressStore(tmp_path))
    assert await again.exercise(PROJECT, "alice") == record
    assert await again.exercise(PROJECT, "bob") is None
    async with await ProjectStore.open(tmp_path, PROJECT) as chats:
        for user, calls in (("alice", 2), ("alice", 3), ("bob", 7)):
            thread = f"t-{user}-{calls}"
            await chats.sessions.create_session(thread, user)
            assert await chats.sessions.update_session(
                thread, increments=StatsDelta(llm_calls=calls)
            )
    assert await again.model_calls(PROJECT, "alice") == 5
    await closed(again)
