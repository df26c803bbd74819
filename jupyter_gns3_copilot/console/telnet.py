"""A small telnet client for device consoles (RFC 854/855), on asyncio, stdlib only.

What a device console needs of telnet and nothing more (a full implementation such as
telnetlib3 costs a Jupyter server ~3 MB and ~50 ms of import for its server side, shells
and terminal tables):

- **Commands** (`IAC ...`) are taken out of the byte stream whatever way it is split
  across reads: `IAC IAC` is a literal 0xFF data byte, a subnegotiation `SB ... IAC SE`
  may arrive in pieces, other two-byte commands (NOP, GA, AYT, ...) are dropped.
- **Negotiation** (in the spirit of RFC 1143: answer only when an option's state
  changes, so two ends can never loop): the client asks for nothing itself. It accepts
  the remote's WILL ECHO, SGA and BINARY (answering DO) and the remote's DO SGA, BINARY,
  TTYPE and NAWS (answering WILL); it refuses any other option once (DONT / WONT) and
  ignores a repeated request; a DONT/WONT for an option that is on is acknowledged once.
- **TTYPE** (RFC 1091): `SB TTYPE SEND` is answered `SB TTYPE IS <terminal type>`.
  **NAWS** (RFC 1073): once NAWS is agreed, the window size is sent (0xFF bytes doubled).
- **Data** is UTF-8 both ways (undecodable bytes become U+FFFD, decoded incrementally so
  a character split across reads arrives whole); `CR NUL` becomes `CR` (the NVT's bare
  carriage return). Text is sent as given: no newline translation (each dialect knows
  what its device wants for Enter), and no 0xFF to double, since UTF-8 never produces
  that byte (the NAWS sizes, which may hold it, are escaped).

`open_telnet` connects over TCP; any other asyncio transport (the GNS3 console websocket
in `websocket.py`) can carry a `TelnetClient` as well. Nothing here knows about Jupyter.
"""

from __future__ import annotations

import asyncio
import codecs

IAC, DONT, DO, WONT, WILL, SB, SE = 255, 254, 253, 252, 251, 250, 240
BINARY, ECHO, SGA, TTYPE, NAWS = 0, 1, 3, 24, 31
_TTYPE_IS, _TTYPE_SEND = 0, 1
ACCEPTED_REMOTE = frozenset({ECHO, SGA, BINARY})
"""Options the remote may enable on its side (its WILL is answered DO)."""
ACCEPTED_LOCAL = frozenset({SGA, BINARY, TTYPE, NAWS})
"""Options the remote may ask of this side (its DO is answered WILL)."""

_ANSWER_ON = {WILL: DO, DO: WILL}
_ANSWER_OFF = {WILL: DONT, DO: WONT, WONT: DONT, DONT: WONT}
_MAX_SUBNEGOTIATION = 512
"""Bytes of one subnegotiation kept; the rest is dropped (a console's are a few bytes)."""
_HIGH_WATER = 1 << 20
"""Characters buffered unread after which the transport stops reading until a read."""
_ENCODING = "utf-8"
_ERRORS = "replace"

_DATA, _COMMAND, _OPTION, _SUB, _SUB_IAC = range(5)


