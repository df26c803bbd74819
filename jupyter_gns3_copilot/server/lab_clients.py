"""The server's shared clients of the lab, made on first use and closed with the server.

`LabClients`: the GNS3 client (in hub mode the student's own GNS3 account, its token from
the hub service), project lookups by id shared between concurrent requests, and
`LabAccess`, how tools reach the lab (the GNS3 client, the console pool and transport, the
command policy and the skills). No Jupyter import; the core modules are imported on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ..console import ConsoleTransport
    from ..gns3 import GNS3Client, Project
    from ..single_flight import SingleFlight
    from ..tools import LabAccess
    from .hub_link import HubLink
    from .settings import GNS3CopilotSettings


class LabClients:
    """The lab's clients for the settings `settings` (hub mode through `hub`)."""

    def __init__(self, settings: GNS3CopilotSettings, hub: HubLink) -> None:
        self.settings = settings
        self.hub = hub
        self._gns3_client: GNS3Client | None = None
        self._project_lookup: SingleFlight[str, Project] | None = None
        self._lab: LabAccess | None = None

    def gns3_client(self) -> GNS3Client:
        """The shared GNS3 client of this server (in hub mode: the student's own GNS3
        account, its token from the hub service)."""
        settings = self.settings
        if self._gns3_client is None and settings.hub_mode:
            from ..gns3 import GNS3Client

            hub = self.hub.client()
            self._gns3_client = GNS3Client(
                hub.cached.gns3_url if hub.cached else settings.gns3_url,
                token_provider=hub.gns3_token,
                timeout=settings.gns3_timeout,
            )
        if self._gns3_client is None:
            from ..gns3 import GNS3Client

            self._gns3_client = GNS3Client(
                settings.gns3_url,
                username=settings.gns3_username or None,
                password=settings.gns3_password or None,
                token=settings.gns3_token or None,
                timeout=settings.gns3_timeout,
            )
        return self._gns3_client

    def project_lookup(self) -> SingleFlight[str, Project]:
        """GNS3 project lookups by id, shared between concurrent requests."""
        if self._project_lookup is None:
            from ..single_flight import SingleFlight

            self._project_lookup = SingleFlight(self.gns3_client().get_project)
        return self._project_lookup

    def lab(self) -> LabAccess:
        """How tools reach the lab: the GNS3 client, the console pool and transport, the
        policy and skills."""
        if self._lab is None:
            from ..console import ConsolePool
            from ..devices.policy import CommandPolicy
            from ..tools import LabAccess, SkillsLibrary

            settings = self.settings
            self._lab = LabAccess(
                gns3=self.gns3_client(),
                consoles=ConsolePool(),
                policy=CommandPolicy(settings.forbidden_commands_file or None),
                skills=SkillsLibrary([settings.skills_dir] if settings.skills_dir else []),
                # One of CONSOLE_TRANSPORTS: find_problem closes the routes otherwise.
                console_transport=cast("ConsoleTransport", settings.console_transport),
            )
        return self._lab

    async def aclose(self) -> None:
        """Close the consoles and the GNS3 client (made again on next use)."""
        if self._lab is not None:
            await self._lab.consoles.aclose()
            self._lab = None
        if self._gns3_client is not None:
            await self._gns3_client.aclose()
            self._gns3_client = None
            self._project_lookup = None
