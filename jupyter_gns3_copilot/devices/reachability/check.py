"""A reachability check read from device output (`Check`), and the parts of it every
dialect's reader shares (probe counting, trace hops)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

CheckKind = Literal["ping", "trace"]
CheckOutcome = Literal["ok", "partial", "failed"]
Problem = Literal[
    "no gateway",
    "address not reachable",
    "host not found",
    "network unreachable",
    "destination unreachable",
    "timeout",
    "no answer",
]
"""What went wrong, in the same words whatever the dialect said:

- `no gateway`: the destination is off the device's subnet and it has no gateway (nothing
  was sent);
- `address not reachable`: no answer to the device's ARP request for the destination or
  its gateway (nothing was sent);
- `host not found`: the name or address could not be resolved or was not understood;
- `network unreachable`: the device has no route (nothing was sent);
- `destination unreachable`: a router or host answered that it cannot reach it (ICMP);
- `timeout`: probes went out and none (or not all) came back;
- `no answer`: the output shows no answer at all, in a form not recognised otherwise.
"""


@dataclass(frozen=True)
class Check:
    """One ping or trace as the device reported it.

    A ping counts `sent` probes (0: none could be sent) and `received` answers; a trace
    says whether the destination itself answered (`reached`). `problem` and `detail` (the
    device's own line) say what went wrong, when something did.
    """

    command: str
    kind: CheckKind
    target: str | None = None
    sent: int | None = None
    received: int | None = None
    reached: bool | None = None
    problem: Problem | None = None
    detail: str | None = None

    @property
    def outcome(self) -> CheckOutcome:
        """`ok` (every probe answered; the trace reached the destination), `partial` (some
        probes answered) or `failed` (none; nothing sent; the trace did not get there)."""
        if self.kind == "trace":
            return "ok" if self.reached else "failed"
        if not self.sent or not self.received:
            return "failed"
        return "ok" if self.received >= self.sent else "partial"

    def as_dict(self) -> dict[str, Any]:
        """The check as the tools' results carry it (fields that are None left out)."""
        fields = {
            "command": self.command,
            "kind": self.kind,
            "outcome": self.outcome,
            "target": self.target,
            "sent": self.sent,
            "received": self.received,
            "reached": self.reached,
            "problem": self.problem,
            "detail": self.detail,
        }
        return {key: value for key, value in fields.items() if value is not None}


def first_line(pattern: re.Pattern[str], output: str) -> str | None:
    """The whole line of the first match of `pattern` in `output`, stripped."""
    match = pattern.search(output)
    if match is None:
        return None
    start = output.rfind("\n", 0, match.start()) + 1
    end = output.find("\n", match.end())
    return output[start : end if end >= 0 else len(output)].strip()


def argument(words: list[str], options_with_values: frozenset[str]) -> str | None:
    """The first word of `words` that is neither an option (`-c`) nor an option's value."""
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1:
            skip = word in options_with_values
        else:
            return word
    return None


HOP = re.compile(r"^\s*(?P<hop>\d+)\s+(?P<rest>\S.*)$", re.MULTILINE)
"""A trace's hop line: its number, then what answered at that distance."""
ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[0-9a-fA-F]*:[0-9a-fA-F:]+\b")


def hop_addresses(output: str) -> list[tuple[str, str]]:
    """Each hop line's answering address (the first address in it; "" when only `*`s
    answered) and the line itself."""
    hops = []
    for match in HOP.finditer(output):
        rest = match.group("rest")
        address = ADDRESS.search(rest)
        hops.append((address.group(0) if address else "", rest.strip()))
    return hops


_UNREACHABLE_HOP = re.compile(r"!(?P<code>[HNPAX])\b")
_HOP_CODES = {
    "H": "host unreachable (!H)",
    "N": "network unreachable (!N)",
    "P": "protocol unreachable (!P)",
    "A": "administratively prohibited (!A)",
    "X": "communication administratively prohibited (!X)",
}
"""The marks IOS and Linux traceroutes print after a hop that answered "unreachable"."""


def unreachable_mark(hops: list[tuple[str, str]]) -> str | None:
    """What the first `!H`-style mark in `hops` says, in words."""
    for _, line in hops:
        mark = _UNREACHABLE_HOP.search(line)
        if mark is not None:
            return _HOP_CODES[mark.group("code")]
    return None


def trace_check(
    command: str,
    target: str | None,
    hops: list[tuple[str, str]],
    *,
    reached: bool,
    not_sent: tuple[Problem, str | None] | None = None,
    unreachable: str | None = None,
) -> Check:
    """A trace's check: arrived (`reached`); else why not, first the device's own reason
    for sending nothing (`not_sent`), then a hop's answer that the destination is
    unreachable (`unreachable`, in words), then silence (`timeout`, or `no answer` when
    not one hop was printed)."""
    if reached:
        return Check(command, "trace", target, reached=True)
    if not_sent is not None:
        problem, detail = not_sent
        return Check(command, "trace", target, reached=False, problem=problem, detail=detail)
    if unreachable is not None:
        return Check(
            command,
            "trace",
            target,
            reached=False,
            problem="destination unreachable",
            detail=unreachable,
        )
    silence: Problem = "timeout" if hops else "no answer"
    return Check(command, "trace", target, reached=False, problem=silence)