class TelnetReader:
    """Text received from the remote, for one reader at a time.

    `read(n)` returns at most `n` characters as soon as any arrived, `''` at the end of
    the stream; after an abnormal end, text already received is delivered first and then
    the connection's error (e.g. `ConnectionResetError`) is raised.
    """

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._size = 0
        self._eof = False
        self._exception: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.Transport | None = None
        self._paused = False

    async def read(self, n: int) -> str:
        """Up to `n` characters, waiting until some arrive; `''` at the end of the stream.

        Raises `RuntimeError` when another read is already waiting, and the connection's
        error once the text received before it was read.
        """
        while not self._chunks and not self._eof:
            if self._waiter is not None:
                raise RuntimeError("TelnetReader.read: another read is already waiting.")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._chunks:
            return self._take(n)
        if self._exception is not None:
            raise self._exception
        return ""

    def at_eof(self) -> bool:
        """Whether the stream ended and everything received was read."""
        return self._eof and not self._chunks

    def exception(self) -> Exception | None:
        """The error the connection ended with, if it ended abnormally."""
        return self._exception

    def _take(self, n: int) -> str:
        text = "".join(self._chunks)
        taken, rest = text[:n], text[n:]
        self._chunks = [rest] if rest else []
        self._size = len(rest)
        if self._paused and self._size < _HIGH_WATER and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return taken

    def _feed(self, text: str) -> None:
        self._chunks.append(text)
        self._size += len(text)
        if self._size >= _HIGH_WATER and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def _end(self, exc: Exception | None) -> None:
        if exc is not None and self._exception is None:
            self._exception = exc
        self._eof = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class TelnetWriter:
    """Text to the remote, and what the remote said about echoing it."""

    def __init__(self, protocol: TelnetClient) -> None:
        self._protocol = protocol

    def write(self, text: str) -> None:
        """Send `text` UTF-8 encoded (never a 0xFF byte, so nothing to escape); ignored
        once the connection closes."""
        self._protocol.send(text.encode(_ENCODING, _ERRORS))

    def close(self) -> None:
        """Close the connection (idempotent); `wait_closed` waits for its end."""
        transport = self._protocol.transport
        if transport is not None:
            transport.close()

    def is_closing(self) -> bool:
        """Whether the connection is closed or closing."""
        transport = self._protocol.transport
        return transport is None or transport.is_closing()

    async def wait_closed(self) -> None:
        """Wait until the connection has ended."""
        await asyncio.shield(self._protocol.closed)

    @property
    def remote_echoes(self) -> bool:
        """Whether the remote echoes typed text: yes unless it said WONT ECHO (a device
        that never mentioned ECHO is assumed to echo, as device consoles do)."""
        return self._protocol.remote_options.get(ECHO, True)


