"""Console commands on many devices: `run_show_commands`, `run_config_commands`,
`run_vpcs_commands`.

Each answers with one entry per requested device, in the order asked, in the console
layer's `DeviceResult` shape (`device_name`, `status`, `output`, `error`, `commands`) plus
`blocked_commands` (`[{command, reason}]`) and `blocked_info` when the command policy kept
commands back, and `capped_commands` (`[{command, sent, reason}]`) and `capped_info` when
teaching mode bounded a diagnostic (e.g. `ping ... -c 99999` sent as `-c 10`), `checks`
when pings or traces ran (each read in the device's dialect by `reachability`: sent,
answered, what went wrong), and the device's `outcome` (`ok`, `partial`, `failed`,
`refused`: a delivered ping that got no answer is `failed`; see `device_outcome`). Devices run
concurrently through the console pool (one lock per console); commands of one device run
in order. Multi-line strings are split into lines first.

Bounds, checked on the arguments (the model's calls and the direct tool route alike): at
most `MAX_DEVICES_PER_CALL` devices, `MAX_COMMANDS_PER_DEVICE` command lines per device,
`MAX_COMMAND_CHARS` characters per line. A command that outlives `command_timeout`, or an
aborted call, is interrupted on the device (see `console.session`) and its result says
whether the console is back at its prompt. While a command runs, `progress` events carry
its output so far (the last `PROGRESS_OUTPUT_CHARS` characters, at most twice a second).

Configuration: `run_config_commands` enters configuration mode through the console session
and leaves it once at the end. `configure terminal`, `end` and `exit` in the list are
handled by the tool rather than typed blindly: `configure terminal` when already in
configuration mode and `exit` at its top level do nothing (so `exit` chains cannot walk
out of the session), `end` leaves configuration mode (commands after it run at the exec
prompt, e.g. `write memory`), and an `exit` outside configuration mode is refused.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pydantic import Field, field_validator

from ..console import (
    DEFAULT_CONCURRENCY,
    DIALECTS,
    MAX_COMMAND_CHARS,
    BlockedCommand,
    CommandResult,
    ConsoleError,
    ConsoleTarget,
    ConsoleTargetError,
    DeviceResult,
    DialectError,
    dialect_by_name,
)
from ..console.pool import CommandOutputCallback, device_result
from ..device_outcome import judge_device
from ..devices.policy import IOS_LIKE, CappedCommand, CommandContext, config_mode_action
from ..devices.reachability import Check, read_check
from ..gns3 import GNS3Error
from .base import ToolAborted, ToolArguments, ToolContext, ToolSpec
from .modes import TEACHING

ToolKind = Literal["show", "config", "vpcs"]

MAX_DEVICES_PER_CALL = 64
"""Devices one call may name: above any classroom lab."""
MAX_COMMANDS_PER_DEVICE = 100
"""Command lines per device and call: a whole router configuration fits."""
PROGRESS_OUTPUT_CHARS = 2000
"""How much of a running command's output (its end) one progress event carries."""


class DeviceCommandsArgs(ToolArguments):
    device: str = Field(min_length=1, max_length=200, description="Node name, e.g. 'R1'.")
    commands: list[str] = Field(
        min_length=1,
        max_length=MAX_COMMANDS_PER_DEVICE,
        description="Commands in order, one per item.",
    )

    @field_validator("commands")
    @classmethod
    def _bounded(cls, commands: list[str]) -> list[str]:
        lines = 0
        for number, command in enumerate(commands, 1):
            for line in command.splitlines() or [""]:
                if len(line) > MAX_COMMAND_CHARS:
                    raise ValueError(
                        f"command {number} has a line of {len(line)} characters; a console "
                        f"command may have at most {MAX_COMMAND_CHARS}"
                    )
                lines += 1
        if lines > MAX_COMMANDS_PER_DEVICE:
            raise ValueError(
                f"{lines} command lines for one device; at most {MAX_COMMANDS_PER_DEVICE} "
                "per call (split the work into several calls)"
            )
        return commands


class ShowCommandsArgs(ToolArguments):
    devices: list[DeviceCommandsArgs] = Field(
        min_length=1,
        max_length=MAX_DEVICES_PER_CALL,
        description="Every device to check, in one call.",
    )


class ConfigCommandsArgs(ToolArguments):
    devices: list[DeviceCommandsArgs] = Field(
        min_length=1,
        max_length=MAX_DEVICES_PER_CALL,
        description="Each device's configuration lines.",
    )


