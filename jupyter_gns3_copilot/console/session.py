"""One device console session: connect, wake the prompt, log in, run commands one at a time.

`ConsoleSession` is the face of three parts: a `ConsoleLine` (`line.py`: the connection,
over TCP to the console port or over GNS3's console websocket, text in and out), a
`ConsoleDialogue` (`dialogue.py`: waking the prompt, one command to its next prompt,
interrupting), and the target's `Dialect`. Every wait is bounded. A command that outlives
its deadline, or whose caller is cancelled (an abort), is interrupted the way the device
understands (the dialect's `interrupt` keys: Ctrl-C, IOS break sequence) and the session
waits, bounded, for the prompt: the console is then left usable for the next command,
whoever sends it, instead of busy with a command nobody reads. A session whose state is
still unknown after that (no prompt, the connection dropped) closes itself rather than
risk mixing one command's output into the next; `ConsolePool` then reconnects.
"""

from __future__ import annotations

from .dialects import Dialect, dialect_by_name
from .dialogue import ConsoleDialogue, OutputCallback
from .errors import ConsoleAuthError, ConsoleError
from .line import ConsoleLine
from .models import CommandResult, ConsoleTarget

MAX_COMMAND_CHARS = 512
"""Longest command line sent to a console: far above any device CLI command, low enough
that no caller can flood a console's input buffer (a 100,000-character line left a VPCS
console dead)."""


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
        self.line = ConsoleLine(target)
        self.dialogue = ConsoleDialogue(self.line, self.dialect, interrupt_timeout)

    async def __aenter__(self) -> ConsoleSession:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def prompt(self) -> str:
        """The last prompt seen, e.g. `PC1>` or `R1(config-if)#`."""
        return self.line.prompt

    @property
    def last_used(self) -> float:
        """Event-loop time at which the prompt was last seen."""
        return self.line.last_used

    @property
    def interrupt_timeout(self) -> float:
        """Longest wait for the prompt after interrupting a command."""
        return self.dialogue.interrupt_timeout

    @property
    def is_open(self) -> bool:
        """Whether the connection is up (it may still turn out dead on the next read)."""
        return self.line.is_open

    @property
    def quiet(self) -> bool:
        """Whether the session is open and the console printed nothing since `watch()`.

        False when not watching. A quiet console is where its last command left it: at
        its prompt, so a command can be typed without first pressing Enter to check.
        """
        return self.line.quiet

    def watch(self) -> None:
        """Listen while idle, sending nothing: whatever the console prints from now on (a
        person typing on it, a command someone left running, a log or logout message)
        and its close end `quiet`. The next command's read takes what arrived."""
        self.line.watch()

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
        await self.line.connect(self.connect_timeout)
        try:
            await self.wake(timeout=timeout, interrupt_busy=interrupt_busy)
            await self.enable(timeout=timeout)
            for command in self.dialect.setup_commands:
                await self.send(command, timeout=timeout)
        except BaseException:
            self.line.abandon()
            raise

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        await self.line.close()

    async def wake(self, *, timeout: float | None = None, interrupt_busy: bool = False) -> str:
        """Press Enter until the prompt shows, and return it.

        A reconnected console prints nothing until Enter is pressed, and a booting device
        may ignore the first Enters, so Enter is pressed again after each second of
        silence. Login prompts are answered from the target's credentials, a pager is
        advanced, and a question showing up (e.g. `[confirm]`) is declined. With
        `interrupt_busy`, a console that prints but shows no prompt for two
        seconds (a command someone left running, e.g. a ping typed in GNS3's own console
        window) gets the dialect's interrupt keys once; not meant for a booting device.
        """
        return await self.dialogue.wake(
            timeout=timeout or self.prompt_timeout, interrupt_busy=interrupt_busy
        )

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
        return await self.dialogue.converse(
            command, timeout=timeout, confirm=confirm, on_output=on_output
        )

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
        result = await self.dialogue.converse(
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
        result = await self.dialogue.converse(
            dialect.config_enter, timeout=timeout or self.prompt_timeout
        )
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
        await self.dialogue.converse(dialect.config_exit, timeout=timeout or self.prompt_timeout)

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

    def interrupted_state(self) -> str:
        """A sentence on the console after a command was interrupted (e.g. on an abort)."""
        if self.is_open:
            return "The command was interrupted and the console is back at its prompt."
        return f"The command was interrupted; {self.unresponsive()}."

    def unresponsive(self) -> str:
        """What to say when a device did not come back to its prompt after an interrupt."""
        return self.dialogue.unresponsive()
