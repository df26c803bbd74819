"""`TurnOptions`: one turn's options, built once where the turn is asked for (the chat
route's `ChatRequest`, the kernel's `Copilot.ask` / `stream` and the `%copilot` flags) and
carried unchanged to the turn engine.

A carrier, not a check: the values are judged where the turn runs (`TurnLimits` for the
limits, the copilot modes for `mode`), so a wrong one ends the turn with an `error` event
naming it; the chat route's `ChatRequest` checks the same ranges first (a 400 naming the
field), and the kernel sends what its caller gave for the server to judge. Light: the
server's first stage and the kernel import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..agent.limits import TurnLimits


@dataclass(frozen=True)
class TurnOptions:
    """What a caller chose for one turn; None everywhere means the defaults.

    `mode`: the copilot mode (teaching_assistant or lab_automation_assistant; None: the
    service's default); `temperature` (0-2), `max_iterations` (1-100, default 20),
    `max_tool_calls` (1-50, default unlimited), `max_execution_time_seconds` (1-3600,
    default none): this turn only (`agent.limits.TurnLimits`); `auto_approve`: run every
    change without asking (the caller checked it is allowed).
    """

    mode: str | None = None
    temperature: float | None = None
    max_iterations: int | None = None
    max_tool_calls: int | None = None
    max_execution_time_seconds: int | None = None
    auto_approve: bool = False

    def limits(self) -> TurnLimits:
        """The turn's `TurnLimits` (defaults where None); pydantic's `ValidationError`
        names a value out of its range."""
        given = {
            "max_iterations": self.max_iterations,
            "max_tool_calls": self.max_tool_calls,
            "max_execution_time_seconds": self.max_execution_time_seconds,
            "temperature": self.temperature,
        }
        return TurnLimits(**{key: value for key, value in given.items() if value is not None})

    def request_fields(self) -> dict[str, Any]:
        """The options as the chat route's request body spells them (`ChatRequest`'s
        `copilot_mode`, limits and `approval`), those left to their default left out."""
        fields: dict[str, Any] = {
            "copilot_mode": self.mode,
            "max_iterations": self.max_iterations,
            "max_tool_calls": self.max_tool_calls,
            "max_execution_time_seconds": self.max_execution_time_seconds,
            "temperature": self.temperature,
            "approval": "auto" if self.auto_approve else None,
        }
        return {key: value for key, value in fields.items() if value is not None}