class VpcsCommandsArgs(ToolArguments):
    devices: list[DeviceCommandsArgs] = Field(
        min_length=1,
        max_length=MAX_DEVICES_PER_CALL,
        description="Each VPCS node's commands.",
    )


@dataclass
class _Plan:
    """What to do on one requested device."""

    device: str
    commands: list[str]
    target: ConsoleTarget | None = None
    failure: str | None = None
    allowed: list[str] = field(default_factory=list)
    blocked: list[BlockedCommand] = field(default_factory=list)
    capped: list[CappedCommand] = field(default_factory=list)
    configuring: list[str] = field(default_factory=list)


def split_commands(commands: list[str], dialect: str | None = None) -> list[str]:
    """Each command line on its own, stripped; blank lines dropped, and on IOS-like
    dialects (`cisco_ios`, `frr`) the `!` comment lines of a pasted configuration too."""
    lines = [line.strip() for command in commands for line in command.splitlines()]
    return [line for line in lines if line and not (dialect in IOS_LIKE and line.startswith("!"))]


async def _plan(
    ctx: ToolContext, requests: list[DeviceCommandsArgs], kind: ToolKind
) -> list[_Plan]:
    names = [r.device for r in requests if r.device not in ctx.devices.console_targets]
    nodes = await ctx.lookup_nodes(names)
    if any(node.status != "started" for node in nodes.values()):
        await ctx.nodes(refresh=True)
        nodes = await ctx.lookup_nodes(names)
    plans: list[_Plan] = []
    for request in requests:
        plan = _Plan(device=request.device, commands=split_commands(request.commands))
        plans.append(plan)
        node = nodes.get(request.device)
        if request.device in ctx.devices.console_targets:
            plan.target = ctx.devices.console_targets[request.device]
        elif node is None:
            plan.failure = await ctx.unknown_node_message(request.device)
            continue
        elif node.status != "started":
            plan.failure = (
                f"{node.name} is {node.status}: its console answers only while it runs. "
                "Start it with start_nodes first."
            )
            continue
        else:
            try:
                plan.target = await ctx.console_target(node)
            except (ConsoleTargetError, DialectError) as exc:
                plan.failure = str(exc)
                continue
        plan.failure = _dialect_problem(plan.target, kind)
        if plan.failure:
            continue
        plan.commands = split_commands(request.commands, plan.target.dialect)
        if not plan.commands:
            plan.failure = "No commands given for this device."
            continue
        screening = ctx.policy.screen(
            plan.commands,
            dialect=plan.target.dialect,
            read_only=ctx.mode == TEACHING,
            context="config" if kind == "config" else "exec",
        )
        plan.allowed, plan.blocked = screening.allowed, screening.blocked
        plan.capped, plan.configuring = screening.capped, screening.configuring
    return plans


async def _configuring(ctx: ToolContext, args: Any, kind: ToolKind) -> dict[str, list[str]]:
    """The lines of a call that would change a device, by device: those the command
    policy lets through in `ctx.mode` that are no diagnostics (`Screening.configuring`).
    A device the call cannot reach gets none (nothing would be sent to it). When GNS3
    cannot say which devices they are, a line counts if it changes a device of a dialect
    the tool may drive (VPCS for `run_vpcs_commands`, any otherwise)."""
    try:
        plans = await _plan(ctx, args.devices, kind)
    except GNS3Error:
        context: CommandContext = "config" if kind == "config" else "exec"
        dialects = ["vpcs"] if kind == "vpcs" else list(DIALECTS)
        changing: dict[str, list[str]] = {}
        for request in args.devices:
            lines = split_commands(request.commands)
            changing[request.device] = [
                line
                for line in lines
                if any(
                    ctx.policy.screen(
                        [line], dialect=dialect, read_only=ctx.mode == TEACHING, context=context
                    ).configuring
                    for dialect in dialects
                )
            ]
        return {device: lines for device, lines in changing.items() if lines}
    return {plan.device: plan.configuring for plan in plans if plan.configuring}


def _dialect_problem(target: ConsoleTarget, kind: ToolKind) -> str | None:
    dialect = target.dialect
    if kind == "vpcs" and dialect != "vpcs":
        return (
            f"{target.name} is a {dialect} device; run_vpcs_commands only drives VPCS "
            "consoles. Use run_show_commands (or run_config_commands for configuration)."
        )
    if kind == "config" and dialect_by_name(dialect).config_enter is None:
        other = "run_vpcs_commands" if dialect == "vpcs" else "run_show_commands"
        return (
            f"{target.name} is a {dialect} device without a configuration mode; send its "
            f"commands with {other}."
        )
    return None


