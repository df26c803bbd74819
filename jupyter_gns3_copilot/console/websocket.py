"""Device consoles over GNS3's authenticated console websocket, for `ConsoleSession`.

GNS3 3.0 serves each node's console at `/v3/projects/{p}/nodes/{n}/console/ws?token=JWT`:
it checks that the token's user holds Node.Console on the node (in a classroom, through
the ACE on the student's pool), then relays the node's raw telnet bytes to us as binary
frames and types what we send, as text frames, into the console (UTF-8 encoded). Nothing
connects to the node's telnet port from here, so the GNS3 host can close its console
port range to students' servers, and GNS3 itself keeps one student out of another's
consoles.

**The bridge.** The copilot's telnet client protocol (`telnet.TelnetClient`, the one
`open_telnet` makes over TCP) runs on `_WebSocketTransport`, an in-process asyncio
transport fed by the websocket, so `ConsoleSession` drives the same telnet reader and
writer as over TCP and the protocol still does every bit of telnet. Chosen over a
loopback socket pair (the client connecting to a 127.0.0.1 listener that pumps to the
websocket) because a loopback listener has an address: on a shared hub host another
user's process could connect to it first and be handed this student's authenticated
console. An in-process transport has no address, copies no byte through the kernel twice
and needs no pump task per direction. What it costs: this module implements the few
transport methods the protocol uses (write, close, pause/resume reading) and creates the
protocol itself, as `open_telnet` does. As over TCP, nothing waits for the option
negotiation (see `open_telnet`): the console is open once its first bytes arrived, or
`FIRST_BYTES_WAIT` passed without a refusal.

**What goes out.** GNS3 reads only text frames and encodes them as UTF-8, so a byte of
0x80 or more cannot reach the console as itself; the client's option negotiation
(IAC ...) is therefore dropped here (`TelnetCommandFilter`): GNS3's console server
sends its options without waiting for answers, and what a session types (commands,
Ctrl-C, the IOS break sequence) is plain text that passes unchanged.

**Refusals** (measured on gns3-server 3.0.6): the websocket handshake always succeeds.
A token GNS3 cannot validate gets a `log.error` JSON text frame, then close 1008; a user
without Node.Console on the node, a node that is not started and a node that does not
exist all get the connection dropped without a close frame (1006) before any console
byte. A 1008 is asked again once with a renewed token; a 1006 before any byte is told
apart by asking GNS3 for the node with the same token (403: not in this account's lab;
404: gone; else its status). Refusals raise `ConsoleRefusedError` (not retried by
`wait_ready`), other failures `ConsoleConnectError`; a drop after the console answered
ends the session's reads like a lost TCP connection (`ConsoleClosedError`).

The JWT goes only into the websocket URL and the probe's header: the websockets library
logs through a logger that masks it (and drops data frames, which carry what is typed,
passwords included), and no error message carries it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import re
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection, connect
from websockets.frames import CloseCode

from ..tls import shared_tls_context
from .errors import ConsoleConnectError, ConsoleRefusedError
from .models import ConsoleTarget
from .telnet import TelnetClient, TelnetReader, TelnetWriter

log = logging.getLogger(__name__)

FIRST_BYTES_WAIT = 1.0
"""Longest wait after the handshake for the console's first bytes (GNS3's console server
sends its telnet options at once) or for a refusal, whichever comes first."""
CLOSE_TIMEOUT = 1.0
"""Seconds the websocket closing handshake may take before the connection is dropped."""
PROBE_TIMEOUT = 5.0
"""Longest wait for the one GNS3 request that explains a dropped websocket (within what
is left of the connect timeout)."""

NOT_IN_YOUR_LAB = (
    "GNS3 refused the console: this node is not in your lab (your GNS3 account has no "
    "console access to it)"
)

_IAC, _SB, _SE = 255, 250, 240
_OPTION_VERBS = frozenset({251, 252, 253, 254})  # WILL, WONT, DO, DONT
_TOKEN_IN_TEXT = re.compile(r"(token=)[^&\s'\"]+")
_DATA_FRAME = re.compile(r"[<>] (TEXT|BINARY|CONT)\b")


class TelnetCommandFilter:
    """Drops telnet commands from an outgoing byte stream, keeping the data.

    Stateful across `feed` calls (a command may be split between writes). `IAC IAC`
    (a literal 0xFF) is dropped too: no UTF-8 text contains it, and GNS3 could not
    deliver it.
    """

    def __init__(self) -> None:
        self._state = "data"

    def feed(self, data: bytes) -> bytes:
        """The data bytes of `data`, without telnet commands."""
        kept = bytearray()
        state = self._state
        for byte in data:
            if state == "data":
                if byte == _IAC:
                    state = "iac"
                else:
                    kept.append(byte)
            elif state == "iac":
                state = "option" if byte in _OPTION_VERBS else "sb" if byte == _SB else "data"
            elif state == "option":
                state = "data"
            elif state == "sb":
                state = "sb_iac" if byte == _IAC else "sb"
            else:  # sb_iac
                state = "data" if byte == _SE else "sb"
        self._state = state
        return bytes(kept)


class _WireLogFilter(logging.Filter):
    """What the websockets library may log at DEBUG: its handshake and control frames with
    `token=...` masked (it logs the request path), never a data frame (console bytes may
    be passwords typed at a login prompt)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _DATA_FRAME.match(message):
            return False
        record.msg, record.args = mask_token(message), None
        return True


