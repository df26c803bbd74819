"""The command policy's rules: their model, the rule file's format, and matching typed
words against a rule (see the package docstring for the format and how words match)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from pydantic import BaseModel

from ...console import DialectError, dialect_by_name

CommandContext = Literal["exec", "config"]
"""Where commands are typed: at the exec prompt, or inside configuration mode."""

ConfigAction = Literal["enter", "leave", "exit"]

IOS_LIKE = frozenset({"cisco_ios", "frr"})
"""Dialects with IOS's command line: `do`, `no`, `| include`, `configure terminal`/`end`."""

FIRST_WORD_ABBREVIATION = {"cisco_ios": 2, "frr": 2, "vpcs": 1}
"""Shortest abbreviation of a command's first word each dialect accepts (Linux: none)."""

_DIALECT_PREFIX = re.compile(r"\s*([A-Za-z_]+(?:\s*,\s*[A-Za-z_]+)*):\s+(.*)")
"""A rule's `DIALECT[,DIALECT]:` scope prefix."""

TEACHING_HELP = (
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
        later = 1 if dialect in FIRST_WORD_ABBREVIATION else None
        return self.applies_to(dialect) and pattern_matches(
            self.pattern, words, self.whole, first_abbreviation, later
        )


class PolicyStatus(BaseModel):
    """Which rule file is in force, how many rules it holds, and lines that were skipped."""

    file: str
    rules: int
    problems: list[str] = []


def word_set(text: str) -> frozenset[str]:
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


# -- matching ------------------------------------------------------------------------------


def word_matches(pattern: str, typed: str, min_abbreviation: int | None) -> bool:
    if pattern == "*" or typed == pattern:
        return True
    if any(char in pattern for char in "*?["):
        return fnmatchcase(typed, pattern)
    return (
        min_abbreviation is not None
        and len(typed) >= min_abbreviation
        and pattern.startswith(typed)
    )


def pattern_matches(
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
        return word_matches(pattern[p], words[w], minimum) and match_from(p + 1, w + 1)

    return match_from(0, 0)


def rule_problem(
    words: Sequence[str],
    first_abbreviation: int | None,
    dialect: str,
    rules: Sequence[PolicyRule],
) -> str | None:
    if any(rule.allow and rule.matches(words, dialect, first_abbreviation) for rule in rules):
        return None
    forms = [(words, first_abbreviation)]
    if (
        dialect in IOS_LIKE
        and len(words) > 1
        and (words[0] == "no" or word_matches("default", words[0], 3))
    ):
        forms.append((words[1:], FIRST_WORD_ABBREVIATION[dialect]))
    for rule in rules:
        if not rule.allow and any(rule.matches(w, dialect, a) for w, a in forms):
            return f"forbidden by the command policy (rule `{rule.text}`): {rule.reason}"
    return None


LEAVE_SESSION = "would end the console session; the tools open, reuse and close sessions themselves"
