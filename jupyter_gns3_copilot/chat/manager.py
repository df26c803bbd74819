"""`ProjectAgentManager`: the chat service (`AgentService`) of every open project."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..store import validate_project_id
from .service import AgentService

if TYPE_CHECKING:
    from ..gns3 import Project
    from ..tools import LabAccess
    from .settings import ChatSettings


class ProjectAgentManager:
    """The `AgentService` of every open project.

    Services share `settings` (their data under `<settings.data_dir>/projects/<project_id>/`),
    `lab` (GNS3 client, consoles, policy, skills) and `read_project` (see `AgentService`).
    """

    def __init__(
        self,
        settings: ChatSettings,
        lab: LabAccess,
        *,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> None:
        self.settings = settings
        self.lab = lab
        self.read_project = read_project
        self._agents: dict[str, AgentService] = {}
        self._lock = asyncio.Lock()

    async def get_agent(self, project_id: str) -> AgentService:
        """The project's service, opened on first use."""
        project_id = validate_project_id(project_id)
        agent = self._agents.get(project_id)
        if agent is not None:
            return agent
        async with self._lock:
            agent = self._agents.get(project_id)
            if agent is None:
                agent = await AgentService.open(
                    project_id, self.settings, lab=self.lab, read_project=self.read_project
                )
                self._agents[project_id] = agent
            return agent

    def opened(self, project_id: str) -> AgentService | None:
        """The project's service if it is open, without opening it."""
        return self._agents.get(project_id.strip().lower())

    async def remove_agent(self, project_id: str) -> None:
        """Close and forget the project's service (project closed); no-op if none."""
        agent = self._agents.pop(project_id.strip().lower(), None)
        if agent is not None:
            await agent.close()

    async def close_all(self) -> None:
        """Close every service."""
        agents, self._agents = list(self._agents.values()), {}
        for agent in agents:
            await agent.close()
