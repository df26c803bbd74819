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
