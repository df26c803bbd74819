"""A scripted Cisco-IOS-like telnet console. TEST DOUBLE: not IOS, not an emulator.

No Cisco IOS image can run on the machines this project is built and tested on, so the
`cisco_ios` console dialect is tested against this small telnet server instead. It is a
real telnet server (telnetlib3's server side, bound to 127.0.0.1; telnetlib3 comes with
the `test` extra) that behaves like an IOS console line in the ways console automation
depends on:

- nothing is printed until Enter is pressed (as on a reconnected GNS3 console);
- optional login (`Username:`/`Password:`, `% Login invalid`) and `enable` password
  (three tries, then `% Bad secrets`);
- prompts `R1>`, `R1#`, `R1(config)#`, `R1(config-if)#`, `R1(config-router)#`;
- typed characters are echoed (passwords are not), keywords may be abbreviated;
- `--More--` paging after `terminal length` lines (default 24; `terminal length 0`
  turns it off unless `ignore_terminal_length` is set), erased with backspaces;
- `[confirm]` (`reload`, `clear counters`), `[yes/no]` (`reload` with unsaved changes),
  `Destination filename [startup-config]?` (`copy running-config startup-config`);
- `% Invalid input detected at '^' marker.`, `% Incomplete command.`, unknown words;
- `show ip interface brief` and `show ip interface` from the interfaces configured on it;
- the `%SYS-5-CONFIG_I` log line after leaving configuration mode, printed late (when
  the next command starts), as IOS does without `logging synchronous`;
- `ping HOST` and `traceroute HOST` answered from the interfaces' subnets: a host on an
  up interface's subnet answers (the first ping to it loses its first probe, `.!!!!`,
  as IOS's does while it resolves the address), any other address times out (`.....`;
  a traceroute stops after 3 hops of `*` where IOS goes on to 30), a name is
  `% Unrecognized host or address, or protocol not running.`

It records every command line it receives (`received`), in order, with the connection it
came from, so tests can prove ordering, and counts the `--More--` pages it showed.
`delays` makes chosen command lines slow; while one runs, the break sequence
(Ctrl-Shift-6, `\\x1e`) or Ctrl-C stops it and the prompt comes back, as IOS does for
ping and traceroute (other typed keys are dropped), unless the line is listed in
`unbreakable` (a device too busy to answer); the keys received are kept in
`interrupts`. It does not
route, forward packets or know most IOS commands; `reload` is simulated (the console
stays up). Use it in tests only.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import telnetlib3

from ..console.models import ConsoleCredentials, ConsoleTarget

_CTRL_C = "\x03"
_BREAK = "\x1e"
_CTRL_Z = "\x1a"
_MORE = " --More-- "
_ERASE_MORE = "\b" * len(_MORE) + " " * len(_MORE) + "\b" * len(_MORE)
_CONFIG_LOG = "*Mar  1 00:00:42.123: %SYS-5-CONFIG_I: Configured from console by console"


@dataclass(frozen=True)
class ReceivedLine:
    """A command line the double received, at which prompt, on which connection."""

    connection: int
    prompt: str
    line: str


@dataclass
class _Interface:
    name: str
    address: str | None = None
    mask: str | None = None
    shutdown: bool = True
    description: str | None = None


@dataclass
class _Device:
    """State shared by every connection: what a real router keeps across sessions."""

    hostname: str
    interfaces: dict[str, _Interface] = field(default_factory=dict)
    ospf: dict[str, list[str]] = field(default_factory=dict)
    unsaved_changes: bool = False
    resolved: set[str] = field(default_factory=set)
    """Addresses pinged before (their first probe is no longer lost to address resolution)."""


class _Disconnected(Exception):
    """The client went away."""


class IOSDouble:
    """A scripted IOS-like console on 127.0.0.1 (see the module docstring).

    Use as `async with IOSDouble(...) as device:` and connect to `device.target()`.
    """

    def __init__(
        self,
        *,
        hostname: str = "R1",
        username: str | None = None,
        password: str | None = None,
        enable_password: str | None = None,
        page_length: int = 24,
        ignore_terminal_length: bool = False,
        delays: Mapping[str, float] | None = None,
        unbreakable: Iterable[str] = (),
        port: int = 0,
    ) -> None:
        self.requested_port = port
        self.username = username
        self.password = password
        self.enable_password = enable_password
        self.page_length = page_length
        self.ignore_terminal_length = ignore_terminal_length
        self.delays = dict(delays or {})
        self.unbreakable = frozenset(unbreakable)
        self.interrupts: list[str] = []
        """Break/Ctrl-C keys received while a slow command ran, in order."""
        self.received: list[ReceivedLine] = []
        self.pages_shown = 0
        """How many `--More--` markers were printed."""
        self.device = _Device(hostname=hostname)
        for index in range(4):
            name = f"GigabitEthernet0/{index}"
            self.device.interfaces[name] = _Interface(name)
        self._server: telnetlib3.Server | None = None
        self._writers: set[telnetlib3.TelnetWriterUnicode] = set()
        self._shells: set[asyncio.Task[None]] = set()
        self._awaited: list[tuple[str, asyncio.Event]] = []
        self._connection_ids = itertools.count(1)

    async def __aenter__(self) -> IOSDouble:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Listen on 127.0.0.1 (on `port`, or an ephemeral port when it is 0)."""
        self._server = await telnetlib3.create_server(
            host="127.0.0.1",
            port=self.requested_port,
            shell=self._shell,
            encoding="utf-8",
            encoding_errors="replace",
            force_binary=True,
            connect_maxwait=0.5,
        )

    async def aclose(self) -> None:
        """Stop listening, close every connection and end its scripted CLI."""
        if self._server is not None:
            self.drop_connections()
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        shells = list(self._shells)
        for shell in shells:
            shell.cancel()
        await asyncio.gather(*shells, return_exceptions=True)

    @property
    def port(self) -> int:
        """The TCP port the double listens on."""
        assert self._server is not None and self._server.sockets, "IOSDouble not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def commands(self) -> list[str]:
        """The command lines received so far, in order."""
        return [entry.line for entry in self.received]

    def target(
        self, name: str | None = None, credentials: ConsoleCredentials | None = None
    ) -> ConsoleTarget:
        """A `cisco_ios` console target pointing at this double."""
        return ConsoleTarget(
            name=name or self.device.hostname,
            host="127.0.0.1",
            port=self.port,
            dialect="cisco_ios",
            credentials=credentials,
        )

    async def wait_for_command(self, line: str, timeout: float = 10.0) -> None:
        """Return once the command `line` has been received (at most `timeout` seconds)."""
        if line in self.commands:
            return
        arrived = asyncio.Event()
        self._awaited.append((line, arrived))
        await asyncio.wait_for(arrived.wait(), timeout)

    def _record(self, entry: ReceivedLine) -> None:
        self.received.append(entry)
        for line, arrived in self._awaited:
            if line == entry.line:
                arrived.set()

    def drop_connections(self) -> None:
        """Close every client connection, as a node restart does."""
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    async def _shell(
        self,
        reader: telnetlib3.TelnetReader | telnetlib3.TelnetReaderUnicode,
        writer: telnetlib3.TelnetWriter | telnetlib3.TelnetWriterUnicode,
    ) -> None:
        # The server decodes text (`encoding` is set), so its streams are the Unicode ones.
        assert isinstance(reader, telnetlib3.TelnetReaderUnicode)
        assert isinstance(writer, telnetlib3.TelnetWriterUnicode)
        task = asyncio.current_task()
        assert task is not None
        self._shells.add(task)
        self._writers.add(writer)
        line = _ConsoleLine(self, next(self._connection_ids), reader, writer)
        try:
            await line.run()
        except (_Disconnected, ConnectionError):
            pass
        finally:
            self._shells.discard(task)
            self._writers.discard(writer)
            writer.close()


