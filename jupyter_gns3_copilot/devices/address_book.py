"""`read_addresses`: the IPv4 addresses of a project's running devices, read on their
consoles, and `addresses_text`, the lines `%copilot show topology` adds under the topology.

Each started node whose console dialect has an address reader (`readers`: VPCS `show
ip`, IOS `show ip interface`, Linux `ip -4 addr show`, FRR `show interface brief`) is
asked once, concurrently through the console pool; the command is screened by the
policy's read-only rules first. A device that cannot be read (stopped, no console, no
reader, no answer) is left out rather than failing the whole read.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping, Sequence

from ..console import ConsoleError, ConsoleTargetError, DialectError
from ..gns3 import GNS3Error, Node
from ..gns3.topology import natural_key, single_line
from .access import Devices
from .readers import ADDRESS_COMMANDS, Address, ReadError, addresses

log = logging.getLogger(__name__)


def _read_in(dialect: str, output: str) -> list[Address]:
    return addresses(output, dialect)


READ_TIMEOUT = 10.0
"""Seconds one device's address command may take."""

_READERS: Mapping[str, tuple[str, Callable[[str], list[Address]]]] = {
    dialect: (command, functools.partial(_read_in, dialect))
    for dialect, command in ADDRESS_COMMANDS.items()
}
"""Each dialect's address command and the reader of its output."""


async def read_addresses(
    devices: Devices, nodes: Sequence[Node], abort: asyncio.Event | None = None
) -> dict[str, list[Address]]:
    """The addresses of each readable node of `nodes` (module docstring), by node name."""
    read = await asyncio.gather(*(_read(devices, node, abort) for node in nodes))
    return {node.name: found for node, found in zip(nodes, read, strict=True) if found is not None}


async def _read(devices: Devices, node: Node, abort: asyncio.Event | None) -> list[Address] | None:
    if node.status != "started":
        return None
    try:
        target = await devices.console_target(node, abort)
    except (ConsoleTargetError, DialectError, GNS3Error):
        return None
    reader = _READERS.get(target.dialect)
    if reader is None:
        return None
    command, parse = reader
    if devices.policy.check(command, dialect=target.dialect, read_only=True):
        return None
    try:
        result = await devices.send(target, command, timeout=READ_TIMEOUT, abort=abort)
        return parse(result.output) if result.ok else None
    except (ConsoleError, ReadError) as exc:
        log.info("Addresses of %s not read: %s", node.name, exc)
        return None


def addresses_text(found: Mapping[str, list[Address]]) -> str:
    """`Addresses:` and one line per device, in natural name order: `R1  eth0
    10.0.12.1/24, eth1 10.0.13.1/24` (`none` for a device without any); "" when no
    device was read. Ends with a newline."""
    if not found:
        return ""
    names = sorted(found, key=natural_key)
    width = max(len(single_line(name)) for name in names)
    lines = ["Addresses:"]
    for name in names:
        listed = ", ".join(f"{a.interface} {a.address.with_prefixlen}" for a in found[name])
        lines.append(f"  {single_line(name).ljust(width)}  {listed or 'none'}")
    return "\n".join(lines) + "\n"