def _entry(ctx: ToolContext, plan: _Plan, result: DeviceResult | None) -> dict[str, Any]:
    """The tool's answer for one device: the console result, what the policy held back, the
    reachability checks read from each command's output, and the device's outcome
    (`device_outcome`)."""
    if result is None:
        error = plan.failure or "Every command was blocked by the command policy; nothing was sent."
        result = DeviceResult(
            device_name=plan.device, status="failed", output="", error=error, commands=[]
        )
    checks = _checks(plan, result)
    entry = result.model_dump(exclude_none=True)
    entry["device_name"] = plan.device
    entry["commands"] = plan.commands
    if plan.blocked:
        entry["blocked_commands"] = [blocked.model_dump() for blocked in plan.blocked]
        entry["blocked_info"] = (
            f"{len(plan.blocked)} of {len(plan.commands)} commands were not sent: "
            + "; ".join(f"`{b.command}`: {b.reason}" for b in plan.blocked)
        )
        if entry["status"] == "success":
            entry["status"] = "partial_success"
    if plan.capped:
        entry["capped_commands"] = [capped.model_dump() for capped in plan.capped]
        entry["capped_info"] = "; ".join(
            f"`{c.command}` was sent as `{c.sent}`: {c.reason}" for c in plan.capped
        )
    entry["output"] = _shortened(entry["output"], ctx.max_output_chars)
    if checks:
        entry["checks"] = [check.as_dict() for check in checks]
    entry["outcome"] = judge_device(
        entry["status"],
        [check.outcome for check in checks],
        refused=bool(plan.blocked) and not plan.allowed and plan.failure is None,
    )
    return entry


def _checks(plan: _Plan, result: DeviceResult) -> list[Check]:
    """The pings and traces among the commands that ran, read in the device's dialect."""
    if plan.target is None:
        return []
    checks = (
        read_check(plan.target.dialect, command.command, command.output)
        for command in result.results
        if command.ok
    )
    return [check for check in checks if check is not None]


