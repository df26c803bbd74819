"""The words for what happened, shared by every view: `ok`, `partial`, `failed`, `refused`.

A command tool's result has one entry per device (`device_name`, `status`, `output`, ...);
its `status` says how the console delivered the commands (`success`, `partial_success`,
`failed`), its `outcome` what came of them: a ping that was delivered but got no answer
is delivered (`success`) and `failed`. `judge_device` decides that outcome where the
result is made (`tools.command_tools`); `device_outcome` reads it back wherever the result
is shown (the card's summary, `Turn.tool_results` in the kernel), also from results saved
before entries carried it.

Plain Python, nothing imported: the kernel side uses it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeGuard, get_args

Outcome = Literal["ok", "partial", "failed", "refused"]
"""ok: it did what was asked and every check passed; partial: some of it; failed: none
of it, or a check failed; refused: the mode, the command policy or a person kept it from
running (nothing was done)."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
DELIVERY_OUTCOMES: Mapping[str, Outcome] = {
    "success": "ok",
    "partial_success": "partial",
    "failed": "failed",
}
"""A device's delivery status in outcome words (for results that carry no outcome)."""


def combine(outcomes: Iterable[Outcome]) -> Outcome:
    """One outcome for many (devices of a call, checks of a device): ok when all are ok
    (or there are none), refused when all were refused, failed when none got through,
    else partial."""
    kinds = set(outcomes)
    if not kinds or kinds == {"ok"}:
        return "ok"
    if kinds == {"refused"}:
        return "refused"
    if kinds <= {"failed", "refused"}:
        return "failed"
    return "partial"


def judge_device(delivery: str, checks: Iterable[Outcome], *, refused: bool) -> Outcome:
    """A device's outcome: `refused` when the policy sent none of its commands; `failed`
    when none was delivered or its checks (pings, traces) all failed; `partial` when some
    commands or checks did not get through; else `ok`."""
    if refused:
        return "refused"
    delivered = DELIVERY_OUTCOMES.get(delivery, "failed")
    checked = combine(checks)
    if "failed" in (delivered, checked):
        return "failed"
    if "partial" in (delivered, checked):
        return "partial"
    return "ok"


def _is_outcome(value: object) -> TypeGuard[Outcome]:
    return value in OUTCOMES


def device_outcome(entry: Mapping[str, Any]) -> Outcome:
    """The outcome of one device entry: its `outcome`, or for an entry saved without one,
    what its delivery status and held-back commands say."""
    outcome = entry.get("outcome")
    if _is_outcome(outcome):
        return outcome
    blocked = {
        str(b.get("command")) for b in entry.get("blocked_commands") or [] if isinstance(b, Mapping)
    }
    sent = [c for c in entry.get("commands") or [] if c not in blocked]
    return judge_device(str(entry.get("status")), (), refused=bool(blocked) and not sent)