class _ConsoleLine:
    """One connection's CLI: login state, mode, paging, line editing."""

    def __init__(
        self,
        double: IOSDouble,
        connection: int,
        reader: telnetlib3.TelnetReaderUnicode,
        writer: telnetlib3.TelnetWriterUnicode,
    ) -> None:
        self.double = double
        self.device = double.device
        self.connection = connection
        self.reader = reader
        self.writer = writer
        self.mode = "user"  # user, enable, config, config-if, config-router
        self.interface: _Interface | None = None
        self.ospf_process = ""
        self.page_length = double.page_length
        self.pending_log: list[str] = []
        self._buffer = ""
        self._skip_lf = False

    # -- terminal i/o --------------------------------------------------------------------

    def write(self, text: str) -> None:
        if self.writer.is_closing():
            raise _Disconnected
        self.writer.write(text)

    async def key(self) -> str:
        """The next key; a CR followed by LF or NUL counts as one Enter (`\\r`)."""
        while True:
            if not self._buffer:
                chunk = await self.reader.read(4096)
                if not chunk:
                    raise _Disconnected
                self._buffer = chunk
            char, self._buffer = self._buffer[0], self._buffer[1:]
            if self._skip_lf and char in "\n\x00":
                self._skip_lf = False
                continue
            self._skip_lf = char == "\r"
            return "\r" if char == "\n" else char

    async def readline(self, *, echo: bool = True) -> str:
        """A typed line, echoed like IOS does. Ctrl-C/Ctrl-Z come back as themselves."""
        typed: list[str] = []
        while True:
            char = await self.key()
            if self.pending_log:
                self.write("".join(f"\r\n{entry}\r\n" for entry in self.pending_log))
                self.pending_log.clear()
            if char == "\r":
                self.write("\r\n")
                return "".join(typed)
            if char in (_CTRL_C, _CTRL_Z):
                self.write("^C\r\n" if char == _CTRL_C else "^Z\r\n")
                return char
            if char in ("\b", "\x7f"):
                if typed:
                    typed.pop()
                    if echo:
                        self.write("\b \b")
                continue
            if char.isprintable():
                typed.append(char)
                if echo:
                    self.write(char)

    async def emit(self, lines: list[str]) -> None:
        """Print output lines, paging with --More-- like IOS."""
        paging = self.page_length > 0
        shown = 0
        for index, text in enumerate(lines):
            self.write(text + "\r\n")
            shown += 1
            if paging and shown >= self.page_length - 1 and index < len(lines) - 1:
                self.write(_MORE)
                self.double.pages_shown += 1
                answer = await self.key()
                self.write(_ERASE_MORE)
                if answer == " ":
                    shown = 0
                elif answer == "\r":
                    shown -= 1
                else:
                    return

    @property
    def prompt(self) -> str:
        name = self.device.hostname
        if self.mode == "user":
            return f"{name}>"
        if self.mode == "enable":
            return f"{name}#"
        return f"{name}({self.mode})#"

    # -- session flow --------------------------------------------------------------------

    async def run(self) -> None:
        while await self.key() != "\r":
            pass
        await self.login()
        self.write("\r\n" + self.prompt)
        while True:
            typed = await self.readline()
            line = typed.strip()
            if typed in (_CTRL_C, _CTRL_Z):
                if self.mode.startswith("config"):
                    self.leave_config()
            elif line:
                self.double._record(ReceivedLine(self.connection, self.prompt, line))
                delay = self.double.delays.get(line)
                if delay and await self.busy(delay, line):
                    self.write("\r\n")
                elif await self.execute(line) == "logout":
                    return
            self.write(self.prompt)

    async def busy(self, seconds: float, line: str) -> bool:
        """Work on `line` for `seconds`; whether a break (or Ctrl-C) cut it short."""
        breakable = line not in self.double.unbreakable

        async def until_break() -> None:
            while True:
                key = await self.key()
                if key in (_BREAK, _CTRL_C):
                    self.double.interrupts.append(key)
                    if breakable:
                        return

        try:
            await asyncio.wait_for(until_break(), seconds)
        except asyncio.TimeoutError:
            return False
        return True

    async def login(self) -> None:
        double = self.double
        if double.password is None:
            return
        self.write("\r\n\r\nUser Access Verification\r\n\r\n")
        while True:
            user = None
            if double.username is not None:
                self.write("Username: ")
                user = await self.readline()
            self.write("Password: ")
            secret = await self.readline(echo=False)
            if user == double.username and secret == double.password:
                return
            self.write("% Login invalid\r\n\r\n")

    async def enable(self) -> None:
        secret = self.double.enable_password
        if secret is None:
            self.mode = "enable"
            return
        for _ in range(3):
            self.write("Password: ")
            if await self.readline(echo=False) == secret:
                self.mode = "enable"
                return
        self.write("% Bad secrets\r\n\r\n")

    def leave_config(self) -> None:
        self.mode, self.interface, self.ospf_process = "enable", None, ""
        self.pending_log.append(_CONFIG_LOG)

    # -- commands ------------------------------------------------------------------------

    async def execute(self, line: str) -> str | None:
        words = line.split()
        if self.mode.startswith("config"):
            return await self.configure(words, line)
        return await self.exec_command(words, line)

    async def exec_command(self, words: list[str], line: str) -> str | None:
        privileged = self.mode == "enable"
        if _is(words, "show", "version"):
            await self.emit(_show_version(self.device.hostname))
        elif _is(words, "show", "ip", "interface", "brief"):
            await self.emit(self.show_ip_interface_brief())
        elif _is(words, "show", "ip", "interface") and len(words) == 3:
            await self.emit(self.show_ip_interface())
        elif _is(words, "show", "clock"):
            await self.emit(["*00:00:42.123 UTC Mon Mar 1 1993"])
        elif _is(words, "show", "running-config") and privileged:
            await self.emit(self.running_config())
        elif _is(words, "terminal", "length") and len(words) == 3 and words[2].isdigit():
            if not self.double.ignore_terminal_length:
                self.page_length = int(words[2])
        elif _is(words, "ping") and len(words) == 2:
            await self.emit(self.ping(words[1]))
        elif _is(words, "ping") and len(words) == 4 and _is(words[2:3], "repeat"):
            await self.emit(self.ping(words[1], int(words[3]) if words[3].isdigit() else 5))
        elif _is(words, "traceroute") and len(words) == 2:
            await self.emit(self.traceroute(words[1]))
        elif _is(words, "enable") and len(words) == 1:
            await self.enable()
        elif _is(words, "disable") and len(words) == 1:
            self.mode = "user"
        elif words[0] in ("exit", "logout", "quit") and len(words) == 1:
            self.write(
                f"\r\n\r\n{self.device.hostname} con0 is now available\r\n\r\n"
                "Press RETURN to get started.\r\n"
            )
            return "logout"
        elif _is(words, "configure", "terminal") and privileged:
            self.write("Enter configuration commands, one per line.  End with CNTL/Z.\r\n")
            self.mode = "config"
        elif _is(words, "reload") and privileged and len(words) == 1:
            await self.reload()
        elif _is(words, "write", "memory") and privileged:
            self.save()
        elif _is(words, "copy", "running-config", "startup-config") and privileged:
            self.write("Destination filename [startup-config]? ")
            if await self.readline() in (_CTRL_C, _CTRL_Z):
                self.write("%Aborted\r\n")
            else:
                self.save()
        elif _is(words, "clear", "counters") and privileged:
            self.write('Clear "show interface" counters on all interfaces [confirm]')
            await self.key()
            self.write("\r\n")
        elif len(words) == 1 and not _known_exec_word(words[0]):
            self.write(
                f'Translating "{words[0]}"...domain server (255.255.255.255)\r\n'
                "% Unknown command or computer name, or unable to find computer "
                "address\r\n"
            )
        else:
            self.invalid(line, words, privileged)
        return None

    def invalid(self, line: str, words: list[str], privileged: bool) -> None:
        if (_is(words, "show") and len(words) == 1) or _is(words, "terminal", "length"):
            self.write("% Incomplete command.\r\n\r\n")
            return
        column = len(self.prompt) + _bad_word_column(line, words, privileged)
        self.write(" " * column + "^\r\n% Invalid input detected at '^' marker.\r\n\r\n")

    async def reload(self) -> None:
        if self.device.unsaved_changes:
            while True:
                self.write("\r\nSystem configuration has been modified. Save? [yes/no]: ")
                answer = (await self.readline()).strip().lower()
                if answer in ("yes", "y"):
                    self.save()
                    break
                if answer in ("no", "n"):
                    break
                self.write("% Please answer 'yes' or 'no'.\r\n")
        self.write("Proceed with reload? [confirm]")
        if await self.key() in ("\r", "y", "Y"):
            self.write(
                "\r\n\r\n*Mar  1 00:00:43.000: %SYS-5-RELOAD: Reload requested by "
                "console. (Test double: reload simulated, the console stays up.)\r\n"
            )
        else:
            self.write("\r\n")

    def save(self) -> None:
        self.write("Building configuration...\r\n[OK]\r\n")
        self.device.unsaved_changes = False

    async def configure(self, words: list[str], line: str) -> str | None:
        device = self.device
        if words == ["end"]:
            self.leave_config()
            return None
        if words == ["exit"]:
            if self.mode == "config":
                self.leave_config()
            else:
                self.mode, self.interface = "config", None
            return None
        if words[0] == "do" and len(words) > 1:
            return await self.exec_command(words[1:], line[2:].strip())
        changed = True
        if _is(words, "hostname") and len(words) == 2:
            device.hostname = words[1]
        elif _is(words, "interface") and len(words) >= 2:
            name = _interface_name("".join(words[1:]))
            self.interface = device.interfaces.setdefault(name, _Interface(name))
            self.mode, changed = "config-if", False
        elif _is(words, "router", "ospf") and len(words) == 3:
            device.ospf.setdefault(words[2], [])
            self.mode, self.interface, self.ospf_process = "config-router", None, words[2]
        elif self.mode == "config-if" and self.interface_command(words):
            pass
        elif self.mode == "config-router" and words[0] in ("network", "router-id"):
            device.ospf[self.ospf_process].append(" ".join(words))
        else:
            changed = False
            self.invalid(line, words, privileged=True)
        device.unsaved_changes = device.unsaved_changes or changed
        return None

    def interface_command(self, words: list[str]) -> bool:
        interface = self.interface
        if interface is None:
            return False
        if _is(words, "ip", "address") and len(words) == 4:
            interface.address, interface.mask = words[2], words[3]
        elif _is(words, "no", "shutdown") and len(words) == 2:
            interface.shutdown = False
        elif _is(words, "shutdown") and len(words) == 1:
            interface.shutdown = True
        elif _is(words, "description") and len(words) > 1:
            interface.description = " ".join(words[1:])
        else:
            return False
        return True

    # -- canned output -------------------------------------------------------------------

    def show_ip_interface_brief(self) -> list[str]:
        rows = [f"{'Interface':<27}{'IP-Address':<16}OK? Method {'Status':<22}Protocol"]
        for interface in self.device.interfaces.values():
            status = "administratively down" if interface.shutdown else "up"
            protocol = "down" if interface.shutdown else "up"
            method = "manual" if interface.address else "unset "
            rows.append(
                f"{interface.name:<27}{interface.address or 'unassigned':<16}YES {method} "
                f"{status:<22}{protocol}"
            )
        return rows

    def show_ip_interface(self) -> list[str]:
        lines = []
        for interface in self.device.interfaces.values():
            if interface.shutdown:
                lines.append(f"{interface.name} is administratively down, line protocol is down")
            else:
                lines.append(f"{interface.name} is up, line protocol is up")
            if interface.address and interface.mask:
                length = sum(bin(int(part)).count("1") for part in interface.mask.split("."))
                lines += [
                    f"  Internet address is {interface.address}/{length}",
                    "  Broadcast address is 255.255.255.255",
                    "  MTU is 1500 bytes",
                    "  Helper address is not set",
                    "  Outgoing access list is not set",
                    "  Inbound  access list is not set",
                ]
            else:
                lines.append("  Internet protocol processing disabled")
        return lines

    def running_config(self) -> list[str]:
        device = self.device
        lines = [
            "Building configuration...",
            "",
            "Current configuration : 1024 bytes",
            "!",
            "! Test double: scripted IOS-like configuration",
            "!",
            "version 15.9",
            "service timestamps debug datetime msec",
            "service timestamps log datetime msec",
            "no service password-encryption",
            "!",
            f"hostname {device.hostname}",
            "!",
            "boot-start-marker",
            "boot-end-marker",
            "!",
            "no aaa new-model",
            "!",
        ]
        for interface in device.interfaces.values():
            lines.append(f"interface {interface.name}")
            if interface.description:
                lines.append(f" description {interface.description}")
            if interface.address:
                lines.append(f" ip address {interface.address} {interface.mask}")
            else:
                lines.append(" no ip address")
            if interface.shutdown:
                lines.append(" shutdown")
            lines.append("!")
        for process, statements in device.ospf.items():
            lines.append(f"router ospf {process}")
            lines.extend(f" {statement}" for statement in statements)
            lines.append("!")
        lines += ["line con 0", "line aux 0", "line vty 0 4", " login", "!", "end"]
        return lines

    def reachable(self, host: str) -> bool:
        return any(
            interface.address is not None
            and not interface.shutdown
            and _same_subnet(interface.address, interface.mask or "", host)
            for interface in self.device.interfaces.values()
        )

    def ping(self, host: str, count: int = 5) -> list[str]:
        if not _is_address(host):
            return _unrecognized(host)
        answered = 0
        if self.reachable(host):
            answered = count if host in self.device.resolved else count - 1  # the first: ARP
            self.device.resolved.add(host)
        marks = "." * (count - answered) + "!" * answered
        rate = f"{answered * 100 // count} percent ({answered}/{count})"
        if answered:
            rate += ", round-trip min/avg/max = 1/1/2 ms"
        return [
            "Type escape sequence to abort.",
            f"Sending {count}, 100-byte ICMP Echos to {host}, timeout is 2 seconds:",
            marks,
            f"Success rate is {rate}",
        ]

    def traceroute(self, host: str) -> list[str]:
        if not _is_address(host):
            return _unrecognized(host)
        hops = (
            [f"  1 {host} 1 msec 0 msec 1 msec"]
            if self.reachable(host)
            else [f"  {hop}  *  *  * " for hop in range(1, 4)]
        )
        return [
            "Type escape sequence to abort.",
            f"Tracing the route to {host}",
            "VRF info: (vrf in name/id, vrf out name/id)",
            *hops,
        ]


