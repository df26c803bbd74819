"""`LabAccess`: the lab handles every project and turn share, and each turn's `ToolContext`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..devices.access import Devices
from ..devices.policy import CommandPolicy
from .base import ToolContext

if TYPE_CHECKING:
    from ..console import ConsoleCredentials, ConsolePool, ConsoleTransport
    from ..gns3 import GNS3Client
    from .skills import SkillsLibrary


@dataclass
class LabAccess:
    """How tools reach the lab: shared by every project and turn, held in memory only.

    `gns3` is the GNS3 client (holding its credentials), `consoles` the console pool,
    `policy` and `skills` the command policy and skills library (hot-reloadable),
    `console_credentials` the device login secrets, if any, `console_transport` how
    consoles are reached (`telnet` to their ports, or `websocket`: GNS3's console websocket
    with the GNS3 client's token; see `Devices`). `devices` is the device layer's `Devices`
    made of them (what lab checks use), its template list shared by every turn.
    """

    gns3: GNS3Client
    consoles: ConsolePool
    policy: CommandPolicy | None = None
    skills: SkillsLibrary | None = None
    console_credentials: ConsoleCredentials | None = field(default=None, repr=False)
    console_transport: ConsoleTransport = "telnet"
    devices: Devices = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.devices = Devices(
            gns3=self.gns3,
            consoles=self.consoles,
            policy=self.policy or CommandPolicy(),
            console_credentials=self.console_credentials,
            console_transport=self.console_transport,
        )

    def tool_context(self, project_id: str, mode: str, abort: asyncio.Event) -> ToolContext:
        """The tool context of one turn."""
        extra: dict[str, Any] = {}
        if self.skills is not None:
            extra["skills"] = self.skills
        return ToolContext(
            gns3=self.gns3,
            project_id=project_id,
            consoles=self.consoles,
            mode=mode,
            policy=self.devices.policy,
            abort=abort,
            console_credentials=self.console_credentials,
            console_transport=self.console_transport,
            templates=self.devices.template_cache,
            **extra,
        )
