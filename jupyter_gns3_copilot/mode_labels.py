"""The copilot's modes as people read them: "Teaching mode", "Lab mode".

The mode ids (`teaching_assistant`, `lab_automation_assistant`) stay what the API, the
settings and saved bundles carry; every view shows `mode_label` instead. No imports: the
kernel side (text transcripts, a saved answer's fallbacks) reads it without the tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

TEACHING: Final = "teaching_assistant"
LAB_AUTOMATION: Final = "lab_automation_assistant"
MODE_NAMES: Mapping[str, str] = {TEACHING: "teaching", LAB_AUTOMATION: "lab"}
"""What people call each mode in a word (and what `%copilot --mode` takes)."""
MODE_LABELS: Mapping[str, str] = {TEACHING: "Teaching mode", LAB_AUTOMATION: "Lab mode"}
"""Each mode as the views and the docs name it."""


def mode_label(mode: str) -> str:
    """ "Teaching mode" or "Lab mode" for a mode id or its word (`MODE_NAMES`); any other
    text as it is."""
    for mode_id, name in MODE_NAMES.items():
        if mode in (mode_id, name):
            return MODE_LABELS[mode_id]
    return mode
