"""The copilot and the lab's objectives during a chat turn: what the model is told of the
current stage, and the configuration lines kept out of its answers.

- `TurnObjectives`: a student's lab for one turn: the current stage (the one they chose,
  else the first not passed in their latest check), its hints policy, the objective texts
  the model may read (never the checks: they would give the answers away), and the
  `check_objectives` tool's way to check them.
- `ConfigurationFilter`: with `hints: nudge`, a teaching-mode answer must not show the
  device configuration of the stage. Command lines in the answer (a fenced code block's
  lines, inline code, a line after a device prompt such as `R1(config)#`) that are no
  diagnostic in any dialect of the lab's devices, as the command policy's read-only rules
  judge them, are replaced with a note, in the stream and in the saved history, and
  counted (`hints_filtered`). Prose is left alone: the policy judges commands, not
  sentences.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .model import LabFile, Stage
from .results import ObjectiveResult
from .view import LabView, ObjectiveView, StageView

HIDDEN_LINE = "(configuration hidden: this stage's hints only point the way)"
HIDDEN_SPAN = "`[configuration hidden]`"
STATUS_WORDS = {"pass": "passed", "fail": "not yet", "error": "could not be checked"}

IsConfiguring = Callable[[str], bool]
Checker = Callable[[str | None, asyncio.Event | None], Awaitable[Sequence[ObjectiveResult]]]
"""Checks the objectives (of a stage) on the devices, stopping when the event is set."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_PROMPTED = re.compile(r"^\s*[\w.-]+(?:\((?:config[\w-]*)\))?[#>$]\s?(?P<command>\S.*)$")
"""A line typed after a device prompt: `R1#`, `R1(config-if)#`, `PC1>`, `user@host$`."""
_MARKDOWN_PREFIX = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>)\s+")
_COMMAND_WORD = re.compile(r"^[A-Za-z][A-Za-z-]*(?:\s|$)")
"""A command starts with a word of letters: `10.0.0.1/24`, `PC1` or `IP/MASK : ...` (an
address, a node name, device output) are not commands."""


@dataclass
class TurnObjectives:
    """A student's lab during one chat turn (module docstring)."""

    lab: LabFile | LabView
    """The lab, or as the student sees it (in hub mode the service holds the lab file)."""
    stage: Stage | StageView
    results: Mapping[str, ObjectiveResult | ObjectiveView]
    """The student's latest result (or status) per objective id (may be empty)."""
    checker: Checker
    is_configuring: IsConfiguring = field(repr=False)

    @property
    def hints(self) -> str:
        """The current stage's hints policy: nudge, explain or off."""
        return self.stage.hints

    async def check(
        self, stage: str | None = None, abort: asyncio.Event | None = None
    ) -> dict[str, object]:
        """The `check_objectives` tool's answer: each objective's id, text, status and
        explanation (no checks, no evidence), and the score. `ValueError` (the lab's
        `UnknownSelection`) for a stage the lab does not have."""
        results = await self.checker(stage, abort)
        return {
            "stage": stage,
            "objectives": [
                {
                    "id": r.id,
                    "stage": r.stage,
                    "text": r.text,
                    "status": r.status,
                    "explanation": r.explanation,
                }
                for r in results
            ],
            "score": sum(r.points_awarded for r in results),
            "max_score": sum(r.points for r in results),
        }

    def prompt(self) -> str:
        """What the model reads of the lab in teaching mode: the current stage's objective
        texts with the student's latest status, and how far its hints may go."""
        lines = [
            "",
            f"Lab objectives ({self.lab.title}), current stage {self.stage.id}: "
            f"{self.stage.title}.",
        ]
        for objective in self.stage.objectives:
            result = self.results.get(objective.id)
            status = STATUS_WORDS[result.status] if result and result.status else "not checked yet"
            lines.append(f"- {objective.id}: {objective.text} ({status})")
        lines.append(
            "The check_objectives tool checks them on the devices. "
            + (
                "For this stage, point the student at the objective that fails and at what "
                "to look at, but never write the configuration commands for it: the "
                "student works them out."
                if self.hints == "nudge"
                else "For this stage you may explain fully how to reach the objectives."
            )
        )
        return "\n".join(lines)

    def answer_filter(self) -> ConfigurationFilter | None:
        """A filter for the turn's answers (nudge only)."""
        return ConfigurationFilter(self.is_configuring) if self.hints == "nudge" else None


class ConfigurationFilter:
    """Replaces configuration lines in an answer streamed in pieces (module docstring).
    `feed` returns what may be shown now (whole lines; a partial line waits for its end),
    `flush` the rest at the end of the message; `filtered` counts what was hidden."""

    def __init__(self, is_configuring: IsConfiguring) -> None:
        self.is_configuring = is_configuring
        self.filtered = 0
        self._pending = ""
        self._in_fence = False
        self._hid_last = False

    def feed(self, text: str) -> str:
        """The filtered complete lines of `text` (after what was held back before)."""
        self._pending += text
        cut = self._pending.rfind("\n")
        if cut < 0:
            return ""
        ready, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
        return "".join(self._line(line) for line in ready.splitlines(keepends=True))

    def flush(self) -> str:
        """What is left at the end of a message, filtered; the filter starts afresh."""
        rest, self._pending = self._pending, ""
        shown = self._line(rest) if rest else ""
        self._in_fence = self._hid_last = False
        return shown

    def _line(self, line: str) -> str:
        body = line.rstrip("\n")
        ending = line[len(body) :]
        hidden = False
        if _FENCE.match(body):
            self._in_fence = not self._in_fence
            shown = line
        elif self._in_fence:
            hidden = self.is_configuring(_command_of(body))
            shown = line
        else:
            prompted = _PROMPTED.match(body)
            hidden = prompted is not None and self.is_configuring(prompted.group("command"))
            shown = _INLINE_CODE.sub(self._span, body) + ending
        if hidden:
            self.filtered += 1
            # one note for a run of hidden lines
            shown = "" if self._hid_last else HIDDEN_LINE + ending
        self._hid_last = hidden
        return shown

    def _span(self, match: re.Match[str]) -> str:
        if self.is_configuring(match.group(1)):
            self.filtered += 1
            return HIDDEN_SPAN
        return match.group(0)


def filter_answer(text: str, is_configuring: IsConfiguring) -> tuple[str, int]:
    """`text` as the filter shows it, and how many lines or spans were hidden."""
    answer_filter = ConfigurationFilter(is_configuring)
    shown = answer_filter.feed(text) + answer_filter.flush()
    return shown, answer_filter.filtered


def configuring_judge(
    refused_read_only: Callable[[str, str], str | None], dialects: Iterable[str]
) -> IsConfiguring:
    """A line is configuration when it is a command (its first word is letters only) that
    is no diagnostic in any of `dialects` (the read-only rules refuse it in each)."""
    kinds = sorted(set(dialects)) or ["vpcs", "cisco_ios", "linux"]

    def is_configuring(command: str) -> bool:
        command = command.strip()
        if len(command) > 200 or not _COMMAND_WORD.match(command):
            return False
        return all(refused_read_only(command, dialect) for dialect in kinds)

    return is_configuring


def _command_of(line: str) -> str:
    """A code line without a device prompt or a list marker in front."""
    prompted = _PROMPTED.match(line)
    if prompted:
        return prompted.group("command")
    return _MARKDOWN_PREFIX.sub("", line)