_ws_log = log.getChild("protocol")
_ws_log.addFilter(_WireLogFilter())


def mask_token(text: str) -> str:
    """`text` with the value of any `token=` query parameter replaced by `***`."""
    return _TOKEN_IN_TEXT.sub(r"\1***", text)


class _WebSocketTransport(asyncio.Transport):
    """An asyncio transport whose far end is a GNS3 console websocket.

    Bytes the protocol writes go out as text frames (telnet commands dropped, UTF-8
    decoded incrementally); binary frames received are handed to the protocol as they
    come. The protocol's `connection_lost` is called once: with None after a clean close
    (either side), with a `ConnectionResetError` after an abnormal one.
    """

    def __init__(self, ws: ClientConnection, protocol: asyncio.Protocol) -> None:
        super().__init__({"peername": ws.remote_address, "sockname": ws.local_address})
        self._ws = ws
        self._protocol = protocol
        self._outgoing: asyncio.Queue[str | None] = asyncio.Queue()
        self._filter = TelnetCommandFilter()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._reading = asyncio.Event()
        self._reading.set()
        self._closing = False
        self.answered = asyncio.Event()
        """Set when the console sent its first bytes."""
        self.ended = asyncio.Event()
        """Set when the websocket is gone (closed by either side, or dropped)."""
        self.gns3_message: str | None = None
        """The `log.error` message GNS3 sent before refusing, if any."""
        self._tasks = [
            asyncio.ensure_future(self._receive()),
            asyncio.ensure_future(self._send()),
        ]

    @property
    def close_code(self) -> int | None:
        """The websocket's close code once it ended (1006: dropped without a close frame)."""
        return self._ws.close_code

    # -- asyncio.Transport -------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            return
        text = self._decoder.decode(self._filter.feed(bytes(data)))
        if text:
            self._outgoing.put_nowait(text)

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        """Send what was written, then close the websocket; the protocol learns of it."""
        if self._closing:
            return
        self._closing = True
        self._outgoing.put_nowait(None)
        asyncio.get_running_loop().call_soon(self._protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()

    def is_reading(self) -> bool:
        return self._reading.is_set()

    def pause_reading(self) -> None:
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def get_write_buffer_size(self) -> int:
        return self._outgoing.qsize()

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.Protocol)
        self._protocol = protocol

    # -- the two directions ------------------------------------------------------------

    async def _receive(self) -> None:
        lost: Exception | None = None
        try:
            async for message in self._ws:
                if isinstance(message, str):
                    notice = _gns3_error(message)
                    if notice is not None:
                        self.gns3_message = notice
                        continue
                    message = message.encode()
                if not message:
                    continue
                await self._reading.wait()
                self.answered.set()
                self._protocol.data_received(message)
        except websockets.ConnectionClosed:
            lost = ConnectionResetError(
                f"GNS3 closed the console websocket abnormally (code {self.close_code})"
            )
        finally:
            self.ended.set()
            if not self._closing:
                self._closing = True
                self._outgoing.put_nowait(None)
                self._protocol.connection_lost(lost)

    async def _send(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed, OSError):
            while (text := await self._outgoing.get()) is not None:
                await self._ws.send(text)
        with contextlib.suppress(Exception):
            await self._ws.close()

    async def wait_closed(self, timeout: float) -> None:
        """Wait (at most `timeout` s) until both directions have ended."""
        await asyncio.wait(self._tasks, timeout=timeout)


