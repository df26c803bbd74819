"""`CommandPolicy`: the rules in force, re-read when their file changes, and the
screening of command lines (see the package docstring)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...console import BlockedCommand
from .dialect_rules import (
    config_mode_action,
    ios_pipe_problem,
    read_only_problem,
    session_problem,
    spell_first_word,
    split_ios_pipes,
    teaching_bound,
)
from .rules import (
    IOS_LIKE,
    TEACHING_HELP,
    CappedCommand,
    CommandContext,
    PolicyRule,
    PolicyStatus,
    command_words,
    parse_rules,
    rule_problem,
)
from .shell import check_shell_line

log = logging.getLogger(__name__)

DEFAULT_POLICY_FILE = Path(__file__).with_name("forbidden_commands.txt")
"""The shipped default forbidden-command list."""


@dataclass(frozen=True)
class Screening:
    """The outcome of screening a command list: what may be sent (in order, in the form to
    send), what not, which commands were bounded on the way (teaching mode), and which of
    the allowed ones change the device (`configuring`: what teaching mode's diagnostics-only
    rules refuse, e.g. VPCS `ip`, `set`, `clear`, `save`, `load`, IOS configuration lines,
    Linux `ip addr add`; empty in teaching mode, which sends none of them)."""

    allowed: list[str]
    blocked: list[BlockedCommand]
    capped: list[CappedCommand] = field(default_factory=list)
    configuring: list[str] = field(default_factory=list)


class CommandPolicy:
    """The command policy (see the module docstring); shared by every tool call.

    `admin_file`, when given and present, replaces the shipped default list entirely; while
    it does not exist the default applies. The rules in force are re-read whenever the
    active file's path, size or modification time changes (one `stat` per screening), and
    at once by `reload()` (`POST copilot/reload/skills`). Safe to share between threads.
    """

    def __init__(
        self,
        admin_file: str | os.PathLike[str] | None = None,
        *,
        default_file: str | os.PathLike[str] = DEFAULT_POLICY_FILE,
    ) -> None:
        self.admin_file = Path(admin_file).expanduser() if admin_file else None
        self.default_file = Path(default_file)
        self._lock = threading.Lock()
        self._signature: tuple[str, int, int] | None = None
        self._rules: tuple[PolicyRule, ...] = ()
        self._status = PolicyStatus(file=str(self.default_file), rules=0)

    @property
    def active_file(self) -> Path:
        """The admin's file when it exists, else the shipped default."""
        if self.admin_file is not None and self.admin_file.exists():
            return self.admin_file
        return self.default_file

    def reload(self) -> PolicyStatus:
        """Read the active rule file again now and say what is in force."""
        with self._lock:
            self._signature = None
            self._refresh()
            return self._status

    def status(self) -> PolicyStatus:
        """The rule file in force, its rule count and unreadable lines (refreshing first)."""
        with self._lock:
            self._refresh()
            return self._status

    def rules(self) -> tuple[PolicyRule, ...]:
        """The file rules in force, re-read first if the file changed."""
        with self._lock:
            self._refresh()
            return self._rules

    def check(
        self,
        command: str,
        *,
        dialect: str,
        read_only: bool = False,
        context: CommandContext = "exec",
    ) -> str | None:
        """Why `command` must not be sent to a `dialect` console, or None when it may be.

        `read_only` applies the teaching rules; `context` says whether the command is typed
        at the exec prompt or inside configuration mode (the config tool).
        """
        return self._check(command, dialect, read_only, context, self.rules())

    def screen(
        self,
        commands: Iterable[str],
        *,
        dialect: str,
        read_only: bool = False,
        context: CommandContext = "exec",
    ) -> Screening:
        """Split `commands` into those that may be sent (in order) and blocked ones; with
        `read_only`, unbounded diagnostics are sent bounded (see `teaching_bound`)."""
        rules = self.rules()
        allowed: list[str] = []
        blocked: list[BlockedCommand] = []
        capped: list[CappedCommand] = []
        configuring: list[str] = []
        for command in commands:
            reason = self._check(command, dialect, read_only, context, rules)
            if reason is not None:
                blocked.append(BlockedCommand(command=command, reason=reason))
                continue
            bounded = teaching_bound(command, dialect) if read_only else None
            if bounded is not None:
                capped.append(bounded)
                command = bounded.sent
            elif not read_only and self._check(command, dialect, True, context, rules):
                configuring.append(command)
            allowed.append(command)
        return Screening(allowed=allowed, blocked=blocked, capped=capped, configuring=configuring)

    # -- internals -----------------------------------------------------------------------

    def _refresh(self) -> None:
        path = self.active_file
        try:
            stat = path.stat()
            signature = (str(path), stat.st_mtime_ns, stat.st_size)
        except OSError:
            signature = (str(path), -1, -1)
        if signature == self._signature:
            return
        self._signature = signature
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            problem = f"{path}: cannot read the command policy ({exc}); no file rules apply"
            log.error(problem)
            self._rules = ()
            self._status = PolicyStatus(file=str(path), rules=0, problems=[problem])
            return
        rules, problems = parse_rules(text, path.name)
        for problem in problems:
            log.warning("Command policy line skipped: %s", problem)
        self._rules = tuple(rules)
        self._status = PolicyStatus(file=str(path), rules=len(rules), problems=problems)

    def _check(
        self,
        command: str,
        dialect: str,
        read_only: bool,
        context: CommandContext,
        rules: Sequence[PolicyRule],
    ) -> str | None:
        if dialect == "linux":
            return check_shell_line(command, read_only, rules)
        words = command_words(command)
        if not words:
            return None
        if read_only and context == "config":
            return f"teaching_assistant mode never enters configuration mode. {TEACHING_HELP}"
        if context == "config" and config_mode_action(command, dialect):
            return None
        if dialect in IOS_LIKE:
            words, pipes = split_ios_pipes(words)
            if not words:
                return "there is no command before `|`"
            problem = ios_pipe_problem(pipes)
            if problem:
                return problem
            if words[0] == "do" and len(words) > 1:
                words, context = words[1:], "exec"
        words, first_abbreviation = spell_first_word(words, dialect, context)
        return (
            session_problem(words, first_abbreviation, dialect, context, read_only)
            or (read_only_problem(words, dialect) if read_only else None)
            or rule_problem(words, first_abbreviation, dialect, rules)
        )