def _shortened(output: str, limit: int) -> str:
    if len(output) <= limit:
        return output
    head, tail = output[: limit * 2 // 3], output[len(output) - limit // 3 :]
    cut = len(output) - len(head) - len(tail)
    return (
        f"{head}\n[... {cut} characters cut; narrow the command, e.g. with "
        f"'| include WORD' or a more specific show command ...]\n{tail}"
    )


async def _run(ctx: ToolContext, args: Any, kind: ToolKind, tool: str) -> list[dict[str, Any]]:
    report = ctx.reporter(tool)

    def running(target: ConsoleTarget, command: str, output: str) -> None:
        if len(output) > PROGRESS_OUTPUT_CHARS:
            output = "[...]\n" + output[-PROGRESS_OUTPUT_CHARS:]
        report(f"{target.name}> {command}\n{output}", target.name)

    plans = await _plan(ctx, args.devices, kind)
    runnable = [plan for plan in plans if plan.target is not None and plan.allowed]
    if kind == "config":
        slots = asyncio.Semaphore(DEFAULT_CONCURRENCY)

        async def configure(plan: _Plan) -> DeviceResult:
            async with slots:
                return await _configure(ctx, plan, running)

        results = await asyncio.gather(*(configure(plan) for plan in runnable))
    else:
        results = await ctx.consoles.run_many(
            [(plan.target, plan.allowed) for plan in runnable if plan.target is not None],
            per_command_timeout=ctx.command_timeout,
            abort_event=ctx.abort,
            confirm=kind != "show",
            on_output=running,
        )
    by_plan = {id(plan): result for plan, result in zip(runnable, results, strict=True)}
    entries = [_entry(ctx, plan, by_plan.get(id(plan))) for plan in plans]
    for entry in entries:
        report(f"{entry['device_name']}: {entry['status']}", entry["device_name"])
    return entries


async def _configure(ctx: ToolContext, plan: _Plan, running: CommandOutputCallback) -> DeviceResult:
    """Run `plan.allowed` in configuration mode on one device (see the module docstring).

    An `exit` found to be outside configuration mode is added to `plan.blocked`.
    """
    assert plan.target is not None
    target, timeout = plan.target, ctx.command_timeout
    results: list[CommandResult] = []
    considered = list(plan.allowed)
    stop_reason: str | None = None
    try:
        async with ctx.consoles.session(target, abort_event=ctx.abort) as console:
            await ctx.until_aborted(console.enter_config(timeout=timeout))
            for command in plan.allowed:
                prompt = console.prompt
                in_config = console.dialect.in_config_mode(prompt)
                action = config_mode_action(command, target.dialect)
                try:
                    if action == "enter":
                        await ctx.until_aborted(console.enter_config(timeout=timeout))
                        note = "already in" if in_config else "entered"
                        results.append(_handled(command, prompt, f"{note} configuration mode"))
                    elif action == "leave":
                        if in_config:
                            await ctx.until_aborted(console.exit_config(timeout=timeout))
                        note = "left" if in_config else "not in"
                        results.append(_handled(command, prompt, f"{note} configuration mode"))
                    elif action == "exit" and not in_config:
                        considered.remove(command)
                        plan.blocked.append(
                            BlockedCommand(
                                command=command,
                                reason="not in configuration mode at this point; `exit` "
                                "would end the console session",
                            )
                        )
                    elif action == "exit" and prompt.endswith("(config)#"):
                        results.append(_handled(command, prompt, _TOP_LEVEL_EXIT))
                    else:
                        sent = console.send(
                            command,
                            timeout=timeout,
                            confirm=True,
                            on_output=partial(running, target, command),
                        )
                        results.append(await ctx.until_aborted(sent))
                except (ConsoleError, ToolAborted) as exc:
                    stop_reason = str(exc)
                    if isinstance(exc, ToolAborted) and action is None:
                        stop_reason += " " + console.interrupted_state()
                    output = getattr(exc, "partial_output", "")
                    results.append(
                        CommandResult(
                            command=command,
                            prompt=prompt,
                            output=output,
                            ok=False,
                            error=stop_reason,
                            elapsed=0.0,
                        )
                    )
                    break
            else:
                await ctx.until_aborted(console.exit_config(timeout=timeout))
    except (ToolAborted, ConsoleError) as exc:
        stop_reason = str(exc)
    return device_result(target, considered, results, stop_reason)


_TOP_LEVEL_EXIT = (
    "already at the top of configuration mode, not sent; use `end` to leave configuration mode"
)


def _handled(command: str, prompt: str, what: str) -> CommandResult:
    return CommandResult(
        command=command,
        prompt=prompt,
        output=f"[handled by the tool: {what}]",
        ok=True,
        elapsed=0.0,
    )


async def run_show_commands(ctx: ToolContext, args: ShowCommandsArgs) -> list[dict[str, Any]]:
    """Diagnostic commands at the exec prompt of any console device."""
    return await _run(ctx, args, "show", "run_show_commands")


async def run_config_commands(ctx: ToolContext, args: ConfigCommandsArgs) -> list[dict[str, Any]]:
    """Configuration lines, typed inside configuration mode (IOS-like devices)."""
    return await _run(ctx, args, "config", "run_config_commands")


async def run_vpcs_commands(ctx: ToolContext, args: VpcsCommandsArgs) -> list[dict[str, Any]]:
    """Any allowed VPCS command (addresses, gateway, DHCP, save...) on VPCS nodes."""
    return await _run(ctx, args, "vpcs", "run_vpcs_commands")


SPECS = [
    ToolSpec(
        name="run_show_commands",
        description=(
            "Run diagnostic commands on devices' consoles, e.g. 'show ip route', 'ping "
            "10.0.0.2' on routers, 'show ip', 'trace 10.0.0.2' on VPCS. Refused commands are "
            "listed in blocked_commands; no configuration."
        ),
        args_model=ShowCommandsArgs,
        run=run_show_commands,
        configures=partial(_configuring, kind="show"),
    ),
    ToolSpec(
        name="run_config_commands",
        description=(
            "Configure IOS-like devices: send only configuration lines (e.g. 'interface "
            "g0/0', 'no shutdown'), no 'configure terminal' or 'end': the tool enters and "
            "leaves configuration mode. 'do show ...' checks inside it."
        ),
        args_model=ConfigCommandsArgs,
        run=run_config_commands,
        configures=partial(_configuring, kind="config"),
    ),
    ToolSpec(
        name="run_vpcs_commands",
        description=(
            "Run VPCS commands: 'ip ADDRESS/PREFIX GATEWAY', 'dhcp', 'save' (keeps settings "
            "across restarts), and diagnostics ('show ip', 'ping ADDRESS -c 3')."
        ),
        args_model=VpcsCommandsArgs,
        run=run_vpcs_commands,
        configures=partial(_configuring, kind="vpcs"),
    ),
]
