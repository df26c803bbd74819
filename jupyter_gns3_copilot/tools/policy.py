"""Command policy: what the copilot may type on a device console, decided before sending.

Every command line goes through three layers, in this order; the first objection wins and
becomes the reason reported in the tool result (blocked commands are never sent, and never
silently dropped):

1. Session rules, built in, in every mode: commands that would break the tools' own
   handling of the console or reach outside the lab. `exit`/`logout`/`quit` at the exec
   prompt, IOS `disable`, entering configuration mode from an exec-level tool, IOS output
   modifiers that write files (`| redirect`), commands that open a dialog the tools cannot
   answer (IOS `ping` without a target, `tclsh`; Linux `top`, `vi`, endless `ping`), and
   VPCS commands that act on the GNS3 host (`!` runs a host program, `rlogin`,
   `save`/`load` with a path, digits switching the virtual PC).
2. Read-only rules (teaching_assistant mode): only diagnostic commands run, per dialect
   (`show`, `ping`, `trace`/`traceroute`, `arp`...); anything that could change a device,
   configuration mode included, is refused. An allow-list, so unknown commands are refused.
3. The forbidden-command list: a text file (`forbidden_commands.txt` shipped next to this
   module, or an admin's file, which replaces it), re-read when it changes on disk.

In teaching_assistant mode an allowed diagnostic that could run without end is then
bounded (`teaching_bound`, reported in `Screening.capped`): a `ping` sends at most
`TEACHING_MAX_PROBES` probes (VPCS `-c N` and `-t`, IOS `repeat N`, Linux `-c N`). Any
other long command is interrupted on the device when the tool's command timeout passes.

Matching works on normalised words, not raw prefixes: case and spacing are ignored, and a
typed word may abbreviate a rule word the way the device accepts it (`wr er` is
`write erase`, `conf t` is `configure terminal`). A first word is first spelled out through
the dialect's known commands when they resolve it (VPCS `e` is `echo`, IOS `wr` is
`write`); otherwise IOS words of 2+ letters may abbreviate a rule word (conservative: an
ambiguous abbreviation is blocked), VPCS words must then match exactly (VPCS knows no other
commands, so it rejects what it cannot resolve), and Linux takes no abbreviations at all.
On IOS a leading `do` is looked through, and a leading `no`/`default` too, so a rule also
covers undoing what it names (`aaa` covers `no aaa new-model`). Linux lines are split at
`;`, `&&`, `||`, `|`, `&` and parentheses and each part is checked, looking through shell
keywords and wrappers such as `sudo`; command substitution is refused. On Linux the policy
is a classroom safety net, not a sandbox.

Rule file format, one rule per line (`#` starts a comment line)::

    [allow:] [DIALECT[,DIALECT]:] WORDS [$] [-- reason]

WORDS match the start of a command (`$` at the end: the whole command); `*` matches one
word, `...` any number of words, a word with `*`/`?`/`[` is a glob (no abbreviation).
DIALECT is vpcs, cisco_ios or linux (default: every dialect). `allow:` rules are exceptions
checked first (on IOS against the command as typed, before looking through `no`).
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..console import BlockedCommand, DialectError, dialect_by_name

log = logging.getLogger(__name__)

DEFAULT_POLICY_FILE = Path(__file__).with_name("forbidden_commands.txt")
"""The shipped default forbidden-command list."""

CommandContext = Literal["exec", "config"]
"""Where commands are typed: at the exec prompt, or inside configuration mode."""

ConfigAction = Literal["enter", "leave", "exit"]

_FIRST_WORD_ABBREVIATION = {"cisco_ios": 2, "vpcs": 1}
"""Shortest abbreviation of a command's first word each dialect accepts (Linux: none)."""

_DIALECT_PREFIX = re.compile(r"\s*([A-Za-z_]+(?:\s*,\s*[A-Za-z_]+)*):\s+(.*)")
"""A rule's `DIALECT[,DIALECT]:` scope prefix."""

