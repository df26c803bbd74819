"""What one run of the benchmark scores, and the totals per fault.

A run is one fault put into the working lab and the copilot asked about it. It is
`scored` when the fault went in, else `refused` (what it breaks did not pass first),
`ineffective` (it broke nothing it names) or `error` (a step or the copilot failed),
and then carries no scores:

- `diagnosed`: the copilot's last answer names the diagnosis' device, its interface when
  the fault gives one, and any of its words (whole words, any case);
- `fixed`: every objective the fault breaks passes at the end;
- `regressions`: objectives that passed before the fault, are not among those it breaks,
  and failed at any check after the copilot's turns; `safe` when there are none;
- `turns` (messages sent to the copilot), `tool_calls`, `tokens_in` / `tokens_out` (the
  model's own usage), `seconds` (the copilot's turns and the checks after them), and
  `cost` when prices per million tokens are given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ..objectives.fault_model import Diagnosis

RunStatus = Literal["scored", "refused", "ineffective", "error"]

_NEGATIONS = (
    (" reaches ", " cannot reach "),
    (" has ", " does not have "),
    (" is ", " is not "),
    (" runs", " does not run"),
    (" forwards ", " does not forward "),
    (" sees ", " does not see "),
    (" crosses ", " does not cross "),
    (" cross ", " do not cross "),
)
"""An objective's first verb and its negation: "PC1 reaches PC3" -> "PC1 cannot reach PC3"."""


def failing(text: str) -> str:
    """An objective's text said as a student reports it failing; a text with none of the
    usual verbs is quoted as what does not work."""
    for verb, negated in _NEGATIONS:
        if verb in f"{text} ":
            return f"{text} ".replace(verb, negated, 1).strip()
    return f"this does not work: {text}"


def symptom(texts: Sequence[str], *, teaching: bool = False) -> str:
    """The message a student sends about the failing objectives `texts`: "PC1 cannot
    reach PC3 (…). Find and fix the problem." (teaching mode: "… Why?")."""
    said = "; ".join(failing(t) for t in texts)
    ask = "Find and fix the problem." + (" Why?" if teaching else "")
    return f"{said[:1].upper()}{said[1:]}. {ask}"


def names(answer: str, term: str) -> bool:
    """Whether `answer` names `term` as a whole word, in any case."""
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", answer, re.IGNORECASE) is not None


def is_diagnosed(answer: str, diagnosis: Diagnosis) -> bool:
    """Whether `answer` names the device, the interface (when given) and any of the words
    of `diagnosis` (module docstring)."""
    return (
        names(answer, diagnosis.device)
        and (diagnosis.interface is None or names(answer, diagnosis.interface))
        and any(names(answer, word) for word in diagnosis.words)
    )


def cost(
    tokens_in: int, tokens_out: int, price_in: float | None, price_out: float | None
) -> float | None:
    """The price of the tokens at `price_in` / `price_out` per million (None when neither
    price is given; a missing one counts 0)."""
    if price_in is None and price_out is None:
        return None
    return (tokens_in * (price_in or 0.0) + tokens_out * (price_out or 0.0)) / 1_000_000


class RunScore(BaseModel):
    """One run of one fault (module docstring); one line of the JSON lines output."""

    fault: str
    run: int
    status: RunStatus
    explanation: str = ""
    symptom: str = ""
    broken: list[str] = Field(default_factory=list)
    """The objectives the fault broke (those it names)."""
    diagnosed: bool = False
    fixed: bool = False
    regressions: list[str] = Field(default_factory=list)
    safe: bool = True
    turns: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    cost: float | None = None
    answer: str = ""
    """The copilot's last answer."""


class FaultTotals(BaseModel):
    """A fault's scored runs added up (`fault` "all": every fault's)."""

    fault: str
    runs: int
    scored: int
    diagnosed: int
    fixed: int
    safe: int
    turns: int
    tool_calls: int
    tokens_in: int
    tokens_out: int
    seconds: float
    cost: float | None

    @property
    def tokens_per_fix(self) -> float | None:
        """Tokens (in and out) spent per fixed run; None when nothing was fixed."""
        return (self.tokens_in + self.tokens_out) / self.fixed if self.fixed else None


def totals(runs: Sequence[RunScore], fault: str) -> FaultTotals:
    """`runs` added up under the name `fault`."""
    scored = [r for r in runs if r.status == "scored"]
    costs = [r.cost for r in scored if r.cost is not None]
    return FaultTotals(
        fault=fault,
        runs=len(runs),
        scored=len(scored),
        diagnosed=sum(r.diagnosed for r in scored),
        fixed=sum(r.fixed for r in scored),
        safe=sum(r.safe for r in scored),
        turns=sum(r.turns for r in scored),
        tool_calls=sum(r.tool_calls for r in scored),
        tokens_in=sum(r.tokens_in for r in scored),
        tokens_out=sum(r.tokens_out for r in scored),
        seconds=sum(r.seconds for r in scored),
        cost=sum(costs) if costs else None,
    )


def per_fault(runs: Sequence[RunScore]) -> list[FaultTotals]:
    """The totals of each fault, in the order the faults first ran, then of all."""
    faults = list(dict.fromkeys(r.fault for r in runs))
    return [totals([r for r in runs if r.fault == f], f) for f in faults] + [totals(runs, "all")]
