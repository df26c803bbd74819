"""What a tool result means to a person: one summary line, the outcome of the check, and a
note for the student when the copilot was not allowed to act.

`read_result(tool, output, mode=..., arguments=...)` reads a tool's result (the JSON text the
model sees, unchanged) into a `ToolReading`, which the chat's `tool_end` event carries:

- `summary`: "ran `show ip` on PC1, PC2 · 2 ok", "set PC1 10.0.0.1/24, PC2 10.0.0.2/24",
  "ran `ping 10.0.1.2 -c 1` on PC1 · 1 failed · PC1: No gateway found",
  "not run: teaching mode · `ip 10.0.0.2/24` on PC2", "created PC3 (vpcs)",
  "linked PC3 e0 - Switch1 e2", "started PC1, PC2";
- `outcome`: what happened to the check, not only to the delivery (`device_outcome`):
  `ok`, `partial`, `failed` (a device failed, or a ping or trace it ran got no answer:
  each device entry's `outcome`, read in the device's dialect by the command tools),
  `refused` (the mode or the command policy kept the copilot from acting, or the user
  declined the change or left it undecided; nothing was done);
- `note`: for a refusal, a friendly line for the student that names the mode and says how
  to do it by hand ("Teaching mode: I can't change PC2's address; here is how you would do
  it: on PC2's console, type `ip 10.0.0.2/24`."), never the text written for the model.

In a lab stage whose hints only point the way (`objectives.hints`), a call's configuration
lines reach the tool as `HIDDEN_COMMAND`: its reading names no line either, says how many
were left out, and points at the consoles ("not run: teaching mode · configuration of PC1,
PC2"; "... I left out 2 configuration lines: work them out and type them on the consoles of
PC1, PC2 ...").

No Jupyter, no LangChain: the service and the direct tool runs call it once per result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..device_outcome import Outcome, combine, device_outcome
from ..devices.hidden import HIDDEN_COMMAND, left_out
from ..mode_labels import MODE_LABELS
from .address_summary import addresses_set, saves
from .modes import TEACHING

COMMAND_TOOLS = frozenset({"run_show_commands", "run_config_commands", "run_vpcs_commands"})
NODE_VERBS = {
    "start_nodes": "started",
    "stop_nodes": "stopped",
    "suspend_nodes": "suspended",
    "reload_nodes": "reloaded",
}
REFUSED_ACTIONS = {
    "run_config_commands": "change the configuration",
    "run_vpcs_commands": "drive the PCs",
    "create_nodes": "add nodes",
    "create_links": "link nodes",
    "start_nodes": "start nodes",
    "stop_nodes": "stop nodes",
    "suspend_nodes": "suspend nodes",
    "reload_nodes": "reload nodes",
    "rename_nodes": "rename nodes",
    "delete_nodes": "delete nodes",
    "delete_links": "delete links",
    "set_link_state": "take links down or up",
    "set_link_filter": "put faults on links",
    "restore_snapshot": "restore a snapshot",
    "create_snapshot": "stop the running nodes for a snapshot",
}
NODE_MENU = {
    "start_nodes": "Start",
    "stop_nodes": "Stop",
    "suspend_nodes": "Suspend",
    "reload_nodes": "Reload",
    "delete_nodes": "Delete",
}
"""The GNS3 context-menu entry that does what a refused node tool would have done."""
LIMIT_TEXT = "Tool call limit reached"
"""How the result of a call beyond `max_tool_calls` starts (plain text)."""
MAX_NAMES = 6
MAX_COMMAND_CHARS = 60
MAX_PROBLEMS = 2
"""Failed checks named in a summary ("PC1: No gateway found")."""


@dataclass(frozen=True)
class ToolReading:
    """A tool result read for people (module docstring)."""

    summary: str
    outcome: Outcome
    note: str | None = None


def read_result(
    tool: str,
    output: str,
    *,
    mode: str | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> ToolReading:
    """Read `output` (the tool's JSON result text) of a call of `tool` in `mode`;
    `arguments` (the call's, when known) say what a refused call would have done."""
    value = _parse(output)
    status = value.get("status") if isinstance(value, dict) else None
    if tool == "create_snapshot" and isinstance(value, dict):
        reading = _snapshot(value, mode, arguments or {})
        if reading is not None:
            return reading
    if status == "refused":
        return _refused_call(tool, str(value.get("mode") or mode or ""), arguments or {})
    if status == "declined":
        why = "not approved in time" if value.get("decision") == "timeout" else "you declined"
        return ToolReading(f"{tool.replace('_', ' ')} · not done: {why}", "refused")
    if status in ("error", "aborted"):
        return _failed_call(tool, value)
    if status == "not_executed" or (isinstance(value, str) and value.startswith(LIMIT_TEXT)):
        return ToolReading(f"{tool.replace('_', ' ')} · not run (limit reached)", "failed")
    if tool in COMMAND_TOOLS and isinstance(value, list):
        return _commands(tool, value, mode)
    if isinstance(value, dict):
        if tool == "create_nodes" and isinstance(value.get("nodes"), list):
            return _items(value["nodes"], "created", _created)
        if tool == "create_links" and isinstance(value.get("links"), list):
            return _items(value["links"], "linked", _linked)
        if tool in NODE_VERBS and isinstance(value.get("nodes"), list):
            return _items(value["nodes"], NODE_VERBS[tool], lambda e: str(e.get("name", "?")))
        if tool == "rename_nodes" and isinstance(value.get("nodes"), list):
            return _items(value["nodes"], "renamed", _renamed)
        if tool == "get_topology":
            nodes, links = len(value.get("nodes") or []), len(value.get("links") or [])
            return ToolReading(
                f"read the topology · {_count(nodes, 'node')}, {_count(links, 'link')}", "ok"
            )
        if tool == "list_templates":
            return ToolReading(
                f"listed {_count(len(value.get('templates') or []), 'template')}", "ok"
            )
        if tool == "check_objectives" and isinstance(value.get("objectives"), list):
            statuses = [o.get("status") for o in value["objectives"] if isinstance(o, dict)]
            passed = statuses.count("pass")
            return ToolReading(
                f"checked {_count(len(statuses), 'objective')} · {passed} passed", "ok"
            )
    outcome: Outcome = "failed" if status == "failed" else "ok"
    if status == "partial_success":
        outcome = "partial"
    return ToolReading(tool.replace("_", " "), outcome)


# -- commands on devices ---------------------------------------------------------------------


def _commands(tool: str, entries: Sequence[Any], mode: str | None) -> ToolReading:
    devices = [e for e in entries if isinstance(e, dict) and "device_name" in e]
    outcomes = [device_outcome(device) for device in devices]
    outcome = combine(outcomes)
    names = [str(device["device_name"]) for device in devices]
    refused = [d for d in devices if d.get("blocked_commands")]
    note = _blocked_note(tool, refused, mode) if refused else None
    if outcome == "refused":
        commands = [str(b.get("command", "")) for d in refused for b in d["blocked_commands"]]
        what = _what(commands, names)
        return ToolReading(f"not run: {_refuser(refused, mode)} · {what}", outcome, note)
    addresses = _addresses(tool, devices, outcomes)
    if addresses is not None:
        return ToolReading(addresses, outcome, note)
    stopped = sum(1 for device in devices if _stopped(device))
    command_sets = {
        tuple(c for c in device.get("commands") or () if c != HIDDEN_COMMAND) for device in devices
    }
    what = "commands"
    if len(command_sets) == 1 and (same := next(iter(command_sets))):
        what = _commands_text(same)
    summary = f"ran {what} on {_names(names)}"
    counted = {o: outcomes.count(o) for o in ("ok", "partial", "failed", "refused")}
    counted["failed"] -= stopped
    counts = [f"{n} {o}" for o, n in counted.items() if n]
    if stopped:
        counts.append(f"{stopped} stopped")
    problems = _check_problems(devices)
    return ToolReading(" · ".join([summary, ", ".join(counts), *problems]), outcome, note)


def _addresses(
    tool: str, devices: Sequence[Mapping[str, Any]], outcomes: Sequence[Outcome]
) -> str | None:
    """ "set PC1 10.0.0.1/24, PC2 10.0.0.2/24" when every device was only given addresses."""
    if tool == "run_show_commands" or not devices:
        return None
    config = tool == "run_config_commands"
    done: list[str] = []
    failed: list[str] = []
    for device, outcome in zip(devices, outcomes, strict=True):
        commands = [str(c) for c in device.get("commands") or []]
        what = addresses_set(commands, config=config)
        if what is None:
            return None
        (done if outcome == "ok" else failed).append(f"{device['device_name']} {what}")
    saved = not config and all(saves(d.get("commands") or []) for d in devices)
    parts = [f"set {', '.join(done)}" + (" (saved)" if saved else "")] if done else []
    if failed:
        parts.append(f"not set: {', '.join(failed)}")
    return " · ".join(parts)


def _check_problems(devices: Sequence[Mapping[str, Any]]) -> list[str]:
    """ "PC1: No gateway found" for the first failed or partial checks."""
    problems = []
    for device in devices:
        for check in device.get("checks") or []:
            if isinstance(check, Mapping) and check.get("outcome") != "ok":
                what = check.get("detail") or check.get("problem") or "no answer"
                problems.append(f"{device['device_name']}: {what}")
    return problems[:MAX_PROBLEMS]


def _stopped(device: Mapping[str, Any]) -> bool:
    """Whether the device's commands were cut short by an abort (a failed device)."""
    return device.get("status") == "failed" and "aborted" in str(device.get("error") or "")


def _refuser(devices: Sequence[Mapping[str, Any]], mode: str | None) -> str:
    """Who kept the commands back: "teaching mode" or "the command policy"."""
    return "teaching mode" if _mode_of(devices, mode) == TEACHING else "the command policy"


def _mode_of(devices: Sequence[Mapping[str, Any]], mode: str | None) -> str | None:
    """The turn's mode, or for a result read without it, the mode its policy reasons name
    (teaching mode's refusals start with the mode's name)."""
    if mode:
        return mode
    reasons = [str(b.get("reason", "")) for d in devices for b in d.get("blocked_commands") or []]
    return TEACHING if any(r.startswith(TEACHING) for r in reasons) else None


def _blocked_note(tool: str, devices: Sequence[Mapping[str, Any]], mode: str | None) -> str:
    by_device = {
        str(d["device_name"]): [str(b.get("command", "")) for b in d.get("blocked_commands") or []]
        for d in devices
    }
    commands = [command for held in by_device.values() for command in held]
    action = _command_action(list(by_device), commands)
    if _mode_of(devices, mode) == TEACHING:
        return f"Teaching mode: I can't {action}{_how(tool, by_device)}"
    return f"The command policy kept me from doing this: {action}."


def _command_action(names: Sequence[str], commands: Sequence[str]) -> str:
    """What the student asked for, in their words: "change PC2's address" for VPCS `ip`,
    "configure PC2" for held-back lines."""
    if HIDDEN_COMMAND in commands:
        return f"configure {_names(names)}"
    if commands and all(c.split()[:1] == ["ip"] for c in commands):
        if len(names) == 1:
            return f"change {names[0]}'s address"
        return f"change the addresses of {_names(names)}"
    return f"run {_commands_text(commands, 2) if commands else 'that command'} on {_names(names)}"


def _how(tool: str, by_device: Mapping[str, Sequence[str]]) -> str:
    """The end of a teaching-mode refusal's note: how to do it by hand, or, for lines held
    back, how many and where to type them once worked out."""
    held = sum(command == HIDDEN_COMMAND for commands in by_device.values() for command in commands)
    if not held:
        return f"; here is how you would do it: {_typing_how(tool, by_device)}."
    names = list(by_device)
    where = f"{names[0]}'s console" if len(names) == 1 else f"the consoles of {_names(names)}"
    if tool == "run_config_commands":
        where += " in configuration mode"
    them = "it" if held == 1 else "them"
    return (
        f", and in this stage the commands are yours to work out: {left_out(held)}. "
        f"Type {them} on {where}; the stage's objectives say what they must achieve."
    )


def _typing_how(tool: str, by_device: Mapping[str, Sequence[str]]) -> str:
    """The commands a student would type, device by device: "on PC2, type `ip
    10.0.0.2/24`" (configuration lines inside `configure terminal` ... `end`)."""
    steps = []
    for device, commands in by_device.items():
        typed = ", then ".join(f"`{c}`" for c in commands)
        if tool == "run_config_commands":
            typed = f"`configure terminal`, then {typed}, then `end`"
        steps.append(f"on {device}'s console, type {typed}")
    return "; ".join(steps)


# -- refusals and failures -----------------------------------------------------------------------


def _refused_call(tool: str, mode: str, arguments: Mapping[str, Any]) -> ToolReading:
    """A call the mode does not allow: nothing ran."""
    who = MODE_LABELS.get(mode, "The copilot's mode")
    action = REFUSED_ACTIONS.get(tool, f"use {tool.replace('_', ' ')}")
    devices = _argument_commands(arguments)
    if devices and tool in COMMAND_TOOLS:
        commands = [command for held in devices.values() for command in held]
        if tool == "run_vpcs_commands" or HIDDEN_COMMAND in commands:
            action = _command_action(list(devices), commands)
        else:
            action += f" of {_names(list(devices))}"
        what = _what(commands, list(devices))
        note = f"{who}: I can't {action}{_how(tool, devices)}"
        return ToolReading(f"not run: {who.lower()} · {what}", "refused", note)
    how = _gns3_how(tool, arguments)
    note = f"{who}: I can't {action}"
    note += f"; here is how you would do it: {how}." if how else "."
    return ToolReading(f"not run: {who.lower()} · {action}", "refused", note)


def _gns3_how(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """How to do a refused lab change by hand in GNS3, from the call's arguments."""
    nodes = [str(n) for n in arguments.get("nodes") or [] if isinstance(n, str)]
    if tool in NODE_MENU and nodes:
        return f"in GNS3, right-click {_names(nodes)} and choose {NODE_MENU[tool]}"
    links = [_linked(link) for link in arguments.get("links") or [] if isinstance(link, Mapping)]
    link = arguments.get("link")
    if isinstance(link, Mapping):
        links.append(_linked(link))
    if tool == "delete_links" and links:
        return f"in GNS3, right-click the link {_names(links)} and choose Delete"
    if tool == "set_link_state" and links:
        verb = "Suspend" if arguments.get("state") == "down" else "Resume"
        return f"in GNS3, right-click the link {_names(links)} and choose {verb}"
    if tool == "set_link_filter" and links:
        return f"in GNS3, right-click the link {_names(links)} and choose Packet filters"
    if tool == "restore_snapshot" and arguments.get("name"):
        return f"in GNS3, open Edit > Manage snapshots, pick {arguments['name']} and restore it"
    if tool == "create_snapshot":
        return "in GNS3, right-click the running nodes and choose Stop, then save the snapshot"
    return None


# -- snapshots -------------------------------------------------------------------------------


def _snapshot(
    value: Mapping[str, Any], mode: str | None, arguments: Mapping[str, Any]
) -> ToolReading | None:
    """A `create_snapshot` result: saved (and the nodes stopped and started again for it),
    or nothing saved because nodes run (with what the student can do); None for the
    other results (errors, the mode's refusal), read as any tool's."""
    running = [str(name) for name in value.get("running") or []]
    if value.get("status") == "refused" and running:
        names = _names(running)
        why = (
            f"GNS3 saves a snapshot of a stopped lab only, and {names} "
            f"{'is' if len(running) == 1 else 'are'} running"
        )
        stop_by_hand = f"in GNS3, right-click {names} and choose Stop"
        if (value.get("mode") or mode) == TEACHING:
            note = f"{MODE_LABELS[TEACHING]}: I can't stop nodes, and {why}. Stop them yourself: "
            note += f"{stop_by_hand}, then save the snapshot again."
        else:
            name = str(arguments.get("name") or "NAME")
            note = (
                f"Nothing was saved: {why}. Stop them first ({stop_by_hand}), or ask me to "
                "stop them and start them again "
                f"(`%copilot snapshot create {name} --stop --mode automation`). "
                "What was not saved on a device is lost when it stops."
            )
        return ToolReading(f"snapshot not saved · {names} running", "refused", note)
    saved = value.get("snapshot")
    if not isinstance(saved, Mapping) or value.get("status") not in ("success", "partial_success"):
        return None
    parts = [f"saved snapshot {saved.get('name')!r}"]
    stopped = [str(name) for name in value.get("stopped") or []]
    again = [str(name) for name in value.get("started_again") or []]
    if stopped and len(again) == len(stopped):
        parts.append(f"{_names(stopped)} stopped for it and started again")
    elif stopped:
        parts.append(f"{_names(stopped)} stopped for it")
        parts.append(f"not started again: {_names([n for n in stopped if n not in again])}")
    return ToolReading(" · ".join(parts), "ok" if len(again) == len(stopped) else "partial")


def _failed_call(tool: str, value: Mapping[str, Any]) -> ToolReading:
    if value.get("status") == "aborted":
        return ToolReading(f"{tool.replace('_', ' ')} · stopped", "failed")
    error = str(value.get("error") or value.get("message") or "").strip()
    first = error.split("\n", 1)[0]
    first = re.split(r"(?<=[.;])\s", first, maxsplit=1)[0]
    return ToolReading(
        f"{tool.replace('_', ' ')} failed" + (f": {first}" if first else ""), "failed"
    )


def _argument_commands(arguments: Mapping[str, Any]) -> dict[str, list[str]]:
    """The commands of each device in a command tool's arguments (lines split)."""
    entries = arguments.get("devices")
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    commands: dict[str, list[str]] = {}
    for entry in entries:
        if entry.get("device"):
            lines = [
                line.strip()
                for command in entry.get("commands") or []
                if isinstance(command, str)
                for line in command.splitlines()
                if line.strip()
            ]
            commands.setdefault(str(entry["device"]), []).extend(lines)
    return commands


# -- lab changes -----------------------------------------------------------------------------


def _items(
    entries: Sequence[Any], verb: str, describe: Callable[[Mapping[str, Any]], str]
) -> ToolReading:
    entries = [e for e in entries if isinstance(e, dict)]
    done = [describe(e) for e in entries if e.get("status") == "success"]
    failed = [describe(e) for e in entries if e.get("status") != "success"]
    parts = [f"{verb} {_names(done)}"] if done else []
    if failed:
        parts.append(f"{_names(failed)} failed" if done else f"not {verb}: {_names(failed)}")
    outcome: Outcome = "ok" if not failed else ("partial" if done else "failed")
    return ToolReading(" · ".join(parts) or f"{verb} nothing", outcome)


def _created(entry: Mapping[str, Any]) -> str:
    name = entry.get("name") or "a node"
    template = entry.get("template")
    return f"{name} ({str(template).lower()})" if template else str(name)


def _linked(entry: Mapping[str, Any]) -> str:
    return f"{entry.get('a')} {entry.get('a_port')} - {entry.get('b')} {entry.get('b_port')}"


def _renamed(entry: Mapping[str, Any]) -> str:
    return f"{entry.get('name')} to {entry.get('new_name')}"


# -- text ------------------------------------------------------------------------------------


def _what(commands: Sequence[str], names: Sequence[str]) -> str:
    """ "`ip 10.0.0.1/24` on PC1" ("configuration of PC1" for lines held back)."""
    shown = [command for command in commands if command != HIDDEN_COMMAND]
    if len(shown) == len(commands):
        return f"{_commands_text(commands)} on {_names(names)}"
    if not shown:
        return f"configuration of {_names(names)}"
    return f"{_commands_text(shown)} and configuration on {_names(names)}"


def _commands_text(commands: Sequence[str], shown: int = 3) -> str:
    """ "`ip 10.0.0.1/24`; `save`" (the first `shown`, then "and N more")."""
    text = "; ".join(f"`{_short(c)}`" for c in commands[:shown])
    if len(commands) > shown:
        text += f" and {len(commands) - shown} more"
    return text


def _names(names: Sequence[str]) -> str:
    if len(names) <= MAX_NAMES:
        return ", ".join(names)
    return ", ".join(names[:MAX_NAMES]) + f" and {len(names) - MAX_NAMES} more"


def _short(command: str) -> str:
    command = " ".join(command.split())
    return (
        command if len(command) <= MAX_COMMAND_CHARS else command[: MAX_COMMAND_CHARS - 3] + "..."
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _parse(output: str) -> Any:
    try:
        return json.loads(output)
    except ValueError:
        return output
