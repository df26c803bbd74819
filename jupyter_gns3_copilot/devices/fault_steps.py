"""What putting a fault into a lab does to its devices, with the instructor's rights (the
command policy does not screen these: a fault is the instructor's, never a student's or
the model's): lines typed on a console, a cable pulled, a link's packet filters set, a
node stopped, an interface's MTU set at a restart; and what takes a fault out again:
configurations saved first and read back by a restart, a cable made anew, a node started,
the MTU taken out at another restart. Each raises `FaultStepError` with a
sentence an instructor understands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from ..console import ConsoleError
from ..console.models import CommandResult
from ..console.pool import abortable
from ..gns3 import GNS3Error, Link, Node
from ..gns3.nodes import with_kernel_argument
from .access import Devices
from .saving import save_configurations

_T = TypeVar("_T")
STEP_TIMEOUT = 30.0
"""Seconds one typed line may take."""
BOOT_TIMEOUT = 180.0
"""Seconds a restarted node may take to answer on its console (an emulated router boots
in 10-20 s, much slower on a busy machine)."""


class FaultStepError(RuntimeError):
    """A step of a fault could not be done; `str()` says which and why."""


async def type_lines(
    devices: Devices,
    project_id: str,
    node_name: str,
    lines: list[str],
    *,
    abort: asyncio.Event | None = None,
) -> list[CommandResult]:
    """`lines` typed on `node_name`'s console: in configuration mode (entered and left
    again) when its dialect has one, else one by one. A line the device rejects is an
    error: a fault that half applies would grade the wrong thing."""
    node = await _node(devices, project_id, node_name, abort)
    try:
        target = await devices.console_target(node, abort)
        async with devices.consoles.session(target, abort_event=abort) as console:
            if console.dialect.config_enter is not None:
                typed = console.configure(lines, timeout=STEP_TIMEOUT)
                results = await abortable(typed, abort)
            else:
                results = []
                for line in lines:
                    sent = console.send(line, timeout=STEP_TIMEOUT, confirm=True)
                    results.append(await abortable(sent, abort))
    except ConsoleError as exc:
        raise FaultStepError(f"{node_name}'s console: {exc}") from None
    refused = [r for r in results if not r.ok]
    if refused:
        said = refused[0].error or refused[0].output.strip()
        raise FaultStepError(f"{node_name} refused `{refused[0].command}`: {said}")
    return results


async def restart_node(devices: Devices, project_id: str, node_name: str) -> None:
    """Stop and start `node_name` again: it comes back with its saved configuration."""
    node = await _node(devices, project_id, node_name, None)
    try:
        await devices.gns3.stop_node(project_id, node.node_id)
        await devices.gns3.start_node(project_id, node.node_id)
    except GNS3Error as exc:
        raise FaultStepError(f"restarting {node_name}: {exc}") from None


async def set_mtu(
    devices: Devices,
    project_id: str,
    node_name: str,
    interface: str,
    mtu: int | None,
    *,
    abort: asyncio.Event | None = None,
) -> None:
    """Give `node_name`'s `interface` an MTU of `mtu` bytes from its next boot (None: its
    own again), by the `mtu.<interface>=` argument of its kernel command line (a lab kit
    router's init reads it), and restart it on its saved configuration. Setting an MTU
    saves the configuration first, so the node comes back as it was but for the MTU;
    taking it out does not, so the node comes back as saved then (what was typed since,
    a student's fix included, is dropped, as when a fault's lines are undone). Returns
    once its console answers (`BOOT_TIMEOUT`)."""
    node = await _node(devices, project_id, node_name, abort)
    line = node.properties.get("kernel_command_line")
    if not isinstance(line, str) or not line.strip():
        raise FaultStepError(
            f"{node_name} has no kernel command line to set an MTU on: only the lab kit's "
            "routers read one"
        )
    value = None if mtu is None else str(mtu)
    if mtu is not None:
        for saved in await save_configurations(devices, project_id, abort, nodes=[node_name]):
            if not saved.saved:
                raise FaultStepError(f"saving {node_name}'s configuration: {saved.problem}")
    try:
        await devices.gns3.stop_node(project_id, node.node_id)
        properties = {"kernel_command_line": with_kernel_argument(line, f"mtu.{interface}", value)}
        await devices.gns3.update_node(project_id, node.node_id, properties=properties)
        await devices.gns3.start_node(project_id, node.node_id)
        target = await devices.console_target(node, abort)
        ready = devices.consoles.wait_ready(target, timeout=BOOT_TIMEOUT, abort_event=abort)
        await abortable(ready, abort)
    except GNS3Error as exc:
        raise FaultStepError(f"restarting {node_name} with its new MTU: {exc}") from None
    except ConsoleError as exc:
        raise FaultStepError(f"{node_name} did not come back: {exc}") from None


async def start_node(devices: Devices, project_id: str, node_name: str) -> None:
    """Start `node_name` (again)."""
    node = await _node(devices, project_id, node_name, None)
    try:
        await devices.gns3.start_node(project_id, node.node_id)
    except GNS3Error as exc:
        raise FaultStepError(f"starting {node_name}: {exc}") from None


async def recable(devices: Devices, project_id: str, ends: tuple[str, str, str, str]) -> Link:
    """Replace the link between the ports `ends` by a new one, up and unfiltered: GNS3
    3.0.6 neither resumes a suspended link to a QEMU or VPCS node nor clears its filters
    (its compute only sets them)."""
    link = await _link(devices, project_id, ends)
    await _gns3(devices.gns3.delete_link(project_id, link.link_id), ends)
    return await _gns3(devices.gns3.create_link(project_id, *ends), ends)


async def pull_cable(devices: Devices, project_id: str, ends: tuple[str, str, str, str]) -> Link:
    """Suspend the link between the ports `ends` (a, a_port, b, b_port)."""
    link = await _link(devices, project_id, ends)
    return await _gns3(devices.gns3.suspend_link(project_id, link.link_id), ends)


async def filter_link(
    devices: Devices,
    project_id: str,
    ends: tuple[str, str, str, str],
    filters: dict[str, list[int]],
) -> Link:
    """Set the link's packet filters to `filters`; an error when GNS3 cannot filter it."""
    link = await _link(devices, project_id, ends)
    offered = await _gns3(devices.gns3.link_filter_types(project_id, link.link_id), ends)
    missing = sorted(set(filters) - set(offered))
    if missing:
        raise FaultStepError(
            f"GNS3 cannot apply {', '.join(missing)} on {_text(ends)}: neither end filters "
            "traffic (e.g. two switches)"
        )
    return await _gns3(devices.gns3.set_link_filters(project_id, link.link_id, filters), ends)


async def stop_node(
    devices: Devices, project_id: str, node_name: str, abort: asyncio.Event | None = None
) -> None:
    """Stop the node called `node_name`."""
    node = await _node(devices, project_id, node_name, abort)
    try:
        await abortable(devices.gns3.stop_node(project_id, node.node_id), abort)
    except GNS3Error as exc:
        raise FaultStepError(f"stopping {node_name}: {exc}") from None


async def _node(devices: Devices, project_id: str, name: str, abort: asyncio.Event | None) -> Node:
    nodes = await devices.nodes(project_id, abort)
    node = next((n for n in nodes if n.name == name), None)
    if node is None:
        raise FaultStepError(f"the project has no node {name!r}")
    return node


async def _link(devices: Devices, project_id: str, ends: tuple[str, str, str, str]) -> Link:
    return await _gns3(devices.gns3.find_link(project_id, *ends), ends)


async def _gns3(call: Awaitable[_T], ends: tuple[str, str, str, str]) -> _T:
    try:
        return await call
    except GNS3Error as exc:
        raise FaultStepError(f"{_text(ends)}: {exc}") from None


def _text(ends: tuple[str, str, str, str]) -> str:
    a, a_port, b, b_port = ends
    return f"{a} {a_port} - {b} {b_port}"