_EXEC_WORDS = (
    "show",
    "terminal",
    "ping",
    "traceroute",
    "enable",
    "disable",
    "exit",
    "logout",
    "quit",
    "configure",
    "reload",
    "write",
    "copy",
    "clear",
)


def _is(words: list[str], *keywords: str) -> bool:
    """Whether `words` start with `keywords`, each word possibly abbreviated."""
    return _matching_words(words, keywords) == len(keywords)


def _matching_words(words: list[str], keywords: tuple[str, ...]) -> int:
    """How many leading `words` abbreviate the corresponding `keywords`."""
    for count, (word, keyword) in enumerate(zip(words, keywords, strict=False)):
        if not keyword.startswith(word.lower()):
            return count
    return min(len(words), len(keywords))


def _known_exec_word(word: str) -> bool:
    return any(keyword.startswith(word.lower()) for keyword in _EXEC_WORDS)


def _bad_word_column(line: str, words: list[str], privileged: bool) -> int:
    """Where IOS puts its '^': under the first word it could not place."""
    known = [
        ("show", "version"),
        ("show", "ip", "interface", "brief"),
        ("show", "ip", "interface"),
        ("show", "clock"),
        ("terminal", "length"),
    ]
    if privileged:
        known += [("configure", "terminal"), ("show", "running-config")]
    depth = max(_matching_words(words, keywords) for keywords in known)
    return line.index(words[min(depth, len(words) - 1)])


