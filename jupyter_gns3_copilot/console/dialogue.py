"""`ConsoleDialogue`: the text exchange with a device's command line over a `ConsoleLine`.

Waking the prompt (answering a login), running one command to its next prompt (its echo
found, pagers advanced, questions answered, output reported as it arrives), and
interrupting a command that outlives its deadline or whose caller is cancelled, the way
the device understands (the dialect's `interrupt` keys: Ctrl-C, IOS break sequence), then
waiting, bounded, for the prompt. A line whose state is still unknown after that (no
prompt, the connection dropped) is dropped rather than risk mixing one command's output
into the next. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

from .dialects import Dialect
from .errors import ConsoleAuthError, ConsoleError, ConsoleTimeoutError
from .line import ConsoleLine, loop_time
from .models import CommandResult
from .text import TerminalText, tidy_output

log = logging.getLogger(__name__)

OUTPUT_INTERVAL = 0.5
"""Shortest time between two `on_output` calls of one command (a few per second at most)."""

OutputCallback = Callable[[str], None]
"""`on_output(output_so_far)`: a running command's clean output, as it arrives."""

_WAKE_REPEAT = 1.0
"""Seconds of silence after which waking presses Enter again (a booting device)."""
_BUSY_AFTER = 2.0
"""Seconds of output without a prompt after which waking may interrupt a running command."""
_LOST_LINE_WAIT = 0.5
"""Silence at a prompt, without the command's echo, after which the line counts as lost."""
_ECHO_TAIL = 30
"""How much of a command's end must appear in its echo (IOS scrolls long lines with '$')."""


