"""The hypervisor line protocol and UDP NIOs shared by the uBridge and Dynamips stand-ins.

Protocol (as gns3-server speaks it): the client sends one request per line,
``module command args...`` with shell-like quoting. Every reply ends with exactly one
final line: ``100-<text>`` on success (``100-OK`` when there is nothing to say) or
``2xx-<message>`` on error. Informational lines before the final one look like
``101 <text>``. Lines end with CRLF. ``hypervisor close`` ends the connection,
``hypervisor stop`` ends the program.
"""

from __future__ import annotations

import asyncio
import ipaddress
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

LOOPBACK = "127.0.0.1"
ERR_PARSING = 200
ERR_UNKNOWN_MODULE = 201
ERR_UNKNOWN_COMMAND = 202
ERR_BAD_PARAMS = 203
ERR_NOT_FOUND = 206
ERR_FAILED = 209

Reply = str | list[str] | None
"""A handler's result: None -> ``100-OK``; str -> ``100-<str>``; list -> ``101`` lines + OK."""

Handler = Callable[[list[str]], Awaitable[Reply]]
FrameCallback = Callable[["UdpNio", bytes], None]


class CommandError(Exception):
    """A request failed; sent back as ``<code>-<message>``."""

    def __init__(self, message: str, code: int = ERR_FAILED) -> None:
        super().__init__(message)
        self.code = code


def expect_args(args: Sequence[str], minimum: int, maximum: int | None, usage: str) -> None:
    """Raise a ``203`` CommandError unless ``minimum <= len(args) <= maximum``."""
    too_many = maximum is not None and len(args) > maximum
    if len(args) < minimum or too_many:
        raise CommandError(f"bad number of parameters, usage: {usage}", ERR_BAD_PARAMS)


def format_reply(reply: Reply) -> str:
    """Encode a handler result as protocol lines."""
    if reply is None:
        return "100-OK\r\n"
    if isinstance(reply, str):
        return f"100-{reply}\r\n"
    return "".join(f"101 {line}\r\n" for line in reply) + "100-OK\r\n"


def listen_address(argv: Sequence[str]) -> tuple[str, int]:
    """The host and TCP port from ``-H [host:]port``. The host is kept when it is an IPv4
    loopback address (a lab compute's own, e.g. 127.0.0.2); anything else is replaced by
    127.0.0.1: a stand-in never listens beyond this machine."""
    for index, arg in enumerate(argv):
        if arg == "-H" and index + 1 < len(argv):
            host, _, port = argv[index + 1].rpartition(":")
            return (host if _is_loopback_v4(host) else LOOPBACK), int(port)
    raise SystemExit("usage: -H [host:]port  (run as a hypervisor listening on 127.0.0.1:port)")


