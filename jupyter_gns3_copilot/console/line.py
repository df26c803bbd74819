"""`ConsoleLine`: the open connection under a `ConsoleSession`, text in and out.

Over TCP to the console port or, for a target with `transport="websocket"`, over GNS3's
console websocket (`websocket.py`: the same telnet reader and writer on a websocket
transport). The line keeps one read pending across calls, so that a deadline or a
cancellation never loses a chunk, and remembers the prompt the console was last seen at.
What the text means (prompts, logins, commands) is `dialogue.py`'s job.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from .errors import ConsoleClosedError, ConsoleConnectError
from .models import ConsoleTarget
from .telnet import TelnetReader, TelnetWriter, open_telnet

if TYPE_CHECKING:
    from .websocket import WebSocketConsole

_READ_SIZE = 65536
_TERMINAL_COLUMNS = 250
"""Wide enough that shells do not wrap typed commands, which would garble their echo."""
_TELNET_OPTIONS: dict[str, Any] = {"terminal_type": "dumb", "columns": _TERMINAL_COLUMNS}
"""`TelnetClient` options, the same over TCP and over GNS3's console websocket."""


def loop_time() -> float:
    """The running event loop's clock (what every deadline of a console is measured in)."""
    return asyncio.get_running_loop().time()


class ConsoleLine:
    """One connection to `target`'s console: `connect`, `read`, `write`, `close`.

    `prompt` and `last_used` record where the console was last seen at its prompt
    (`at_prompt`); they survive a reconnection.
    """

    def __init__(self, target: ConsoleTarget) -> None:
        self.target = target
        self.prompt = ""
        """The last prompt seen, e.g. `PC1>` or `R1(config-if)#`."""
        self.last_used = 0.0
        """Event-loop time at which the prompt was last seen."""
        self._reader: TelnetReader | None = None
        self._reading: asyncio.Future[str] | None = None
        """The read in progress, kept across `read` calls until it delivers."""
        self._writer: TelnetWriter | None = None
        self._link: WebSocketConsole | None = None
        """The websocket under reader and writer (websocket transport), else None."""

    async def connect(self, timeout: float) -> None:
        """Open the connection within `timeout` s (see `connect_console`)."""
        self._reader, self._writer, self._link = await connect_console(
            self.target, timeout=timeout, **_TELNET_OPTIONS
        )

    @property
    def is_open(self) -> bool:
        """Whether the connection is up (it may still turn out dead on the next read)."""
        reader, writer = self._reader, self._writer
        return (
            reader is not None
            and writer is not None
            and not writer.is_closing()
            and reader.exception() is None
            and not reader.at_eof()
        )

    @property
    def quiet(self) -> bool:
        """Whether the line is open and nothing arrived since `watch()` (False when not
        watching)."""
        reading = self._reading
        return self.is_open and reading is not None and not reading.done()

    @property
    def remote_echoes(self) -> bool:
        """Whether the device echoes typed text: yes unless it said telnet WONT ECHO."""
        return self._writer is None or self._writer.remote_echoes

    def watch(self) -> None:
        """Start the pending read now, sending nothing: whatever arrives from now on (and
        the line's close) ends `quiet`, and the next `read` takes it."""
        if self._reading is None and self._reader is not None and self.is_open:
            self._reading = asyncio.ensure_future(self._reader.read(_READ_SIZE))

    def at_prompt(self, prompt: str) -> None:
        """Record that the console is at `prompt` now."""
        self.prompt = prompt
        self.last_used = loop_time()

    async def read(self, until: float) -> str | None:
        """The next chunk of text, or None when `until` (loop time) passes first.

        Raises `ConsoleClosedError` when the line is closed or the connection drops.
        """
        reader = self._reader
        if reader is None:
            raise ConsoleClosedError(f"{self.target.name}: the console session is closed.")
        remaining = until - loop_time()
        if remaining <= 0:
            return None
        # One read stays pending across calls (the reader allows a single waiting read):
        # a deadline or a cancellation leaves it for the next call instead of cancelling it,
        # so no chunk is lost and no second reader races it. Not asyncio.wait_for: before
        # Python 3.12 it swallows a cancellation that arrives together with data.
        if self._reading is None:
            self._reading = asyncio.ensure_future(reader.read(_READ_SIZE))
        reading = self._reading
        await asyncio.wait({reading}, timeout=remaining)
        if not reading.done():
            return None
        self._reading = None
        try:
            chunk = reading.result()
        except (ConnectionError, OSError) as exc:
            raise ConsoleClosedError(
                f"{self.target.name}: console {self.target.key} connection lost ({exc})."
            ) from None
        if not chunk:
            raise ConsoleClosedError(
                f"{self.target.name}: console {self.target.key} closed the connection "
                "(node stopped or restarted?)."
            )
        return chunk

    def write(self, text: str) -> None:
        """Send `text`; `ConsoleClosedError` when the line is not open."""
        if not self.is_open:
            state = (
                "is not connected"
                if self._writer is None
                else "closed the connection (node stopped or restarted?)"
            )
            raise ConsoleClosedError(f"{self.target.name}: console {self.target.key} {state}.")
        assert self._writer is not None
        self._writer.write(text)

    def abandon(self) -> None:
        """Drop the connection at once (state unknown, or closing)."""
        writer, reading = self._writer, self._reading
        self._reader = self._writer = self._reading = self._link = None
        if reading is not None:
            reading.cancel()
            if reading.done() and not reading.cancelled():
                reading.exception()  # a lost connection, already reported or moot
        if writer is not None:
            writer.close()

    async def close(self) -> None:
        """Close the connection and wait, bounded, for it to be closed (idempotent)."""
        writer, link = self._writer, self._link
        self.abandon()
        if writer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
        if link is not None:
            await link.wait_closed()


async def connect_console(
    target: ConsoleTarget, *, timeout: float, **telnet_options: Any
) -> tuple[TelnetReader, TelnetWriter, WebSocketConsole | None]:
    """Open `target`'s console within `timeout` s: its telnet reader and writer, and the
    websocket under them (websocket transport; None over TCP). `telnet_options` are the
    `TelnetClient` options (terminal type and size). Raises `ConsoleConnectError` (or
    `ConsoleRefusedError`) saying why it cannot be opened."""
    if target.transport == "websocket":
        from .websocket import open_websocket_console

        link = await open_websocket_console(target, timeout=timeout, **telnet_options)
        return link.reader, link.writer, link
    where = f"{target.name}: console {target.key}"
    try:
        reader, writer = await asyncio.wait_for(
            open_telnet(target.host, target.port, **telnet_options), timeout
        )
    except ConnectionRefusedError:
        raise ConsoleConnectError(
            f"{where} refused the connection. Is the node started? GNS3 opens a "
            "node's console only while it runs."
        ) from None
    except asyncio.TimeoutError:
        raise ConsoleConnectError(
            f"{where} did not answer within {timeout:g} s. Check that the "
            "GNS3 host is reachable from here."
        ) from None
    except (ConnectionError, OSError) as exc:
        raise ConsoleConnectError(f"{where} could not be reached: {exc}") from None
    return reader, writer, None
