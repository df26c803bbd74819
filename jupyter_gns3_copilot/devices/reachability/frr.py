"""FRRouting vtysh `ping` and `traceroute` output.

vtysh runs the router's own programs: `ping WORD` (also `ping ip WORD`, `ping ipv6
WORD`) the lab kit's wrapper around BusyBox ping, which sends 5 probes (vtysh passes no
count: `ping -c 2 HOST` is `% Unknown command`), and `traceroute WORD` BusyBox
traceroute; their output is read as Linux's (`linux.judged`), e.g. `5 packets
transmitted, 5 packets received, 0% packet loss` or `ping: sendto: Network is
unreachable`.
"""

from __future__ import annotations

from ..policy import spelled_out
from .check import Check, CheckKind
from .linux import judged

_FAMILIES = frozenset({"ip", "ipv6"})


def read(command: str, output: str) -> Check | None:
    """The check of a vtysh `ping` or `traceroute` (None for any other command)."""
    words = spelled_out(command, "frr")
    if not words or words[0] not in ("ping", "traceroute"):
        return None
    kind: CheckKind = "ping" if words[0] == "ping" else "trace"
    rest = words[1:]
    if rest[:1] and rest[0] in _FAMILIES:
        rest = rest[1:]
    return judged(command, kind, rest[0] if rest else None, output)
