"""VPCS `ping` and `trace` output.

What VPCS prints, per probe: an answer (`84 bytes from 10.0.0.2 icmp_seq=1 ttl=64 time=0.3
ms`; VPCS 0.5 leaves out "84 bytes from"; `udp_seq` with `-P 17`; `Connect   7@10.0.0.2
seq=1 ttl=64 ...` with `-P 6`), a lost probe (`10.0.0.2 icmp_seq=1 timeout`,
`Connect   7@10.0.0.2 timeout`) or an ICMP error from a router (`*10.0.0.254 icmp_seq=1
ttl=255 time=1.2 ms (ICMP type:3, code:1, Destination host unreachable)`). When it sends
nothing it says why on a line of its own: `No gateway found`, `host (10.0.0.9) not
reachable` (no ARP answer from the host or its gateway), `Cannot resolve NAME`.

A trace prints `trace to HOST, N hops max` and numbered hops (`1   10.0.0.254   1.2 ms`,
`1     *  *  *`); the destination answers its UDP probe with `(ICMP type:3, code:3,
Destination port unreachable)`, which is the trace arriving, not a failure.
"""

from __future__ import annotations

import re

from ..policy import spelled_out
from .check import Check, Problem, argument, first_line, hop_addresses, trace_check

_OPTIONS_WITH_VALUES = frozenset({"-c", "-D", "-f", "-i", "-l", "-m", "-p", "-P", "-s", "-T", "-w"})

_ANSWER = re.compile(
    r"^(?:\d+ bytes from )?[^*\s]\S* (?:icmp|udp)_seq=\d+ ttl=\d+"
    r"|^Connect\s+\d+@\S+ seq=\d+ ttl=\d+",
    re.MULTILINE,
)
_LOST = re.compile(r"^(?:\S+ (?:icmp|udp)_seq=\d+|Connect\s+\d+@\S+(?: seq=\d+)?) timeout", re.M)
_ICMP_ERROR = re.compile(r"^\*\S+ .*\(ICMP type:\s*\d+, code:\s*\d+, (?P<what>[^)]*)\)", re.M)
_NOT_SENT: tuple[tuple[re.Pattern[str], Problem], ...] = (
    # A name VPCS cannot resolve may come after the gateway's own problem: it says most.
    (re.compile(r"^Cannot resolve ", re.MULTILINE), "host not found"),
    (re.compile(r"^No gateway found", re.MULTILINE), "no gateway"),
    (re.compile(r"^host \([^)\n]*\) not reachable", re.MULTILINE), "address not reachable"),
)
_TRACE_TO = re.compile(r"^trace to (?P<host>[^,\s]+),", re.MULTILINE)
_ARRIVED = re.compile(r"code:\s*3, Destination port unreachable")
_HOP_ERROR = re.compile(r"\(ICMP type:\s*\d+, code:\s*\d+, (?P<what>[^)]*)\)")


def read(command: str, output: str) -> Check | None:
    """The check of a VPCS `ping` or `trace` (None for any other command)."""
    words = spelled_out(command, "vpcs")
    if not words or words[0] not in ("ping", "trace"):
        return None
    target = argument(words[1:], _OPTIONS_WITH_VALUES)
    not_sent = _not_sent(output)
    if words[0] == "trace":
        return _trace(command, target, output, not_sent)
    answered = len(_ANSWER.findall(output))
    errors = [match.group("what") for match in _ICMP_ERROR.finditer(output)]
    sent = answered + len(_LOST.findall(output)) + len(errors)
    if sent == 0 and not_sent is not None:
        return Check(command, "ping", target, 0, 0, problem=not_sent[0], detail=not_sent[1])
    problem: Problem | None = None
    detail = None
    if errors:
        problem, detail = "destination unreachable", errors[0]
    elif answered < sent:
        problem, detail = "timeout", first_line(_LOST, output)
    elif sent == 0:
        problem = "no answer"
    return Check(command, "ping", target, sent, answered, problem=problem, detail=detail)


def _not_sent(output: str) -> tuple[Problem, str] | None:
    for pattern, problem in _NOT_SENT:
        line = first_line(pattern, output)
        if line is not None:
            return problem, line
    return None


def _trace(
    command: str, target: str | None, output: str, not_sent: tuple[Problem, str] | None
) -> Check:
    header = _TRACE_TO.search(output)
    if header is not None:
        target = header.group("host")
    hops = hop_addresses(output)
    error = _HOP_ERROR.search(output)
    return trace_check(
        command,
        target,
        hops,
        reached=any(address == target or _ARRIVED.search(line) for address, line in hops),
        not_sent=not_sent,
        unreachable=error.group("what") if error is not None else None,
    )
