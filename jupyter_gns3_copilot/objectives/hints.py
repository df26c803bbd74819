"""The copilot and the lab's objectives during a chat turn: what the model is told of the
current stage, and the configuration lines held back from the student.

- `TurnObjectives`: a student's lab for one turn: the current stage (the one they chose,
  else the first not passed in their latest check), its hints policy, the objective texts
  the model may read (never the checks: they would give the answers away), and the
  `check_objectives` tool's way to check them.
- `HoldBack`: with `hints: nudge`, a teaching-mode turn must not show the device
  configuration of the stage, anywhere the student sees the turn. A configuration line is
  a command that is no diagnostic in any dialect of the lab's devices, as the command
  policy's read-only rules judge them (`configuring_judge`). Held back, and counted
  (`hints_filtered`):
  - in the answer (`ConfigurationFilter`, in the stream and the saved message): command
    lines (a fenced code block's lines, inline code, a line after a device prompt such as
    `R1(config)#`) are replaced with a note, and the message ends saying how many lines
    were left out. Prose is left alone: the policy judges commands, not sentences.
  - in the tool calls' arguments (the cards, the saved history, the exports): each
    configuration line of a command tool's `devices[].commands` becomes `HIDDEN_COMMAND`
    before the tool runs (teaching mode would refuse it anyway), so the tool's result and
    its card (`tools.outcomes`) name no line either;
  - in the title: one that shows a configuration line gives way to the student's words.
- Device output is never configuration: a line that no device of the lab could take as a
  command is output (`OutputLines`): a key/value line (VPCS `GATEWAY     : 0.0.0.0`), a
  first word in capitals that no dialect of the lab has as a command (`GATEWAY 0.0.0.0`),
  and, in a code block, the lines after a diagnostic or after other output, up to the next
  line that starts with a lower-case command word of the lab's dialects or a prompt (the
  device's answer: `inet 10.0.0.1/24 ...` after Linux `ip addr`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..console import DIALECTS
from ..devices.hidden import HIDDEN_COMMAND, left_out
from ..devices.policy import takes_command_word
from .api import LabView, ObjectiveView, StageView
from .model import LabFile, Stage
from .results import ObjectiveResult

HIDDEN_LINE = "(configuration hidden: this stage's hints only point the way)"
HIDDEN_SPAN = "`[configuration hidden]`"
STATUS_WORDS = {"pass": "passed", "fail": "not yet", "error": "could not be checked"}
DEFAULT_DIALECTS = tuple(sorted(DIALECTS))
"""The dialects judged for a lab whose devices' dialects are not known: every one the
copilot speaks (FRR routers' configuration lines too)."""

Checker = Callable[[str | None, asyncio.Event | None], Awaitable[Sequence[ObjectiveResult]]]
"""Checks the objectives (of a stage) on the devices, stopping when the event is set."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_PROMPTED = re.compile(
    r"^\s*(?:(?:[\w.-]+@)?(?P<device>[\w.-]+)(?::[~\w/.-]*)?(?:\((?:config[\w-]*)\))?[#>$]"
    r"|\$(?=\s))"
    r"\s?(?P<command>\S.*)$"
)
"""A line typed after a device prompt: `R1#`, `R1(config-if)#`, `PC1>`, `root@R1:~#`,
`user@host$`, `$ `."""
_MARKDOWN_PREFIX = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>)\s+")
_COMMAND_WORD = re.compile(r"^[A-Za-z][A-Za-z-]*(?:\s|$)")
"""A command starts with a word of letters: `10.0.0.1/24`, `PC1` or `IP/MASK : ...` (an
address, a node name, device output) are not commands."""
_KEY_VALUE = re.compile(r"^\S+?\s*:(?:\s|$)")
"""Output of the `KEY : value` shape (VPCS `GATEWAY     : 0.0.0.0`, IOS `Codes: ...`): no
command of the dialects starts with a word followed by a colon."""
_LINUX_IP_OBJECT = re.compile(r"^ip\s+(?:-\S+\s+)*(?P<object>\S)")
"""The object of a Linux `ip` command (`ip -4 addr`: `a`), after its options."""
_ADDRESS = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){1,3}(?:/\d{1,2})?\b")


@dataclass(frozen=True)
class ConfigurationJudge:
    """Whether a command line is configuration: a command (its first word is letters only,
    it is no device output) that is no diagnostic in the dialect of the device it is for
    (`devices`: node name -> dialect), or for a line of no known device, in any of
    `dialects` (the read-only rules refuse it, or the dialect would reject it: Linux `ip`
    takes an object such as `addr`, not VPCS's `ip 10.0.0.1/24`). Called with the line."""

    refused_read_only: Callable[[str, str], str | None] = field(repr=False)
    dialects: tuple[str, ...]
    devices: Mapping[str, str] = field(default_factory=dict)

    def __call__(self, command: str, device: str | None = None) -> bool:
        command = command.strip()
        if len(command) > 200 or not _COMMAND_WORD.match(command) or self.is_output(command):
            return False
        known = self.devices.get(device or "")
        dialects = (known,) if known else self.dialects
        return not any(self._diagnostic(command, dialect) for dialect in dialects)

    def _diagnostic(self, command: str, dialect: str) -> bool:
        if self.refused_read_only(command, dialect):
            return False
        if dialect == "linux":
            ip_object = _LINUX_IP_OBJECT.match(command)
            return ip_object is None or ip_object.group("object")[0].isalpha()
        return True

    def takes(self, word: str, device: str | None = None) -> bool:
        """Whether `device` (None or unknown: a device of the lab) takes `word` as the
        first word of a command."""
        known = self.devices.get(device or "")
        return any(takes_command_word(word, d) for d in ((known,) if known else self.dialects))

    def is_output(self, line: str) -> bool:
        """Whether `line` is recognisably device output, no command: a `KEY : value` line,
        or a first word with capitals that no device of the lab takes as a command
        (VPCS `GATEWAY 0.0.0.0`, `Checking for duplicate address...`)."""
        line = line.strip()
        if _KEY_VALUE.match(line):
            return True
        first = line.split(maxsplit=1)[0] if line else ""
        return first != first.lower() and not self.takes(first)

    def typed_command(self, line: str, device: str | None = None) -> bool:
        """Whether `line` starts as a command is typed on `device` (None or unknown: a
        device of the lab): a lower-case word it takes as a command (`ip`, `set`,
        `interface`, `sysctl`)."""
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        return first == first.lower() and self.takes(first, device)


def configuring_judge(
    refused_read_only: Callable[[str, str], str | None],
    dialects: Mapping[str, str] | Iterable[str],
) -> ConfigurationJudge:
    """The judge of configuration lines for a lab whose devices speak `dialects` (node name
    -> dialect, or the dialects alone; none known: every dialect the copilot knows)."""
    devices = dict(dialects) if isinstance(dialects, Mapping) else {}
    spoken = tuple(sorted(set(devices.values() if devices else dialects)))
    return ConfigurationJudge(refused_read_only, spoken or DEFAULT_DIALECTS, devices)


@dataclass
class TurnObjectives:
    """A student's lab during one chat turn (module docstring)."""

    lab: LabFile | LabView
    """The lab, or as the student sees it (in hub mode the service holds the lab file)."""
    stage: Stage | StageView
    results: Mapping[str, ObjectiveResult | ObjectiveView]
    """The student's latest result (or status) per objective id (may be empty)."""
    checker: Checker
    is_configuring: ConfigurationJudge = field(repr=False)

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

    def hold_back(self) -> HoldBack | None:
        """What the turn holds back from the student (nudge only)."""
        return HoldBack(self.is_configuring) if self.hints == "nudge" else None


@dataclass(frozen=True)
class HoldBack:
    """What a `nudge` stage holds back in teaching mode (module docstring), for the saved
    turn; `stream()` filters the streamed answer alike."""

    judge: ConfigurationJudge

    def stream(self) -> ConfigurationFilter:
        """A filter for the turn's streamed answers and tool calls."""
        return ConfigurationFilter(self.judge)

    def answer(self, text: str) -> tuple[str, int]:
        """`text` as the filter shows it, and how many lines or spans were hidden."""
        return filter_answer(text, self.judge)

    def arguments(self, arguments: Mapping[str, object]) -> tuple[dict[str, object], int]:
        """A tool call's `arguments` with each configuration line of its devices' commands
        replaced by `HIDDEN_COMMAND`, and how many were."""
        return hide_commands(arguments, self.judge)

    def shows_configuration(self, title: str) -> bool:
        """Whether `title` shows a configuration line: in inline code, or from a word a
        device takes as a command on, with an address in it (`PC1 ip 10.0.0.1/24`)."""
        if any(self.judge(span) for span in _INLINE_CODE.findall(title)):
            return True
        words = title.replace("`", " ").split()
        for start, word in enumerate(words):
            rest = " ".join(words[start:])
            if self.judge.takes(word) and _ADDRESS.search(rest) and self.judge(rest.lower()):
                return True
        return False


class ConfigurationFilter:
    """Replaces configuration lines in an answer streamed in pieces (module docstring).
    `feed` returns what may be shown now (whole lines; a partial line waits for its end),
    `flush` the rest at the end of the message, closed by a sentence saying how many lines
    it left out; `arguments` hides a tool call's configuration lines; `filtered` counts
    everything hidden."""

    def __init__(self, judge: ConfigurationJudge) -> None:
        self.judge = judge
        self.filtered = 0
        self._in_message = 0
        self._pending = ""
        self._in_fence = False
        self._output_follows = False
        self._output_of: str | None = None
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
        """What is left at the end of a message, filtered, and the sentence saying how many
        lines the message left out (if any); the filter starts afresh."""
        rest, self._pending = self._pending, ""
        shown = self._line(rest) if rest else ""
        if self._in_message:
            shown += ("\n\n" if rest else "\n") + left_out_sentence(self._in_message)
        self._in_fence = self._hid_last = self._output_follows = False
        self._in_message = 0
        return shown

    def arguments(self, arguments: Mapping[str, object]) -> dict[str, object]:
        """A tool call's arguments as the student sees them (`HoldBack.arguments`)."""
        shown, hidden = hide_commands(arguments, self.judge)
        self.filtered += hidden
        return shown

    def _line(self, line: str) -> str:
        body = line.rstrip("\n")
        ending = line[len(body) :]
        hidden = False
        if _FENCE.match(body):
            self._in_fence = not self._in_fence
            self._output_follows = False
            shown = line
        elif self._in_fence:
            hidden = self._code_line(body)
            shown = line
        else:
            prompted = _PROMPTED.match(body)
            hidden = prompted is not None and self.judge(
                prompted.group("command"), prompted.group("device")
            )
            shown = _INLINE_CODE.sub(self._span, body) + ending
        if hidden:
            self._count()
            # one note for a run of hidden lines
            shown = "" if self._hid_last else HIDDEN_LINE + ending
        self._hid_last = hidden
        return shown

    def _code_line(self, body: str) -> bool:
        """Whether a code block's line is hidden. The lines after a diagnostic, or after
        other output, are the device's answer until a prompt or a line that starts as a
        command is typed (on the device whose prompt the diagnostic had, if any)."""
        prompted = _PROMPTED.match(body)
        device = None
        if prompted is None:
            command = _MARKDOWN_PREFIX.sub("", body).strip()
            if not command or (
                self._output_follows and not self.judge.typed_command(command, self._output_of)
            ):
                return False
        else:
            command, device = prompted.group("command", "device")
        hidden = self.judge(command, device)
        self._output_follows = not hidden
        if prompted is not None:
            self._output_of = device
        return hidden

    def _span(self, match: re.Match[str]) -> str:
        if self.judge(match.group(1)):
            self._count()
            return HIDDEN_SPAN
        return match.group(0)

    def _count(self) -> None:
        self.filtered += 1
        self._in_message += 1


def filter_answer(text: str, judge: ConfigurationJudge) -> tuple[str, int]:
    """`text` as the filter shows it, and how many lines or spans were hidden."""
    answer_filter = ConfigurationFilter(judge)
    shown = answer_filter.feed(text) + answer_filter.flush()
    return shown, answer_filter.filtered


def left_out_sentence(count: int) -> str:
    """How an answer ends that left configuration lines out."""
    return f"_{left_out(count)}: in this stage you work the commands out yourself._"


def hide_commands(
    arguments: Mapping[str, object], judge: ConfigurationJudge
) -> tuple[dict[str, object], int]:
    """`arguments` with each configuration line of `devices[].commands` (a multi-line
    command's lines one by one, judged for the entry's `device`) replaced by
    `HIDDEN_COMMAND`, and how many were."""
    devices = arguments.get("devices")
    if not isinstance(devices, list):
        return dict(arguments), 0
    hidden = 0
    shown: list[object] = []
    for entry in devices:
        commands = entry.get("commands") if isinstance(entry, Mapping) else None
        if isinstance(commands, list):
            kept = []
            for command in commands:
                if isinstance(command, str):
                    lines = command.split("\n")
                    held = [judge(line, str(entry.get("device") or "")) for line in lines]
                    hidden += sum(held)
                    command = "\n".join(
                        HIDDEN_COMMAND if hide else line
                        for line, hide in zip(lines, held, strict=True)
                    )
                kept.append(command)
            entry = {**entry, "commands": kept}
        shown.append(entry)
    return {**arguments, "devices": shown}, hidden