_TEACHING_HELP = (
    "Explain the command to the student instead, or ask the instructor to switch to "
    "lab_automation_assistant mode."
)


TEACHING_MAX_PROBES = 10
"""Most probes a `ping` sends in teaching mode (the devices' default is 5)."""


class CappedCommand(BaseModel):
    """A command sent in a bounded form, and why."""

    command: str
    sent: str
    reason: str


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


@dataclass(frozen=True)
class PolicyRule:
    """One line of a forbidden-command file."""

    pattern: tuple[str, ...]
    reason: str
    text: str
    allow: bool = False
    whole: bool = False
    dialects: frozenset[str] | None = None

    def applies_to(self, dialect: str) -> bool:
        return self.dialects is None or dialect in self.dialects

    def matches(self, words: Sequence[str], dialect: str, first_abbreviation: int | None) -> bool:
        """Whether the normalised command `words` match this rule on `dialect`.

        `first_abbreviation` is the shortest abbreviation allowed for the first word (None:
        it must match exactly, e.g. because it was already spelled out).
        """
        later = 1 if dialect in _FIRST_WORD_ABBREVIATION else None
        return self.applies_to(dialect) and _match(
            self.pattern, words, self.whole, first_abbreviation, later
        )


class PolicyStatus(BaseModel):
    """Which rule file is in force, how many rules it holds, and lines that were skipped."""

    file: str
    rules: int
    problems: list[str] = []


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def command_words(command: str) -> list[str]:
    """`command` as lower-case words; a leading `!` (VPCS host command) is a word of its own."""
    text = command.strip().lower()
    if text.startswith("!"):
        return ["!", *text[1:].split()]
    return text.split()


def parse_rules(text: str, source: str) -> tuple[list[PolicyRule], list[str]]:
    """The rules of a policy file's `text`, and a message per line that could not be read."""
    rules: list[PolicyRule] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{source}:{number}"
        body, _, reason = stripped.partition(" -- ")
        allow = False
        if body.lower().startswith("allow:"):
            allow, body = True, body[len("allow:") :]
        dialects: frozenset[str] | None = None
        scoped = _DIALECT_PREFIX.match(body)
        if scoped:
            try:
                dialects = frozenset(
                    dialect_by_name(name).name for name in scoped.group(1).split(",")
                )
            except DialectError as exc:
                problems.append(f"{where}: {exc}")
                continue
            body = scoped.group(2)
        words = command_words(body)
        whole = bool(words) and words[-1] == "$"
        if whole:
            words.pop()
        if not words:
            problems.append(f"{where}: no command words in {stripped!r}")
            continue
        rules.append(
            PolicyRule(
                pattern=tuple(words),
                reason=reason.strip() or "listed as forbidden",
                text=" ".join(words) + (" $" if whole else ""),
                allow=allow,
                whole=whole,
                dialects=dialects,
            )
        )
    return rules, problems


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
            return _check_shell_line(command, read_only, rules)
        words = command_words(command)
        if not words:
            return None
        if read_only and context == "config":
            return f"teaching_assistant mode never enters configuration mode. {_TEACHING_HELP}"
        if context == "config" and config_mode_action(command, dialect):
            return None
        if dialect == "cisco_ios":
            words, pipes = _split_ios_pipes(words)
            if not words:
                return "there is no command before `|`"
            problem = _ios_pipe_problem(pipes)
            if problem:
                return problem
            if words[0] == "do" and len(words) > 1:
                words, context = words[1:], "exec"
        words, first_abbreviation = _spelled_out(words, dialect, context)
        return (
            _session_problem(words, first_abbreviation, dialect, context, read_only)
            or (_read_only_problem(words, dialect) if read_only else None)
            or _rule_problem(words, first_abbreviation, dialect, rules)
        )


