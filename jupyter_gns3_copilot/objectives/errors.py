"""What is wrong with a lab file, said so that its author can fix it."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

MAX_SHOWN = 5
"""Problems spelled out in the exception's message; all are in `problems`."""


@dataclass(frozen=True)
class LabProblem:
    """One problem: the file, the 1-based line, the field (`stages[0].objectives[1].check.to`)
    and what is wrong with it."""

    source: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.source}, line {self.line}"
        return (
            f"{where}, {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class LabFileError(ValueError):
    """A lab file that cannot be used; nothing of it runs. `problems` lists every problem
    found (the message names the first few)."""

    def __init__(self, problems: Sequence[LabProblem]) -> None:
        self.problems = list(problems)
        shown = [str(p) for p in self.problems[:MAX_SHOWN]]
        more = len(self.problems) - len(shown)
        if more:
            shown.append(f"... and {more} more")
        super().__init__("; ".join(shown) if len(shown) > 1 else shown[0])

    @property
    def first(self) -> LabProblem:
        """The first problem (the one a one-line error names)."""
        return self.problems[0]


class NoLab(LookupError):
    """The project has no lab file."""


class UnknownSelection(ValueError):
    """A stage or objective id the lab does not have; the message lists those it has."""


class UnknownStage(UnknownSelection):
    """A stage id the lab does not have: the message lists the lab's stages and names the
    closest one ("did you mean addressing?") when one is close (difflib)."""

    def __init__(self, stage: str, known: Sequence[str]) -> None:
        self.stage = stage
        self.known = list(known)
        message = f"the lab has no stage {stage!r} (stages: {', '.join(self.known)})"
        close = difflib.get_close_matches(stage, self.known, n=1)
        super().__init__(f"{message}; did you mean {close[0]}?" if close else message)


class UnknownFault(UnknownSelection):
    """A fault id the lab does not have; the message lists the lab's faults."""

    def __init__(self, fault: str, known: Sequence[str]) -> None:
        listed = ", ".join(known) if known else "none"
        super().__init__(f"the lab has no fault {fault!r} (faults: {listed})")


class StageWithoutSnapshot(LookupError):
    """A catch-up asked for a stage that names no snapshot, or whose snapshot is gone."""


class ConfirmationNeeded(Exception):
    """A catch-up asked without the person's confirmation: the message says what it would
    restore (`description`) and how to confirm."""

    def __init__(self, description: str) -> None:
        super().__init__(f'{description} Send {{"confirm": true}} to do it.')


class NoExercise(LookupError):
    """The student has no exercise going (none started, or the last one ended)."""


class ExerciseRefused(Exception):
    """An exercise cannot start now: the message says why, in a student's words (the lab
    is not solved yet, one is going already, the lab has no faults...)."""