def _interface_name(typed: str) -> str:
    for prefix, full in (("gigabitethernet", "GigabitEthernet"), ("loopback", "Loopback")):
        letters = typed.rstrip("0123456789/.")
        if letters and prefix.startswith(letters.lower()):
            return full + typed[len(letters) :]
    return typed


def _is_address(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(part.isdigit() and int(part) < 256 for part in parts)


def _unrecognized(host: str) -> list[str]:
    return [
        f'Translating "{host}"...domain server (255.255.255.255)',
        "% Unrecognized host or address, or protocol not running.",
    ]


def _same_subnet(address: str, mask: str, host: str) -> bool:
    try:
        to_int = [
            int.from_bytes(bytes(int(part) for part in value.split(".")), "big")
            for value in (address, mask, host)
        ]
    except ValueError:
        return False
    own, netmask, other = to_int
    return own & netmask == other & netmask and own != other


def _show_version(hostname: str) -> list[str]:
    return [
        "Cisco IOS Software, IOS-like TEST DOUBLE (scripted), Version 15.9(3)M-double",
        "Technical Support: not applicable (this is a test double, not Cisco IOS)",
        "Copyright (c) jupyter_gns3_copilot tests",
        "",
        "ROM: Bootstrap program is IOSv (test double)",
        "",
        f"{hostname} uptime is 42 minutes",
        "System returned to ROM by reload",
        'System image file is "flash0:/vios-adventerprisek9-m" (simulated)',
        "Last reload reason: Unknown reason",
        "",
        "This product contains no cryptographic features: it is a scripted test double.",
        "",
        "Cisco IOSv (revision 1.0) with 460033K/62464K bytes of memory.",
        "Processor board ID 9TEST0DOUBLE",
        "4 Gigabit Ethernet interfaces",
        "DRAM configuration is 72 bits wide with parity disabled.",
        "256K bytes of non-volatile configuration memory.",
        "2097152K bytes of ATA System CompactFlash 0 (Read/Write)",
        "0K bytes of ATA CompactFlash 1 (Read/Write)",
        "0K bytes of ATA CompactFlash 2 (Read/Write)",
        "10080K bytes of ATA CompactFlash 3 (Read/Write)",
        "",
        "",
        "Technology Package License Information:",
        "",
        "------------------------------------------------------------------",
        "Technology    Technology-package           Technology-package",
        "              Current       Type           Next reboot",
        "------------------------------------------------------------------",
        "ipbase        ipbasek9      Permanent      ipbasek9",
        "security      None          None           None",
        "data          None          None           None",
        "",
        "Configuration register is 0x0",
    ]
