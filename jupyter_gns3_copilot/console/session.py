"""One telnet console session: connect, wake the prompt, log in, run commands one at a time.

The telnet protocol itself (option negotiation, IAC escaping) is `telnet.py`'s job; this
module only reads and writes text, over TCP to the console port or, for a target with
`transport="websocket"`, over GNS3's console websocket (`websocket.py`: the same telnet
reader and writer on a websocket transport). Every wait is bounded. A command
that outlives its deadline, or whose caller is cancelled (an abort), is interrupted the
way the device understands (the dialect's `interrupt` keys: Ctrl-C, IOS break sequence)
and the session waits, bounded, for the prompt: the console is then left usable for the
next command, whoever sends it, instead of busy with a command nobody reads. A session
whose state is still unknown after that (no prompt, the connection dropped) closes itself
rather than risk mixing one command's output into the next; `ConsolePool` then reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .dialects import Dialect, dialect_by_name
from .errors import (
    ConsoleAuthError,
    ConsoleClosedError,
    ConsoleConnectError,
    ConsoleError,
    ConsoleTimeoutError,
)
from .models import CommandResult, ConsoleTarget
from .telnet import TelnetReader, TelnetWriter, open_telnet
from .text import TerminalText, tidy_output

if TYPE_CHECKING:
    from .websocket import WebSocketConsole

log = logging.getLogger(__name__)

MAX_COMMAND_CHARS = 512
"""Longest command line sent to a console: far above any device CLI command, low enough
that no caller can flood a console's input buffer (a 100,000-character line left a VPCS
console dead)."""
OUTPUT_INTERVAL = 0.5
"""Shortest time between two `on_output` calls of one command (a few per second at most)."""

OutputCallback = Callable[[str], None]
"""`on_output(output_so_far)`: a running command's clean output, as it arrives."""

_READ_SIZE = 65536
_WAKE_REPEAT = 1.0
"""Seconds of silence after which waking presses Enter again (a booting device)."""
_BUSY_AFTER = 2.0
"""Seconds of output without a prompt after which waking may interrupt a running command."""
_LOST_LINE_WAIT = 0.5
"""Silence at a prompt, without the command's echo, after which the line counts as lost."""
_ECHO_TAIL = 30
"""How much of a command's end must appear in its echo (IOS scrolls long lines with '$')."""
_TERMINAL_COLUMNS = 250
"""Wide enough that shells do not wrap typed commands, which would garble their echo."""
_TELNET_OPTIONS: dict[str, Any] = {"terminal_type": "dumb", "columns": _TERMINAL_COLUMNS}
"""`TelnetClient` options, the same over TCP and over GNS3's console websocket."""


