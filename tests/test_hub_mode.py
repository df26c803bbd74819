"""A student's server in hub mode, through a real Jupyter server (pytest-jupyter)
and the hub service's real routes (`hub.app.routes`: session, projects, gateway) on a real
tornado server on 127.0.0.1, with the real gns3-server 3.0.6 and the real SQLite usage
store.

The one stand-in is `TokenIdentity`: it stands for JupyterHub's `HubAuth` (which needs a
running hub) as a fixed token -> hub user table; `tests/test_hub_service.py` runs the
same routes under a real JupyterHub. For a slow first contact, `HeldStudents` (the real
`LabAccounts`, its account creation held back until the test lets it go) stands for a GNS3
busy hashing a whole class's new passwords.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.hub_mode import HUB_TOKEN, PREFIX, hub_service, student_server_config
from support.server import call, copilot_app, parse_sse, server_config
from tornado.httpclient import HTTPClientError

from jupyter_gns3_copilot.classroom.client import HubServiceClient
from jupyter_gns3_copilot.classroom.labs import HubProjectLabs
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.hub.app import SECRET_FILE, CopilotHubService
from jupyter_gns3_copilot.hub.runtime import HubRuntime
from jupyter_gns3_copilot.hub.student_accounts import LabStudent, StudentAccounts
from jupyter_gns3_copilot.hub.usage import ModelCall
from jupyter_gns3_copilot.labkit.ports import free_tcp_port
from jupyter_gns3_copilot.notebook.reports import status_text
from jupyter_gns3_copilot.private_files import read_or_create_secret


class HeldStudents(StudentAccounts):
    """TEST HOOK: the real `StudentAccounts`, whose account creation waits for `release`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = asyncio.Event()

    async def ensure_locked(self, hub_user: str) -> LabStudent:
        await self.release.wait()
        return await super().ensure_locked(hub_user)


@asynccontextmanager
async def held_service(
    port: int, lab: Any, directory: Path
) -> AsyncIterator[tuple[HubRuntime, HeldStudents]]:
    """`hub_service` whose account creation waits for `HeldStudents.release`."""
    async with hub_service(port, lab, directory / "hub", students_class=HeldStudents) as runtime:
        assert isinstance(runtime.accounts.students, HeldStudents)
        yield runtime, runtime.accounts.students


@pytest.fixture
def service_port() -> int:
    return free_tcp_port()


@pytest.fixture
def hub_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The variable JupyterHub gives a single-user server (its own hub token)."""
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", HUB_TOKEN)


@pytest.fixture
def jp_server_config(hub_env: None, service_port: int, tmp_path: Path) -> dict[str, Any]:
    return student_server_config(tmp_path, service_port)


async def get_json(jp_fetch: Any, *parts: str, **kwargs: Any) -> Any:
    return json.loads((await jp_fetch("copilot", *parts, **kwargs)).body)


@pytest.mark.lab
async def test_hub_mode_takes_gns3_and_the_model_from_the_service(
    jp_fetch: Any, gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    service_url = f"http://127.0.0.1:{service_port}{PREFIX}"
    async with hub_service(service_port, gns3_lab, tmp_path / "hub") as runtime:
        status = await get_json(jp_fetch, "status")
        assert status["mode"] == "hub"
        assert status["mode_summary"] == f"hub mode, service {service_url}, reachable"
        assert status["hub"]["gns3_username"] == runtime.accounts.students.username("alice")
        assert status["gns3"]["authenticated"] is True and status["gns3"]["url"] == gns3_lab.url
        text = status_text(status, "http://jupyter/")
        assert f"Settings: hub mode, service {service_url}, reachable\nGNS3: {gns3_lab.url}" in text

        # The model is the service's gateway with the server's hub token; modes are the hub's.
        config = await get_json(jp_fetch, "llm-config")
        assert config["base_url"] == f"{service_url}v1"
        assert config["model"] == "scripted-model"
        assert (config["api_key_set"], config["allowed_modes"]) == (True, ["teaching_assistant"])
        assert HUB_TOKEN not in json.dumps(config)
        for body in ({"base_url": "https://api.openai.com/v1"}, {"api_key": "sk-mine"}):
            with pytest.raises(HTTPClientError) as refused:
                await jp_fetch("copilot", "llm-config", method="PUT", body=json.dumps(body))
            assert refused.value.code == 403
            assert "hub mode" in json.loads(refused.value.response.body)["error"]["message"]
        changed = await get_json(
            jp_fetch, "llm-config", method="PUT", body=json.dumps({"temperature": 0.5})
        )
        assert changed["temperature"] == 0.5

        # GNS3 as alice's own account: her pool's projects only.
        assert await get_json(jp_fetch, "projects") == []
        project = await runtime.accounts.create_project_for("alice", f"{service_port}-lab")
        listed = await get_json(jp_fetch, "projects")
        assert [p["project_id"] for p in listed] == [project.project_id]

        # The service caps a student's projects.
        async with httpx.AsyncClient(trust_env=False) as client:
            response = await client.post(
                f"{service_url}api/projects",
                json={"name": f"{service_port}-second"},
                headers={"Authorization": f"token {HUB_TOKEN}"},
            )
        assert response.status_code == 409
        assert "the most allowed per student (1)" in response.json()["error"]["message"]


ONE_PC_LAB = """\
title: One PC
stages:
  - id: start
    title: Start PC1
    snapshot: fresh
    objectives:
      - id: pc1-runs
        text: PC1 runs
        check: {kind: node_running, node: PC1}
