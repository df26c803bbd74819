"""The copilot's telnet client (`console/telnet.py`), byte by byte, without a lab.

Over real TCP on 127.0.0.1: a plain asyncio server in the test sends raw telnet bytes and
reads back exactly what the client answers (option negotiation, TTYPE, NAWS, refusals,
no answer to a repeated request), while the test reads the text the client delivers
(IAC IAC, CR NUL, UTF-8), sees the end of the stream (EOF, a reset) and a connection
refused. TCP decides itself where a stream is split between reads, so the tests of
every split point feed the same protocol object directly, on a transport that records
what it writes (`_Wire`), one run per split point. Last, a fresh interpreter shows that
the consoles and the server's whole warm-up import neither telnetlib3 nor wcwidth.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from jupyter_gns3_copilot.console.telnet import (
    BINARY,
    DO,
    DONT,
    ECHO,
    IAC,
    NAWS,
    SB,
    SE,
    SGA,
    TTYPE,
    WILL,
    WONT,
    TelnetClient,
    TelnetReader,
    TelnetWriter,
    open_telnet,
)
from jupyter_gns3_copilot.labkit.ports import free_tcp_port

WAIT = 5.0
STATUS, LINEMODE, NEW_ENVIRON, CHARSET = 5, 34, 39, 42
NOP, GA = 241, 249


def cmd(*codes: int) -> bytes:
    return bytes(codes)


def naws(columns: int, rows: int) -> bytes:
    size = struct.pack(">HH", columns, rows).replace(b"\xff", b"\xff\xff")
    return cmd(IAC, SB, NAWS) + size + cmd(IAC, SE)


TTYPE_SEND = cmd(IAC, SB, TTYPE, 1, IAC, SE)
TTYPE_IS_DUMB = cmd(IAC, SB, TTYPE, 0) + b"dumb" + cmd(IAC, SE)


class Device:
    """The server end of one connection: what it sends, and exactly what it gets back."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def expect(self, data: bytes) -> None:
        """The next bytes the client sent are exactly `data`."""
        assert await asyncio.wait_for(self.reader.readexactly(len(data)), WAIT) == data

    async def rest(self) -> bytes:
        """Everything else the client sent, up to its close."""
        return await asyncio.wait_for(self.reader.read(), WAIT)

    def reset(self) -> None:
        """Drop the connection with a TCP reset (SO_LINGER 0), not a clean close."""
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


