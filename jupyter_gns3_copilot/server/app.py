"""The `GNS3Copilot` extension app: configuration traits, handler registration, lifecycle.

Every trait is settable as `c.GNS3Copilot.<trait>` in `jupyter_server_config.py`; where it
makes sense the default comes from an environment variable (trait -> environment ->
built-in default), which is how a JupyterHub operator configures a whole class.

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

import getpass
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Enum, Float, Int, List, Unicode, Union, default

from ..classroom import HUB_URL_ENV
from ..objectives import SALT_ENV, SALT_FILE
from .configuration import (
    ConfigProblem,
    env_list,
    find_problem,
    hub_mode_problem,
    problem_from_link_error,
)
from .handlers import default_handlers
from .kernel_env import publish_server_to_kernels
from .project_users import ProjectUsers
from .warmup import WarmUp

if TYPE_CHECKING:
    from ..chat.manager import ProjectAgentManager
    from ..classroom.client import HubServiceClient
    from ..classroom.labs import HubProjectLabs
    from ..console import ConsoleTransport
    from ..gns3 import GNS3Client, Project
    from ..hub.api_models import HubSession
    from ..llm_config import LLMAdminConfig, LLMConfigStore
    from ..notebook_projects import NotebookProjects
    from ..objectives.provider import LabProvider
    from ..objectives.service import ProjectLabs
    from ..single_flight import SingleFlight
    from ..tools import LabAccess
    from .tool_runs import ToolRuns

MODES = ("teaching_assistant", "lab_automation_assistant")
"""The copilot modes (`tools.modes.MODE_TOOLS`), named here so loading imports no tools."""
ALLOWED_MODES_ENV = "GNS3_COPILOT_ALLOWED_MODES"
ALLOWED_BASE_URLS_ENV = "GNS3_COPILOT_ALLOWED_BASE_URLS"
CONSOLE_TRANSPORT_ENV = "GNS3_COPILOT_CONSOLE_TRANSPORT"
CONSOLE_TRANSPORTS = ("telnet", "websocket")
HUB_PROVIDER = "JupyterHub copilot service"
JUPYTERHUB_ENV = ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_PREFIX")
"""Variables JupyterHub gives every single-user server it spawns."""
PACKAGE_LOGGER = "jupyter_gns3_copilot"


def under_jupyterhub() -> bool:
    """Whether this server was spawned by JupyterHub (from its variables)."""
    return any(os.environ.get(name) for name in JUPYTERHUB_ENV)


class GNS3Copilot(ExtensionApp):
    """The GNS3 Copilot server extension."""

    name = "jupyter_gns3_copilot"
    config_problem: ConfigProblem | None = None
    """Set when the configuration is invalid: every route then answers 503 with it."""
    openapi: dict[str, Any] | None = None
    """The API's OpenAPI document, built by its route on first use."""

    # -- GNS3 ------------------------------------------------------------------------------
    gns3_url = Unicode(help="URL of the GNS3 v3 server (env GNS3_URL).").tag(config=True)
    gns3_username = Unicode(help="GNS3 user name (env GNS3_USER).").tag(config=True)
    gns3_password = Unicode(help="GNS3 password (env GNS3_PASSWORD); never logged.").tag(
        config=True
    )
    gns3_token = Unicode(
        help="A GNS3 JWT to use instead of user name and password (env GNS3_TOKEN)."
    ).tag(config=True)
    gns3_timeout = Float(
        15.0, help="Seconds to wait for one GNS3 API request before giving up."
    ).tag(config=True)

    # Unicode, not Enum: a bad value from the environment must close the routes.
    console_transport = Unicode(
        help="How device consoles are reached: 'telnet' to each node's console port, or "
        "'websocket' through GNS3's authenticated console websocket with the GNS3 token "
        f"(the telnet ports can then be closed to this host). Env {CONSOLE_TRANSPORT_ENV}; "
        "default 'websocket' in hub mode, else 'telnet'."
    ).tag(config=True)

    hub_service_url = Unicode(
        help="URL of the copilot hub service, e.g. http://127.0.0.1:8000/services/gns3-copilot/"
        f" (env {HUB_URL_ENV}). When set (hub mode), the GNS3 account, the model endpoint "
        "and the students' policy all come from the service, and no GNS3 password or model "
        "key may be set here."
    ).tag(config=True)

    # -- the model (administrator defaults; users may override within the limits) -----------
    llm_provider = Unicode(
        "", help="A label for the model provider shown to users (e.g. 'OpenAI', 'Ollama')."
    ).tag(config=True)
    llm_base_url = Unicode(
        help="Base URL of the OpenAI-compatible model endpoint (env OPENAI_BASE_URL)."
    ).tag(config=True)
    llm_api_key = Unicode(
        help="API key for llm_base_url (env OPENAI_API_KEY); only ever sent to llm_base_url."
    ).tag(config=True)
    llm_model = Unicode(help="Chat model name (env GNS3_COPILOT_MODEL).").tag(config=True)
    title_model = Unicode(
        "",
        help="Model that names conversations, on llm_base_url (default: llm_model; a user "
        "who chose their own endpoint gets titles from their own model).",
    ).tag(config=True)
    temperature = Float(
        None,
        allow_none=True,
        min=0.0,
        max=2.0,
        help="Sampling temperature 0-2 (default: the endpoint's).",
    ).tag(config=True)
    context_limit = Int(
        None,
        allow_none=True,
        min=1,
        max=10_000,
        help="Context window in thousands of tokens (default: by model family, else 32; "
        "copilot/status says when it is a guess).",
    ).tag(config=True)
    context_strategy = Enum(
        ["conservative", "balanced", "aggressive"],
        "balanced",
        help="How much of the context window a request may fill: conservative (60%), "
        "balanced (75%) or aggressive (85%) of context_limit, less the tool definitions.",
    ).tag(config=True)
    llm_timeout = Float(
        60.0,
        min=0.1,
        help="Seconds to wait for the model's connection and each part of an answer.",
    ).tag(config=True)
    llm_max_retries = Int(
        2,
        min=0,
        max=10,
        help="Retries of a model call that failed before its answer began (connection "
        "errors, timeouts, 408, 409, 429, 5xx), honouring the endpoint's retry-after, none "
        "later than 10 s after the first attempt.",
    ).tag(config=True)

    # -- modes and limits ----------------------------------------------------------------------
    default_mode = Enum(
        list(MODES), "teaching_assistant", help="Copilot mode for users who choose none."
    ).tag(config=True)
    # Unicode items, not Enum: a mode from the environment that is not one of MODES must
    # close the routes (`server.configuration`), not fail the loading with no routes at all.
    allowed_modes = List(
        Unicode(),
        help="Copilot modes users may choose (e.g. only teaching_assistant for a class; env "
        f"{ALLOWED_MODES_ENV}, comma-separated).",
    ).tag(config=True)
    allowed_base_urls = List(
        Unicode(),
        help="Model endpoints users may choose (env "
        f"{ALLOWED_BASE_URLS_ENV}, comma-separated). Empty: any except link-local and cloud "
        "metadata addresses, or under JupyterHub only llm_base_url. Add llm_base_url to "
        "keep it.",
    ).tag(config=True)
    allow_project_delete = Bool(
        False,
        help="Whether users in lab_automation_assistant mode may delete GNS3 projects "
        "(DELETE copilot/projects/{id}); nobody may when False.",
    ).tag(config=True)

    # -- data, streaming, policy -----------------------------------------------------------
    data_dir = Unicode(
        help="Directory for chat databases and user settings (env GNS3_COPILOT_DATA_DIR)."
    ).tag(config=True)
    heartbeat_interval = Float(
        15.0,
        help="Seconds of stream silence after which a heartbeat event is sent (the lab "
        "events stream: an SSE comment) (0: none).",
    ).tag(config=True)
    on_disconnect = Enum(
        ["abort", "finish"],
        "abort",
        help="When a chat's client disconnects: abort the turn, or finish it unseen (a "
        "turn waiting for an approval does neither: it stays waiting).",
    ).tag(config=True)
    require_approval = Union(
        [Unicode(), List(Unicode())],
        default_value="changes",
        help="Which tool calls (the model's and %copilot run's) wait for the user's "
        "approval: 'changes' (every call that changes the lab or a device's configuration; "
        "a console command call when one of its lines is no diagnostic), 'none', or a list "
        "of tool names; another value closes the copilot.",
    ).tag(config=True)
    approval_timeout = Float(
        600.0,
        min=1.0,
        help="Seconds an approval waits for a decision; unanswered, it counts as rejected.",
    ).tag(config=True)
    allow_auto_approval = Bool(
        help='Whether a chat or tool-run request may carry "approval": "auto" to skip '
        "approvals (default: true, false under JupyterHub).",
    ).tag(config=True)
    forbidden_commands_file = Unicode(
        "", help="Forbidden-command list replacing the shipped one (re-read when it changes)."
    ).tag(config=True)
    skills_dir = Unicode(
        "", help="Directory of extra device skills (topics override the shipped ones)."
    ).tag(config=True)
    owner_user_id = Unicode(
        help="User id for requests authenticated by Jupyter's own token or password, which "
        "name no user (default: the server's OS user name)."
    ).tag(config=True)

    # -- lab objectives --------------------------------------------------------------------
    lab_salt = Unicode(
        help="Secret that makes each student's lab parameter values; never shown to students "
        "(env GNS3_COPILOT_LAB_SALT; default: generated once into data_dir/lab.salt)."
    ).tag(config=True)

    @default("lab_salt")
    def _default_lab_salt(self) -> str:
        return os.environ.get(SALT_ENV, "")

    @default("allow_auto_approval")
    def _default_allow_auto_approval(self) -> bool:
        """`True`, `False` under JupyterHub."""
        return not under_jupyterhub()

    @default("allowed_modes")
    def _default_allowed_modes(self) -> list[str]:
        return env_list(ALLOWED_MODES_ENV) or list(MODES)

    @default("allowed_base_urls")
    def _default_allowed_base_urls(self) -> list[str]:
        return env_list(ALLOWED_BASE_URLS_ENV)

    @default("hub_service_url")
    def _default_hub_service_url(self) -> str:
        return os.environ.get(HUB_URL_ENV, "")

    @default("console_transport")
    def _default_console_transport(self) -> str:
        """`"websocket"` in hub mode, else `"telnet"`."""
        return os.environ.get(CONSOLE_TRANSPORT_ENV) or (
            "websocket" if self.hub_service_url else "telnet"
        )

    @default("gns3_url")
    def _default_gns3_url(self) -> str:
        return os.environ.get("GNS3_URL", "http://127.0.0.1:3080")

    @default("gns3_username")
    def _default_gns3_username(self) -> str:
        return os.environ.get("GNS3_USER", "admin")

    @default("gns3_password")
    def _default_gns3_password(self) -> str:
        return os.environ.get("GNS3_PASSWORD", "")

    @default("gns3_token")
    def _default_gns3_token(self) -> str:
        return os.environ.get("GNS3_TOKEN", "")

    @default("llm_base_url")
    def _default_llm_base_url(self) -> str:
        return os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")

    @default("llm_api_key")
    def _default_llm_api_key(self) -> str:
        return os.environ.get("OPENAI_API_KEY", "")

    @default("llm_model")
    def _default_llm_model(self) -> str:
        return os.environ.get("GNS3_COPILOT_MODEL", "")

    @default("data_dir")
    def _default_data_dir(self) -> str:
        """`jupyter_gns3_copilot` in Jupyter's data directory."""
        return os.environ.get(
            "GNS3_COPILOT_DATA_DIR", str(Path(jupyter_data_dir()) / "jupyter_gns3_copilot")
        )

    @default("owner_user_id")
    def _default_owner_user_id(self) -> str:
        """The server's OS user name."""
        try:
            return getpass.getuser()
        except (KeyError, OSError):
            return "jupyter"

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
        self.settings["gns3_copilot"] = self
        self.project_users = ProjectUsers()
        package_log = logging.getLogger(PACKAGE_LOGGER)
        assert self.serverapp is not None  # linked before its settings are initialized
        package_log.parent = self.serverapp.log
        package_log.setLevel(logging.NOTSET)  # also clears the loggers' cached levels
        self.config_problem = self.config_problem or find_problem(self, MODES, CONSOLE_TRANSPORTS)
        if self.config_problem is None and self.hub_mode:
            self.config_problem = hub_mode_problem(self, self.hub_token)
        if self.config_problem is not None:
            self.log.error(
                "GNS3 Copilot is CLOSED (every copilot route answers 503): c.GNS3Copilot.%s: %s",
                self.config_problem.setting,
                self.config_problem.reason,
            )
        self._gns3_client: GNS3Client | None = None
        self._lab: LabAccess | None = None
        self._agents: ProjectAgentManager | None = None
        self._llm_store: LLMConfigStore | None = None
        self._notebook_projects: NotebookProjects | None = None
        self._llm_admin: LLMAdminConfig | None = None
        self._tool_runs: ToolRuns | None = None
        self._project_labs: ProjectLabs | None = None
        self._hub_labs: HubProjectLabs | None = None
        self._project_lookup: SingleFlight[str, Project] | None = None
        self._hub: HubServiceClient | None = None
        self._hub_admin: tuple[HubSession, LLMAdminConfig] | None = None
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

    # -- hub mode --------------------------------------------------------------------------

    @property
    def hub_mode(self) -> bool:
        """Whether the copilot takes its settings from the hub service."""
        return bool(self.hub_service_url)

    @property
    def hub_token(self) -> str:
        """This server's own hub token (the gateway's key in hub mode)."""
        return os.environ.get("JUPYTERHUB_API_TOKEN", "")

    def hub_client(self) -> HubServiceClient:
        """The client of the hub service (hub mode only)."""
        if self._hub is None:
            from ..classroom.client import HubServiceClient

            self._hub = HubServiceClient(
                self.hub_service_url, self.hub_token, timeout=self.gns3_timeout
            )
        return self._hub

    async def hub_session(self) -> HubSession:
        """This server's session with the hub service (fetched, or cached and fresh);
        `HubServiceError` when the service cannot give one."""
        return await self.hub_client().session()

    # -- components, created on first use --------------------------------------------------

    def gns3_client(self) -> GNS3Client:
        """The shared GNS3 client of this server (in hub mode: the student's own GNS3
        account, its token from the hub service)."""
        if self._gns3_client is None and self.hub_mode:
            from ..gns3 import GNS3Client

            hub = self.hub_client()
            self._gns3_client = GNS3Client(
                hub.cached.gns3_url if hub.cached else self.gns3_url,
                token_provider=hub.gns3_token,
                timeout=self.gns3_timeout,
            )
        if self._gns3_client is None:
            from ..gns3 import GNS3Client

            self._gns3_client = GNS3Client(
                self.gns3_url,
                username=self.gns3_username or None,
                password=self.gns3_password or None,
                token=self.gns3_token or None,
                timeout=self.gns3_timeout,
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
            from ..tools import CommandPolicy, LabAccess, SkillsLibrary

            self._lab = LabAccess(
                gns3=self.gns3_client(),
                consoles=ConsolePool(),
                policy=CommandPolicy(self.forbidden_commands_file or None),
                skills=SkillsLibrary([self.skills_dir] if self.skills_dir else []),
                # One of CONSOLE_TRANSPORTS: find_problem closes the routes otherwise.
                console_transport=cast("ConsoleTransport", self.console_transport),
            )
        return self._lab

    def llm_admin(self) -> LLMAdminConfig:
        """The administrator's model settings and limits, from the traits (in hub mode,
        from the hub session: no model before the session was fetched)."""
        if self.hub_mode:
            return self._hub_llm_admin()
        if self._llm_admin is None:
            from pydantic import SecretStr

            from ..llm_config import LLMAdminConfig

            self._llm_admin = LLMAdminConfig(
                provider=self.llm_provider,
                base_url=self.llm_base_url,
                api_key=SecretStr(self.llm_api_key),
                model=self.llm_model,
                title_model=self.title_model,
                temperature=self.temperature,
                context_limit=self.context_limit,
                context_strategy=self.context_strategy,
                timeout=self.llm_timeout,
                max_retries=self.llm_max_retries,
                default_mode=self.default_mode,
                allowed_modes=tuple(self.allowed_modes),
                allowed_base_urls=tuple(self.allowed_base_urls),
                jupyterhub=under_jupyterhub(),
            )
        return self._llm_admin

    def _hub_llm_admin(self) -> LLMAdminConfig:
        from pydantic import SecretStr

        from ..llm_config import LLMAdminConfig

        session = self.hub_client().cached
        if self._hub_admin is not None and self._hub_admin[0] is session:
            return self._hub_admin[1]
        common: dict[str, Any] = {
            "provider": HUB_PROVIDER,
            "temperature": self.temperature,
            "context_limit": self.context_limit,
            "context_strategy": self.context_strategy,
            "timeout": self.llm_timeout,
            "max_retries": self.llm_max_retries,
            "jupyterhub": True,
            "users_may_choose_endpoints": False,
        }
        if session is None:
            return LLMAdminConfig(**common)
        admin = LLMAdminConfig(
            **common,
            base_url=session.model_base_url,
            api_key=SecretStr(self.hub_token),
            model=session.model,
            title_model=session.title_model,
            default_mode=session.policy.default_mode,
            allowed_modes=session.policy.allowed_modes,
            modes_setting="the hub service's c.CopilotHubService.allowed_modes",
            allowed_base_urls=(session.model_base_url,),
        )
        self._hub_admin = (session, admin)
        return admin

    def llm_store(self) -> LLMConfigStore:
        """The users' model settings, encrypted under `data_dir`."""
        if self._llm_store is None:
            from ..llm_config import LLMConfigStore

            self._llm_store = LLMConfigStore(self.data_dir)
        return self._llm_store

    def notebook_projects(self) -> NotebookProjects:
        """The project and conversations each user's notebooks use, under `data_dir`."""
        if self._notebook_projects is None:
            from ..notebook_projects import NotebookProjects

            self._notebook_projects = NotebookProjects(self.data_dir)
        return self._notebook_projects

    def agents(self) -> ProjectAgentManager:
        """The chat service of every project in use (imports LangGraph on first call)."""
        if self._agents is None:
            from ..agent.approval_policy import ApprovalPolicy
            from ..chat.manager import ProjectAgentManager

            self._agents = ProjectAgentManager(
                self.data_dir,
                self.lab(),
                default_mode=self.llm_admin().effective_default_mode,
                approval=ApprovalPolicy.parse(self.require_approval),  # checked at load
                approval_timeout=self.approval_timeout,
                read_project=self.project_lookup(),
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
            self._project_labs = ProjectLabs(self.lab(), salt, progress=progress)
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
        if self._lab is not None:
            await self._lab.consoles.aclose()
            self._lab = None
        if self._gns3_client is not None:
            await self._gns3_client.aclose()
            self._gns3_client = None
            self._project_lookup = None
        if self._hub is not None:
            await self._hub.aclose()
            self._hub = None
            self._hub_labs = None
