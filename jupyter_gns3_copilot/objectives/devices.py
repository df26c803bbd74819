"""The lab's devices as checks see them, for one check run.

Nodes and links are read from GNS3 once per run; commands go to the consoles through the
shared pool (one lock per console: checks of one device take turns, devices run in
parallel), each screened by the command policy's read-only rules first, so a check never
changes a device whatever its file says. A command asked by several checks of a run is
typed once (`fresh=True` types it again: a retried ping). Waits end with `ConsoleAborted`
once the run's abort event is set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from ..console import (
    ConsoleAborted,
    ConsoleError,
    ConsoleTarget,
    ConsoleTargetError,
    DialectError,
)
from ..console.models import CommandResult
from ..console.pool import abortable
from ..devices.access import Devices
from ..devices.readers import ADDRESS_COMMANDS, Address, ReadError, addresses
from ..gns3 import GNS3Error, Link, Node

COMMAND_TIMEOUT = 30.0
"""Seconds one command of a check may take to answer."""

_T = TypeVar("_T")


class Undecided(Exception):
    """A check that cannot be decided now; `str()` says why, for a student."""


class DeviceAccess:
    """Read access to one project's devices during one check run (module docstring):
    `devices` reached for the project `project_id`, every wait stopped by `abort`."""

    def __init__(
        self, devices: Devices, project_id: str, abort: asyncio.Event | None = None
    ) -> None:
        self.devices = devices
        self.project_id = project_id
        self.abort = abort
        self._nodes: asyncio.Task[dict[str, Node]] | None = None
        self._links: asyncio.Task[list[Link]] | None = None
        self._commands: dict[tuple[str, str], asyncio.Task[CommandResult]] = {}
        self._captures: dict[str, asyncio.Lock] = {}

    async def node(self, name: str) -> Node:
        """The node called `name` (exact, else case-insensitive); `Undecided` when none."""
        nodes = await self._node_map()
        node = nodes.get(name) or next(
            (n for key, n in nodes.items() if key.lower() == name.lower()), None
        )
        if node is None:
            known = ", ".join(sorted(nodes)) or "none"
            raise Undecided(f"there is no node called {name} in this project (nodes: {known})")
        return node

    async def links(self) -> list[Link]:
        """The project's links."""
        if self._links is None:
            self._links = asyncio.ensure_future(self._read_links())
        return await asyncio.shield(self._links)

    async def node_names(self) -> dict[str, str]:
        """Node ids to names."""
        nodes = await self._node_map()
        return {node.node_id: node.name for node in nodes.values()}

    async def dialect(self, name: str) -> str:
        """The console dialect of the node called `name`."""
        return (await self.target(name)).dialect

    async def target(self, name: str) -> ConsoleTarget:
        """The console of the node called `name` (the devices' `console_targets` first);
        `Undecided` when the node is stopped or its console cannot be used."""
        if name in self.devices.console_targets:
            return self.devices.console_targets[name]
        node = await self.node(name)
        if node.status != "started":
            raise Undecided(f"{node.name} is {node.status}; start it to check this")
        try:
            return await self.devices.console_target(node, self.abort)
        except (ConsoleTargetError, DialectError) as exc:
            raise Undecided(f"{node.name}'s console cannot be used: {exc}") from None

    async def run(self, name: str, command: str, *, fresh: bool = False) -> CommandResult:
        """`command`'s result on the node called `name` (typed once per run unless
        `fresh`). `Undecided` when the node is stopped, the command is not read-only, or
        the console does not answer."""
        key = (name.lower(), command)
        task = self._commands.get(key)
        if task is None or fresh:
            task = asyncio.ensure_future(self._send(name, command))
            self._commands[key] = task
        return await asyncio.shield(task)

    async def addresses(self, name: str) -> tuple[str, list[Address]]:
        """The command that read them and the IPv4 addresses of the node called `name`."""
        dialect = await self.dialect(name)
        command = ADDRESS_COMMANDS.get(dialect)
        if command is None:
            raise Undecided(f"the copilot cannot read the addresses of {dialect} devices")
        result = await self.run(name, command)
        try:
            return command, addresses(result.output, dialect)
        except ReadError as exc:
            raise Undecided(f"{name}: {exc}") from None

    async def find_link(self, a: str, a_port: str, b: str, b_port: str) -> Link:
        """The project's link between the two named ports; `GNS3NotFound` naming what
        exists."""
        return await self.until_aborted(
            self.devices.gns3.find_link(self.project_id, a, a_port, b, b_port)
        )

    async def until_aborted(self, awaitable: Awaitable[_T]) -> _T:
        """Await `awaitable`, or cancel it and raise `ConsoleAborted` once the run's abort
        event is set."""
        return await abortable(awaitable, self.abort)

    def capture_lock(self, link_id: str) -> asyncio.Lock:
        """The lock a check holds while it captures the link: two checks starting and
        stopping one link's capture at once would cut each other's capture short."""
        return self._captures.setdefault(link_id, asyncio.Lock())

    def close(self) -> None:
        """Cancel what is still running (a run stopped early)."""
        for task in [*self._commands.values(), self._nodes, self._links]:
            if task is not None and not task.done():
                task.cancel()

    # -- internals -----------------------------------------------------------------------

    async def _send(self, name: str, command: str) -> CommandResult:
        target = await self.target(name)
        refused = self.devices.policy.check(command, dialect=target.dialect, read_only=True)
        if refused:
            raise Undecided(f"`{command}` would change {target.name}; a check only reads")
        try:
            return await self.devices.send(
                target, command, timeout=COMMAND_TIMEOUT, abort=self.abort
            )
        except ConsoleAborted:
            raise
        except ConsoleError as exc:
            raise Undecided(await self._unanswered(target.name, command, exc)) from None

    async def _unanswered(self, name: str, command: str, problem: ConsoleError) -> str:
        """Why `command` got no answer from `name`, for a student: the node went down
        during the check (its status read again from GNS3), else what the console did."""
        try:
            nodes = await self.devices.nodes(self.project_id, self.abort)
        except GNS3Error:
            nodes = []
        status = next((node.status for node in nodes if node.name == name), "started")
        if status != "started":
            return (
                f"{name} is {status} now: it went down during the check; start it and check again"
            )
        return f"{name}'s console did not answer `{command}`: {problem}"

    async def _node_map(self) -> dict[str, Node]:
        if self._nodes is None:
            self._nodes = asyncio.ensure_future(self._read_nodes())
        return await asyncio.shield(self._nodes)

    async def _read_nodes(self) -> dict[str, Node]:
        try:
            nodes = await self.devices.nodes(self.project_id, self.abort)
        except GNS3Error as exc:
            raise Undecided(f"GNS3 did not list the nodes: {exc}") from None
        return {node.name: node for node in nodes}

    async def _read_links(self) -> list[Link]:
        try:
            return await self.devices.links(self.project_id, self.abort)
        except GNS3Error as exc:
            raise Undecided(f"GNS3 did not list the links: {exc}") from None
