"""Saving what the running devices were configured with, so a snapshot (taken of a stopped
lab) or a restart keeps it: VPCS `save` (its startup file, read when it starts again),
`write memory` on FRR and IOS routers, `save-config` on the lab kit's Linux router (its
addresses, routes and forwarding, replayed when it boots). Another Linux shell has no
`save-config`: it is listed as not saved, with the shell's answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from pydantic import BaseModel

from ..console import ConsoleTargetError, DialectError
from .access import Devices

SAVE_COMMANDS = {
    "vpcs": "save",
    "frr": "write memory",
    "cisco_ios": "write memory",
    "linux": "save-config",
}
"""The command that saves a device's configuration, by console dialect."""


class SavedConfiguration(BaseModel):
    """One running device: `saved` when its save command succeeded, else `problem` says
    why not (no way to save on its dialect, the device's answer)."""

    node: str
    saved: bool
    problem: str | None = None


async def save_configurations(
    devices: Devices,
    project_id: str,
    abort: asyncio.Event | None = None,
    *,
    nodes: Collection[str] | None = None,
) -> list[SavedConfiguration]:
    """Save the configuration of every started node of `project_id` that has a console
    (of those named `nodes`, when given), in node order (module docstring). Nodes without
    a console (switches) are left out."""
    jobs = []
    unsaved: list[SavedConfiguration] = []
    for node in await devices.nodes(project_id, abort):
        if node.status != "started" or node.console is None:
            continue
        if nodes is not None and node.name not in nodes:
            continue
        try:
            target = await devices.console_target(node, abort)
        except (ConsoleTargetError, DialectError):
            continue
        command = SAVE_COMMANDS.get(target.dialect or "")
        if command is None:
            problem = f"a {target.dialect} console has no command saving its configuration"
            unsaved.append(SavedConfiguration(node=node.name, saved=False, problem=problem))
        else:
            jobs.append((target, [command]))
    results = await devices.consoles.run_many(jobs, abort_event=abort)
    saved = [
        SavedConfiguration(
            node=r.device_name,
            saved=r.status == "success",
            problem=None if r.status == "success" else (r.error or r.output.strip()),
        )
        for r in results
    ]
    return sorted([*saved, *unsaved], key=lambda s: s.node)