class ConsoleDialogue:
    """Talks to the device on `line` in its `dialect`; one exchange at a time.

    `interrupt_timeout` bounds the wait for the prompt after interrupting a command.
    """

    def __init__(self, line: ConsoleLine, dialect: Dialect, interrupt_timeout: float) -> None:
        self.line = line
        self.dialect = dialect
        self.interrupt_timeout = interrupt_timeout

    async def wake(self, *, timeout: float, interrupt_busy: bool = False) -> str:
        """Press Enter until the prompt shows, and return it (see `ConsoleSession.wake`).

        Raises `ConsoleTimeoutError` without a prompt within `timeout` s, or
        `ConsoleAuthError` when the login is refused; the line is dropped on any failure.
        """
        line, dialect, target = self.line, self.dialect, self.line.target
        deadline = loop_time() + timeout
        busy_at: float | None = loop_time() + _BUSY_AFTER if interrupt_busy else None
        screen = TerminalText(self.dialect.log_line)
        answered_login = False
        at_prompt: re.Match[str] | None = None
        line.write(dialect.newline)
        quiet_until = loop_time() + _WAKE_REPEAT
        try:
            while True:
                if at_prompt is not None:
                    quiet_until = loop_time() + dialect.wake_settle
                elif (
                    busy_at is not None
                    and loop_time() >= busy_at
                    and screen.text.strip()
                    and not answered_login
                ):
                    line.write("".join(dialect.interrupt))
                    busy_at = None
                chunk = await line.read(min(deadline, quiet_until))
                if chunk is None:
                    if at_prompt is not None:
                        line.at_prompt(at_prompt["prompt"])
                        return line.prompt
                    if loop_time() >= deadline:
                        raise ConsoleTimeoutError(
                            f"{target.name}: no prompt on console {target.key} "
                            f"within {timeout:g} s.",
                            screen.text[-500:],
                        )
                    if not answered_login:
                        line.write(dialect.newline)
                    quiet_until = loop_time() + _WAKE_REPEAT
                    continue
                quiet_until = loop_time() + _WAKE_REPEAT
                screen.feed(chunk)
                text = screen.text
                at_prompt = dialect.prompt.search(text)
                if at_prompt is not None:
                    continue
                if dialect.login_failed and dialect.login_failed.search(text):
                    raise ConsoleAuthError(
                        f"{target.name}: the console refused the login "
                        "(wrong username or password in the console credentials)."
                    )
                reply = self._login_reply(text, answered_login)
                if reply is not None:
                    line.write(reply + dialect.newline)
                    answered_login = True
                    screen = TerminalText(self.dialect.log_line)
                elif dialect.pager_prompt and dialect.pager_prompt.search(text):
                    line.write(dialect.pager_response)
                else:
                    for question in dialect.interactive:
                        if question.pattern.search(text):
                            line.write(question.decline)
                            break
        except BaseException:
            line.abandon()
            raise

    async def converse(
        self,
        command: str,
        *,
        timeout: float,
        confirm: bool = True,
        secrets: list[str] | None = None,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Type `command`, wait for its echo and the next prompt; its clean result.

        `secrets` answer password prompts in order. See `ConsoleSession.send` for the
        rest of the contract (pagers, questions, `on_output`, interrupting when overdue
        or cancelled).
        """
        line, dialect = self.line, self.dialect
        started = loop_time()
        deadline = started + timeout
        prompt_before = line.prompt
        secrets = list(secrets or [])
        screen = TerminalText(self.dialect.log_line)
        echo_end: int | None = None if line.remote_echoes else 0
        answered_at = -1
        may_resend = True
        reported_at, reported_len = started, 0
        try:
            line.write(command + dialect.newline)
            while True:
                lost_check = echo_end is None and may_resend
                chunk = await line.read(
                    min(deadline, loop_time() + _LOST_LINE_WAIT) if lost_check else deadline
                )
                if chunk is None and lost_check and loop_time() < deadline:
                    if dialect.prompt.search(screen.text):
                        # At a prompt without echoing the line: the device dropped it while
                        # busy (VPCS does, right after an Enter), so it never ran.
                        line.write(command + dialect.newline)
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
                    line.at_prompt(match["prompt"])
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
                        elapsed=loop_time() - started,
                    )
                now = loop_time()
                if on_output and len(text) > reported_len and now - reported_at >= OUTPUT_INTERVAL:
                    reported_at, reported_len = now, len(text)
                    self._report(on_output, tidy_output(text[echo_end:], dialect.pager_marker))
                if len(text) == answered_at:
                    continue
                reply = self._mid_command_reply(text[echo_end:], confirm, secrets)
                if reply is not None:
                    line.write(reply)
                    answered_at = len(text)
        except _Overdue as overdue:
            where = f"{line.target.name}: no prompt within {timeout:g} s after {command!r}"
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
            line.abandon()
            raise

    def unresponsive(self) -> str:
        """What to say when a device did not come back to its prompt after an interrupt."""
        return (
            f"it did not come back to its prompt within {self.interrupt_timeout:g} s after "
            f"{_key_names(self.dialect.interrupt)}, so the console was closed. If the next "
            f"command on {self.line.target.name} fails the same way, reload the node (the "
            "reload_nodes tool, or Reload in GNS3)"
        )

    async def _interrupt(self, screen: TerminalText, search_from: int) -> tuple[str, ...] | None:
        """Stop the running command and wait for the prompt; the keys it took, or None.

        Types the dialect's interrupt keys one after the other, each followed by a wait
        for the prompt (together at most `interrupt_timeout` seconds). Without a prompt
        (or when the connection fails meanwhile, or the wait is cancelled) the line is
        dropped, since the device's state is unknown.
        """
        line = self.line
        keys = self.dialect.interrupt
        back = False
        try:
            for count, key in enumerate(keys, 1):
                line.write(key)
                until = loop_time() + self.interrupt_timeout / len(keys)
                while (chunk := await line.read(until)) is not None:
                    screen.feed(chunk)
                    match = self.dialect.prompt.search(screen.text, search_from)
                    if match:
                        line.at_prompt(match["prompt"])
                        back = True
                        return keys[:count]
        except ConsoleError:
            pass
        finally:
            if not back:
                line.abandon()
        return None

    def _login_reply(self, text: str, answered: bool) -> str | None:
        """What to type at a login prompt at the end of `text`, if there is one."""
        dialect = self.dialect
        target = self.line.target
        creds = target.credentials
        asks_user = dialect.username_prompt and dialect.username_prompt.search(text)
        asks_password = dialect.password_prompt and dialect.password_prompt.search(text)
        if not (asks_user or asks_password):
            return None
        if answered and asks_user:
            raise ConsoleAuthError(
                f"{target.name}: the console refused the login (wrong username or "
                "password in the console credentials)."
            )
        if asks_user:
            if creds is None or creds.username is None:
                raise ConsoleAuthError(
                    f"{target.name}: the console asks for a username; give it as "
                    "ConsoleCredentials(username=..., password=...)."
                )
            return creds.username
        if creds is None or creds.password is None:
            raise ConsoleAuthError(
                f"{target.name}: the console asks for a password; give it as "
                "ConsoleCredentials(password=...)."
            )
        return creds.password.get_secret_value()

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

    def _report(self, on_output: OutputCallback, output: str) -> None:
        try:
            on_output(output)
        except Exception:
            log.exception("Output callback failed for %s", self.line.target.name)


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
