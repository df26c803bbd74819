"""A turn's options from the notebook: the mode's short names and `turn_options`."""

from __future__ import annotations

import dataclasses

from ..chat.options import TurnOptions
from ..mode_labels import LAB_AUTOMATION, MODE_NAMES, TEACHING, mode_of
from .errors import UsageError

SPELLINGS = {"teach": TEACHING, "lab_automation": LAB_AUTOMATION}
"""Other spellings of a mode `copilot_mode` reads, besides its id and its words."""


def copilot_mode(mode: str | None) -> str | None:
    """The copilot mode named by `mode`: "teaching", "automation" (or "lab", its old
    word), the mode ids or `SPELLINGS`, in any case, `-` for `_`."""
    if mode is None:
        return None
    word = mode.strip().lower().replace("-", "_")
    chosen = mode_of(word) or SPELLINGS.get(word)
    if chosen is None:
        raise UsageError(
            f"Unknown copilot mode {mode!r}: use {MODE_NAMES[TEACHING]} ({TEACHING}) or "
            f"{MODE_NAMES[LAB_AUTOMATION]} ({LAB_AUTOMATION})."
        )
    return chosen


def turn_options(
    options: TurnOptions | None = None,
    *,
    mode: str | None = None,
    max_iterations: int | None = None,
    max_tool_calls: int | None = None,
    max_execution_time_seconds: int | None = None,
    temperature: float | None = None,
) -> TurnOptions:
    """One turn's `TurnOptions`: `options`, else built from `mode` and the limits (both at
    once is a `UsageError`), its mode named in full (teaching, lab or the full names). The
    values are checked by the server (its 400 names the field)."""
    limits = (max_iterations, max_tool_calls, max_execution_time_seconds, temperature)
    if options is not None:
        if mode is not None or any(value is not None for value in limits):
            raise UsageError(
                "Give the turn's options either as `options` or as keyword arguments "
                "(mode, the limits), not both."
            )
        return dataclasses.replace(options, mode=copilot_mode(options.mode))
    return TurnOptions(
        mode=copilot_mode(mode),
        max_iterations=max_iterations,
        max_tool_calls=max_tool_calls,
        max_execution_time_seconds=max_execution_time_seconds,
        temperature=temperature,
    )
