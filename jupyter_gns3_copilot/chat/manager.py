"""`ProjectAgentManager`: the chat service (`AgentService`) of every open project."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..store import validate_project_id
from .service import AgentService

if TYPE_CHECKING:
    from ..agent.approval_policy import ApprovalPolicy
    from ..gns3 import Project
    from ..tools import LabAccess


class ProjectAgentManager:
    """The `AgentService` of every open project.

    Services share `lab` (GNS3 client, consoles, policy, skills), the approval
    policy and `read_project` (see `AgentService`), and keep their data under
    `<data_dir>/projects/<project_id>/`.
    """

    def __init__(
        self,
        data_dir: str | Path,
        lab: LabAccess,
        *,
        system_prompt: str | None = None,
        default_mode: str | None = None,
        approval: ApprovalPolicy | None = None,
        approval_timeout: float | None = None,
        read_project: Callable[[str], Awaitable[Project]] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.lab = lab
        self.system_prompt = system_prompt
        self.default_mode = default_mode
        self.approval = approval
        self.approval_timeout = approval_timeout
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
                    project_id,
                    data_dir=self.data_dir,
                    lab=self.lab,
                    system_prompt=self.system_prompt,
                    default_mode=self.default_mode,
                    approval=self.approval,
                    approval_timeout=self.approval_timeout,
                    read_project=self.read_project,
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
