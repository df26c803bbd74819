"""The instructor dashboard's service for tests (tests/test_hub_dashboard.py,
tests/test_hub_grades.py, the browser test of the page): `dashboard_service` runs the real
handlers, usage store and GNS3 admin client with a test caller lookup (a header or cookie
naming the hub user, standing in for JupyterHub's login); `record_usage`; the lab file of
the grading tests (`LAB`, and `FORGED`, a student's own copy that must change nothing),
`make_template`, `host` (an objective's address in a lab view) and `type_into` (a command
typed on a device's console)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import tornado.httpserver
import tornado.netutil
import tornado.web
from pydantic import SecretStr
from tornado.httputil import HTTPServerRequest
from tornado.web import RequestHandler

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.hub.budgets import BudgetPolicy
from jupyter_gns3_copilot.hub.caller import Caller
from jupyter_gns3_copilot.hub.class_labs import ClassLabs
from jupyter_gns3_copilot.hub.dashboard import dashboard_handlers, dashboard_settings
from jupyter_gns3_copilot.hub.dashboard_data import DashboardDeps
from jupyter_gns3_copilot.hub.gateway import ModelGateway, UpstreamSettings, bearer_token
from jupyter_gns3_copilot.hub.gateway_handlers import gateway_routes
from jupyter_gns3_copilot.hub.grade_store import GradeStore
from jupyter_gns3_copilot.hub.lab_accounts import LabAccounts
from jupyter_gns3_copilot.hub.placement import TEMPLATE, PlacementRule
from jupyter_gns3_copilot.hub.student_accounts import StudentAccounts
from jupyter_gns3_copilot.hub.usage import ModelCall, SqliteUsageStore
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, ToolContext, execute_tool

SERVICE = "/services/copilot"
DASHBOARD = f"{SERVICE}/dashboard"
UPSTREAM_KEY = "sk-upstream-dashboard-key"
TEST_USER_HEADER = "X-Test-Hub-User"
TEST_USER_COOKIE = "test-hub-user"
CALLERS = {
    "ines": Caller(name="ines", groups=frozenset({"instructors"})),
    "root": Caller(name="root", admin=True),
    "alice": Caller(name="alice", groups=frozenset({"students"})),
    "bob": Caller(name="bob", groups=frozenset({"students"})),
}


POLICY = BudgetPolicy(group_daily_tokens={"students": 1000, "tas": None})
NOW = datetime(2026, 12, 1, 15, 0, tzinfo=timezone.utc)


async def caller_from_request(handler: RequestHandler) -> Caller | None:
    """STAND-IN for HubOAuth / HubAuth: the hub user named by a test header or cookie."""
    name = handler.request.headers.get(TEST_USER_HEADER) or handler.get_cookie(TEST_USER_COOKIE)
    return CALLERS.get(name or "")


async def gateway_caller(request: HTTPServerRequest) -> Caller | None:
    """STAND-IN for HubAuth on the gateway: the token is the hub user's name."""
    return CALLERS.get(bearer_token(request) or "")


@dataclass
class Service:
    """The dashboard (and the gateway) on one tornado server on 127.0.0.1."""

    url: str
    """The dashboard's URL, ending with "/"."""
    gateway_url: str
    deps: DashboardDeps
    store: SqliteUsageStore

    def client(self, user: str | None = "ines") -> httpx.AsyncClient:
        headers = {TEST_USER_HEADER: user} if user else {}
        return httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=60, trust_env=False, follow_redirects=True
        )