"""


@pytest.mark.lab
async def test_the_lab_routes_ask_the_hub_service_through_the_same_interface(
    jp_fetch: Any, jp_serverapp: Any, gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    """In hub mode the lab routes are the same code as elsewhere: `project_labs()` is the
    provider that asks the service's lab routes (attach, view, a check streamed, a
    catch-up refused until confirmed, then done by the service)."""
    modes = ("teaching_assistant", "lab_automation_assistant")
    hub = tmp_path / "hub"
    async with hub_service(service_port, gns3_lab, hub, labs=True, allowed_modes=modes) as runtime:
        project = await runtime.accounts.create_project_for("alice", f"{service_port}-lab")
        admin = runtime.accounts.admin
        await admin.create_node_from_template(project.project_id, "VPCS", "PC1")
        await admin.create_snapshot(project.project_id, "fresh")
        lab = ("copilot", "projects", project.project_id, "lab")

        body = {"text": ONE_PC_LAB, "copilot_mode": "lab_automation_assistant"}
        attached = await call(jp_fetch, *lab, method="PUT", body=body)
        assert attached.code == 200, attached.body
        assert [o["text"] for o in attached.body["stages"][0]["objectives"]] == ["PC1 runs"]
        assert isinstance(copilot_app(jp_serverapp).project_labs(), HubProjectLabs)

        checked = await call(jp_fetch, *lab, "checks", method="POST", body={})
        assert checked.code == 200, checked.body
        events = [e for e in parse_sse(checked.body)[0] if e["type"] != "heartbeat"]
        assert [e["type"] for e in events] == ["check_result", "check_summary", "done"]
        assert events[0]["result"]["status"] == "fail"  # PC1 is not started
        seen = await call(jp_fetch, *lab)
        assert seen.body["stages"][0]["objectives"][0]["status"] == "fail"

        catch_up = (*lab, "stages", "start", "catch-up")
        asked = await call(jp_fetch, *catch_up, method="POST", body={})
        assert asked.code == 400 and asked.error["type"] == "ConfirmationNeeded", asked.body
        assert (asked.error["field"], asked.error["rule"]) == ("confirm", "true to restore")
        assert "restores the snapshot 'fresh'" in asked.error["message"]
        assert asked.error["field"] == "confirm"
        done = await call(jp_fetch, *catch_up, method="POST", body={"confirm": True})
        assert done.code == 200, done.body
        assert done.body == {"stage": "start", "snapshot": "fresh", "restored": True}
        nodes = await admin.list_nodes(project.project_id)
        assert [n.status for n in nodes] == ["started"]
        restored = await call(jp_fetch, *lab)
        assert restored.body["stages"][0]["objectives"][0]["status"] is None


@pytest.mark.lab
async def test_the_session_is_renewed_before_the_gns3_token_expires(
    gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    async with hub_service(service_port, gns3_lab, tmp_path / "hub") as runtime:
        now = datetime.now(timezone.utc)
        clock = [now]
        hub = HubServiceClient(
            f"http://127.0.0.1:{service_port}{PREFIX}", HUB_TOKEN, clock=lambda: clock[0]
        )
        try:
            first = await hub.session()
            assert first.gns3_token_expires_at is not None
            assert await hub.gns3_token() == first.gns3_token.get_secret_value()
            assert runtime.identity.calls == 1  # cached
            clock[0] = first.gns3_token_expires_at - timedelta(minutes=4)
            await hub.gns3_token()
            assert runtime.identity.calls == 2  # due: fetched again
            renewed = await hub.gns3_token(force=True)
            assert runtime.identity.calls == 3  # GNS3 refused it: fetched again...
            first_renewal = runtime.renewed["alice"]  # ... with a new login
            async with GNS3Client(gns3_lab.url, token=renewed) as as_alice:
                assert await as_alice.list_projects() == []
            await hub.gns3_token(force=True)
            assert runtime.identity.calls == 4
            assert runtime.renewed["alice"] == first_renewal  # logins at most once a minute
        finally:
            await hub.aclose()


class TestClassSecrets:
    @pytest.fixture(params=["gns3_password", "gns3_token", "llm_api_key"])
    def secret(self, request: pytest.FixtureRequest) -> str:
        return request.param

    @pytest.fixture
    def jp_server_config(  # type: ignore[override]
        self, hub_env: None, service_port: int, tmp_path: Path, secret: str
    ) -> dict[str, Any]:
        return student_server_config(tmp_path, service_port, **{secret: "a-class-secret"})

    async def test_a_class_secret_on_a_students_server_closes_the_copilot(
        self, jp_fetch: Any, secret: str
    ) -> None:
        with pytest.raises(HTTPClientError) as closed:
            await jp_fetch("copilot", "status")
        assert closed.value.code == 503
        error = json.loads(closed.value.response.body)["error"]
        assert error["setting"] == secret
        assert "hub mode" in error["message"]
        assert "a-class-secret" not in closed.value.response.body.decode()


@pytest.mark.lab
async def test_a_student_is_told_when_their_questions_are_logged(
    jp_fetch: Any, gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    async with hub_service(service_port, gns3_lab, tmp_path / "hub", log_questions=True):
        status = await get_json(jp_fetch, "status")
    assert status["hub"]["questions_logged"] is True
    logged = ", reachable; your questions are logged for the course staff"
    assert status["mode_summary"].endswith(logged)
    assert f"Settings: hub mode, service http://127.0.0.1:{service_port}{PREFIX}{logged}" in (
        status_text(status, "http://jupyter/")
    )


@pytest.mark.lab
async def test_the_status_says_how_much_budget_the_student_has_left_today(
    jp_fetch: Any, gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    """Given alice (the default 50,000 tokens a day) who used 1,234 tokens today and bob
    19,000; then her status says 48,766 left; once a course-wide cap of 20,000 is set (the
    class used 20,234), the tighter limit says 0."""
    async with hub_service(service_port, gns3_lab, tmp_path / "hub") as runtime:
        now = datetime.now(timezone.utc)
        for user, tokens in (("alice", 1_234), ("bob", 19_000)):
            await runtime.store.record(
                ModelCall(
                    user=user,
                    groups=frozenset({"students"}),
                    model="scripted-model",
                    started_at=now,
                    ended_at=now,
                    status="ok",
                    prompt_tokens=tokens,
                    completion_tokens=0,
                )
            )
        status = await get_json(jp_fetch, "status")
        assert status["hub"]["budget_left"] == 50_000 - 1_234
        await runtime.store.set_override("course", "", 20_000)
        status = await get_json(jp_fetch, "status")
        assert status["hub"]["budget_left"] == 0


class TestSlowFirstContact:
    """A student's first contact, while the service is slow to make their GNS3 account."""

    ATTEMPT = 2.0
    """The server's hub timeout here (its default is 15 s)."""

    @pytest.fixture
    def jp_server_config(  # type: ignore[override]
        self, hub_env: None, service_port: int, tmp_path: Path
    ) -> dict[str, Any]:
        return server_config(
            tmp_path / "copilot-data",
            hub_service_url=f"http://127.0.0.1:{service_port}{PREFIX}",
            gns3_password="",
            gns3_timeout=self.ATTEMPT,
        )

    @pytest.fixture
    def client_log(self) -> Any:
        records: list[logging.LogRecord] = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = records.append  # type: ignore[method-assign]
        logger = logging.getLogger("jupyter_gns3_copilot.classroom.client")
        logger.addHandler(handler)
        yield records
        logger.removeHandler(handler)

    @pytest.mark.lab
    async def test_the_server_asks_again_and_gets_the_session(
        self, jp_fetch: Any, gns3_lab: Any, service_port: int, tmp_path: Path, client_log: Any
    ) -> None:
        async with held_service(service_port, gns3_lab, tmp_path) as (runtime, accounts):
            projects = asyncio.ensure_future(get_json(jp_fetch, "projects"))
            while runtime.identity.calls < 2:  # the first attempt timed out: asked again
                assert not projects.done()
                await asyncio.sleep(0.05)
            accounts.release.set()
            assert await projects == []
        # Asked again after each slow answer (a third time when making the account, once
        # let go, took GNS3 longer than an attempt on a busy machine).
        asked = runtime.identity.calls
        assert asked in (2, 3)
        lines = [r.getMessage() for r in client_log]
        assert len(lines) == asked - 1
        for attempt, line in enumerate(lines, 1):
            assert f"did not answer within 2 s (attempt {attempt} of 3" in line
            assert line.endswith("asking again.")

    @pytest.mark.lab
    async def test_a_service_still_slow_is_called_slow_not_unreachable(
        self, jp_fetch: Any, gns3_lab: Any, service_port: int, tmp_path: Path, client_log: Any
    ) -> None:
        async with held_service(service_port, gns3_lab, tmp_path) as (runtime, accounts):
            try:
                with pytest.raises(HTTPClientError) as slow:
                    await jp_fetch("copilot", "projects")
                assert slow.value.code == 503
                error = json.loads(slow.value.response.body)["error"]
                assert error["type"] == "HubServiceSlow" and error.get("setting") is None
                assert error["message"].startswith(
                    "The copilot hub service is slow to answer: it did not give this server "
                    "its session in 3 tries of 2 s."
                )
                assert "reached" not in error["message"]
                assert "GNS3_COPILOT_HUB_URL" not in error["message"]
                assert runtime.identity.calls == 3
                assert len(client_log) == 2

                status = await get_json(jp_fetch, "status")
                assert status["hub"]["slow"] is True
                assert status["mode_summary"].startswith(
                    f"hub mode, service http://127.0.0.1:{service_port}{PREFIX}, slow to answer: "
                )
            finally:
                accounts.release.set()
            # Once the account is made, the next request gets the session at once.
            assert await get_json(jp_fetch, "projects") == []


