"""Cisco IOS `ping` and `traceroute` output.

A ping prints one mark per probe (`!` answered, `.` timed out, `U` a router answered that
the destination is unreachable, `Q`, `M`, `?`, `&` other ICMP answers) and sums up with
`Success rate is 80 percent (4/5)`. A destination it cannot understand or resolve gets
`% Unrecognized host or address, or protocol not running.` and nothing is sent.

A traceroute prints `Tracing the route to HOST` and numbered hops (`1 10.0.0.2 4 msec 0
msec 4 msec`, `2  *  *  *`, `1 10.0.0.254 !H  *  !H`: `!H` host, `!N` network, `!P`
protocol unreachable, `!A` administratively prohibited); it has arrived when the
destination itself answers a hop.
"""

from __future__ import annotations

import re

from ..policy import spelled_out
from .check import (
    ADDRESS,
    Check,
    CheckKind,
    Problem,
    first_line,
    hop_addresses,
    trace_check,
    unreachable_mark,
)

_RATE = re.compile(r"Success rate is \d+ percent \((?P<received>\d+)/(?P<sent>\d+)\)")
_MARKS = re.compile(r"^[!.UQM?&]+$", re.MULTILINE)
_UNRESOLVED = re.compile(
    r"^% ?(?:Unrecognized host or address|Unknown host|Bad IP address|Invalid host)", re.M
)
_TRACING = re.compile(r"^Tracing the route to (?P<to>.+)$", re.MULTILINE)
_SKIPPED = frozenset({"ip", "ipv6"})


def read(command: str, output: str) -> Check | None:
    """The check of an IOS `ping` or `traceroute` (None for any other command)."""
    words = spelled_out(command, "cisco_ios")
    if not words or words[0] not in ("ping", "traceroute"):
        return None
    target = _target(words[1:])
    kind: CheckKind = "ping" if words[0] == "ping" else "trace"
    unresolved = first_line(_UNRESOLVED, output)
    if unresolved is not None:
        if kind == "trace":
            return Check(
                command, kind, target, reached=False, problem="host not found", detail=unresolved
            )
        return Check(command, kind, target, 0, 0, problem="host not found", detail=unresolved)
    if kind == "trace":
        return _trace(command, target, output)
    rate = _RATE.search(output)
    if rate is None:
        return Check(command, kind, target, problem="no answer")
    sent, received = int(rate.group("sent")), int(rate.group("received"))
    marks = "".join(_MARKS.findall(output))
    problem: Problem | None = None
    if received < sent:
        problem = "destination unreachable" if "U" in marks else "timeout"
    detail = rate.group(0) if problem else None
    return Check(command, kind, target, sent, received, problem=problem, detail=detail)


def _target(words: list[str]) -> str | None:
    """The destination in `ping [vrf NAME] [ip|ipv6] HOST [options]`."""
    if len(words) > 1 and words[0] == "vrf":
        words = words[2:]
    words = [word for word in words if word not in _SKIPPED]
    return words[0] if words else None


def _trace(command: str, target: str | None, output: str) -> Check:
    header = _TRACING.search(output)
    if header is not None:
        address = ADDRESS.search(header.group("to"))
        target = address.group(0) if address else header.group("to").strip()
    hops = hop_addresses(output)
    reached = any(address and address == target for address, _ in hops)
    return trace_check(command, target, hops, reached=reached, unreachable=unreachable_mark(hops))