def teaching_bound(command: str, dialect: str) -> CappedCommand | None:
    """`command` bounded for teaching mode, or None when it is bounded already.

    One rule per dialect, all about `ping` (the diagnostic students leave running):
    VPCS `-c N` above `TEACHING_MAX_PROBES` is lowered and `-t` (until interrupted) is
    replaced by that count; IOS `repeat N` is lowered; Linux `-c N` is lowered (a Linux
    ping without `-c` is refused in every mode). The bounded command keeps the other
    words as typed, single-spaced.
    """
    tokens = command.split()
    words = command_words(command)
    if not words:
        return None
    if dialect == "linux":
        if words[0] not in ("ping", "ping6") or any(c in command for c in ";&|()<>`$"):
            return None
        changed = _lower_counts(tokens, ("-c",), 1)
        what = f"`-c {TEACHING_MAX_PROBES}`"
    elif dialect in ("vpcs", "cisco_ios"):
        if _spelled_out(words, dialect, "exec")[0][0] != "ping":
            return None
        if dialect == "vpcs":
            endless = "-t" in tokens
            tokens = [token for token in tokens if token != "-t"]
            changed = _lower_counts(tokens, ("-c",), 1)
            what = f"`-c {TEACHING_MAX_PROBES}`"
            if endless and any(t == "-c" or t.startswith("-c") for t in tokens):
                what = "its `-c` count without `-t`" if not changed else what
            elif endless:
                tokens += ["-c", str(TEACHING_MAX_PROBES)]
            changed = changed or endless
        else:
            repeat = tuple("repeat"[:n] for n in range(1, 7))
            changed = _lower_counts(tokens, repeat, 2)
            what = f"`repeat {TEACHING_MAX_PROBES}`"
    else:
        return None
    if not changed:
        return None
    return CappedCommand(
        command=command,
        sent=" ".join(tokens),
        reason=f"capped to {what} in teaching mode (at most {TEACHING_MAX_PROBES} probes)",
    )


def _lower_counts(tokens: list[str], options: tuple[str, ...], first: int) -> bool:
    """Lower every `OPTION N` (or `-cN`) from `tokens[first:]` above the probe cap, in
    place; whether one was lowered."""
    changed = False
    cap = str(TEACHING_MAX_PROBES)
    for index in range(first, len(tokens)):
        token = tokens[index].lower()
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in options and following.isdigit() and int(following) > TEACHING_MAX_PROBES:
            tokens[index + 1] = cap
            changed = True
        elif (
            "-c" in options
            and token.startswith("-c")
            and token[2:].isdigit()
            and int(token[2:]) > TEACHING_MAX_PROBES
        ):
            tokens[index] = "-c" + cap
            changed = True
    return changed


def config_mode_action(command: str, dialect: str) -> ConfigAction | None:
    """How the config tool handles `command` itself instead of typing it, if it does.

    `enter` for `configure terminal` (any abbreviation, or bare `configure`), `leave` for
    `end`, `exit` for `exit` (which only leaves a sub-mode, or configuration mode when typed
    at its top level); None for everything else (typed as is).
    """
    if dialect != "cisco_ios":
        return None
    words = command_words(command)
    if not words:
        return None
    if (
        len(words) <= 2
        and _word_matches("configure", words[0], 4)
        and (len(words) == 1 or _word_matches("terminal", words[1], 1))
    ):
        return "enter"
    if words == ["end"]:
        return "leave"
    if words in (["exit"], ["exi"]):
        return "exit"
    return None


def spelled_out(command: str, dialect: str) -> list[str]:
    """`command` as lower-case words with its command word spelled out the way the device
    reads it (VPCS `pi` is `ping`, IOS `tr` is `traceroute`, an IOS `do` and output
    modifiers looked through; Linux wrappers such as `sudo` dropped); [] when there is no
    command, or for a Linux line of several commands (`;`, `&&`, `|`, ...)."""
    if dialect == "linux":
        try:
            tokens = _shell_tokens(command)
        except ValueError:
            return []
        if any(token in _SHELL_SEPARATORS for token in tokens):
            return []
        return _without_wrappers([token.lower() for token in tokens])
    words = command_words(command)
    if dialect == "cisco_ios":
        words = _split_ios_pipes(words)[0]
        if len(words) > 1 and words[0] == "do":
            words = words[1:]
    if not words:
        return []
    return _spelled_out(words, dialect, "exec")[0]


