"""Copilot modes: which tools each mode may run.

The mode is enforced where a tool runs (`execute_tool`), not only by which tool schemas
the model is shown: a call outside the mode executes nothing and returns `refusal(...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..mode_labels import LAB_AUTOMATION as LAB_AUTOMATION
from ..mode_labels import MODE_NAMES as MODE_NAMES
from ..mode_labels import TEACHING as TEACHING

Mode = Literal["teaching_assistant", "lab_automation_assistant"]

DEFAULT_MODE: Mode = TEACHING
"""The default mode: diagnose and teach, never configure devices."""

TEACHING_TOOLS = frozenset(
    {
        "get_topology",
        "list_templates",
        "create_nodes",
        "create_links",
        "start_nodes",
        "rename_nodes",
        "run_show_commands",
        "device_skills",
        # Checking the lab's objectives only reads the devices.
        "check_objectives",
        # Watching traffic changes nothing in the lab.
        "start_capture",
        "stop_capture",
        "analyze_capture",
        # Saving the lab's state changes nothing in it either; restoring one does.
        "list_snapshots",
        "create_snapshot",
    }
)
LAB_AUTOMATION_TOOLS = TEACHING_TOOLS | {
    "stop_nodes",
    "suspend_nodes",
    "reload_nodes",
    "run_config_commands",
    "run_vpcs_commands",
    "restore_snapshot",
    "delete_nodes",
    "delete_links",
    "set_link_state",
    "set_link_filter",
}

MODE_TOOLS: Mapping[str, frozenset[str]] = {
    TEACHING: TEACHING_TOOLS,
    LAB_AUTOMATION: LAB_AUTOMATION_TOOLS,
}
MODE_DESCRIPTIONS: Mapping[str, str] = {
    TEACHING: "diagnose and teach: read the lab, build it, start nodes, run diagnostic "
    "commands, capture packets, save snapshots; never change a device's configuration",
    LAB_AUTOMATION: "full lab automation: everything of teaching_assistant plus stopping, "
    "suspending, reloading and deleting nodes, deleting links, link faults, restoring "
    "snapshots and configuring devices",
}


def check_mode(mode: str) -> Mode:
    """`mode` itself when it is a known mode; `ValueError` naming the known modes else."""
    if mode == TEACHING:
        return TEACHING
    if mode == LAB_AUTOMATION:
        return LAB_AUTOMATION
    raise ValueError(f"Unknown copilot mode {mode!r}; known modes: {', '.join(MODE_TOOLS)}.")


def mode_allows(mode: str, tool: str) -> bool:
    """Whether `tool` may run in `mode`."""
    return tool in MODE_TOOLS.get(mode, frozenset())


def refusal(mode: str, tool: str, doing: str | None = None) -> dict[str, Any]:
    """The tool result for a call of `tool` that `mode` does not allow (nothing was run);
    `doing`: the other tool whose work the call would also do, which `mode` does not
    allow (`ToolSpec.also_does`)."""
    blocked = doing or tool
    needs = next((m for m, tools in MODE_TOOLS.items() if blocked in tools), LAB_AUTOMATION)
    what = tool if doing is None else f"{tool} with these arguments does what {doing} does; that"
    return {
        "status": "refused",
        "tool": tool,
        "mode": mode,
        "error": (
            f"{what} is not allowed in {mode} mode ({MODE_DESCRIPTIONS.get(mode, mode)}); "
            f"nothing was executed. Explain to the user what the step would do and how to "
            f"do it by hand, or ask the instructor to switch to {needs} mode."
        ),
        "allowed_tools": sorted(MODE_TOOLS.get(mode, frozenset())),
    }
