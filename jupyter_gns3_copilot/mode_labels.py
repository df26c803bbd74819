"""The copilot's modes as people read them: "Teaching mode", "Automation mode".

The mode ids (`teaching_assistant`, `lab_automation_assistant`) stay what the API, the
settings and saved bundles carry; every view shows `mode_label` instead. The automation
mode's word was "lab" until the word came to mean the GNS3 lab only; `OLD_MODE_NAMES`
keeps it working wherever a word is read (`%copilot --mode lab`, `mode="lab"`, a saved
output naming it). No imports: the kernel side (text transcripts, a saved answer's
fallbacks) reads it without the tools. The front end reads the same tables from
`labextension/src/generated/modes.schema.json` (`wire_schema`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

TEACHING: Final = "teaching_assistant"
LAB_AUTOMATION: Final = "lab_automation_assistant"
MODE_NAMES: Mapping[str, str] = {TEACHING: "teaching", LAB_AUTOMATION: "automation"}
"""What people call each mode in a word (and what `%copilot --mode` takes)."""
OLD_MODE_NAMES: Mapping[str, str] = {"lab": LAB_AUTOMATION}
"""The mode each old word names, still read everywhere a word is (never shown)."""
MODE_LABELS: Mapping[str, str] = {TEACHING: "Teaching mode", LAB_AUTOMATION: "Automation mode"}
"""Each mode as the views and the docs name it."""


def mode_of(word: str) -> str | None:
    """The mode id that `word` names (an id, its word in `MODE_NAMES` or an old word in
    `OLD_MODE_NAMES`); None for any other text."""
    if word in MODE_LABELS:
        return word
    named = {name: mode_id for mode_id, name in MODE_NAMES.items()}
    return named.get(word) or OLD_MODE_NAMES.get(word)


def mode_label(mode: str) -> str:
    """ "Teaching mode" or "Automation mode" for a mode id or a word `mode_of` reads; any
    other text as it is."""
    mode_id = mode_of(mode)
    return MODE_LABELS[mode_id] if mode_id else mode