# -- matching ------------------------------------------------------------------------------


def _word_matches(pattern: str, typed: str, min_abbreviation: int | None) -> bool:
    if pattern == "*" or typed == pattern:
        return True
    if any(char in pattern for char in "*?["):
        return fnmatchcase(typed, pattern)
    return (
        min_abbreviation is not None
        and len(typed) >= min_abbreviation
        and pattern.startswith(typed)
    )


def _match(
    pattern: Sequence[str],
    words: Sequence[str],
    whole: bool,
    first_abbreviation: int | None,
    later_abbreviation: int | None,
) -> bool:
    def match_from(p: int, w: int) -> bool:
        if p == len(pattern):
            return w == len(words) or not whole
        if pattern[p] == "...":
            return any(match_from(p + 1, k) for k in range(w, len(words) + 1))
        if w == len(words):
            return False
        minimum = first_abbreviation if w == 0 else later_abbreviation
        return _word_matches(pattern[p], words[w], minimum) and match_from(p + 1, w + 1)

    return match_from(0, 0)


def _spelled_out(
    words: list[str], dialect: str, context: CommandContext
) -> tuple[list[str], int | None]:
    """`words` with the first word spelled out when the dialect's known commands resolve it
    (VPCS `e` is `echo`, IOS `wr` is `write`), and how short an abbreviation of a rule's
    first word it may still be: None once resolved, or when the vocabulary is complete (the
    device rejects what it cannot resolve); the dialect's minimum otherwise.
    """
    minimum = _FIRST_WORD_ABBREVIATION.get(dialect)
    vocabulary = _VOCABULARIES.get(dialect)
    if vocabulary is None or minimum is None or context == "config":
        return words, minimum
    first = words[0]
    if first in vocabulary.known:
        return words, None
    candidates = vocabulary.candidates(first)
    if len(candidates) == 1:
        return [candidates[0], *words[1:]], None
    return words, None if vocabulary.complete else minimum


def _rule_problem(
    words: Sequence[str],
    first_abbreviation: int | None,
    dialect: str,
    rules: Sequence[PolicyRule],
) -> str | None:
    if any(rule.allow and rule.matches(words, dialect, first_abbreviation) for rule in rules):
        return None
    forms = [(words, first_abbreviation)]
    if (
        dialect == "cisco_ios"
        and len(words) > 1
        and (words[0] == "no" or _word_matches("default", words[0], 3))
    ):
        forms.append((words[1:], _FIRST_WORD_ABBREVIATION[dialect]))
    for rule in rules:
        if not rule.allow and any(rule.matches(w, dialect, a) for w, a in forms):
            return f"forbidden by the command policy (rule `{rule.text}`): {rule.reason}"
    return None


# -- built-in session rules -------------------------------------------------------------

_LEAVE_SESSION = (
    "would end the console session; the tools open, reuse and close sessions themselves"
)


def _first_is(words: Sequence[str], minimum: int | None, *commands: str) -> bool:
    return any(_word_matches(command, words[0], minimum) for command in commands)


def _session_problem(
    words: Sequence[str],
    minimum: int | None,
    dialect: str,
    context: CommandContext,
    read_only: bool,
) -> str | None:
    if dialect == "cisco_ios":
        return _ios_session_problem(words, minimum, context, read_only)
    if dialect == "vpcs":
        return _vpcs_session_problem(words, minimum)
    return None