class ConsoleSession:
    """A telnet connection to one device console, driven by the target's dialect.

    One command at a time: a session is not safe for concurrent use (`ConsolePool` holds
    one lock per console so callers never interleave). Use `open()` then `send()`, or
    `async with ConsoleSession(target) as session:`.
    """

    def __init__(
        self,
        target: ConsoleTarget,
        *,
        connect_timeout: float = 10.0,
        prompt_timeout: float = 10.0,
        interrupt_timeout: float = 5.0,
    ) -> None:
        self.target = target
        self.dialect: Dialect = dialect_by_name(target.dialect)
        self.connect_timeout = connect_timeout
        self.prompt_timeout = prompt_timeout
        self.interrupt_timeout = interrupt_timeout
        """Longest wait for the prompt after interrupting a command."""
        self.prompt = ""
        """The last prompt seen, e.g. `PC1>` or `R1(config-if)#`."""
        self.last_used = 0.0
        """Event-loop time at which the prompt was last seen."""
        self._reader: TelnetReader | None = None
        self._reading: asyncio.Future[str] | None = None
        """The read in progress, kept across `_read` calls until it delivers."""
        self._writer: TelnetWriter | None = None
        self._link: WebSocketConsole | None = None
        """The websocket under reader and writer (websocket transport), else None."""

    async def __aenter__(self) -> ConsoleSession:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

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
        """Whether the session is open and the console printed nothing since `watch()`.

        False when not watching. A quiet console is where its last command left it: at
        its prompt, so a command can be typed without first pressing Enter to check.
        """
        reading = self._reading
        return self.is_open and reading is not None and not reading.done()

    def watch(self) -> None:
        """Listen while idle, sending nothing: whatever the console prints from now on (a
        person typing on it, a command someone left running, a log or logout message)
        and its close end `quiet`. The next command's read takes what arrived."""
        if self._reading is None and self._reader is not None and self.is_open:
            self._reading = asyncio.ensure_future(self._reader.read(_READ_SIZE))

    async def open(
        self, *, prompt_timeout: float | None = None, interrupt_busy: bool = False
    ) -> None:
        """Connect, wake the prompt (logging in if asked), raise privilege, run setup.

        Bounded by `connect_timeout` for the connection and `prompt_timeout` (default:
        the session's) for each later step; `interrupt_busy` as in `wake`. Raises
        `ConsoleConnectError`, `ConsoleTimeoutError`, `ConsoleClosedError` or
        `ConsoleAuthError`; the session is closed again when opening fails.
        """
        if self.is_open:
            return
        timeout = prompt_timeout or self.prompt_timeout
        await self._connect()
        try:
            await self.wake(timeout=timeout, interrupt_busy=interrupt_busy)
            await self.enable(timeout=timeout)
            for command in self.dialect.setup_commands:
                await self.send(command, timeout=timeout)
        except BaseException:
            self._abandon()
            raise

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        writer, link = self._writer, self._link
        self._abandon()
        if writer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
        if link is not None:
            await link.wait_closed()

    async def wake(self, *, timeout: float | None = None, interrupt_busy: bool = False) -> str:
        """Press Enter until the prompt shows, and return it.

        A reconnected console prints nothing until Enter is pressed, and a booting device
        may ignore the first Enters, so Enter is pressed again after each second of
        silence. Login prompts are answered from the target's credentials, a pager is
        advanced, and a question showing up (e.g. `[confirm]`) is declined. With
        `interrupt_busy`, a console that prints but shows no prompt for `_BUSY_AFTER`
        seconds (a command someone left running, e.g. a ping typed in GNS3's own console
        window) gets the dialect's interrupt keys once; not meant for a booting device.
        """
        dialect = self.dialect
        deadline = self._deadline(timeout or self.prompt_timeout)
        busy_at: float | None = self._now() + _BUSY_AFTER if interrupt_busy else None
        screen = TerminalText()
        answered_login = False
        at_prompt: re.Match[str] | None = None
        self._write(dialect.newline)
        quiet_until = self._now() + _WAKE_REPEAT
        try:
            while True:
                if at_prompt is not None:
                    quiet_until = self._now() + dialect.wake_settle
                elif (
                    busy_at is not None
                    and self._now() >= busy_at
                    and screen.text.strip()
                    and not answered_login
                ):
                    self._write("".join(dialect.interrupt))
                    busy_at = None
                chunk = await self._read(min(deadline, quiet_until))
                if chunk is None:
                    if at_prompt is not None:
                        self.prompt = at_prompt["prompt"]
                        self.last_used = self._now()
                        return self.prompt
                    if self._now() >= deadline:
                        raise ConsoleTimeoutError(
                            f"{self.target.name}: no prompt on console {self.target.key} "
                            f"within {timeout or self.prompt_timeout:g} s.",
                            screen.text[-500:],
                        )
                    if not answered_login:
                        self._write(dialect.newline)
                    quiet_until = self._now() + _WAKE_REPEAT
                    continue
                quiet_until = self._now() + _WAKE_REPEAT
                screen.feed(chunk)
                text = screen.text
                at_prompt = dialect.prompt.search(text)
                if at_prompt is not None:
                    continue
                if dialect.login_failed and dialect.login_failed.search(text):
                    raise ConsoleAuthError(
                        f"{self.target.name}: the console refused the login "
                        "(wrong username or password in the console credentials)."
                    )
                reply = self._login_reply(text, answered_login)
                if reply is not None:
                    self._write(reply + dialect.newline)
                    answered_login = True
                    screen = TerminalText()
                elif dialect.pager_prompt and dialect.pager_prompt.search(text):
                    self._write(dialect.pager_response)
                else:
                    for question in dialect.interactive:
                        if question.pattern.search(text):
                            self._write(question.decline)
                            break
        except BaseException:
            self._abandon()
            raise

    async def send(
        self,
        command: str,
        *,
        timeout: float = 30.0,
        confirm: bool = True,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run one command and return its clean output.

        Sends the command, waits for its echo and then for the next prompt, at most
        `timeout` seconds. A line the device visibly dropped (back at its prompt without
        echoing it, as VPCS does when typed at while busy) is typed once more. On the way,
        `--More--` pagers are advanced, and questions such as `[confirm]`/`[yes/no]` are
        answered yes when `confirm` is true, no otherwise.
        The output has no echo, no prompt, no escape codes and no `\\r`. A command the
        device rejects (e.g. IOS `% Invalid input`) gives `ok=False` with the device's
        message as `error`. `on_output(output_so_far)` is called while output arrives, at
        most once per `OUTPUT_INTERVAL` (errors it raises are logged, never raised).

        When the deadline passes, or the caller is cancelled, the command is interrupted
        (the dialect's `interrupt` keys) and the prompt awaited for `interrupt_timeout`
        seconds; then `ConsoleTimeoutError` (with the partial output; its message says
        whether the console is back at its prompt) or the cancellation is raised. The
        session stays open when the prompt came back, and is closed otherwise. Raises
        `ConsoleClosedError` when the connection drops, and `ValueError` for a multi-line
        command or one longer than `MAX_COMMAND_CHARS` (nothing is sent then).
        """
        if "\n" in command or "\r" in command:
            raise ValueError(f"Send one line at a time; got a multi-line command {command[:80]!r}.")
        if len(command) > MAX_COMMAND_CHARS:
            raise ValueError(
                f"{self.target.name}: a console command may have at most {MAX_COMMAND_CHARS} "
                f"characters; this one has {len(command)}. Nothing was sent."
            )
        return await self._converse(command, timeout=timeout, confirm=confirm, on_output=on_output)

    async def enable(self, *, timeout: float | None = None) -> None:
        """Raise the privilege level (IOS `enable`), answering its password prompt.

        Does nothing for dialects without `enable` or when already privileged. Raises
        `ConsoleAuthError` when the device keeps the unprivileged prompt.
        """
        dialect = self.dialect
        if dialect.enable_command is None or dialect.is_privileged(self.prompt):
            return
        credentials = self.target.credentials
        secret = credentials.enable_password if credentials else None
        result = await self._converse(
            dialect.enable_command,
            timeout=timeout or self.prompt_timeout,
            secrets=[secret.get_secret_value()] if secret else [],
        )
        if not dialect.is_privileged(self.prompt):
            hint = (
                "the enable password in the console credentials was refused"
                if secret
                else "it asks for an enable password; give it as "
                "ConsoleCredentials(enable_password=...)"
            )
            detail = f" Device said: {result.output}" if result.output else ""
            raise ConsoleAuthError(f"{self.target.name}: `enable` failed: {hint}.{detail}")

    async def enter_config(self, *, timeout: float | None = None) -> None:
        """Enter configuration mode (raising privilege first). No-op when already in it."""
        dialect = self.dialect
        if dialect.config_enter is None:
            raise ConsoleError(
                f"{self.target.name}: the {dialect.name} console has no configuration "
                "mode; send the commands directly."
            )
        if dialect.in_config_mode(self.prompt):
            return
        await self.enable(timeout=timeout)
        result = await self._converse(dialect.config_enter, timeout=timeout or self.prompt_timeout)
        if not dialect.in_config_mode(self.prompt):
            raise ConsoleError(
                f"{self.target.name}: `{dialect.config_enter}` did not enter configuration "
                f"mode (prompt {self.prompt!r}): {result.output}"
            )

    async def exit_config(self, *, timeout: float | None = None) -> None:
        """Leave configuration mode back to the privileged prompt. No-op outside it."""
        dialect = self.dialect
        if dialect.config_exit is None or not dialect.in_config_mode(self.prompt):
            return
        await self._converse(dialect.config_exit, timeout=timeout or self.prompt_timeout)

    async def configure(
        self, commands: list[str], *, timeout: float = 30.0, confirm: bool = True
    ) -> list[CommandResult]:
        """Enter configuration mode, send `commands` one by one, then leave it again.

        Stops at the first timeout or connection error (raised); commands the device
        rejects are reported with `ok=False` and the rest still run.
        """
        await self.enter_config(timeout=timeout)
        results = [await self.send(c, timeout=timeout, confirm=confirm) for c in commands]
        await self.exit_config(timeout=timeout)
        return results

    # -- internals -----------------------------------------------------------------------

    async def _connect(self) -> None:
        self._reader, self._writer, self._link = await connect_console(
            self.target, timeout=self.connect_timeout, **_TELNET_OPTIONS
        )

    def _login_reply(self, text: str, answered: bool) -> str | None:
        """What to type at a login prompt at the end of `text`, if there is one."""
        dialect = self.dialect
        creds = self.target.credentials
        asks_user = dialect.username_prompt and dialect.username_prompt.search(text)
        asks_password = dialect.password_prompt and dialect.password_prompt.search(text)
        if not (asks_user or asks_password):
            return None
        if answered and asks_user:
            raise ConsoleAuthError(
                f"{self.target.name}: the console refused the login (wrong username or "
                "password in the console credentials)."
            )
        if asks_user:
            if creds is None or creds.username is None:
                raise ConsoleAuthError(
                    f"{self.target.name}: the console asks for a username; give it as "
                    "ConsoleCredentials(username=..., password=...)."
                )
            return creds.username
        if creds is None or creds.password is None:
            raise ConsoleAuthError(
                f"{self.target.name}: the console asks for a password; give it as "
                "ConsoleCredentials(password=...)."
            )
        return creds.password.get_secret_value()

    async def _converse(
        self,
        command: str,
        *,
        timeout: float,
        confirm: bool = True,
        secrets: list[str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        dialect = self.dialect
        started = self._now()
        deadline = started + timeout
        prompt_before = self.prompt
        secrets = list(secrets or [])
        screen = TerminalText()
        echo_end: int | None = None if self._remote_echoes() else 0
        answered_at = -1
        may_resend = True
        reported_at, reported_len = started, 0
        try:
            self._write(command + dialect.newline)
            while True:
                lost_check = echo_end is None and may_resend
                chunk = await self._read(
                    min(deadline, self._now() + _LOST_LINE_WAIT) if lost_check else deadline
                )
                if chunk is None and lost_check and self._now() < deadline:
                    if dialect.prompt.search(screen.text):
                        # At a prompt without echoing the line: the device dropped it while
                        # busy (VPCS does, right after an Enter), so it never ran.
                        self._write(command + dialect.newline)
                        may_resend = False
                    continue
                if chunk is None:
                    partial = tidy_output(screen.text[echo_end or 0 :], dialect.pager_marker)
                    raise _Overdue(partial)
                screen.feed(chunk)
                text = screen.text
                if echo_end is None:
                    echo_end = _find_echo_end(text, command)
                    if echo_end is None:
                        continue
                match = dialect.prompt.search(text, max(echo_end - 1, 0))
                if match:
                    self.prompt = match["prompt"]
                    self.last_used = self._now()
                    if echo_end == 0:
                        echo_end = _find_echo_end(
                            text[: match.start()], command, first_line_only=True
                        )
                    output = tidy_output(text[echo_end : match.start()], dialect.pager_marker)
                    rejected = dialect.error.search(output) if dialect.error else None
                    return CommandResult(
                        command=command,
                        prompt=prompt_before,
                        output=output,
                        ok=rejected is None,
                        error=rejected.group(0).strip() if rejected else None,
                        elapsed=self._now() - started,
                    )
                now = self._now()
                if on_output and len(text) > reported_len and now - reported_at >= OUTPUT_INTERVAL:
                    reported_at, reported_len = now, len(text)
                    self._report(on_output, tidy_output(text[echo_end:], dialect.pager_marker))
                if len(text) == answered_at:
                    continue
                reply = self._mid_command_reply(text[echo_end:], confirm, secrets)
                if reply is not None:
                    self._write(reply)
                    answered_at = len(text)
        except _Overdue as overdue:
            where = f"{self.target.name}: no prompt within {timeout:g} s after {command!r}"
            keys = await self._interrupt(screen, max((echo_end or 0) - 1, 0))
            if keys is not None:
                outcome = (
                    f"; interrupted it ({_key_names(keys)}), and the console is back at its prompt"
                )
            else:
                outcome = f"; {self.unresponsive()}"
            raise ConsoleTimeoutError(where + outcome + ".", overdue.partial_output) from None
        except asyncio.CancelledError:
            await self._interrupt(screen, max((echo_end or 0) - 1, 0))
            raise
        except BaseException:
            self._abandon()
            raise

    async def _interrupt(self, screen: TerminalText, search_from: int) -> tuple[str, ...] | None:
        """Stop the running command and wait for the prompt; the keys it took, or None.

        Types the dialect's interrupt keys one after the other, each followed by a wait
        for the prompt (together at most `interrupt_timeout` seconds). Without a prompt
        (or when the connection fails meanwhile, or the wait is cancelled) the session is
        closed, since the device's state is unknown.
        """
        keys = self.dialect.interrupt
        back = False
        try:
            for count, key in enumerate(keys, 1):
                self._write(key)
                until = self._now() + self.interrupt_timeout / len(keys)
                while (chunk := await self._read(until)) is not None:
                    screen.feed(chunk)
                    match = self.dialect.prompt.search(screen.text, search_from)
                    if match:
                        self.prompt = match["prompt"]
                        self.last_used = self._now()
                        back = True
                        return keys[:count]
        except ConsoleError:
            pass
        finally:
            if not back:
                self._abandon()
        return None

    def interrupted_state(self) -> str:
        """A sentence on the console after a command was interrupted (e.g. on an abort)."""
        if self.is_open:
            return "The command was interrupted and the console is back at its prompt."
        return f"The command was interrupted; {self.unresponsive()}."

    def unresponsive(self) -> str:
        """What to say when a device did not come back to its prompt after an interrupt."""
        return (
            f"it did not come back to its prompt within {self.interrupt_timeout:g} s after "
            f"{_key_names(self.dialect.interrupt)}, so the console was closed. If the next "
            f"command on {self.target.name} fails the same way, reload the node (the "
            "reload_nodes tool, or Reload in GNS3)"
        )

    def _report(self, on_output: OutputCallback, output: str) -> None:
        try:
            on_output(output)
        except Exception:
            log.exception("Output callback failed for %s", self.target.name)

    def _mid_command_reply(self, body: str, confirm: bool, secrets: list[str]) -> str | None:
        """The keys to send for a pager or question at the end of `body`, if any."""
        dialect = self.dialect
        if dialect.pager_prompt and dialect.pager_prompt.search(body):
            return dialect.pager_response
        for question in dialect.interactive:
            if question.pattern.search(body):
                return question.accept if confirm else question.decline
        if dialect.password_prompt and dialect.password_prompt.search(body):
            return (secrets.pop(0) if secrets else "") + dialect.newline
        return None

    async def _read(self, until: float) -> str | None:
        """The next chunk of text, or None when `until` (loop time) passes first."""
        reader = self._reader
        if reader is None:
            raise ConsoleClosedError(f"{self.target.name}: the console session is closed.")
        remaining = until - self._now()
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

    def _remote_echoes(self) -> bool:
        """Whether the device echoes typed text: yes unless it said telnet WONT ECHO."""
        return self._writer is None or self._writer.remote_echoes

    def _write(self, text: str) -> None:
        if not self.is_open:
            state = (
                "is not connected"
                if self._writer is None
                else "closed the connection (node stopped or restarted?)"
            )
            raise ConsoleClosedError(f"{self.target.name}: console {self.target.key} {state}.")
        assert self._writer is not None
        self._writer.write(text)

    def _abandon(self) -> None:
        """Drop the connection at once (state unknown, or closing)."""
        writer, reading = self._writer, self._reading
        self._reader = self._writer = self._reading = self._link = None
        if reading is not None:
            reading.cancel()
            if reading.done() and not reading.cancelled():
                reading.exception()  # a lost connection, already reported or moot
        if writer is not None:
            writer.close()

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    def _deadline(self, timeout: float) -> float:
        return self._now() + timeout


def _key_names(keys: tuple[str, ...]) -> str:
    names = {"\x03": "Ctrl-C", "\x1e": "Ctrl-Shift-6"}
    return " then ".join(names.get(key, repr(key)) for key in keys)


class _Overdue(Exception):
    """A command's deadline passed (internal: becomes `ConsoleTimeoutError`)."""

    def __init__(self, partial_output: str) -> None:
        super().__init__(partial_output)
        self.partial_output = partial_output


def _find_echo_end(text: str, command: str, *, first_line_only: bool = False) -> int | None:
    """Index just after the line echoing `command`, or None while it has not arrived.

    Lines before the echo (a late log message, an extra prompt from a previous Enter) are
    skipped. The comparison ignores whitespace and looks only at the command's end, since
    devices may scroll or re-space a long echoed line. With `first_line_only` (a console
    that does not echo), only the first line is checked and 0 means "no echo there".
    """
    wanted = "".join(command.split())[-_ECHO_TAIL:]
    start = 0
    while (newline := text.find("\n", start)) >= 0:
        if "".join(text[start:newline].split()).endswith(wanted):
            return newline + 1
        if first_line_only:
            return 0
        start = newline + 1
    return 0 if first_line_only else None


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
