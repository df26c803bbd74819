"""`CopilotHost`: what the handlers use of the extension app that serves them
(`server/app.py`'s `GNS3Copilot`, which mypy checks against it), so that no handler imports
the app, which imports the route table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...chat.manager import ProjectAgentManager
    from ...classroom.client import HubServiceClient
    from ...gns3 import GNS3Client, Project
    from ...hub.api_models import HubSession
    from ...objectives.provider import LabProvider
    from ...single_flight import SingleFlight
    from ...tools import LabAccess
    from ..configuration import ConfigProblem
    from ..llm_config import LLMAdminConfig
    from ..llm_store import LLMConfigStore
    from ..notebook_projects import NotebookProjects
    from ..project_users import ProjectUsers
    from ..tool_runs import ToolRuns
    from ..warmup import WarmUp


class CopilotHost(Protocol):
    """The app's settings, state and shared parts the handlers read (`settings["gns3_copilot"]`);
    each member is the `GNS3Copilot` one of the same name."""

    config_problem: ConfigProblem | None
    project_users: ProjectUsers
    warm_up: WarmUp

    # -- settings (`server/settings.py`, `common_settings.py`) -----------------------------

    @property
    def allow_auto_approval(self) -> bool: ...

    @property
    def allow_project_delete(self) -> bool: ...

    @property
    def data_dir(self) -> str: ...

    @property
    def heartbeat_interval(self) -> float: ...

    @property
    def hub_mode(self) -> bool: ...

    @property
    def hub_service_url(self) -> str: ...

    @property
    def on_disconnect(self) -> str: ...

    @property
    def owner_user_id(self) -> str: ...

    # -- shared parts ----------------------------------------------------------------------

    def agents(self) -> ProjectAgentManager: ...

    def has_agents(self) -> bool: ...

    def project_has_data(self, project_id: str) -> bool: ...

    def gns3_client(self) -> GNS3Client: ...

    def project_lookup(self) -> SingleFlight[str, Project]: ...

    def lab(self) -> LabAccess: ...

    def project_labs(self) -> LabProvider: ...

    async def drop_lab_progress(self, project_id: str) -> None: ...

    async def close_lab_progress(self, project_id: str) -> None: ...

    def llm_admin(self) -> LLMAdminConfig: ...

    def llm_store(self) -> LLMConfigStore: ...

    def notebook_projects(self) -> NotebookProjects: ...

    def tool_runs(self) -> ToolRuns: ...

    def hub_client(self) -> HubServiceClient: ...

    async def hub_session(self) -> HubSession: ...

    def openapi_document(self, base_url: str) -> dict[str, Any]: ...
