"""What a tool result means to a person: one summary line, the outcome of the check, and a
note for the student when the copilot was not allowed to act.

`read_result(tool, output, mode=..., arguments=...)` reads a tool's result (the JSON text the
model sees, unchanged) into a `ToolReading`, which the chat's `tool_end` event carries:

- `summary`: "ran `show ip` on PC1, PC2 · 2 ok", "created PC3 (vpcs)",
  "linked PC3 e0 - Switch1 e2", "started PC1, PC2";
- `outcome`: what happened to the check, not only to the delivery: `ok`, `partial`,
  `failed` (a device failed, or its output shows a failed reachability check: 100% loss,
  "host (...) not reachable", "Destination host unreachable", ping timeouts with no reply,
  IOS "Success rate is 0 percent"), `refused` (the mode or the command policy kept the
  copilot from acting, or the user declined the change or left it undecided; nothing was
  done);
- `note`: for a refusal, a friendly line for the student ("Teaching mode: I can't change
  PC2's address; here is how you would do it"), never the text written for the model.

No Jupyter, no LangChain: the service and the direct tool runs call it once per result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .modes import TEACHING

Outcome = Literal["ok", "partial", "failed", "refused"]

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
}
LIMIT_TEXT = "Tool call limit reached"
"""How the result of a call beyond `max_tool_calls` starts (plain text)."""
MAX_NAMES = 6
MAX_COMMAND_CHARS = 60

# A reachability check that got no answer at all.
_CHECK_FAILED = re.compile(
    r"100(?:\.0+)?% packet loss|not reachable|destination host unreachable"
    r"|success rate is 0 percent|request timed out",
    re.IGNORECASE,
)
_PROBE_TIMEOUT = re.compile(r"icmp_seq=\d+\s+timeout", re.IGNORECASE)
_PROBE_REPLY = re.compile(r"bytes from|success rate is [1-9]\d* percent|\bttl=\d+", re.IGNORECASE)
_SUCCESS_RATE = re.compile(r"success rate is (\d+) percent", re.IGNORECASE)
"""IOS ping's summary line."""
_DEVICE_STATUS = {"success": "ok", "partial_success": "partial", "failed": "failed"}


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
    `arguments` (the call's, when known) name the devices of a refused call."""
    value = _parse(output)
    status = value.get("status") if isinstance(value, dict) else None
    if status == "refused":
        return _refused_call(tool, mode, arguments or {})
    if status == "declined":
        why = "not approved in time" if value.get("decision") == "timeout" else "you declined"
        return ToolReading(f"{tool.replace('_', ' ')} · not done: {why}", "refused")
    if status in ("error", "aborted"):
        return _failed_call(tool, value)
    if status == "not_executed" or (isinstance(value, str) and value.startswith(LIMIT_TEXT)):
        return ToolReading(f"{tool.replace('_', ' ')} · not run (limit reached)", "failed")
    if tool in COMMAND_TOOLS and isinstance(value, list):
        return _commands(value, mode)
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
    outcome: Outcome = "failed" if status == "failed" else "ok"
    if status == "partial_success":
        outcome = "partial"
    return ToolReading(tool.replace("_", " "), outcome)


# -- commands on devices ---------------------------------------------------------------------


def _commands(entries: Sequence[Any], mode: str | None) -> ToolReading:
    devices = [e for e in entries if isinstance(e, dict) and "device_name" in e]
    outcomes = [_device_outcome(device) for device in devices]
    stopped = sum(1 for device in devices if _stopped(device))
    names = [str(device["device_name"]) for device in devices]
    command_sets = {tuple(device.get("commands") or ()) for device in devices}
    if len(command_sets) == 1 and (commands := next(iter(command_sets))):
        what = "; ".join(f"`{_short(c)}`" for c in commands[:3])
        if len(commands) > 3:
            what += f" and {len(commands) - 3} more"
    else:
        what = "commands"
    summary = f"ran {what} on {_names(names)}"
    counted = {o: outcomes.count(o) for o in ("ok", "partial", "failed", "refused")}
    counted["failed"] -= stopped
    counts = [f"{n} {o}" for o, n in counted.items() if n]
    if stopped:
        counts.append(f"{stopped} stopped")
    if counts:
        summary += " · " + ", ".join(counts)
    outcome = _overall(outcomes)
    note = None
    refused = [d for d in devices if d.get("blocked_commands")]
    if refused:
        note = _blocked_note(refused, mode)
    return ToolReading(summary, outcome, note)


def _stopped(device: Mapping[str, Any]) -> bool:
    """Whether the device's commands were cut short by an abort (a failed device)."""
    return device.get("status") == "failed" and "aborted" in str(device.get("error") or "")


def _device_outcome(device: Mapping[str, Any]) -> Outcome:
    blocked = device.get("blocked_commands") or []
    sent = [c for c in device.get("commands") or [] if c not in {b.get("command") for b in blocked}]
    if blocked and not sent:
        return "refused"
    status = _DEVICE_STATUS.get(str(device.get("status")), "failed")
    check = _check_outcome(str(device.get("output") or ""))
    if status == "failed" or check == "failed":
        return "failed"
    if status == "partial" or check == "partial":
        return "partial"
    return "ok"


def _check_outcome(output: str) -> Outcome:
    """What the output says about reachability checks in it (ok when it has none)."""
    rates = [int(rate) for rate in _SUCCESS_RATE.findall(output)]
    if any(0 < rate < 100 for rate in rates):
        return "partial"
    replies = bool(_PROBE_REPLY.search(output))
    lost = bool(_CHECK_FAILED.search(output) or _PROBE_TIMEOUT.search(output))
    if not lost:
        return "ok"
    return "partial" if replies else "failed"


def _overall(outcomes: Sequence[Outcome]) -> Outcome:
    kinds = set(outcomes)
    if not kinds or kinds == {"ok"}:
        return "ok"
    if kinds == {"refused"}:
        return "refused"
    if kinds <= {"failed", "refused"}:
        return "failed"
    return "partial"


def _blocked_note(devices: Sequence[Mapping[str, Any]], mode: str | None) -> str:
    commands = [str(b.get("command", "")) for d in devices for b in d.get("blocked_commands") or []]
    action = _command_action([str(d["device_name"]) for d in devices], commands)
    if mode == TEACHING:
        return f"Teaching mode: I can't {action}; here is how you would do it."
    return f"The command policy kept me from doing this: {action}."


def _command_action(names: Sequence[str], commands: Sequence[str]) -> str:
    """What the student asked for, in their words: "change PC2's address" for VPCS `ip`."""
    if commands and all(c.split()[:1] == ["ip"] for c in commands):
        if len(names) == 1:
            return f"change {names[0]}'s address"
        return f"change the addresses of {_names(names)}"
    shown = "; ".join(f"`{_short(c)}`" for c in commands[:2]) or "that command"
    return f"run {shown} on {_names(names)}"


# -- refusals and failures -----------------------------------------------------------------------


def _refused_call(tool: str, mode: str | None, arguments: Mapping[str, Any]) -> ToolReading:
    action = REFUSED_ACTIONS.get(tool, f"use {tool.replace('_', ' ')}")
    devices, commands = _argument_commands(arguments)
    if devices and tool == "run_vpcs_commands":
        action = _command_action(devices, commands)
    elif devices and tool in COMMAND_TOOLS:
        action += f" of {_names(devices)}"
    who = "Teaching mode" if mode == TEACHING else "This mode"
    return ToolReading(
        f"not allowed in {who.lower()}: {tool.replace('_', ' ')}",
        "refused",
        f"{who}: I can't {action}; here is how you would do it.",
    )


def _failed_call(tool: str, value: Mapping[str, Any]) -> ToolReading:
    if value.get("status") == "aborted":
        return ToolReading(f"{tool.replace('_', ' ')} · stopped", "failed")
    error = str(value.get("error") or value.get("message") or "").strip()
    first = error.split("\n", 1)[0]
    first = re.split(r"(?<=[.;])\s", first, maxsplit=1)[0]
    return ToolReading(
        f"{tool.replace('_', ' ')} failed" + (f": {first}" if first else ""), "failed"
    )


def _argument_commands(arguments: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The devices and all their commands in a command tool's arguments."""
    entries = arguments.get("devices")
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    devices = [str(e["device"]) for e in entries if e.get("device")]
    commands = [str(c) for e in entries for c in e.get("commands") or [] if isinstance(c, str)]
    return devices, commands


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