@contextlib.asynccontextmanager
async def connected(
    columns: int = 80, rows: int = 25
) -> AsyncIterator[tuple[Device, TelnetReader, TelnetWriter]]:
    """A raw TCP server on 127.0.0.1 and our client connected to it."""
    accepted: asyncio.Queue[Device] = asyncio.Queue()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put(Device(reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await open_telnet("127.0.0.1", port, columns=columns, rows=rows)
    device = await asyncio.wait_for(accepted.get(), WAIT)
    try:
        yield device, reader, writer
    finally:
        writer.close()
        device.writer.close()
        server.close()
        await server.wait_closed()


async def text_until(reader: TelnetReader, wanted: str) -> str:
    """Text read until it ends with `wanted` (the client processed all bytes before it)."""
    text = ""
    while not text.endswith(wanted):
        chunk = await asyncio.wait_for(reader.read(65536), WAIT)
        assert chunk, f"stream ended after {text!r}"
        text += chunk
    return text


# -- negotiation over TCP -----------------------------------------------------------------


async def test_accepted_options_are_answered_refused_ones_declined_and_repeats_ignored() -> None:
    offers = (
        cmd(IAC, WILL, ECHO, IAC, WILL, SGA, IAC, WILL, BINARY)
        + cmd(IAC, DO, SGA, IAC, DO, BINARY, IAC, DO, TTYPE, IAC, DO, NAWS)
        + cmd(IAC, WILL, STATUS, IAC, DO, ECHO, IAC, DO, LINEMODE, IAC, DO, NEW_ENVIRON)
        + cmd(IAC, WILL, CHARSET)
    )
    async with connected(columns=250) as (device, reader, writer):
        await device.send(offers)
        await device.expect(
            cmd(IAC, DO, ECHO, IAC, DO, SGA, IAC, DO, BINARY)
            + cmd(IAC, WILL, SGA, IAC, WILL, BINARY, IAC, WILL, TTYPE, IAC, WILL, NAWS)
            + naws(250, 25)
            + cmd(IAC, DONT, STATUS, IAC, WONT, ECHO, IAC, WONT, LINEMODE)
            + cmd(IAC, WONT, NEW_ENVIRON, IAC, DONT, CHARSET)
        )
        # The same requests again (accepted and refused): already answered, so silence.
        await device.send(offers + b"ready")
        assert await text_until(reader, "ready") == "ready"
        assert writer.remote_echoes
        writer.close()
        assert await device.rest() == b""


async def test_dont_and_wont_are_acknowledged_once_and_only_for_an_option_that_is_on() -> None:
    async with connected(columns=80, rows=24) as (device, reader, writer):
        assert writer.remote_echoes  # nothing said about ECHO: a console echoes
        await device.send(cmd(IAC, DONT, SGA, IAC, WONT, ECHO) + b"a")
        assert await text_until(reader, "a") == "a"
        assert not writer.remote_echoes  # the device said WONT ECHO (it was never on)
        await device.send(cmd(IAC, WILL, ECHO, IAC, DO, NAWS))
        await device.expect(cmd(IAC, DO, ECHO, IAC, WILL, NAWS) + naws(80, 24))
        assert writer.remote_echoes
        await device.send(cmd(IAC, WONT, ECHO, IAC, WONT, ECHO, IAC, DONT, NAWS, IAC, DONT, NAWS))
        await device.expect(cmd(IAC, DONT, ECHO, IAC, WONT, NAWS))
        await device.send(cmd(IAC, DO, NAWS) + b"b")  # on again after off: a state change
        await device.expect(cmd(IAC, WILL, NAWS) + naws(80, 24))
        assert await text_until(reader, "b") == "b"
        assert not writer.remote_echoes
        writer.close()
        assert await device.rest() == b""


async def test_terminal_type_is_sent_on_every_request_once_ttype_is_agreed() -> None:
    async with connected() as (device, reader, writer):
        await device.send(TTYPE_SEND + b"x")  # before DO TTYPE: not ours to answer
        assert await text_until(reader, "x") == "x"
        await device.send(cmd(IAC, DO, TTYPE) + TTYPE_SEND + TTYPE_SEND)
        await device.expect(cmd(IAC, WILL, TTYPE) + TTYPE_IS_DUMB + TTYPE_IS_DUMB)
        writer.close()
        assert await device.rest() == b""


async def test_window_size_bytes_of_0xff_are_doubled() -> None:
    async with connected(columns=0x1FF, rows=0xFF) as (device, _, _):
        await device.send(cmd(IAC, DO, NAWS))
        await device.expect(
            cmd(IAC, WILL, NAWS, IAC, SB, NAWS, 0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, IAC, SE)
        )


# -- data over TCP ------------------------------------------------------------------------


async def test_text_arrives_without_commands_with_iac_iac_as_0xff_and_cr_nul_as_cr() -> None:
    async with connected() as (device, reader, _):
        await device.send(
            b"R1>"
            + cmd(IAC, NOP)
            + b"a"
            + cmd(IAC, IAC)
            + b"b\r\0c\r\n\r\0\0"
            + cmd(IAC, SB, 200, 1, IAC, IAC, 2, IAC, SE)
            + cmd(IAC, GA)
            + "é€ok".encode()
        )
        # 0xFF is no UTF-8 byte: the literal data byte decodes as U+FFFD.
        assert await text_until(reader, "ok") == "R1>a\ufffdb\rc\r\n\r\0é€ok"


async def test_typed_text_goes_out_as_utf8_unchanged() -> None:
    async with connected() as (device, _, writer):
        writer.write("show ip\r")
        writer.write("é\x03\x1e\n")
        await device.expect(b"show ip\r" + "é".encode() + b"\x03\x1e\n")


async def test_the_end_of_the_stream_delivers_the_text_first_then_empty_reads() -> None:
    async with connected() as (device, reader, writer):
        reading = asyncio.ensure_future(reader.read(100))  # waiting when the end comes
        await device.send(b"bye\xe2\x82")  # an unfinished character
        device.writer.close()
        text = await asyncio.wait_for(reading, WAIT)
        while not text.endswith("\ufffd"):
            text += await asyncio.wait_for(reader.read(100), WAIT)
        assert text == "bye\ufffd"
        assert await asyncio.wait_for(reader.read(100), WAIT) == ""
        assert reader.at_eof() and reader.exception() is None
        await asyncio.wait_for(writer.wait_closed(), WAIT)
        assert writer.is_closing()
        writer.write("ignored after the end")


async def test_a_reset_connection_raises_its_error_after_the_text_received() -> None:
    async with connected() as (device, reader, writer):
        await device.send(b"partial")
        assert await text_until(reader, "partial") == "partial"
        device.reset()
        with pytest.raises(ConnectionResetError):
            await asyncio.wait_for(reader.read(100), WAIT)
        assert isinstance(reader.exception(), ConnectionResetError)
        assert reader.at_eof() and writer.is_closing()


async def test_a_refused_connection_raises_connection_refused() -> None:
    with pytest.raises(ConnectionRefusedError):
        await open_telnet("127.0.0.1", free_tcp_port())


async def test_one_read_at_a_time_and_a_cancelled_read_loses_nothing() -> None:
    async with connected() as (device, reader, _):
        first = asyncio.ensure_future(reader.read(100))
        second = asyncio.ensure_future(reader.read(100))
        with pytest.raises(RuntimeError, match="another read"):
            await second
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        await device.send(b"kept")
        assert await text_until(reader, "kept") == "kept"


async def test_a_flood_arrives_whole() -> None:
    flood = bytes(range(32, 127)) * 40_000  # 3.8 MB, past the 1 MB high-water mark
    async with connected() as (device, reader, _):
        sending = asyncio.ensure_future(device.send(flood + b"\n"))
        text = await text_until(reader, "\n")
        await asyncio.wait_for(sending, WAIT)
        assert text.encode() == flood + b"\n"


# -- every split of the stream (the protocol fed directly) --------------------------------


class _Wire(asyncio.Transport):
    """Records what the protocol writes (TCP cannot be told where to split a stream)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = bytearray()
        self.reading = True

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.sent += data

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        assert self.reading
        self.reading = False

    def resume_reading(self) -> None:
        assert not self.reading
        self.reading = True


STREAM = (
    b"A\r"
    + cmd(IAC, DO, TTYPE)
    + b"\0B"
    + cmd(IAC, WILL, ECHO)
    + cmd(IAC, SB, 200, IAC, IAC, 7, IAC, SE)
    + TTYPE_SEND
    + b"C"
    + cmd(IAC, IAC)
    + "é€".encode()
    + cmd(IAC, NOP)
    + cmd(IAC, DO, NAWS)
    + cmd(IAC, WILL, STATUS)
    + b"\r\0Z"
)
STREAM_TEXT = "A\rBC\ufffdé€\rZ"
STREAM_ANSWERS = (
    cmd(IAC, WILL, TTYPE, IAC, DO, ECHO)
    + TTYPE_IS_DUMB
    + cmd(IAC, WILL, NAWS)
    + naws(250, 25)
    + cmd(IAC, DONT, STATUS)
)


def feed(chunks: list[bytes]) -> tuple[str, bytes]:
    """The text a fresh client delivers and the bytes it answers for `chunks`."""
    client = TelnetClient(columns=250)
    wire = _Wire()
    client.connection_made(wire)
    for chunk in chunks:
        client.data_received(chunk)
    client.connection_lost(None)
    return "".join(client.reader._chunks), bytes(wire.sent)


async def test_any_split_of_the_stream_gives_the_same_text_and_answers() -> None:
    assert feed([STREAM]) == (STREAM_TEXT, STREAM_ANSWERS)
    for cut in range(1, len(STREAM)):
        assert feed([STREAM[:cut], STREAM[cut:]]) == (STREAM_TEXT, STREAM_ANSWERS), cut
    assert feed([bytes([b]) for b in STREAM]) == (STREAM_TEXT, STREAM_ANSWERS)


async def test_a_subnegotiation_without_se_ends_at_the_next_command() -> None:
    text, sent = feed([cmd(IAC, SB, 200, 1, 2, IAC, WILL, SGA) + b"after"])
    assert (text, sent) == ("after", cmd(IAC, DO, SGA))


async def test_reading_pauses_past_a_megabyte_unread_and_resumes_when_read() -> None:
    client = TelnetClient()
    wire = _Wire()
    client.connection_made(wire)
    client.data_received(b"x" * 600_000)
    assert wire.reading
    client.data_received(b"y" * 600_000)
    assert not wire.reading
    assert await client.reader.read(200_000) == "x" * 200_000
    assert wire.reading  # below the mark again
    assert await client.reader.read(2_000_000) == "x" * 400_000 + "y" * 600_000


# -- what the server imports -------------------------------------------------------------


def test_consoles_and_the_whole_warm_up_import_neither_telnetlib3_nor_wcwidth() -> None:
    script = (
        "import importlib, sys\n"
        "import jupyter_gns3_copilot.console\n"
        "from jupyter_gns3_copilot.server.warmup import AGENT_MODULES, CORE_MODULES\n"
        "for name in CORE_MODULES + AGENT_MODULES:\n"
        "    importlib.import_module(name)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'telnetlib3', 'wcwidth'}))\n"
        "print('jupyter_gns3_copilot.console.telnet' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split("\n")[:2] == ["[]", "True"]
