"""Token budgets of a class: per hub group per UTC day, a course-wide daily cap, and a cap
on each student's model calls in flight.

`BudgetPolicy` is the configured policy; `BudgetOverrides` are the changes made at run time
(kept by the usage store, changed from the dashboard). A budget counts the prompt and
completion tokens of the calls *started* on a UTC day; it resets at 00:00 UTC. A call is
refused once the tokens used have reached the budget: a call started below it runs to its
end, so a student can pass the budget by at most the calls they had running.

A refusal is a `Refusal`: one readable line for the student and an error code starting
with "copilot_" (`agent.llm_errors.GATEWAY_REFUSAL_PREFIX`), by which the copilot knows to show
the line as is.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt

from .caller import Caller

DailyTokens = NonNegativeInt | None
"""Tokens a day; None is unlimited."""

RESET_NOTE = "it resets at 00:00 UTC"

RefusalCode = Literal[
    "copilot_budget_exceeded", "copilot_course_budget_exceeded", "copilot_too_many_calls"
]


class Override(BaseModel):
    """A daily budget set at run time (None: unlimited)."""

    model_config = ConfigDict(frozen=True)

    daily_tokens: DailyTokens


class BudgetOverrides(BaseModel):
    """Budgets set at run time; they win over the policy's. A name that is absent has no
    override; a name mapped to None is unlimited."""

    model_config = ConfigDict(frozen=True)

    users: dict[str, DailyTokens] = Field(default_factory=dict)
    groups: dict[str, DailyTokens] = Field(default_factory=dict)
    course: Override | None = None


class Budget(BaseModel):
    """A caller's effective daily budget and where it comes from."""

    model_config = ConfigDict(frozen=True)

    daily_tokens: DailyTokens
    source: str
    """"user override", "group <name>" or "default"."""


class BudgetLeft(BaseModel):
    """A caller's budget today, as `GET api/usage` answers it (None: no limit applies)."""

    daily_tokens: DailyTokens
    used_today: NonNegativeInt
    left: NonNegativeInt | None
    """Tokens left today, the course-wide cap included; it resets at 00:00 UTC."""


class Refusal(BaseModel):
    """Why a call is refused: `message` is one line written for the student."""

    model_config = ConfigDict(frozen=True)

    code: RefusalCode
    message: str


class BudgetPolicy(BaseModel):
    """The class's budgets, e.g. `{"group_daily_tokens": {"students": 50000, "tas": null}}`.

    A caller's daily budget: a user override if one is set; else, over the caller's groups
    that have a budget (the policy's, replaced by group overrides), unlimited if any of
    them is, else the largest; else `default_daily_tokens` for a caller in no such group.
    `course_daily_tokens` caps the tokens of everyone together (TAs and instructors
    included) per UTC day; `max_concurrent_calls` caps each user's calls in flight.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    group_daily_tokens: dict[str, DailyTokens] = Field(default_factory=dict)
    default_daily_tokens: DailyTokens = 50_000
    course_daily_tokens: DailyTokens = None
    max_concurrent_calls: PositiveInt | None = 2
    """Per user; None: no cap."""

    def daily_budget(self, caller: Caller, overrides: BudgetOverrides) -> Budget:
        """`caller`'s effective daily budget."""
        if caller.name in overrides.users:
            return Budget(daily_tokens=overrides.users[caller.name], source="user override")
        budgets = {**self.group_daily_tokens, **overrides.groups}
        listed = {group: budgets[group] for group in sorted(caller.groups) if group in budgets}
        if not listed:
            return Budget(daily_tokens=self.default_daily_tokens, source="default")
        unlimited = [group for group, tokens in listed.items() if tokens is None]
        if unlimited:
            return Budget(daily_tokens=None, source=f"group {unlimited[0]}")
        group = max(listed, key=lambda name: listed[name] or 0)
        return Budget(daily_tokens=listed[group], source=f"group {group}")

    def course_budget(self, overrides: BudgetOverrides) -> DailyTokens:
        """The course-wide daily cap in force (None: none)."""
        return overrides.course.daily_tokens if overrides.course else self.course_daily_tokens

    def refusal(
        self,
        caller: Caller,
        overrides: BudgetOverrides,
        *,
        used_today: int,
        course_used_today: int,
    ) -> Refusal | None:
        """Why `caller` may not start a call now given the tokens used today, or None."""
        course = self.course_budget(overrides)
        if course is not None and course_used_today >= course:
            return Refusal(
                code="copilot_course_budget_exceeded",
                message=(
                    f"The course's copilot budget for today is used up: "
                    f"{course_used_today:,} of {course:,} tokens; {RESET_NOTE}."
                ),
            )
        budget = self.daily_budget(caller, overrides).daily_tokens
        if budget is not None and used_today >= budget:
            return Refusal(
                code="copilot_budget_exceeded",
                message=(
                    f"Your copilot budget for today is used up: {used_today:,} of "
                    f"{budget:,} tokens; {RESET_NOTE}."
                ),
            )
        return None

    def concurrency_refusal(self, running: int) -> Refusal | None:
        """The refusal of one more call while `running` of the user's calls are in flight."""
        cap = self.max_concurrent_calls
        if cap is None or running < cap:
            return None
        calls = "call is" if cap == 1 else "calls are"
        return Refusal(
            code="copilot_too_many_calls",
            message=(
                f"Too many copilot calls at once: {cap} {calls} already running, the most "
                "allowed per student; wait for one to finish and try again."
            ),
        )
