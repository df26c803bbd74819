"""The settings of the `GNS3Copilot` extension app, declared as traits.

Every trait is settable as `c.GNS3Copilot.<trait>` in `jupyter_server_config.py`; where it
makes sense the default comes from an environment variable (trait -> environment ->
built-in default), which is how a JupyterHub operator configures a whole class.
`GNS3CopilotSettings` only declares them (the app, `server/app.py`, is a
`GNS3CopilotSettings`); those the hub service has too are declared once, in
`common_settings.CommonSettings`, which it inherits. The checks at load are
`server.configuration`'s. No Jupyter server import, and no core module: loading the
extension stays light.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

from jupyter_core.paths import jupyter_data_dir
from traitlets import Bool, Enum, Float, Int, List, Unicode, Union, default

from ..classroom import HUB_URL_ENV
from ..common_settings import MODES, CommonSettings, env_list

ALLOWED_BASE_URLS_ENV = "GNS3_COPILOT_ALLOWED_BASE_URLS"
CONSOLE_TRANSPORT_ENV = "GNS3_COPILOT_CONSOLE_TRANSPORT"
CONSOLE_TRANSPORTS = ("telnet", "websocket")
JUPYTERHUB_ENV = ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_PREFIX")
"""Variables JupyterHub gives every single-user server it spawns."""


def under_jupyterhub() -> bool:
    """Whether this server was spawned by JupyterHub (from its variables)."""
    return any(os.environ.get(name) for name in JUPYTERHUB_ENV)


class GNS3CopilotSettings(CommonSettings):
    """The extension's settings (see the module docstring)."""

    # -- GNS3 ------------------------------------------------------------------------------
    gns3_token = Unicode(
        help="A GNS3 JWT to use instead of user name and password (env GNS3_TOKEN)."
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

    @property
    def hub_mode(self) -> bool:
        """Whether the copilot takes its settings from the hub service."""
        return bool(self.hub_service_url)

    @default("allow_auto_approval")
    def _default_allow_auto_approval(self) -> bool:
        """`True`, `False` under JupyterHub."""
        return not under_jupyterhub()

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

    @default("gns3_token")
    def _default_gns3_token(self) -> str:
        return os.environ.get("GNS3_TOKEN", "")

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
