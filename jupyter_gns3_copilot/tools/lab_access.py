"""`LabAccess`: the lab handles every project and turn share, and each turn's `ToolContext`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..devices.template_cache import TemplateCache
from .base import ToolContext

if TYPE_CHECKING:
    from ..console import ConsoleCredentials, ConsolePool, ConsoleTransport
    from ..devices.policy import CommandPolicy
    from ..gns3 import GNS3Client
    from .skills import SkillsLibrary


@dataclass
class LabAccess:
    """How tools reach the lab: shared by every project and turn, held in memory only.

    `gns3` is the GNS3 client (holding its credentials), `consoles` the console pool,
    `policy` and `skills` the command policy and skills library (hot-reloadable),
    `console_credentials` the device login secrets, if any, `console_transport` how
    consoles are reached (`telnet` to their ports, or `websocket`: GNS3's console websocket
    with the GNS3 client's token; see `ToolContext`). `templates` is GNS3's template list
    shared by every turn (`TemplateCache`).
    """

    gns3: GNS3Client
    consoles: ConsolePool
    policy: CommandPolicy | None = None
    skills: SkillsLibrary | None = None
    console_credentials: ConsoleCredentials | None = field(default=None, repr=False)
    console_transport: ConsoleTransport = "telnet"
    templates: TemplateCache = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.templates = TemplateCache(self.gns3)

    def tool_context(self, project_id: str, mode: str, abort: asyncio.Event) -> ToolContext:
        """The tool context of one turn."""
        extra: dict[str, Any] = {}
        if self.policy is not None:
            extra["policy"] = self.policy
        if self.skills is not None:
            extra["skills"] = self.skills
        return ToolContext(
            gns3=self.gns3,
            project_id=project_id,
            consoles=self.consoles,
            mode=mode,
            abort=abort,
            console_credentials=self.console_credentials,
            console_transport=self.console_transport,
            templates=self.templates,
            **extra,
        )