class WebSocketConsole:
    """An open console over GNS3's websocket: the telnet `reader` and `writer`, and
    `wait_closed` for after the writer was closed."""

    def __init__(
        self, reader: TelnetReader, writer: TelnetWriter, transport: _WebSocketTransport
    ) -> None:
        self.reader = reader
        self.writer = writer
        self._transport = transport

    async def wait_closed(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Wait until the websocket is closed and its tasks ended (bounded)."""
        await self._transport.wait_closed(timeout)


async def open_websocket_console(
    target: ConsoleTarget, *, timeout: float, **telnet_options: Any
) -> WebSocketConsole:
    """Open `target`'s console through its GNS3 console websocket, within `timeout` s.

    `telnet_options` are the `TelnetClient` options `ConsoleSession` uses over TCP
    (terminal type and size). Raises
    `ConsoleRefusedError` when GNS3 refuses this account the console, and
    `ConsoleConnectError` for anything else that keeps it from opening.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    where = f"{target.name}: console websocket of node {target.name!r}"
    token = await _token(target, where, renew=False)
    console = await _open(target, token, where, deadline, telnet_options)
    if isinstance(console, WebSocketConsole):
        return console
    renewed = await _token(target, where, renew=True)
    if renewed == token:
        raise console
    console = await _open(target, renewed, where, deadline, telnet_options)
    if isinstance(console, WebSocketConsole):
        return console
    raise console


async def _open(
    target: ConsoleTarget,
    token: str | None,
    where: str,
    deadline: float,
    telnet_options: dict[str, Any],
) -> WebSocketConsole | ConsoleRefusedError:
    """One attempt: the open console, or the refusal of a token GNS3 did not accept
    (which a renewed token may cure). Other failures are raised."""
    loop = asyncio.get_running_loop()

    def remaining() -> float:
        return max(deadline - loop.time(), 0.05)

    ws = await _handshake(target, token, where, remaining())
    protocol = TelnetClient(**telnet_options)
    transport = _WebSocketTransport(ws, protocol)
    protocol.connection_made(transport)
    first = asyncio.ensure_future(transport.answered.wait())
    ended = asyncio.ensure_future(transport.ended.wait())
    try:
        await asyncio.wait(
            {first, ended},
            timeout=min(FIRST_BYTES_WAIT, remaining()),
            return_when=asyncio.FIRST_COMPLETED,
        )
        if transport.ended.is_set() and not transport.answered.is_set():
            raise await _refusal(target, token, transport, where, remaining())
    except ConsoleRefusedError as refused:
        await _discard(transport)
        if transport.close_code == CloseCode.POLICY_VIOLATION:
            return refused
        raise
    except BaseException:
        await _discard(transport)
        raise
    finally:
        first.cancel()
        ended.cancel()
    return WebSocketConsole(protocol.reader, protocol.writer, transport)


async def _discard(transport: _WebSocketTransport) -> None:
    transport.close()
    await transport.wait_closed(CLOSE_TIMEOUT)


async def _token(target: ConsoleTarget, where: str, *, renew: bool) -> str | None:
    if target.token_provider is None:
        return None
    try:
        return await target.token_provider(renew)
    except Exception as exc:  # the provider's own readable error (GNS3 login, hub service)
        raise ConsoleConnectError(f"{where}: no GNS3 token to open it with: {exc}") from None


async def _handshake(
    target: ConsoleTarget, token: str | None, where: str, timeout: float
) -> ClientConnection:
    assert target.websocket_url is not None
    url = target.websocket_url + (f"?token={token}" if token else "")
    try:
        return await connect(
            url,
            open_timeout=timeout,
            close_timeout=CLOSE_TIMEOUT,
            compression=None,
            max_size=2**20,
            logger=_ws_log,
        )
    except TimeoutError:
        raise ConsoleConnectError(
            f"{where} at {target.websocket_url} did not open within {timeout:g} s. Check "
            "that the GNS3 server is reachable from here."
        ) from None
    except websockets.InvalidStatus as exc:
        status = exc.response.status_code
        raise ConsoleConnectError(
            f"{where}: GNS3 at {target.websocket_url} answered HTTP {status} instead of "
            "opening the websocket (a GNS3 server before 3.0, or a proxy in between?)."
        ) from None
    except (websockets.InvalidHandshake, websockets.InvalidURI, OSError) as exc:
        reason = mask_token(str(exc)).replace(token or "\0", "***")
        raise ConsoleConnectError(
            f"{where} at {target.websocket_url} could not be opened: {reason}"
        ) from None


async def _refusal(
    target: ConsoleTarget,
    token: str | None,
    transport: _WebSocketTransport,
    where: str,
    timeout: float,
) -> ConsoleConnectError:
    """Why GNS3 ended the websocket before the console said anything."""
    if transport.close_code == CloseCode.POLICY_VIOLATION:
        said = f" (GNS3 said: {transport.gns3_message})" if transport.gns3_message else ""
        return ConsoleRefusedError(
            f"{target.name}: GNS3 refused the console: it did not accept the GNS3 token{said}."
        )
    status, state = await _node_state(target, token, min(timeout, PROBE_TIMEOUT))
    if status == 403:
        return ConsoleRefusedError(f"{target.name}: {NOT_IN_YOUR_LAB}.")
    if status == 401:
        return ConsoleRefusedError(
            f"{target.name}: GNS3 refused the console: it did not accept the GNS3 token."
        )
    if status == 404:
        return ConsoleConnectError(
            f"{where}: GNS3 has no such node (deleted meanwhile?). Reload the topology."
        )
    if state is not None and state != "started":
        return ConsoleConnectError(
            f"{where}: GNS3 refused the connection (the node is {state}). Is the node "
            "started? GNS3 opens a node's console only while it runs."
        )
    return ConsoleConnectError(
        f"{where}: GNS3 closed it (code {transport.close_code}) before the console answered."
    )


async def _node_state(
    target: ConsoleTarget, token: str | None, timeout: float
) -> tuple[int | None, str | None]:
    """GNS3's answer about the websocket's node with the same token: (HTTP status, node
    status), or (None, None) when GNS3 cannot be asked."""
    assert target.websocket_url is not None
    url = "http" + target.websocket_url.removeprefix("ws").removesuffix("/console/ws")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=shared_tls_context()) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError:
        return None, None
    if response.status_code != 200:
        return response.status_code, None
    with contextlib.suppress(ValueError, AttributeError):
        return 200, str(response.json().get("status"))
    return 200, None


def _gns3_error(text: str) -> str | None:
    """The message of a GNS3 `log.error` notification frame, or None for other text."""
    try:
        frame = json.loads(text)
    except ValueError:
        return None
    if isinstance(frame, dict) and frame.get("action") == "log.error":
        event = frame.get("event")
        message = event.get("message") if isinstance(event, dict) else None
        if isinstance(message, str):
            return message
    return None