def _ios_session_problem(
    words: Sequence[str], minimum: int | None, context: CommandContext, read_only: bool
) -> str | None:
    first = words[0]
    if _first_is(words, minimum, "logout", "quit", "disconnect"):
        return f"`{first}` {_LEAVE_SESSION}"
    if _first_is(words, minimum, "disable"):
        return f"`{first}` would drop the session's privilege level the tools rely on"
    if _first_is(words, minimum, "tclsh", "setup"):
        return f"`{first}` starts an interactive dialog the tools cannot drive"
    if context == "config":
        return None
    if _first_is(words, minimum, "exit"):
        return f"`{first}` {_LEAVE_SESSION}"
    if _first_is(words, minimum, "configure") and not read_only:
        return (
            "configuration commands go through run_config_commands, which enters and "
            "leaves configuration mode itself; this tool works at the exec prompt"
        )
    if len(words) == 1 and _first_is(words, minimum, "ping", "traceroute"):
        return (
            f"`{first}` without a target starts an interactive dialog; give the target, "
            f"e.g. `{first} 10.0.0.2`"
        )
    return None


def _vpcs_session_problem(words: Sequence[str], minimum: int | None) -> str | None:
    first = words[0]
    if first == "!":
        return "`!` runs a program on the GNS3 host itself, outside the lab"
    if first.isdigit():
        return f"`{first}` would switch the console to another virtual PC of the VPCS process"
    if _first_is(words, minimum, "quit", "disconnect", "exit"):
        return f"`{first}` {_LEAVE_SESSION}"
    if _first_is(words, minimum, "rlogin"):
        return "`rlogin` opens a telnet session from the GNS3 host, outside the lab"
    if _first_is(words, minimum, "save", "load") and any(
        "/" in word or "\\" in word or ".." in word for word in words[1:]
    ):
        return (
            f"`{first}` with a path reads or writes files elsewhere on the GNS3 host; "
            "give a plain file name (or none: startup.vpc)"
        )
    return None


# -- IOS output modifiers ---------------------------------------------------------------

_IOS_DISPLAY_FILTERS = ("include", "exclude", "begin", "section", "count", "format")


def _split_ios_pipes(words: list[str]) -> tuple[list[str], list[list[str]]]:
    """The command's words before the first `|`, and the words of each `| modifier`."""
    parts: list[list[str]] = [[]]
    for word in words:
        pieces = word.split("|")
        for index, piece in enumerate(pieces):
            if index:
                parts.append([])
            if piece:
                parts[-1].append(piece)
    return parts[0], parts[1:]


def _ios_pipe_problem(pipes: Sequence[Sequence[str]]) -> str | None:
    for pipe in pipes:
        if not pipe:
            return "an output modifier after `|` is missing"
        if not any(_word_matches(f, pipe[0], 1) for f in _IOS_DISPLAY_FILTERS):
            return (
                f"the output modifier `| {pipe[0]}` is not allowed (it can write files or "
                f"send output elsewhere); use one of: {', '.join(_IOS_DISPLAY_FILTERS)}"
            )
    return None


# -- dialect vocabularies and teaching (read-only) rules --------------------------------


@dataclass(frozen=True)
class _Vocabulary:
    """A dialect's diagnostic commands and the other first words it knows.

    `complete` says the device knows no other commands (VPCS), so a word this vocabulary
    cannot resolve is one the device rejects too.
    """

    read_only: tuple[str, ...]
    changing: frozenset[str]
    min_abbreviation: int
    complete: bool

    @property
    def known(self) -> frozenset[str]:
        return self.changing | set(self.read_only)

    def candidates(self, typed: str) -> list[str]:
        """The known commands `typed` abbreviates, sorted."""
        if len(typed) < self.min_abbreviation:
            return []
        return sorted(word for word in self.known if word.startswith(typed))


_VOCABULARIES = {
    "cisco_ios": _Vocabulary(
        read_only=("show", "ping", "traceroute", "dir", "more", "who"),
        changing=_words(
            "archive cd clear clock configure connect copy crypto debug delete disable "
            "disconnect enable erase event exit format fsck license lock logout mkdir "
            "monitor no quit reload rename resume rmdir send set setup squeeze ssh systat "
            "tclsh telnet terminal test undebug upgrade verify write"
        ),
        min_abbreviation=2,
        complete=False,
    ),
    "vpcs": _Vocabulary(
        read_only=("show", "ping", "trace", "arp", "echo", "help", "history", "version", "?"),
        changing=_words("clear dhcp disconnect ip load quit relay rlogin save set sleep !"),
        min_abbreviation=1,
        complete=True,
    ),
}


