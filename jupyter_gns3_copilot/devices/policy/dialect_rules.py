"""The built-in rules of the IOS, FRR and VPCS dialects: the session rules, the read-only
(teaching) allow-lists, their known command words, and bounding a teaching-mode `ping`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .rules import (
    FIRST_WORD_ABBREVIATION,
    IOS_LIKE,
    LEAVE_SESSION,
    TEACHING_HELP,
    TEACHING_MAX_PROBES,
    CappedCommand,
    CommandContext,
    ConfigAction,
    command_words,
    word_matches,
    word_set,
)
from .shell import LINUX_KNOWN, SHELL_SEPARATORS, shell_tokens, without_wrappers


def teaching_bound(command: str, dialect: str) -> CappedCommand | None:
    """`command` bounded for teaching mode, or None when it is bounded already.

    One rule per dialect, all about `ping` (the diagnostic students leave running):
    VPCS `-c N` above `TEACHING_MAX_PROBES` is lowered and `-t` (until interrupted) is
    replaced by that count; IOS `repeat N` is lowered; Linux `-c N` is lowered (a Linux
    ping without `-c` is refused in every mode). FRR's `ping` takes no count (the lab
    kit's router stops after 5 probes), so nothing is bounded there. The bounded command
    keeps the other words as typed, single-spaced.
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
        if spell_first_word(words, dialect, "exec")[0][0] != "ping":
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
    if dialect not in IOS_LIKE:
        return None
    words = command_words(command)
    if not words:
        return None
    if (
        len(words) <= 2
        and word_matches("configure", words[0], 4)
        and (len(words) == 1 or word_matches("terminal", words[1], 1))
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
            tokens = shell_tokens(command)
        except ValueError:
            return []
        if any(token in SHELL_SEPARATORS for token in tokens):
            return []
        return without_wrappers([token.lower() for token in tokens])
    words = command_words(command)
    if dialect in IOS_LIKE:
        words = split_ios_pipes(words)[0]
        if len(words) > 1 and words[0] == "do":
            words = words[1:]
    if not words:
        return []
    return spell_first_word(words, dialect, "exec")[0]


def spell_first_word(
    words: list[str], dialect: str, context: CommandContext
) -> tuple[list[str], int | None]:
    """`words` with the first word spelled out when the dialect's known commands resolve it
    (VPCS `e` is `echo`, IOS `wr` is `write`), and how short an abbreviation of a rule's
    first word it may still be: None once resolved, or when the vocabulary is complete (the
    device rejects what it cannot resolve); the dialect's minimum otherwise.
    """
    minimum = FIRST_WORD_ABBREVIATION.get(dialect)
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


# -- built-in session rules -------------------------------------------------------------


def _first_is(words: Sequence[str], minimum: int | None, *commands: str) -> bool:
    return any(word_matches(command, words[0], minimum) for command in commands)


def session_problem(
    words: Sequence[str],
    minimum: int | None,
    dialect: str,
    context: CommandContext,
    read_only: bool,
) -> str | None:
    if dialect in IOS_LIKE:
        return _ios_session_problem(words, minimum, context, read_only)
    if dialect == "vpcs":
        return _vpcs_session_problem(words, minimum)
    return None


def _ios_session_problem(
    words: Sequence[str], minimum: int | None, context: CommandContext, read_only: bool
) -> str | None:
    first = words[0]
    if _first_is(words, minimum, "logout", "quit", "disconnect"):
        return f"`{first}` {LEAVE_SESSION}"
    if _first_is(words, minimum, "disable"):
        return f"`{first}` would drop the session's privilege level the tools rely on"
    if _first_is(words, minimum, "tclsh", "setup", "start-shell"):
        return f"`{first}` starts an interactive dialog the tools cannot drive"
    if context == "config":
        return None
    if _first_is(words, minimum, "exit"):
        return f"`{first}` {LEAVE_SESSION}"
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
        return f"`{first}` {LEAVE_SESSION}"
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


def split_ios_pipes(words: list[str]) -> tuple[list[str], list[list[str]]]:
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


def ios_pipe_problem(pipes: Sequence[Sequence[str]]) -> str | None:
    for pipe in pipes:
        if not pipe:
            return "an output modifier after `|` is missing"
        if not any(word_matches(f, pipe[0], 1) for f in _IOS_DISPLAY_FILTERS):
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
        changing=word_set(
            "archive cd clear clock configure connect copy crypto debug delete disable "
            "disconnect enable erase event exit format fsck license lock logout mkdir "
            "monitor no quit reload rename resume rmdir send set setup squeeze ssh systat "
            "tclsh telnet terminal test undebug upgrade verify write"
        ),
        min_abbreviation=2,
        complete=False,
    ),
    "frr": _Vocabulary(
        read_only=("show", "ping", "traceroute"),
        changing=word_set(
            "clear configure copy debug disable enable end exit find list logout no quit "
            "rpki start-shell terminal undebug watchfrr write"
        ),
        min_abbreviation=2,
        complete=False,
    ),
    "vpcs": _Vocabulary(
        read_only=("show", "ping", "trace", "arp", "echo", "help", "history", "version", "?"),
        changing=word_set("clear dhcp disconnect ip load quit relay rlogin save set sleep !"),
        min_abbreviation=1,
        complete=True,
    ),
}


_IOS_CONFIGURATION_WORDS = word_set(
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
        return word in LINUX_KNOWN
    vocabulary = _VOCABULARIES.get(dialect)
    if vocabulary is None:
        return True
    typed = word.lower()
    if dialect in IOS_LIKE and typed in _IOS_CONFIGURATION_WORDS:
        return True
    return typed in vocabulary.known or bool(vocabulary.candidates(typed))


def read_only_problem(words: Sequence[str], dialect: str) -> str | None:
    """Why `words` (first word spelled out where possible) is no diagnostic command."""
    vocabulary = _VOCABULARIES.get(dialect)
    if vocabulary is None:
        return f"teaching_assistant mode cannot judge {dialect} commands. {TEACHING_HELP}"
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
        f"`{' '.join(words)}` {why}. {TEACHING_HELP}"
    )


# -- Linux shell lines ------------------------------------------------------------------
