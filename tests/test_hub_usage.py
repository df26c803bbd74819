"""The hub's usage store (real SQLite files) and budget policy."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import aiosqlite
import pytest
from pydantic import ValidationError

from jupyter_gns3_copilot.agent.llm_errors import GATEWAY_REFUSAL_PREFIX
from jupyter_gns3_copilot.hub.budgets import BudgetOverrides, BudgetPolicy, Override
from jupyter_gns3_copilot.hub.caller import Caller
from jupyter_gns3_copilot.hub.usage import CSV_COLUMNS, ModelCall, SqliteUsageStore, database_path

DAY = date(2026, 3, 2)
NOON = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
ALICE = Caller(name="alice", groups=frozenset({"students"}))
BOB = Caller(name="bob", groups=frozenset({"students"}))
TA = Caller(name="tom", groups=frozenset({"students", "tas"}))
NOBODY = Caller(name="eve")


def call(
    user: str,
    prompt: int,
    completion: int,
    *,
    at: datetime = NOON,
    status: str = "ok",
    **fields: object,
) -> ModelCall:
    return ModelCall(
        user=user,
        groups=frozenset({"students"}),
        model="gpt-4o-mini",
        started_at=at,
        ended_at=at + timedelta(seconds=2),
        status=status,
        prompt_tokens=prompt,
        completion_tokens=completion,
        **fields,
    )


# -- budgets ----------------------------------------------------------------------------


POLICY = BudgetPolicy(
    group_daily_tokens={"students": 50_000, "tas": None, "project-week": 80_000},
    default_daily_tokens=1_000,
    course_daily_tokens=2_000_000,
)


def test_a_callers_budget_comes_from_their_groups_and_overrides() -> None:
    none = BudgetOverrides()
    assert POLICY.daily_budget(ALICE, none).daily_tokens == 50_000
    assert POLICY.daily_budget(TA, none).daily_tokens is None  # any unlimited group wins
    both = Caller(name="carol", groups=frozenset({"students", "project-week", "chess-club"}))
    assert POLICY.daily_budget(both, none).model_dump() == {
        "daily_tokens": 80_000,
        "source": "group project-week",
    }
    assert POLICY.daily_budget(NOBODY, none).model_dump() == {
        "daily_tokens": 1_000,
        "source": "default",
    }
    overrides = BudgetOverrides(users={"alice": 5_000}, groups={"students": 20_000, "tas": 9})
    assert POLICY.daily_budget(ALICE, overrides).daily_tokens == 5_000
    assert POLICY.daily_budget(BOB, overrides).daily_tokens == 20_000
    assert POLICY.daily_budget(TA, overrides).daily_tokens == 20_000
    assert POLICY.daily_budget(BOB, BudgetOverrides(users={"bob": None})).daily_tokens is None
    assert POLICY.course_budget(none) == 2_000_000
    assert POLICY.course_budget(BudgetOverrides(course=Override(daily_tokens=None))) is None


def test_refusals_are_one_readable_line_with_a_copilot_code() -> None:
    none = BudgetOverrides()
    assert POLICY.refusal(ALICE, none, used_today=49_999, course_used_today=0) is None
    refused = POLICY.refusal(ALICE, none, used_today=50_000, course_used_today=50_000)
    assert refused is not None
    assert refused.message == (
        "Your copilot budget for today is used up: 50,000 of 50,000 tokens; it resets at 00:00 UTC."
    )
    course = POLICY.refusal(TA, none, used_today=0, course_used_today=2_000_000)
    assert course is not None and course.message == (
        "The course's copilot budget for today is used up: 2,000,000 of 2,000,000 tokens; "
        "it resets at 00:00 UTC."
    )
    assert POLICY.refusal(TA, none, used_today=10**9, course_used_today=0) is None
    busy = POLICY.concurrency_refusal(running=2)
    assert POLICY.concurrency_refusal(running=1) is None
    assert busy is not None and busy.message == (
        "Too many copilot calls at once: 2 calls are already running, the most allowed per "
        "student; wait for one to finish and try again."
    )
    for refusal in (refused, course, busy):
        assert refusal.code.startswith(GATEWAY_REFUSAL_PREFIX) and "\n" not in refusal.message
    assert BudgetPolicy(max_concurrent_calls=None).concurrency_refusal(running=100) is None


def test_a_policy_refuses_bad_values() -> None:
    with pytest.raises(ValidationError):
        BudgetPolicy(group_daily_tokens={"students": -1})
    with pytest.raises(ValidationError):
        BudgetPolicy(max_concurrent_calls=0)
    with pytest.raises(ValidationError):
        BudgetPolicy.model_validate({"students": 5})  # a typo'd field is not ignored


# -- the store ------------------------------------------------------------------------------


async def test_usage_is_counted_per_user_and_per_course_per_utc_day(tmp_path: Path) -> None:
    store = await SqliteUsageStore.open(tmp_path)
    try:
        await store.record(call("alice", 100, 20, turn_id="t1"))
        await store.record(call("alice", 200, 30, turn_id="t1"))
        await store.record(call("alice", 0, 0, status="refused", detail="copilot_budget_exceeded"))
        await store.record(call("bob", 50, 5, usage_reported=False))
        # 23:59:59 the day before and 00:00:00 the day after belong to other days.
        await store.record(
            call("alice", 1000, 1, at=datetime(2026, 3, 1, 23, 59, 59, tzinfo=timezone.utc))
        )
        await store.record(call("alice", 7, 0, at=datetime(2026, 3, 3, tzinfo=timezone.utc)))
        assert await store.tokens_used(DAY, "alice") == 350
        assert await store.tokens_used(DAY, "bob") == 55
        assert await store.tokens_used(DAY, "carol") == 0
        assert await store.tokens_used(DAY) == 405
        assert await store.tokens_used(date(2026, 3, 1)) == 1001
        usage = {u.user: u for u in await store.user_usage(DAY)}
        alice = usage["alice"]
        assert (alice.tokens_today, alice.tokens_total) == (350, 1358)
        assert (alice.calls_today, alice.calls_total) == (2, 4)  # the refusal is no call
        assert (alice.turns_today, alice.turns_total) == (1, 1)
        assert alice.last_activity == datetime(2026, 3, 3, 0, 0, 2, tzinfo=timezone.utc)
        assert alice.groups == ["students"]
        assert usage["bob"].tokens_today == 55
    finally:
        await store.close()
    assert database_path(tmp_path).is_file()


async def test_call_times_must_carry_a_timezone() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        call("alice", 1, 1, at=datetime(2026, 3, 2, 12, 0))


async def test_overrides_are_kept_across_restarts(tmp_path: Path) -> None:
    store = await SqliteUsageStore.open(tmp_path)
    await store.set_override("user", "alice", 5_000)
    await store.set_override("group", "tas", None)
    await store.set_override("group", "students", 10_000)
    await store.set_override("course", "", 900_000)
    await store.set_override("group", "students", 20_000)  # replaces
    await store.clear_override("group", "tas")
    with pytest.raises(ValueError, match="needs the user's name"):
        await store.set_override("user", "", 5)
    with pytest.raises(ValidationError):
        await store.set_override("user", "bob", -5)
    await store.close()
    reopened = await SqliteUsageStore.open(tmp_path)
    try:
        assert await reopened.overrides() == BudgetOverrides(
            users={"alice": 5_000},
            groups={"students": 20_000},
            course=Override(daily_tokens=900_000),
        )
    finally:
        await reopened.close()


async def test_an_older_database_gets_the_new_columns(tmp_path: Path) -> None:
    """Migrations add missing columns (found with PRAGMA table_info) and keep the rows."""
    async with aiosqlite.connect(database_path(tmp_path)) as conn:
        await conn.execute(
            "CREATE TABLE model_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, hub_user TEXT NOT "
            "NULL, model TEXT NOT NULL, day TEXT NOT NULL, started_at TEXT NOT NULL, ended_at "
            "TEXT NOT NULL, status TEXT NOT NULL, prompt_tokens INTEGER NOT NULL DEFAULT 0, "
            "completion_tokens INTEGER NOT NULL DEFAULT 0)"
        )
        await conn.execute(
            "INSERT INTO model_calls (hub_user, model, day, started_at, ended_at, status, "
            "prompt_tokens, completion_tokens) VALUES ('alice', 'm', '2026-03-02', "
            "'2026-03-02T10:00:00.000000+00:00', '2026-03-02T10:00:01.000000+00:00', 'ok', 3, 4)"
        )
        await conn.commit()
    store = await SqliteUsageStore.open(tmp_path)
    try:
        await store.record(call("alice", 10, 1, turn_id="t9"))
        usage = await store.user_usage(DAY)
        assert [(u.user, u.tokens_total, u.turns_total) for u in usage] == [("alice", 18, 1)]
        rows = list(csv.DictReader(io.StringIO(await store.export_csv())))
        assert [(r["groups"], r["usage_reported"]) for r in rows] == [
            ("", "yes"),
            ("students", "yes"),
        ]
    finally:
        await store.close()


async def test_csv_export_by_day_and_safe_in_spreadsheets(tmp_path: Path) -> None:
    store = await SqliteUsageStore.open(tmp_path)
    try:
        await store.record(call("alice", 100, 20, turn_id="t1"))
        await store.record(call("=cmd|'/c calc'!A1", 1, 1, usage_reported=False))
        await store.record(call("bob", 0, 0, status="refused", detail="copilot_budget_exceeded"))
        await store.record(call("bob", 5, 5, at=NOON + timedelta(days=1)))
        text = await store.export_csv(since=DAY, until=DAY)
        rows = list(csv.reader(io.StringIO(text)))
        assert tuple(rows[0]) == CSV_COLUMNS
        body = [dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]]
        assert [(r["user"], r["status"], r["total_tokens"]) for r in body] == [
            ("alice", "ok", "120"),
            ("'=cmd|'/c calc'!A1", "ok", "2"),
            ("bob", "refused", "0"),
        ]
        assert body[0]["started_at"] == "2026-03-02T12:00:00.000000+00:00"
        assert (body[1]["usage_reported"], body[2]["detail"]) == ("no", "copilot_budget_exceeded")
        assert len(list(csv.reader(io.StringIO(await store.export_csv())))) == 5
        later = await store.export_csv(since=DAY + timedelta(days=1))
        assert [r[3] for r in csv.reader(io.StringIO(later))] == ["user", "bob"]
    finally:
        await store.close()