def _is_loopback_v4(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == 4 and address.is_loopback


def log(message: str) -> None:
    """One line to stdout, which gns3-server keeps in the helper's log file."""
    print(message, flush=True)


class HypervisorServer:
    """Serve the line protocol on a loopback address with the given ``module command``
    handlers.

    The ``hypervisor`` module (version, close, stop, reset, working_dir, save_config,
    module_list, cmd_list) is built in; ``reset`` calls the ``reset`` callback.
    """

    def __init__(
        self, version: str, handlers: dict[str, Handler], reset: Callable[[], None]
    ) -> None:
        self.version = version
        self.working_dir = ""
        self._handlers = handlers
        self._reset = reset
        self._stopped = asyncio.Event()

    async def run(self, port: int, host: str = LOOPBACK) -> None:
        """Listen on host:port until a client sends ``hypervisor stop``."""
        server = await asyncio.start_server(self._serve_client, host, port)
        log(f"hypervisor listening on {host}:{port}")
        async with server:
            await self._stopped.wait()
        self._reset()

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while not self._stopped.is_set():
                line = await reader.readline()
                if not line:
                    break
                request = line.decode("utf-8", errors="replace").strip()
                if not request:
                    continue
                reply = await self.execute(request)
                writer.write(reply.encode())
                await writer.drain()
                if request in ("hypervisor close", "hypervisor stop"):
                    break
        except (ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def execute(self, request: str) -> str:
        """Run one request line and return the encoded reply (never raises)."""
        log(f"<- {request}")
        try:
            words = shlex.split(request)
        except ValueError as error:
            return f"{ERR_PARSING}-cannot parse '{request}': {error}\r\n"
        if len(words) < 2:
            return f"{ERR_PARSING}-expected 'module command [args...]'\r\n"
        module, command, args = words[0], words[1], words[2:]
        try:
            if module == "hypervisor":
                reply = self._hypervisor(command, args)
            else:
                handler = self._handlers.get(f"{module} {command}")
                if handler is None:
                    known = {key.split()[0] for key in self._handlers}
                    if module not in known:
                        raise CommandError(f"unknown module '{module}'", ERR_UNKNOWN_MODULE)
                    raise CommandError(
                        f"unknown command '{command}' for module '{module}'", ERR_UNKNOWN_COMMAND
                    )
                reply = await handler(args)
        except CommandError as error:
            log(f"-> {error.code}-{error}")
            return f"{error.code}-{error}\r\n"
        except ValueError as error:
            return f"{ERR_BAD_PARAMS}-bad parameter in '{request}': {error}\r\n"
        except Exception as error:  # a stand-in bug must not leave gns3-server waiting
            log(f"-> internal error: {error!r}")
            return f"{ERR_FAILED}-internal error in the stand-in: {error!r}\r\n"
        return format_reply(reply)

    def _hypervisor(self, command: str, args: list[str]) -> Reply:
        if command == "version":
            return self.version
        if command == "reset":
            self._reset()
            return None
        if command == "stop":
            self._stopped.set()
            return None
        if command == "working_dir":
            expect_args(args, 1, 1, "hypervisor working_dir <path>")
            self.working_dir = args[0]
            return None
        if command in ("close", "save_config"):
            return None
        if command == "module_list":
            return sorted({"hypervisor", *(key.split()[0] for key in self._handlers)})
        if command == "cmd_list":
            expect_args(args, 1, 1, "hypervisor cmd_list <module>")
            return sorted(key.split()[1] for key in self._handlers if key.split()[0] == args[0])
        raise CommandError(
            f"unknown command '{command}' for module 'hypervisor'", ERR_UNKNOWN_COMMAND
        )


class UdpNio(asyncio.DatagramProtocol):
    """A UDP NIO: Ethernet frames arrive on lport of each of ``BIND_HOSTS`` and leave
    towards rhost:rport.

    Each received datagram (one frame) is passed to ``on_frame``; until something
    attaches a callback, frames are dropped. Counters feed ``get_stats`` commands.
    """

    BIND_HOSTS: tuple[str, ...] = (LOOPBACK,)
    """127.0.0.1, where the node's own processes send, and the hypervisor's host when it
    is another loopback address: a lab compute's, where other computes' tunnels send."""

    def __init__(self, name: str, lport: int, rhost: str, rport: int) -> None:
        self.name = name
        self.lport = lport
        self.remote = (rhost, rport)
        self.on_frame: FrameCallback | None = None
        self.packets_in = self.packets_out = self.bytes_in = self.bytes_out = 0
        self._transport: asyncio.DatagramTransport | None = None
        self._extra: list[asyncio.BaseTransport] = []

    @classmethod
    async def open(cls, name: str, lport: int, rhost: str, rport: int) -> UdpNio:
        """Bind lport on every ``BIND_HOSTS`` address; a busy port raises CommandError."""
        nio = cls(name, lport, rhost, rport)
        loop = asyncio.get_running_loop()
        try:
            first, *others = cls.BIND_HOSTS
            await loop.create_datagram_endpoint(lambda: nio, local_addr=(first, lport))
            for host in others:
                extra, _ = await loop.create_datagram_endpoint(
                    lambda: _Receiver(nio), local_addr=(host, lport)
                )
                nio._extra.append(extra)
        except OSError as error:
            nio.close()
            raise CommandError(f"cannot bind UDP port {lport} for NIO {name}: {error}") from error
        return nio

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        self.packets_in += 1
        self.bytes_in += len(data)
        if self.on_frame is not None:
            self.on_frame(self, data)

    def error_received(self, exc: Exception) -> None:
        # ICMP port unreachable while the peer is not listening yet: not an error here.
        pass

    def send(self, frame: bytes) -> None:
        """Send one frame to the remote end (dropped silently once closed)."""
        if self._transport is None or self._transport.is_closing():
            return
        self._transport.sendto(frame, self.remote)
        self.packets_out += 1
        self.bytes_out += len(frame)

    def close(self) -> None:
        """Release the UDP port."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        for extra in self._extra:
            extra.close()
        self._extra.clear()


class _Receiver(asyncio.DatagramProtocol):
    """Frames arriving on a NIO's other address go to the NIO itself."""

    def __init__(self, nio: UdpNio) -> None:
        self.nio = nio

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        self.nio.datagram_received(data, addr)

    def error_received(self, exc: Exception) -> None:
        pass


def run(server: HypervisorServer, argv: Sequence[str]) -> int:
    """Run ``server`` on the ``-H`` address from ``argv`` until ``hypervisor stop``."""
    host, port = listen_address(argv)
    if host != LOOPBACK:
        UdpNio.BIND_HOSTS = (LOOPBACK, host)
    try:
        asyncio.run(server.run(port, host))
    except OSError as error:
        print(f"cannot listen on {host}:{port}: {error}", file=sys.stderr)
        return 1
    return 0