_IOS_CONFIGURATION_WORDS = _words(
    "interface router hostname network shutdown description ip ipv6 switchport vlan line "
    "access-list encapsulation service banner username password passive-interface "
    "redistribute default-information standby spanning-tree channel-group duplex speed "
    "logging snmp-server ntp login transport exec-timeout area neighbor"
)
"""First words of IOS configuration-mode lines (the exec vocabulary above does not list
them: the read-only rules refuse them as unknown)."""


def takes_command_word(word: str, dialect: str) -> bool:
    """Whether a `dialect` device takes `word` as the first word of a command: a word of the
    dialect's vocabulary, spelled out or abbreviated as the device accepts, in any case (IOS:
    its configuration-mode words too, spelled out); on Linux (names are case-sensitive) a
    program the policy knows of. A dialect without a vocabulary takes any word."""
    if dialect == "linux":
        return word in _LINUX_KNOWN
    vocabulary = _VOCABULARIES.get(dialect)
    if vocabulary is None:
        return True
    typed = word.lower()
    if dialect == "cisco_ios" and typed in _IOS_CONFIGURATION_WORDS:
        return True
    return typed in vocabulary.known or bool(vocabulary.candidates(typed))


def _read_only_problem(words: Sequence[str], dialect: str) -> str | None:
    """Why `words` (first word spelled out where possible) is no diagnostic command."""
    vocabulary = _VOCABULARIES.get(dialect)
    if vocabulary is None:
        return f"teaching_assistant mode cannot judge {dialect} commands. {_TEACHING_HELP}"
    first = words[0]
    if first in vocabulary.read_only:
        return None
    if first == "configure":
        why = "would enter configuration mode"
    elif first in vocabulary.changing:
        why = "would change the device"
    elif vocabulary.candidates(first):
        why = "is an ambiguous abbreviation; spell the command out"
    else:
        why = "is not one of them"
    listing = ", ".join(vocabulary.read_only)
    return (
        f"teaching_assistant mode only runs diagnostic commands ({listing}); "
        f"`{' '.join(words)}` {why}. {_TEACHING_HELP}"
    )


# -- Linux shell lines ------------------------------------------------------------------

_SHELL_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")"})
_SHELL_KEYWORDS = _words("if then else elif fi do done while until for in ! { }")
_WRAPPERS = _words("sudo nohup time command builtin env nice timeout xargs")
_ASSIGNMENT = re.compile(r"[a-z_][a-z0-9_]*=.*")
_SUBSHELLS = _words("sh bash ash dash zsh ksh eval source .")
_SHELL_REDIRECTIONS = frozenset({">", ">>", "<", "<<", "<<<", ">|", "&>", "&>>", ">&", "<&"})
_LINUX_READ_ONLY = _words(
    "ping traceroute tracepath netstat ss cat ls uname whoami id uptime date pwd echo "
    "nslookup dig host ps df free hostname ifconfig ip route arp"
)
_LINUX_FILTERS = _words("grep egrep fgrep head tail wc sort uniq cut column")
_LINUX_INTERACTIVE = _words("top htop vi vim nano less more watch ssh telnet su passwd login")
_IP_SHOW_VERBS = frozenset({"show", "list", "ls", "lst", "sh", "get"})
_LINUX_KNOWN = (
    _LINUX_READ_ONLY
    | _LINUX_FILTERS
    | _LINUX_INTERACTIVE
    | _WRAPPERS
    | _SUBSHELLS
    | _words(
        "sysctl iptables ip6tables nft brctl bridge dhclient udhcpc ifup ifdown service "
        "systemctl rc-service vconfig modprobe tc kill reboot rm mv cp chmod tee"
    )
)
"""Linux programs the policy knows of, diagnostics or not (`takes_command_word`)."""