class TelnetClient(asyncio.Protocol):
    """The client end of one telnet connection: `reader` and `writer` for the text.

    `terminal_type` answers TTYPE requests; `columns` and `rows` are the window size sent
    when NAWS is agreed. The protocol never sends a request of its own, only answers.
    """

    def __init__(self, *, terminal_type: str = "dumb", columns: int = 80, rows: int = 25) -> None:
        self.terminal_type = terminal_type
        self.columns = columns
        self.rows = rows
        self.transport: asyncio.Transport | None = None
        self.reader = TelnetReader()
        self.writer = TelnetWriter(self)
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done when the connection has ended."""
        self.remote_options: dict[int, bool] = {}
        """State of the remote's options it mentioned: True after its accepted WILL,
        False after its WONT (or a refused WILL)."""
        self.local_options: dict[int, bool] = {}
        """State of this side's options the remote asked about (DO / DONT)."""
        self._refused: set[tuple[int, int]] = set()
        """(WILL or DO, option) requests already refused: a repeat is not answered."""
        self._state = _DATA
        self._verb = 0
        self._sub = bytearray()
        self._after_cr = False
        self._decoder = codecs.getincrementaldecoder(_ENCODING)(errors=_ERRORS)

    # -- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.reader._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self.reader._feed(tail)
        self.reader._end(exc)
        self.transport = self.reader._transport = None
        if not self.closed.done():
            self.closed.set_result(None)

    def eof_received(self) -> None:
        """The remote closed its side: the connection ends (returning None closes it)."""

    def data_received(self, data: bytes) -> None:
        out = bytearray()
        index, size = 0, len(data)
        state = self._state
        while index < size:
            if state == _DATA:
                found = data.find(IAC, index)
                self._add_data(out, data[index : size if found < 0 else found])
                if found < 0:
                    break
                index, state = found + 1, _COMMAND
                continue
            byte = data[index]
            index += 1
            if state == _COMMAND:
                if byte == IAC:
                    out.append(IAC)
                    self._after_cr = False
                    state = _DATA
                elif byte in (WILL, WONT, DO, DONT):
                    self._verb, state = byte, _OPTION
                elif byte == SB:
                    self._sub.clear()
                    state = _SUB
                else:  # NOP, GA, DM, AYT, ...: nothing a console reader needs
                    state = _DATA
            elif state == _OPTION:
                self._negotiate(self._verb, byte)
                state = _DATA
            elif state == _SUB:
                if byte == IAC:
                    state = _SUB_IAC
                elif len(self._sub) < _MAX_SUBNEGOTIATION:
                    self._sub.append(byte)
            elif byte == SE:  # _SUB_IAC
                self._subnegotiate(bytes(self._sub))
                state = _DATA
            elif byte == IAC:
                if len(self._sub) < _MAX_SUBNEGOTIATION:
                    self._sub.append(IAC)
                state = _SUB
            else:
                # IAC <command> inside a subnegotiation: the SE was lost; drop the
                # subnegotiation and take the command, rather than swallow all that follows.
                state = _COMMAND
                index -= 1
        self._state = state
        if out:
            text = self._decoder.decode(bytes(out))
            if text:
                self.reader._feed(text)

    # -- sending ---------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Write raw bytes (already telnet-escaped); ignored once the connection closes."""
        transport = self.transport
        if data and transport is not None and not transport.is_closing():
            transport.write(data)

    # -- internals -------------------------------------------------------------------------

    def _add_data(self, out: bytearray, data: bytes) -> None:
        if not data:
            return
        if self._after_cr and data[0] == 0:
            data = data[1:]
        data = data.replace(b"\r\0", b"\r")
        out += data
        self._after_cr = data.endswith(b"\r")

    def _negotiate(self, verb: int, option: int) -> None:
        remote = verb in (WILL, WONT)
        states = self.remote_options if remote else self.local_options
        accepted = ACCEPTED_REMOTE if remote else ACCEPTED_LOCAL
        was = states.get(option)
        if verb in (WILL, DO):
            if option in accepted:
                if was:
                    return
                states[option] = True
                self.send(bytes((IAC, _ANSWER_ON[verb], option)))
                if option == NAWS:
                    self._send_window_size()
            elif (verb, option) not in self._refused:
                self._refused.add((verb, option))
                states[option] = False
                self.send(bytes((IAC, _ANSWER_OFF[verb], option)))
            return
        states[option] = False
        if was:
            self.send(bytes((IAC, _ANSWER_OFF[verb], option)))

    def _subnegotiate(self, payload: bytes) -> None:
        if payload[:2] == bytes((TTYPE, _TTYPE_SEND)) and self.local_options.get(TTYPE):
            name = self.terminal_type.encode("ascii", "replace")
            self.send(bytes((IAC, SB, TTYPE, _TTYPE_IS)) + name + bytes((IAC, SE)))

    def _send_window_size(self) -> None:
        size = self.columns.to_bytes(2, "big") + self.rows.to_bytes(2, "big")
        self.send(bytes((IAC, SB, NAWS)) + size.replace(b"\xff", b"\xff\xff") + bytes((IAC, SE)))


async def open_telnet(
    host: str, port: int, *, terminal_type: str = "dumb", columns: int = 80, rows: int = 25
) -> tuple[TelnetReader, TelnetWriter]:
    """Connect to a telnet server over TCP; its reader and writer.

    Returns as soon as the TCP connection is up, without waiting for option negotiation:
    the client requests nothing itself, so there is nothing of its own to wait for, and
    it answers the remote's requests as they arrive, in order with the data. A device
    sends its requests before its first output, so by the time a session has pressed
    Enter and seen the prompt they are answered; a device that never negotiates (or a
    slow one) costs no fixed wait. Connection errors are asyncio's own
    (`ConnectionRefusedError`, `OSError` for an unknown host or unreachable network);
    bound the call with `asyncio.wait_for` for a timeout.
    """
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: TelnetClient(terminal_type=terminal_type, columns=columns, rows=rows), host, port
    )
    return protocol.reader, protocol.writer