async def test_without_the_service_copilot_routes_say_so_and_status_still_answers(
    jp_fetch: Any, service_port: int
) -> None:
    status = await get_json(jp_fetch, "status")
    assert status["mode"] == "hub" and status["hub"]["reachable"] is False
    assert status["mode_summary"].startswith(
        f"hub mode, service http://127.0.0.1:{service_port}{PREFIX}, NOT reachable: "
    )
    assert "GNS3_COPILOT_HUB_URL" in status["hub"]["error"]
    with pytest.raises(HTTPClientError) as down:
        await jp_fetch("copilot", "projects")
    assert down.value.code == 503
    assert json.loads(down.value.response.body)["error"]["setting"] == "hub_service_url"


def test_the_account_secret_is_generated_once_and_private(tmp_path: Path) -> None:
    path = tmp_path / "service" / SECRET_FILE
    first = read_or_create_secret(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert read_or_create_secret(path) == first
    assert len(first) >= 32


def test_service_settings_come_from_the_config_file_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GNS3_COPILOT_MODEL", "env-model")
    monkeypatch.setenv("GNS3_PASSWORD", "env-password")
    monkeypatch.setenv("GNS3_COPILOT_ALLOWED_MODES", "teaching_assistant")
    monkeypatch.setenv("GNS3_COPILOT_HUB_BUDGETS", '{"group_daily_tokens": {"students": 7}}')
    monkeypatch.setenv("GNS3_COPILOT_HUB_DATA_DIR", str(tmp_path / "data"))
    config = tmp_path / "hub_config.py"
    config.write_text('c.CopilotHubService.title_model = "file-title"\n')
    service = CopilotHubService()
    service.initialize([f"--config={config}", "--CopilotHubService.max_projects_per_student=3"])
    settings = service.settings(PREFIX)
    assert (settings.model, settings.title_model) == ("env-model", "file-title")
    assert settings.models == ("env-model", "file-title")
    assert settings.allowed_modes == ("teaching_assistant",)
    assert settings.max_projects_per_student == 3
    assert service.budgets == {"group_daily_tokens": {"students": 7}}
    assert "env-password" not in settings.model_dump_json()


def test_the_service_refuses_to_start_without_a_model_or_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    for name in ("GNS3_COPILOT_MODEL", "GNS3_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    service = CopilotHubService()
    with pytest.raises(SystemExit) as stopped:
        service.initialize([])
    assert stopped.value.code == 1
    assert (
        "cannot start: llm_model (GNS3_COPILOT_MODEL) is not set; gns3_password "
        "(GNS3_PASSWORD) is not set" in capfd.readouterr().err
    )
