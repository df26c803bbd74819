"""Async telnet device consoles: dialects, sessions, per-console locks and fan-out.

Typical use::

    async with ConsolePool() as pool:
        await pool.wait_ready(target)
        results = await pool.run_many([(target, ["show ip"])])

Telnet itself is handled by a small client of our own (`telnet.py`: what device consoles
need of RFC 854/855, stdlib only), over TCP or over GNS3's authenticated console websocket
(`ConsoleTarget(transport="websocket")`, see `websocket.py`); this package adds
what device automation needs on top: prompt detection per dialect (VPCS, Cisco IOS-like,
Linux shell), clean output, paging and confirmation prompts, login/enable, one lock per
console, bounded waits and bounded input (`MAX_COMMAND_CHARS`), output reported while a
command runs, and commands that run too long or are aborted interrupted on the device
(Ctrl-C, IOS break sequence) so that a console is never left busy.
"""

from .dialects import DIALECTS, Dialect, DialectName, dialect_by_name, resolve_dialect
from .errors import (
    ConsoleAborted,
    ConsoleAuthError,
    ConsoleClosedError,
    ConsoleConnectError,
    ConsoleError,
    ConsoleRefusedError,
    ConsoleTargetError,
    ConsoleTimeoutError,
    DialectError,
)
from .line import connect_console
from .models import (
    BlockedCommand,
    CommandResult,
    ConsoleCredentials,
    ConsoleTarget,
    ConsoleTokenProvider,
    ConsoleTransport,
    DeviceCommands,
    DeviceResult,
)
from .pool import DEFAULT_CONCURRENCY, ConsolePool, Job, ProgressCallback, run_many, wait_ready
from .session import MAX_COMMAND_CHARS, ConsoleSession
from .text import clean_terminal_text

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DIALECTS",
    "MAX_COMMAND_CHARS",
    "BlockedCommand",
    "CommandResult",
    "ConsoleAborted",
    "ConsoleAuthError",
    "ConsoleClosedError",
    "ConsoleConnectError",
    "ConsoleCredentials",
    "ConsoleError",
    "ConsolePool",
    "ConsoleRefusedError",
    "ConsoleSession",
    "ConsoleTarget",
    "ConsoleTargetError",
    "ConsoleTimeoutError",
    "ConsoleTokenProvider",
    "ConsoleTransport",
    "DeviceCommands",
    "DeviceResult",
    "Dialect",
    "DialectError",
    "DialectName",
    "Job",
    "ProgressCallback",
    "clean_terminal_text",
    "connect_console",
    "dialect_by_name",
    "resolve_dialect",
    "run_many",
    "wait_ready",
]
