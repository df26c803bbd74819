"""Linux `ping` / `ping6` (iputils and BusyBox) and `traceroute` (BusyBox and the
traceroute package) output.

A ping sums up with `3 packets transmitted, 2 received, 33% packet loss` (BusyBox: `2
packets received`); a router or the kernel saying it cannot deliver prints `From 10.9.0.1
icmp_seq=1 Destination Host Unreachable`. When nothing can be sent the program says why
on a line starting with its name: `ping: connect: Network is unreachable` (BusyBox:
`ping: sendto: ...`), `ping: NAME: Name or service not known` or `... Temporary failure
in name resolution` (older iputils: `ping: unknown host NAME`; BusyBox: `ping: bad
address 'NAME'`).

A traceroute prints `traceroute to HOST (ADDRESS), ...` and numbered hops (`1  10.9.0.1
0.1 ms`, `1  *  *  *`, `!H` / `!N` after a time: host / network unreachable); it has
arrived when ADDRESS answers a hop.
"""

from __future__ import annotations

import re

from ..policy import spelled_out
from .check import (
    Check,
    CheckKind,
    Problem,
    argument,
    first_line,
    hop_addresses,
    trace_check,
    unreachable_mark,
)

_PINGS = frozenset({"ping", "ping6"})
_TRACES = frozenset({"traceroute", "traceroute6"})
_OPTIONS_WITH_VALUES = frozenset(
    {
        "-c",
        "-i",
        "-I",
        "-l",
        "-m",
        "-M",
        "-p",
        "-Q",
        "-s",
        "-S",
        "-t",
        "-T",
        "-w",
        "-W",
        "-q",
        "-f",
        "-g",
        "-N",
        "-z",
        "-F",
        "-A",
    }
)
_SUMMARY = re.compile(r"(?P<sent>\d+) packets transmitted, (?P<received>\d+) (?:packets )?received")
_ANSWER = re.compile(r"^\d+ bytes from .*\b(?:icmp_)?seq=\d+", re.MULTILINE)
_UNDELIVERED = re.compile(r"^From \S+.* (?:icmp_)?seq=\d+ (?P<what>.+)$", re.MULTILINE)
_OWN_ERROR = re.compile(r"^(?:ping6?|traceroute6?): .+$", re.MULTILINE)
_UNRESOLVED = re.compile(
    r"Name or service not known|Temporary failure in name resolution|No address associated"
    r"|Name has no usable address|unknown host|bad address|Unknown host",
)
_TRACE_TO = re.compile(r"^traceroute6? to \S+ \((?P<address>[^)]+)\)", re.MULTILINE)


def read(command: str, output: str) -> Check | None:
    """The check of a Linux ping or traceroute (None for any other command)."""
    words = spelled_out(command, "linux")
    if words[:1] == ["busybox"]:
        words = words[1:]
    if not words or words[0] not in _PINGS | _TRACES:
        return None
    kind: CheckKind = "ping" if words[0] in _PINGS else "trace"
    return judged(command, kind, argument(words[1:], _OPTIONS_WITH_VALUES), output)


def judged(command: str, kind: CheckKind, target: str | None, output: str) -> Check:
    """The check of a ping or traceroute (`kind`) to `target` whose `output` is that of
    the Linux programs (module docstring), whatever typed them: a shell, or a router's
    CLI running them."""
    own_error = first_line(_OWN_ERROR, output)
    cannot: Problem | None = None
    if own_error is not None:
        unresolved = _UNRESOLVED.search(own_error)
        cannot = (
            "host not found"
            if unresolved
            else ("network unreachable" if "unreachable" in own_error.lower() else "no answer")
        )
    if kind == "trace":
        return _trace(command, target, output, cannot, own_error)
    summary = _SUMMARY.search(output)
    if summary is None:
        answered = len(_ANSWER.findall(output))
        if answered:
            return Check(command, kind, target, answered, answered)
        return Check(command, kind, target, 0, 0, problem=cannot or "no answer", detail=own_error)
    sent, received = int(summary.group("sent")), int(summary.group("received"))
    problem: Problem | None = None
    detail = None
    undelivered = _UNDELIVERED.search(output)
    if received < sent:
        if undelivered is not None:
            problem, detail = "destination unreachable", undelivered.group("what").strip()
        else:
            problem, detail = "timeout", first_line(_SUMMARY, output)
    return Check(command, kind, target, sent, received, problem=problem, detail=detail)


def _trace(
    command: str, target: str | None, output: str, cannot: Problem | None, own_error: str | None
) -> Check:
    header = _TRACE_TO.search(output)
    if header is not None:
        target = header.group("address")
    hops = hop_addresses(output)
    return trace_check(
        command,
        target,
        hops,
        reached=any(address and address == target for address, _ in hops),
        not_sent=(cannot, own_error) if cannot is not None else None,
        unreachable=unreachable_mark(hops),
    )