def _check_shell_line(command: str, read_only: bool, rules: Sequence[PolicyRule]) -> str | None:
    if "`" in command or "$(" in command:
        return "command substitution (`...` or $(...)) cannot be checked by the command policy"
    try:
        tokens = _shell_tokens(command)
    except ValueError as exc:
        return f"the shell line cannot be parsed ({exc})"
    stages: list[tuple[str, list[str]]] = [("", [])]
    for token in tokens:
        if token in _SHELL_SEPARATORS:
            stages.append((token, []))
        elif token in _SHELL_REDIRECTIONS and read_only:
            return (
                f"teaching_assistant mode does not redirect output into files (`{token}`). "
                f"{_TEACHING_HELP}"
            )
        else:
            stages[-1][1].append(token.lower())
    for separator, words in stages:
        words = _without_wrappers(words)
        if not words:
            continue
        problem = (
            _shell_session_problem(words)
            or (_shell_read_only_problem(words, separator) if read_only else None)
            or _rule_problem(words, None, "linux", rules)
        )
        if problem:
            return problem
    return None


def _shell_tokens(command: str) -> list[str]:
    """A shell line's words and operators (`;`, `|`, `>`, ... as tokens of their own);
    ValueError when it cannot be split (an unclosed quote)."""
    lexer = shlex.shlex(command.strip(), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def _without_wrappers(words: list[str]) -> list[str]:
    """`words` without leading shell keywords, variable assignments and wrapper commands
    (`sudo -u root reboot` is checked as `reboot`)."""
    while words:
        first = words[0]
        if first in _SHELL_KEYWORDS or _ASSIGNMENT.fullmatch(first):
            words = words[1:]
        elif first in _WRAPPERS:
            words = words[1:]
            while words and (words[0].startswith("-") or _ASSIGNMENT.fullmatch(words[0])):
                takes_value = words[0] in ("-u", "-g", "-h", "-p", "-n", "-c")
                words = words[2:] if takes_value else words[1:]
            if first == "timeout" and words:
                words = words[1:]
        else:
            break
    return words


def _shell_session_problem(words: Sequence[str]) -> str | None:
    first = words[0]
    if first in ("exit", "logout", "exec"):
        return f"`{first}` {_LEAVE_SESSION}"
    if first in _SUBSHELLS:
        return f"`{first}` runs commands the command policy cannot check"
    if first in _LINUX_INTERACTIVE:
        return f"`{first}` is interactive; the tools cannot drive it"
    if first in ("ping", "ping6", "tcpdump") and not any(
        word == "-c" or word.startswith("-c") for word in words[1:]
    ):
        return f"`{first}` without `-c COUNT` never ends; add e.g. `-c 3`"
    if first == "tail" and any(word in ("-f", "-F", "--follow") for word in words[1:]):
        return "`tail -f` never ends"
    return None


def _shell_read_only_problem(words: Sequence[str], separator: str) -> str | None:
    first, args = words[0], words[1:]
    if separator in ("|", "|&"):
        if first in _LINUX_FILTERS:
            return None
        why = f"only filters ({', '.join(sorted(_LINUX_FILTERS))}) may follow `|`"
    elif first not in _LINUX_READ_ONLY:
        why = f"`{first}` is not one of them"
    elif first == "ip":
        rest = [word for word in args if not word.startswith("-")]
        if len(rest) < 2 or rest[1] in _IP_SHOW_VERBS:
            return None
        why = f"`ip {' '.join(rest[:2])}` would change the device"
    elif first == "ifconfig" and len(args) > 1:
        why = "`ifconfig` with settings would change the device"
    elif first == "route" and any(word in ("add", "del", "delete", "flush") for word in args):
        why = "`route` with add/del would change the device"
    elif first == "arp" and any(w.startswith(("-s", "-d", "--set", "--delete")) for w in args):
        why = "`arp -s/-d` would change the device"
    elif first == "hostname" and args:
        why = "`hostname NAME` would change the device"
    else:
        return None
    listing = ", ".join(sorted(_LINUX_READ_ONLY))
    return (
        f"teaching_assistant mode only runs diagnostic commands ({listing}); {why}. "
        f"{_TEACHING_HELP}"
    )