@asynccontextmanager
async def dashboard_service(
    data_dir: Path,
    gns3: GNS3Client,
    *,
    account_prefix: str = "hub-",
    upstream: ScriptedLLM | None = None,
    log_questions: bool = False,
    lab_salt: str | None = None,
    placement: PlacementRule = TEMPLATE,
) -> AsyncIterator[Service]:
    """The dashboard with `gns3` as the admin client (and the gateway if `upstream`; the
    service's lab checks and grades with the class salt `lab_salt`; assigned copies placed
    by `placement`)."""
    store = await SqliteUsageStore.open(data_dir)
    accounts = LabAccounts(
        StudentAccounts(
            gns3,
            SecretStr("dashboard-test-secret"),
            prefix=account_prefix,
            group=f"{account_prefix}students",
        )
    )
    grades = await GradeStore.open(data_dir) if lab_salt else None
    labs = ClassLabs(accounts, grades, store, lab_salt) if grades and lab_salt else None
    deps = DashboardDeps(
        accounts=accounts,
        usage=store,
        policy=POLICY,
        gns3=gns3,
        current_caller=caller_from_request,
        log_questions=log_questions,
        clock=lambda: NOW,
        labs=labs,
        placement=placement,
    )
    routes = dashboard_handlers(DASHBOARD, deps)
    gateway = None
    if upstream is not None:
        settings = UpstreamSettings(base_url=upstream.base_url, api_key=UPSTREAM_KEY)
        gateway = ModelGateway(
            settings, POLICY, store, gateway_caller, clock=lambda: NOW, log_questions=log_questions
        )
        routes += gateway_routes(gateway, SERVICE)
    app = tornado.web.Application(routes, **dashboard_settings(f"{SERVICE}/"))
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server = tornado.httpserver.HTTPServer(app)
    server.add_sockets(sockets)
    base = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
    try:
        yield Service(f"{base}{DASHBOARD}/", f"{base}{SERVICE}/v1", deps, store)
    finally:
        server.stop()
        await server.close_all_connections()
        if gateway is not None:
            await gateway.aclose()
        await store.close()
        if grades is not None:
            await grades.close()


async def record_usage(store: SqliteUsageStore, user: str, tokens: int, turn: str) -> None:
    """One finished model call of `user` today (as the gateway records it)."""
    caller = CALLERS[user]
    await store.record(
        ModelCall(
            user=user,
            groups=caller.groups,
            model="scripted-model",
            started_at=NOW - timedelta(minutes=5),
            ended_at=NOW - timedelta(minutes=4),
            status="ok",
            prompt_tokens=tokens - tokens // 4,
            completion_tokens=tokens // 4,
            turn_id=turn,
        )
    )


LAB = textwrap.dedent(
    """\
    title: Two PCs
    parameters:
      net: {subnet: {pool: 10.40.0.0/16, prefix: 24}}
    stages:
      - id: addressing
        title: Address the PCs
        objectives:
          - id: pc1-address
            text: "PC1 has {{ net | host(1) }}/24"
            points: 2
            check: {kind: address, node: PC1, address: "{{ net | host(1) }}/24"}
          - id: pc2-address
            text: "PC2 has {{ net | host(2) }}/24"
            check: {kind: address, node: PC2, address: "{{ net | host(2) }}/24"}
      - id: reach
        title: Reachability
        objectives:
          - id: pc1-pc2
            text: PC1 reaches PC2
            check: {kind: reachable, from: PC1, to: PC2}
    """
)


FORGED = textwrap.dedent(
    """\
    title: Two PCs
    stages:
      - id: addressing
        title: Address the PCs
        objectives:
          - {id: pc1-address, text: easy, points: 2, check: {kind: node_running, node: PC1}}
          - {id: pc2-address, text: easy, check: {kind: node_running, node: PC2}}
      - id: reach
        title: Reachability
        objectives:
          - {id: pc1-pc2, text: easy, check: {kind: node_running, node: PC1}}
    """
)


async def make_template(gns3: GNS3Client, name: str, lab: str = LAB) -> str:
    """A template project: PC1 - PC2 cabled, with `lab` as its lab file, closed."""
    template = await gns3.create_project(name)
    await gns3.create_node_from_template(template.project_id, "VPCS", "PC1")
    await gns3.create_node_from_template(template.project_id, "VPCS", "PC2")
    await gns3.create_link(template.project_id, "PC1", "e0", "PC2", "e0")
    await gns3.write_project_file(template.project_id, "lab.yaml", lab.encode())
    await gns3.close_project(template.project_id)
    return template.project_id


def host(view: dict[str, Any], objective: str) -> str:
    """The address an objective's text asks for in a lab view (`PC1 has 10.40.7.1/24`)."""
    text = next(o["text"] for s in view["stages"] for o in s["objectives"] if o["id"] == objective)
    found = re.search(r"(\d+\.\d+\.\d+\.\d+/\d+)", text)
    assert found, text
    return found.group(1)


async def type_into(gns3: GNS3Client, project_id: str, device: str, command: str) -> None:
    """What the student types into a device of theirs (the copilot's command tool)."""
    async with ConsolePool() as pool:
        ctx = ToolContext(gns3=gns3, project_id=project_id, consoles=pool, mode=LAB_AUTOMATION)
        outcome = await execute_tool(
            ctx, "run_vpcs_commands", {"devices": [{"device": device, "commands": [command]}]}
        )
    assert outcome.ok, outcome.result
