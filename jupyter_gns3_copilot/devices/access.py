"""`Devices`: how the copilot reaches a lab's devices, shared by tools and lab checks.

It holds the GNS3 client, the console pool, the command policy and how consoles are
reached; it tells each node's console (and so its dialect) and types one command on a
console. Tools reach it through their `ToolContext`; lab checks use it directly. Every
wait takes the caller's abort event and raises `ConsoleAborted` once it is set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..console import (
    ConsoleCredentials,
    ConsolePool,
    ConsoleTarget,
    ConsoleTargetError,
    ConsoleTransport,
    DialectError,
)
from ..console.models import CommandResult
from ..console.pool import abortable
from ..gns3 import GNS3Client, Link, Node, Template
from .policy import CommandPolicy
from .template_cache import TemplateCache


@dataclass
class Devices:
    """A lab's devices as the copilot reaches them (module docstring).

    - `gns3`: the GNS3 client (holding its credentials); `consoles`: the console pool (one
      lock per console, kept sessions); `policy`: the command policy (hot-reloadable).
    - `console_credentials`: login/enable secrets for consoles that ask (never reported).
    - `console_transport`: `telnet` to a node's console port, or `websocket` through
      GNS3's authenticated console websocket with the GNS3 client's own token.
    - `console_targets`: consoles by device name that take precedence over the project's
      nodes (devices reached outside GNS3, test doubles).
    - `templates`: GNS3's templates, for the dialect hints of node consoles (shared when
      given, else read once for this object).
    """

    gns3: GNS3Client
    consoles: ConsolePool
    policy: CommandPolicy = field(default_factory=CommandPolicy)
    console_credentials: ConsoleCredentials | None = field(default=None, repr=False)
    console_transport: ConsoleTransport = "telnet"
    console_targets: Mapping[str, ConsoleTarget] = field(default_factory=dict)
    templates: TemplateCache | None = field(default=None, repr=False)
    _templates: TemplateCache = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._templates = self.templates or TemplateCache(self.gns3)

    @property
    def template_cache(self) -> TemplateCache:
        """The template list this object reads (`templates` when given)."""
        return self._templates

    async def nodes(self, project_id: str, abort: asyncio.Event | None = None) -> list[Node]:
        """The project's nodes, read from GNS3 now."""
        return await abortable(self.gns3.list_nodes(project_id), abort)

    async def links(self, project_id: str, abort: asyncio.Event | None = None) -> list[Link]:
        """The project's links, read from GNS3 now."""
        return await abortable(self.gns3.list_links(project_id), abort)

    async def console_target(self, node: Node, abort: asyncio.Event | None = None) -> ConsoleTarget:
        """The console of `node`: `console_targets[node.name]` if given, else built from
        the node (`ConsoleTarget.from_node`, its dialect also told by its template's tags,
        usage notes and `netmiko_device_type`; a console host of 0.0.0.0 means the GNS3
        host) and reached by
        `console_transport` (the websocket with `gns3.access_token`).

        Raises `ConsoleTargetError`/`DialectError` when the node has no usable console.
        """
        override = self.console_targets.get(node.name)
        if override is not None:
            return override
        template = await self.template(node, abort)
        return ConsoleTarget.from_node(
            node,
            server_host=urlsplit(self.gns3.url).hostname,
            credentials=self.console_credentials,
            transport=self.console_transport,
            gns3_url=self.gns3.url,
            token_provider=self.gns3.access_token,
            inherited=template.notes if template is not None else (),
            inherited_netmiko=template.netmiko_device_type if template is not None else None,
        )

    async def template(self, node: Node, abort: asyncio.Event | None = None) -> Template | None:
        """`node`'s template (see `TemplateCache`); None when it has none or GNS3 does not
        list templates."""
        if node.template_id is None:
            return None
        return await abortable(self._templates.get(node.template_id), abort)

    async def dialect(self, node: Node, abort: asyncio.Event | None = None) -> str | None:
        """The node's console dialect as the tools decide it; None for a node without one."""
        try:
            return (await self.console_target(node, abort)).dialect
        except (ConsoleTargetError, DialectError):
            return None

    async def node_dialects(
        self, project_id: str, abort: asyncio.Event | None = None
    ) -> dict[str, str | None]:
        """Each of the project's nodes by name, with its console dialect (None: it has no
        usable console)."""
        nodes = await self.nodes(project_id, abort)
        return {node.name: await self.dialect(node, abort) for node in nodes}

    async def send(
        self,
        target: ConsoleTarget,
        command: str,
        *,
        timeout: float,
        abort: asyncio.Event | None = None,
    ) -> CommandResult:
        """`command` typed on `target`'s console (holding its lock; its answer within
        `timeout` seconds, not confirmed). The caller screens it first. Raises
        `ConsoleError` (`ConsoleAborted` once `abort` is set)."""
        async with self.consoles.session(target, abort_event=abort) as console:
            return await abortable(console.send(command, timeout=timeout, confirm=False), abort)
