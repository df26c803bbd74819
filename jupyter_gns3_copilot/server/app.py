"""The `GNS3Copilot` extension app: handler registration, lifecycle, the shared parts.

Its settings are the traits of `GNS3CopilotSettings` (`server/settings.py`), each settable
as `c.GNS3Copilot.<trait>`. The parts it composes, each made on first use: the hub link
(`server/hub_link.py`), the lab's clients (`server/lab_clients.py`), the administrator's
model settings (`server/model_admin.py`), the agents, labs and tool runs of the projects.

**Hub mode** (`hub_service_url`, env `GNS3_COPILOT_HUB_URL`): everything comes from the
copilot hub service (`hub/app.py`), asked with the server's `JUPYTERHUB_API_TOKEN`
(`classroom/client.py`): the GNS3 URL and the student's own GNS3 token (renewed before it
expires, and fetched again when GNS3 refuses it), the model endpoint (the service's
gateway, with the hub token as the key), the models and the allowed modes; consoles go
through GNS3's console websocket with the student's token (`console_transport`). Users
cannot choose their own endpoint or key, and the server must hold no class secret
(`gns3_password`, `gns3_token`, `llm_api_key`: the copilot is closed if one is set).

A configuration that fails validation closes the copilot instead of running it with
defaults (`server.configuration`): `config_problem` is set and every route answers 503.
The package's own loggers (`jupyter_gns3_copilot.*`) write through the server's log
handlers, with the server's format and level.

Loading the extension imports no core module: the GNS3 client, the model settings, the
command policy, the skills library and the agent manager are created on first use (the
agent manager, which imports LangGraph, when the first project is opened or chatted
with), so `jupyter lab` starts as fast without the copilot as with it. Once the server
runs, a daemon thread imports them (`server.warmup`), and the copilot's routes wait for it
without blocking the event loop: no first-use import stalls other users and kernels.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_server.extension.application import ExtensionApp

from ..common_settings import MODES
from ..objectives import SALT_FILE
from .configuration import (
    ConfigProblem,
    find_problem,
    hub_mode_problem,
    problem_from_link_error,
)
from .handlers import default_handlers
from .hub_link import HubLink
from .kernel_env import publish_server_to_kernels
from .lab_clients import LabClients
from .model_admin import ModelAdmin
from .project_users import ProjectUsers
from .settings import CONSOLE_TRANSPORTS, GNS3CopilotSettings
from .warmup import WarmUp

if TYPE_CHECKING:
    from ..chat.manager import ProjectAgentManager
    from ..classroom.client import HubServiceClient
    from ..classroom.labs import HubProjectLabs
    from ..gns3 import GNS3Client, Project
    from ..hub.api_models import HubSession
    from ..objectives.provider import LabProvider
    from ..objectives.service import ProjectLabs
    from ..single_flight import SingleFlight
    from ..tools import LabAccess
    from .handlers.host import CopilotHost
    from .llm_config import LLMAdminConfig
    from .llm_store import LLMConfigStore
    from .notebook_projects import NotebookProjects
    from .tool_runs import ToolRuns

PACKAGE_LOGGER = "jupyter_gns3_copilot"


class GNS3Copilot(GNS3CopilotSettings, ExtensionApp):
    """The GNS3 Copilot server extension (its settings: `GNS3CopilotSettings`)."""

    name = "jupyter_gns3_copilot"
    config_problem: ConfigProblem | None = None
    """Set when the configuration is invalid: every route then answers 503 with it."""
    _openapi: dict[str, Any] | None = None
    """The API's OpenAPI document, built on first use (`openapi_document`)."""

    # -- wiring ----------------------------------------------------------------------------

    def _link_jupyter_server_extension(self, serverapp: Any) -> None:
        """Load the configuration; a value that fails validation closes the copilot (the
        error is raised on: jupyter_server logs it and loads the extension anyway)."""
        try:
            super()._link_jupyter_server_extension(serverapp)
        except Exception as exc:
            self.config_problem = problem_from_link_error(exc)
            raise

    def initialize_settings(self) -> None:
        """Expose this app to the handlers as `settings["gns3_copilot"]`; check the
        configuration; route the package's loggers into the server's log."""
        host: CopilotHost = self  # mypy checks that this app is what the handlers use
        self.settings["gns3_copilot"] = host
        self.project_users = ProjectUsers()
        package_log = logging.getLogger(PACKAGE_LOGGER)
        assert self.serverapp is not None  # linked before its settings are initialized
        package_log.parent = self.serverapp.log
        package_log.setLevel(logging.NOTSET)  # also clears the loggers' cached levels
        self.hub = HubLink(self.hub_service_url, self.gns3_timeout)
        self.lab_clients = LabClients(self, self.hub)
        self.model_admin = ModelAdmin(self, self.hub)
        self.config_problem = self.config_problem or find_problem(self, MODES, CONSOLE_TRANSPORTS)
        if self.config_problem is None and self.hub_mode:
            self.config_problem = hub_mode_problem(self, self.hub.token)
        if self.config_problem is not None:
            self.log.error(
                "GNS3 Copilot is CLOSED (every copilot route answers 503): c.GNS3Copilot.%s: %s",
                self.config_problem.setting,
                self.config_problem.reason,
            )
        self._agents: ProjectAgentManager | None = None
        self._llm_store: LLMConfigStore | None = None
        self._notebook_projects: NotebookProjects | None = None
        self._tool_runs: ToolRuns | None = None
        self._project_labs: ProjectLabs | None = None
        self._hub_labs: HubProjectLabs | None = None
        self.warm_up = WarmUp()

    def initialize_handlers(self) -> None:
        """Register the API routes (jupyter_server prefixes them with base_url)."""
        self.handlers.extend(default_handlers)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        """Start the warm-up thread (`server.warmup`); publish the server's URL and a
        token to kernels started from now on."""
        self.warm_up.start()
        published = publish_server_to_kernels(serverapp)
        self.log.info(
            "GNS3 Copilot: kernels will find this server at %s (%s)",
            published.url,
            ", ".join(sorted(published.variables)),
        )

    # -- components, created on first use --------------------------------------------------

    def hub_client(self) -> HubServiceClient:
        """The client of the hub service (hub mode only)."""
        return self.hub.client()

    async def hub_session(self) -> HubSession:
        """This server's session with the hub service (fetched, or cached and fresh);
        `HubServiceError` when the service cannot give one."""
        return await self.hub.session()

    def gns3_client(self) -> GNS3Client:
        """The shared GNS3 client of this server (`LabClients.gns3_client`)."""
        return self.lab_clients.gns3_client()

    def project_lookup(self) -> SingleFlight[str, Project]:
        """GNS3 project lookups by id, shared between concurrent requests."""
        return self.lab_clients.project_lookup()

    def lab(self) -> LabAccess:
        """How tools reach the lab (`LabClients.lab`)."""
        return self.lab_clients.lab()

    def llm_admin(self) -> LLMAdminConfig:
        """The administrator's model settings and limits (`ModelAdmin.config`)."""
        return self.model_admin.config()

    def llm_store(self) -> LLMConfigStore:
        """The users' model settings, encrypted under `data_dir`."""
        if self._llm_store is None:
            from .llm_store import LLMConfigStore

            self._llm_store = LLMConfigStore(self.data_dir)
        return self._llm_store

    def notebook_projects(self) -> NotebookProjects:
        """The project and conversations each user's notebooks use, under `data_dir`."""
        if self._notebook_projects is None:
            from .notebook_projects import NotebookProjects

            self._notebook_projects = NotebookProjects(self.data_dir)
        return self._notebook_projects

    def agents(self) -> ProjectAgentManager:
        """The chat service of every project in use (imports LangGraph on first call)."""
        if self._agents is None:
            from ..agent.approval_policy import ApprovalPolicy
            from ..chat.manager import ProjectAgentManager
            from ..chat.settings import ChatSettings

            settings = ChatSettings(
                Path(self.data_dir),
                default_mode=self.llm_admin().effective_default_mode,
                approval=ApprovalPolicy.parse(self.require_approval),  # checked at load
                approval_timeout=self.approval_timeout,
            )
            self._agents = ProjectAgentManager(
                settings, self.lab(), read_project=self.project_lookup()
            )
        return self._agents

    def has_agents(self) -> bool:
        """Whether the agent manager exists (without creating it)."""
        return self._agents is not None

    def project_has_data(self, project_id: str) -> bool:
        """Whether the project has a chat database under `data_dir`."""
        from ..store import database_path

        return database_path(self.data_dir, project_id).exists()

    def project_labs(self) -> LabProvider:
        """Each project's lab objectives (its `lab.yaml`), one interface
        (`objectives.provider`): rendered and checked here with `lab_salt`, each student's
        progress kept in the project's database under `data_dir`; in hub mode, through the
        hub service (`classroom.labs`), which renders and checks labs (this server has no
        salt)."""
        if self.hub_mode:
            if self._hub_labs is None:
                from ..classroom.labs import HubProjectLabs

                self._hub_labs = HubProjectLabs(self.hub_client(), self.lab())
            return self._hub_labs
        if self._project_labs is None:
            from ..objectives.progress import StudentProgress
            from ..objectives.service import ProjectLabs
            from ..private_files import read_or_create_secret
            from ..store.lab_progress import LabProgressStore

            salt = self.lab_salt or read_or_create_secret(Path(self.data_dir) / SALT_FILE)
            progress = StudentProgress(LabProgressStore(self.data_dir))
            self._project_labs = ProjectLabs(self.lab().devices, salt, progress=progress)
        return self._project_labs

    async def drop_lab_progress(self, project_id: str) -> None:
        """Forget the project's lab progress and close its store (its folder is deleted)."""
        if self._project_labs is not None:
            await self._project_labs.progress.drop(project_id)

    async def close_lab_progress(self, project_id: str) -> None:
        """Close the store of the project's lab progress (the project was closed)."""
        if self._project_labs is not None:
            await self._project_labs.progress.close(project_id)

    def tool_runs(self) -> ToolRuns:
        """The direct tool runs in progress (for abort and their approvals)."""
        if self._tool_runs is None:
            from ..agent.approval_policy import ApprovalPolicy
            from .tool_runs import ToolRuns

            self._tool_runs = ToolRuns(
                approval=ApprovalPolicy.parse(self.require_approval),  # checked at load
                approval_timeout=self.approval_timeout,
            )
        return self._tool_runs

    def openapi_document(self, base_url: str) -> dict[str, Any]:
        """The API's OpenAPI document (`server.openapi`), its paths under `base_url`: built
        on first use, then kept."""
        if self._openapi is None:
            from .openapi import openapi_document

            self._openapi = openapi_document(base_url)
        return self._openapi

    async def stop_extension(self) -> None:
        """Abort running chats, close every project database, the consoles and GNS3."""
        if self._tool_runs is not None:
            self._tool_runs.abort_all()
        if self._agents is not None:
            await self._agents.close_all()
            self._agents = None
        if self._project_labs is not None and self._project_labs.progress.store is not None:
            await self._project_labs.progress.store.close()
            self._project_labs = None
        await self.lab_clients.aclose()
        await self.hub.aclose()
        self._hub_labs = None
