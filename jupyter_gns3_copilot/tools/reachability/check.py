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
