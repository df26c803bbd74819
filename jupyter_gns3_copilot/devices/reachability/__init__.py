"""Reachability checks read from a device's own output: did the ping or trace get through?

`read_check(dialect, command, output)` reads the output of one console command. When the
command is a ping or a trace in that dialect (VPCS `ping` / `trace`, IOS `ping` /
`traceroute`, FRR vtysh `ping` / `traceroute`, Linux `ping`, `ping6`, `traceroute`, also
through `busybox`) it answers a `Check`: probes sent and answered (a ping), whether the
destination answered (a trace), and what went wrong in a few fixed words (`Problem`)
with the device's own line as `detail`. Each dialect's output is parsed by its own module
(`vpcs`, `ios`, `frr`, `linux`); a ping is judged by what it counted, never by looking for
phrases: no answer counted is a failed check, whatever else the output says.

No I/O: the command tools call it on each command's output (`command_tools`), and its
`as_dict()` is what their results carry under `checks`.
"""

from __future__ import annotations

from .check import Check, CheckOutcome, Problem
from .frr import read as _read_frr
from .ios import read as _read_ios
from .linux import read as _read_linux
from .vpcs import read as _read_vpcs

__all__ = ["Check", "CheckOutcome", "Problem", "read_check"]

_READERS = {
    "vpcs": _read_vpcs,
    "cisco_ios": _read_ios,
    "frr": _read_frr,
    "linux": _read_linux,
}


def read_check(dialect: str, command: str, output: str) -> Check | None:
    """The check `command` made on a `dialect` console, read from its `output` (cleaned
    text); None when the command is no ping or trace, or the dialect has no reader."""
    reader = _READERS.get(dialect)
    return reader(command, output) if reader is not None else None
