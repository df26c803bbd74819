"""`CopilotHubService`: the JupyterHub managed service that holds a class's secrets.

Started by the hub (`c.JupyterHub.services`, `python -m jupyter_gns3_copilot.hub`), it is
the only process with the model key and the GNS3 admin password. Students' servers ask it
(with their own hub token) for a session: their own GNS3 token and the model gateway.

Settings: traits of `CopilotHubService` (those the server extension has too declared
once, `common_settings.CommonSettings`), from `jupyter_gns3_copilot_hub_config.py` in the
working directory (or `--config=<file>`), the command line (`--CopilotHubService.x=...`),
else the service's environment, else the default. Keep the secrets (`GNS3_PASSWORD`,
`OPENAI_API_KEY`, `GNS3_COPILOT_HUB_SECRET`) in the environment: `--debug` logs the
configuration files' values. Secrets are never logged by the service. It logs at INFO
(`--log-level` changes it), the package's loggers through its own.

SIGHUP restarts the service in place (`hub/restart.py`: the same process runs again,
keeping its listening socket, so the hub's 30 s poll never sees it gone); its pid is in
`data_dir/service.pid`.

The HTTP server listens on the port of `JUPYTERHUB_SERVICE_URL`, on its host (127.0.0.1
when it names none) unless `ip` says otherwise (in a Kubernetes hub pod the URL names the
hub's Service, `http://hub:10101`, and the service listens on 0.0.0.0), and serves
under `JUPYTERHUB_SERVICE_PREFIX`: the gateway (`v1/chat/completions`, `v1/models`),
`api/session`, `api/projects`, `api/usage`, `api/health` (`hub/handlers.py`), the lab
routes `api/labs/...` (`hub/lab_handlers.py`: the service renders students' labs with the
class's `lab_salt` and checks them itself, `hub/class_labs.py`), and the instructor
dashboard at the prefix itself
(`hub/dashboard.py`: the page, its forms and `api/...`). Callers are authenticated by
`jupyterhub.services.auth.HubOAuth` (`hub/hub_auth.py`): a hub token in the
`Authorization` header, or, for the dashboard in a browser, the OAuth cookie set at
`{prefix}oauth_callback` after the hub's login (a browser with none is sent there).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import signal
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlparse

from pydantic import SecretStr
from traitlets import Bool, Dict, Int, List, Unicode, Union, default
from traitlets.config import Application

from ..common_settings import MODES, CommonSettings
from ..objectives import SALT_FILE
from ..private_files import read_or_create_secret
from .budgets import BudgetPolicy
from .restart import exec_again, keep_open, listening_sockets, write_pid_file
from .runtime import HubRuntime, HubSettings

SERVICE_NAME = "gns3-copilot"
PACKAGE_LOGGER = "jupyter_gns3_copilot"
CONFIG_FILE = "jupyter_gns3_copilot_hub_config.py"
SECRET_FILE = "account.secret"


class CopilotHubService(CommonSettings, Application):
    """The copilot hub service (see the module docstring)."""

    name = "jupyter-gns3-copilot-hub"
    description = "The GNS3 Copilot's JupyterHub service: model gateway and students' GNS3."
    # An instance attribute in traitlets' Application, given per class as traitlets does.
    aliases: dict[str, Any] = {"config": "CopilotHubService.config_file"}  # noqa: RUF012

    config_file = Unicode(CONFIG_FILE, help="Configuration file to load.").tag(config=True)

    # -- the model (its endpoint and the GNS3 account: `CommonSettings`) ------------------
    models = List(
        Unicode(), help="Models students may use (default: llm_model and title_model)."
    ).tag(config=True)
    budgets = Dict(
        help="BudgetPolicy as a dict, e.g. {'group_daily_tokens': {'students': 50000, "
        "'tas': None}, 'course_daily_tokens': 2000000} (env GNS3_COPILOT_HUB_BUDGETS, JSON). "
        "Empty: 50,000 tokens a day for everyone, at most 2 calls at once per user."
    ).tag(config=True)
    gateway_url = Unicode(
        "",
        help="The gateway's base URL as students' servers reach it (default: the service's "
        "URL as they reached it, + v1).",
    ).tag(config=True)

    # -- the class -------------------------------------------------------------------------
    instructor_groups = List(
        Unicode(), ["instructors"], help="Hub groups of the course staff (the dashboard)."
    ).tag(config=True)
    default_mode = Unicode("teaching_assistant", help="Mode for students who choose none.").tag(
        config=True
    )
    max_projects_per_student = Int(10, help="GNS3 projects a student may create.").tag(config=True)
    placement = Union(
        [Unicode(), Dict(value_trait=Unicode())],
        default_value="template",
        help="The GNS3 compute a student's assigned copy of a lab goes on: 'template' "
        "(where the template's nodes are), 'least_loaded' (the compute using the least "
        "memory) or a mapping of hub group to compute name.",
    ).tag(config=True)
    log_questions = Bool(
        False, help="Keep a log of students' questions for the staff (students are told)."
    ).tag(config=True)

    ip = Unicode(
        help="Address to listen on (env GNS3_COPILOT_HUB_IP; default: the host of "
        "JUPYTERHUB_SERVICE_URL, else 127.0.0.1)."
    ).tag(config=True)

    # -- data ------------------------------------------------------------------------------
    data_dir = Unicode(
        help="Usage and grade databases, account secret, kept GNS3 tokens (env "
        "GNS3_COPILOT_HUB_DATA_DIR)."
    ).tag(config=True)
    account_secret = Unicode(
        help="Derives students' GNS3 passwords and the key of their kept GNS3 tokens "
        "(data_dir/gns3-tokens.enc) (env GNS3_COPILOT_HUB_SECRET; default: generated once "
        "into data_dir/account.secret, mode 0600)."
    ).tag(config=True)

    @default("gns3_timeout")
    def _gns3_timeout(self) -> float:
        return 30.0

    @default("budgets")
    def _budgets(self) -> dict[str, Any]:
        raw = os.environ.get("GNS3_COPILOT_HUB_BUDGETS", "")
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            self.log.critical("GNS3_COPILOT_HUB_BUDGETS is not JSON: %s", exc)
            self.exit(1)

    @default("ip")
    def _ip(self) -> str:
        return os.environ.get("GNS3_COPILOT_HUB_IP", "")

    @default("data_dir")
    def _data_dir(self) -> str:
        """`jupyter_gns3_copilot_hub` in the working directory."""
        return os.environ.get(
            "GNS3_COPILOT_HUB_DATA_DIR", str(Path.cwd() / "jupyter_gns3_copilot_hub")
        )

    @default("account_secret")
    def _account_secret(self) -> str:
        return os.environ.get("GNS3_COPILOT_HUB_SECRET", "")

    # -- lifecycle -------------------------------------------------------------------------

    @default("log_level")
    def _log_level(self) -> int:
        return logging.INFO  # the start line and the dashboard's actions

    def initialize(self, argv: Any = None) -> None:
        self.parse_command_line(argv)
        path = Path(self.config_file)
        if path.is_file():
            self.load_config_file(path.name, path=str(path.parent.resolve()))
        self.check()

    def exit(self, exit_status: int | str | None = 0) -> NoReturn:
        """traitlets' `exit` (it raises SystemExit), typed as never returning."""
        super().exit(exit_status)
        raise SystemExit(exit_status)

    def check(self) -> None:
        """Refuse to start with settings that cannot work (a readable SystemExit)."""
        problems = []
        if not self.llm_model:
            problems.append("llm_model (GNS3_COPILOT_MODEL) is not set")
        if not self.gns3_password:
            problems.append("gns3_password (GNS3_PASSWORD) is not set")
        unknown = [m for m in [*self.allowed_modes, self.default_mode] if m not in MODES]
        if unknown:
            problems.append(f"unknown mode {unknown[0]!r} (known: {', '.join(MODES)})")
        if not Path(self.data_dir).is_absolute():
            problems.append(f"data_dir must be an absolute path, got {self.data_dir!r}")
        try:
            BudgetPolicy.model_validate(self.budgets)
        except ValueError as exc:
            problems.append(f"budgets: {exc}")
        from .placement import check_rule

        try:
            check_rule(self.placement)
        except ValueError as exc:
            problems.append(str(exc))
        if problems:
            self.log.critical("The copilot hub service cannot start: %s", "; ".join(problems))
            self.exit(1)

    def settings(self, prefix: str) -> HubSettings:
        models = tuple(dict.fromkeys(m for m in [self.llm_model, self.title_model] if m))
        modes = tuple(self.allowed_modes)
        return HubSettings(
            prefix=prefix,
            gns3_url=self.gns3_url,
            model=self.llm_model,
            title_model=self.title_model,
            models=tuple(self.models) or models,
            allowed_modes=modes,
            default_mode=self.default_mode if self.default_mode in modes else modes[0],
            gateway_url=self.gateway_url.rstrip("/"),
            max_projects_per_student=self.max_projects_per_student,
            log_questions=self.log_questions,
            instructor_groups=tuple(self.instructor_groups),
        )

    def start(self) -> None:
        package_log = logging.getLogger(PACKAGE_LOGGER)
        package_log.parent = self.log
        package_log.setLevel(logging.NOTSET)
        kept = asyncio.run(self.serve())
        if kept:
            exec_again(kept)

    async def serve(self) -> list[int]:
        """Run until SIGTERM or SIGINT (then close everything and return []) or SIGHUP
        (let the requests in progress end, `DrainingHTTPServer.drain`, then close
        everything but the listening sockets, whose kept descriptors are returned for
        `restart.exec_again`: a restart in place, see `hub/restart.py`)."""
        import tornado.web
        from jupyterhub.services.auth import HubOAuth

        from ..gns3 import GNS3Client
        from .class_labs import ClassLabs
        from .dashboard import dashboard_settings
        from .dashboard_data import DashboardDeps
        from .draining_server import DrainingHTTPServer
        from .gateway import ModelGateway, UpstreamSettings
        from .grade_store import GradeStore
        from .hub_auth import HubIdentity, oauth_callback_route
        from .lab_accounts import LabAccounts
        from .placement import check_rule
        from .routes import routes
        from .student_accounts import StudentAccounts
        from .token_store import TOKENS_FILE, TokenStore
        from .usage import SqliteUsageStore

        prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{SERVICE_NAME}/")
        prefix = "/" + prefix.strip("/") + "/"
        url = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
        settings = self.settings(prefix)
        secret = (
            SecretStr(self.account_secret)
            if self.account_secret
            else SecretStr(read_or_create_secret(Path(self.data_dir) / SECRET_FILE))
        )
        store = await SqliteUsageStore.open(self.data_dir)
        grades = await GradeStore.open(self.data_dir)
        salt = self.lab_salt or read_or_create_secret(Path(self.data_dir) / SALT_FILE)
        admin = GNS3Client(
            self.gns3_url,
            username=self.gns3_username,
            password=self.gns3_password,
            timeout=self.gns3_timeout,
        )
        hub_auth = HubOAuth()
        identity = HubIdentity(hub_auth)
        policy = BudgetPolicy.model_validate(self.budgets)
        gateway = ModelGateway(
            UpstreamSettings(
                base_url=self.llm_base_url, api_key=self.llm_api_key, models=settings.models
            ),
            policy,
            store,
            identity.authenticate,
            log_questions=settings.log_questions,
        )
        tokens = TokenStore(Path(self.data_dir) / TOKENS_FILE, secret)
        accounts = LabAccounts(StudentAccounts(admin, secret, token_store=tokens))
        labs = ClassLabs(accounts, grades, store, salt)
        dashboard = DashboardDeps(
            accounts=accounts,
            usage=store,
            policy=policy,
            gns3=admin,
            current_caller=identity.current_caller,
            log_in=identity.log_in,
            group_members=identity.group_members,
            instructor_groups=frozenset(settings.instructor_groups),
            log_questions=settings.log_questions,
            hub_url=hub_auth.hub_prefix,
            labs=labs,
            placement=check_rule(self.placement),
        )
        runtime = HubRuntime(
            settings, accounts, identity, gateway, store, dashboard=dashboard, labs=labs
        )
        app = tornado.web.Application(
            [*routes(runtime), oauth_callback_route(f"{prefix}oauth_callback", hub_auth)],
            # Signs the OAuth cookie and the forms' XSRF cookie; a new one at each start
            # only makes the staff's browsers go through the hub's login again.
            cookie_secret=secrets.token_bytes(32),
            **dashboard_settings(prefix),
        )
        server = DrainingHTTPServer(app, xheaders=True)
        sockets = listening_sockets(url.port or 80, self.ip or url.hostname or "127.0.0.1")
        server.add_sockets(sockets)
        pid_file = write_pid_file(self.data_dir)
        self.log.info(
            "Copilot hub service on %s://%s:%s%s (GNS3 %s as %s, model %s at %s)",
            url.scheme,
            url.hostname,
            url.port,
            prefix,
            self.gns3_url,
            self.gns3_username,
            self.llm_model,
            self.llm_base_url,
        )
        stop = asyncio.Event()
        restart: list[bool] = []
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)

        def restart_in_place() -> None:
            restart.append(True)
            stop.set()

        loop.add_signal_handler(signal.SIGHUP, restart_in_place)
        kept: list[int] = []
        try:
            await stop.wait()
            if restart:
                self.log.info("SIGHUP: restarting in place; connections wait meanwhile")
                kept = keep_open(sockets)
            else:
                pid_file.unlink(missing_ok=True)
        finally:
            server.stop()
            if restart:
                cut = await server.drain()
                if cut:
                    self.log.warning("SIGHUP: %d request(s) still in progress are cut", cut)
            await server.close_all_connections()
            await gateway.aclose()
            await admin.aclose()
            await store.close()
            await grades.close()
        return kept


def main(argv: Any = None) -> None:
    """`python -m jupyter_gns3_copilot.hub`."""
    service = CopilotHubService()
    service.initialize(argv)
    service.start()
