"""Readable console errors: each says which device, what went wrong and what to do."""

from __future__ import annotations


class ConsoleError(Exception):
    """Base class of every error raised by `jupyter_gns3_copilot.console`."""


class ConsoleTargetError(ConsoleError, ValueError):
    """A node cannot be reached through a telnet console (no port, or not telnet)."""


class DialectError(ConsoleError, ValueError):
    """The console dialect of a node is unknown or cannot be worked out."""


class ConsoleConnectError(ConsoleError):
    """The TCP/telnet connection (or GNS3's console websocket) to a console could not be made."""


class ConsoleRefusedError(ConsoleConnectError):
    """GNS3 refused the console websocket to this account: the node is not in the
    account's lab, or the token is not accepted. Trying again does not help."""


class ConsoleClosedError(ConsoleError):
    """The console connection was closed or reset while in use."""


class ConsoleTimeoutError(ConsoleError):
    """A console did not show its prompt in time.

    `partial_output` holds the cleaned text received before the deadline (may be empty).
    """

    def __init__(self, message: str, partial_output: str = "") -> None:
        super().__init__(message)
        self.partial_output = partial_output


class ConsoleAuthError(ConsoleError):
    """Login or `enable` on a console was refused or needs credentials that were not given."""


class ConsoleAborted(ConsoleError):
    """The caller's abort event was set while waiting on a console."""
