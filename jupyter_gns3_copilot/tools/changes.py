"""What a tool call would change if it ran: the lab, a device's configuration, or nothing.

`planned_change(ctx, name, arguments)` answers before the call runs, so a change can wait
for a person's approval (`agent.approval_policy`): a tool that changes the GNS3 project
(`ToolSpec.changes_lab`: nodes, links, node states, snapshots, link faults) changes the
lab; a console command tool changes a device when one of its lines is no diagnostic, as
the command policy judges it in the device's dialect (`Screening.configuring`): VPCS
`ip`, `set`, `clear`, `save`, `load`, `dhcp`; every IOS configuration-mode line and exec
commands such as `write memory` or `clear counters`; Linux `ip addr add`, `ifconfig` with
settings, a redirection into a file. `show`, `ping`, `trace` / `traceroute` and the other
diagnostics change nothing. A tool that changes the lab only with some arguments or in
some states of the lab says so itself (`ToolSpec.plans`): `create_snapshot` with
`stop_running` changes it when nodes are running (it stops them and starts them again),
and its plan names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .base import ToolContext
from .modes import mode_allows
from .registry import TOOLS, unallowed_work


@dataclass(frozen=True)
class PlannedChange:
    """What a call would change: the lab (`lab`), and the configuring command lines of
    each device (`devices`, command tools only; devices with none left out); `plan`: the
    tool's own words for it, when it has some (`ToolSpec.plans`)."""

    lab: bool = False
    devices: Mapping[str, list[str]] = field(default_factory=dict)
    plan: str | None = None

    @property
    def changes(self) -> bool:
        """Whether the call changes the lab or a device's configuration."""
        return self.lab or any(self.devices.values())


async def planned_change(
    ctx: ToolContext, name: str, arguments: Mapping[str, Any] | Any
) -> PlannedChange | None:
    """What a call of `name` with `arguments` would change in `ctx.mode`; None when it
    would not run at all (an unknown tool, one the mode does not allow, or whose other
    tools' work with these arguments it does not allow, invalid arguments: `execute_tool`
    refuses it without running anything)."""
    spec = TOOLS.get(name)
    if spec is None or not mode_allows(ctx.mode, name) or not isinstance(arguments, Mapping):
        return None
    try:
        args = spec.args_model.model_validate(arguments)
    except ValidationError:
        return None
    if unallowed_work(ctx.mode, spec, args) is not None:
        return None
    devices = await spec.configures(ctx, args) if spec.configures is not None else {}
    if spec.plans is not None:
        plan = await spec.plans(ctx, args)
        return PlannedChange(lab=spec.changes_lab or plan is not None, plan=plan)
    return PlannedChange(lab=spec.changes_lab, devices=devices)
