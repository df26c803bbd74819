"""The copilot hub service in-process for a student's server in hub mode
(tests/test_hub_mode.py, tests/test_console_websocket.py): `hub_service` runs its routes on
a port with a token table standing in for JupyterHub's identity (`TokenIdentity`, the
server's `HUB_TOKEN`) under `PREFIX`; with `labs`, its lab routes too (the real
`ClassLabs` and `GradeStore`); with `dashboard`, the instructor dashboard at `PREFIX`
(its callers named by `support.dashboard`'s test header)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import tornado.httpserver
import tornado.web
from pydantic import SecretStr
from tornado.httputil import HTTPServerRequest

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.hub.budgets import BudgetPolicy
from jupyter_gns3_copilot.hub.caller import Caller
from jupyter_gns3_copilot.hub.class_labs import ClassLabs
from jupyter_gns3_copilot.hub.dashboard import dashboard_settings
from jupyter_gns3_copilot.hub.dashboard_data import DashboardDeps
from jupyter_gns3_copilot.hub.gateway import ModelGateway, UpstreamSettings, bearer_token
from jupyter_gns3_copilot.hub.grade_store import GradeStore
from jupyter_gns3_copilot.hub.lab_accounts import LabAccounts
from jupyter_gns3_copilot.hub.routes import routes
from jupyter_gns3_copilot.hub.runtime import HubRuntime, HubSettings
from jupyter_gns3_copilot.hub.student_accounts import StudentAccounts
from jupyter_gns3_copilot.hub.usage import SqliteUsageStore
from support.dashboard import caller_from_request
from support.server import server_config

PREFIX = "/services/gns3-copilot/"
HUB_TOKEN = "hub-token-of-alices-server"


def student_server_config(tmp_path: Path, service_port: int, **traits: Any) -> dict[str, Any]:
    """A student's server in hub mode with the service on `service_port` (the caller sets
    JUPYTERHUB_API_TOKEN to `HUB_TOKEN`, as JupyterHub would), plus `traits`."""
    return server_config(
        tmp_path / "copilot-data",
        hub_service_url=f"http://127.0.0.1:{service_port}{PREFIX}",
        **{"gns3_password": "", **traits},
    )


class TokenIdentity:
    """STAND-IN for `HubIdentity` over `HubAuth`: one known token; counts the calls."""

    def __init__(self, tokens: dict[str, Caller]) -> None:
        self.tokens = tokens
        self.calls = 0

    async def authenticate(self, request: HTTPServerRequest) -> Caller | None:
        self.calls += 1
        return self.tokens.get(bearer_token(request) or "")


@asynccontextmanager
async def hub_service(
    port: int,
    lab: Any,
    data_dir: Path,
    *,
    log_questions: bool = False,
    students_class: type[StudentAccounts] = StudentAccounts,
    labs: bool = False,
    allowed_modes: tuple[str, ...] = ("teaching_assistant",),
    dashboard: bool = False,
) -> AsyncIterator[HubRuntime]:
    """The service's routes on 127.0.0.1:`port`, students prefixed uniquely per test."""
    store = await SqliteUsageStore.open(data_dir)
    admin = GNS3Client(lab.url, username=lab.username, password=lab.password)
    identity = TokenIdentity({HUB_TOKEN: Caller(name="alice", groups=frozenset({"students"}))})
    gateway = ModelGateway(
        UpstreamSettings(base_url="http://127.0.0.1:9/v1"),
        BudgetPolicy(),
        store,
        identity.authenticate,
    )
    settings = HubSettings(
        prefix=PREFIX,
        gns3_url=lab.url,
        model="scripted-model",
        title_model="",
        models=("scripted-model",),
        allowed_modes=allowed_modes,
        default_mode="teaching_assistant",
        gateway_url="",
        max_projects_per_student=1,
        log_questions=log_questions,
        instructor_groups=("instructors",),
    )
    prefix = f"hubmode{port}-"
    accounts = LabAccounts(students_class(admin, SecretStr("test-secret"), prefix=prefix))
    grades = await GradeStore.open(data_dir) if labs else None
    class_labs = ClassLabs(accounts, grades, store, "class salt") if grades else None
    runtime = HubRuntime(settings, accounts, identity, gateway, store, labs=class_labs)
    if dashboard:
        runtime.dashboard = DashboardDeps(
            accounts=accounts,
            usage=store,
            policy=BudgetPolicy(),
            gns3=admin,
            current_caller=caller_from_request,
            labs=class_labs,
        )
    app = tornado.web.Application(routes(runtime), **dashboard_settings(PREFIX))
    server = tornado.httpserver.HTTPServer(app)
    server.listen(port, "127.0.0.1")
    try:
        yield runtime
    finally:
        server.stop()
        await server.close_all_connections()
        for project in await accounts.student_projects("alice"):
            await admin.delete_project(project.project_id)
        await gateway.aclose()
        await admin.aclose()
        await store.close()
        if grades is not None:
            await grades.close()
