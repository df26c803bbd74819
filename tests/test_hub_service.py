"""The copilot hub service on a REAL JupyterHub: DummyAuthenticator, local
process spawner, configurable-http-proxy from npm, the real gns3-server 3.0.6 of the lab
kit, and the scripted model server (a TEST DOUBLE of the OpenAI API, a real HTTP server)
as the gateway's upstream, requiring the upstream key.

The hub runs the service `gns3-copilot` (`python -m jupyter_gns3_copilot.hub`) with the
GNS3 admin password and the model key in the SERVICE's environment only; the students'
servers get nothing but `GNS3_COPILOT_HUB_URL` (and PATH, to find this venv). Two students,
alice and bob (group `students`, a tiny daily budget), and carol (group `instructors`,
for the dashboard).

What is proved: no class secret in a student's server's or kernel's environment
(`/proc/<pid>/environ`), in their home directory, or in any response; alice's chat goes
through the gateway (the upstream sees the real key, the usage store records alice); bob
can neither list, open, close nor delete alice's project, through his copilot or with the
GNS3 token found in his own server; alice over budget gets the readable line as her turn's
error event while bob's turn still works; in chromium (marked `browser`), carol logs in
through the hub's login form and the service's OAuth, sees both students' usage on the
dashboard, assigns a template lab (each student's GNS3 token lists their own copy) and
resets alice's; the same API answers her hub token, and assigning to the group reaches
its hub members (dave, never seen by the service); bob, logged in the same way, gets 403.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

# Chromium fixtures of tests/browser (and its no-op stand-ins for pytest-jupyter's per-test
# event loop, which would close Playwright's), for the dashboard test below.
from browser.conftest import (  # noqa: F401
    browser_context,
    jp_asyncio_loop,
    jp_server_cleanup,
    page,
    screenshots,
)
from test_jupyterhub import _stop, local_hub_settings, wait_for
from test_server_support import TITLE_REPLY, parse_sse

from jupyter_gns3_copilot.hub.lab_accounts import lab_name
from jupyter_gns3_copilot.labkit.ports import free_tcp_port
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

pytestmark = [pytest.mark.lab, pytest.mark.slow]

SERVICE = "gns3-copilot"
STUDENTS = ("alice", "bob")
INSTRUCTOR = "carol"
NEWCOMER = "dave"
"""A student of the hub's group who has never started a server or used the copilot."""
UPSTREAM_KEY = "sk-upstream-class-key-7GqVt2LmZ"
MODEL = "scripted-model"
DAILY_TOKENS = 500
SERVICE_ENV = (
    "GNS3_URL",
    "GNS3_USER",
    "GNS3_PASSWORD",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "GNS3_COPILOT_MODEL",
    "GNS3_COPILOT_HUB_BUDGETS",
    "GNS3_COPILOT_HUB_DATA_DIR",
)

HUB_CONFIG = """\
import os
import sys

c.JupyterHub.services = [
    {{
        "name": "{service}",
        "url": "http://127.0.0.1:{service_port}",
        "command": [sys.executable, "-m", "jupyter_gns3_copilot.hub"],
        # The class secrets, from the hub's own environment: never the spawner's.
        "environment": {{name: os.environ[name] for name in {service_env!r}}},
        # The dashboard's browser login: the hub's own service, no "authorize?" page.
        "oauth_no_confirm": True,
    }},
    {{"name": "classroom-tests", "api_token": os.environ["TEST_ADMIN_TOKEN"]}},
]
c.JupyterHub.load_roles = [
    {{
        # Users hold the access scope (a server's token gets only scopes its user holds).
        "name": "user",
        "scopes": ["self", "access:services!service={service}"],
    }},
    {{
        # The single-user servers' own token may call the copilot service.
        "name": "server",
        "scopes": [
            "users:activity!user",
            "access:servers!server",
            "access:services!service={service}",
        ],
    }},
    {{
        # The service reads group members (the dashboard's "assign to a group").
        "name": "gns3-copilot-service",
        "scopes": ["read:groups"],
        "services": ["{service}"],
    }},
    {{
        "name": "classroom-tests",
        "scopes": ["admin:users", "admin:servers", "tokens", "admin:groups"],
        "services": ["classroom-tests"],
    }},
]
c.JupyterHub.load_groups = {{
    "students": {{"users": {students!r} + [{newcomer!r}]}},
    "instructors": {{"users": [{instructor!r}]}},
}}
c.Spawner.environment = {{
    "GNS3_COPILOT_HUB_URL": "{hub_url}services/{service}/",
    "PATH": {path!r},
}}
"""


@dataclass
class ServiceHub:
    """The running hub, the service's data directory and what the test saw."""

    url: str
    llm: ScriptedLLM
    api: httpx.Client
    directory: Path
    secrets: tuple[str, ...]
    tokens: dict[str, str] = field(default_factory=dict)
    """Hub API tokens of the users (as a browser session would be)."""
    responses: list[str] = field(default_factory=list)

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"token {self.tokens[user]}"}

    def server_url(self, user: str, *parts: str) -> str:
        return "/".join([f"{self.url}user/{user}", *parts])

    def service_url(self, *parts: str) -> str:
        return "/".join([f"{self.url}services/{SERVICE}", *parts])

    def server_pid(self, user: str) -> int:
        return int(self.api.get(f"/users/{user}").json()["servers"][""]["state"]["pid"])

    def server_token(self, user: str) -> str:
        """The JUPYTERHUB_API_TOKEN of `user`'s server: what a student finds in it."""
        return environ(self.server_pid(user))["JUPYTERHUB_API_TOKEN"]

    def seen(self, response: httpx.Response) -> httpx.Response:
        self.responses.append(response.text)
        return response


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="module")
def service_hub(gns3_lab: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceHub]:
    directory = tmp_path_factory.mktemp("hub-service")
    admin_token = uuid.uuid4().hex
    port = free_tcp_port()
    hub_url = f"http://127.0.0.1:{port}/"
    venv_bin = str(Path(sys.executable).parent)
    settings = local_hub_settings(directory, port)
    config = [f"c.{name} = {value!r}" for name, value in settings.items()]
    config.append(
        HUB_CONFIG.format(
            service=SERVICE,
            service_port=free_tcp_port(),
            service_env=SERVICE_ENV,
            students=list(STUDENTS),
            newcomer=NEWCOMER,
            instructor=INSTRUCTOR,
            hub_url=hub_url,
            path=f"{venv_bin}:/usr/bin:/bin",
        )
    )
    (directory / "jupyterhub_config.py").write_text("\n".join(config) + "\n")
    with ScriptedLLM(api_key=UPSTREAM_KEY, models=[MODEL]) as llm:
        env = {
            **os.environ,
            "TEST_ADMIN_TOKEN": admin_token,
            "GNS3_URL": gns3_lab.url,
            "GNS3_USER": gns3_lab.username,
            "GNS3_PASSWORD": gns3_lab.password,
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": UPSTREAM_KEY,
            "GNS3_COPILOT_MODEL": MODEL,
            "GNS3_COPILOT_HUB_BUDGETS": json.dumps(
                {"group_daily_tokens": {"students": DAILY_TOKENS, "instructors": None}}
            ),
            "GNS3_COPILOT_HUB_DATA_DIR": str(directory / "service-data"),
        }
        log = (directory / "hub.log").open("w")
        process = subprocess.Popen(
            [str(Path(venv_bin) / "jupyterhub"), "-f", "jupyterhub_config.py"],
            cwd=directory,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        api = httpx.Client(
            base_url=f"{hub_url}hub/api",
            headers={"Authorization": f"token {admin_token}"},
            timeout=30,
            trust_env=False,
        )
        hub = ServiceHub(hub_url, llm, api, directory, secrets=(UPSTREAM_KEY, gns3_lab.password))
        servers: list[int] = []
        try:
            wait_for(lambda: api.get("/").status_code == 200, "the hub answering")
            wait_for(
                lambda: (
                    httpx.get(hub.service_url("api", "health"), trust_env=False).status_code == 200
                ),
                "the copilot service answering",
            )
            for user in STUDENTS:
                assert api.post(f"/users/{user}/server").status_code in (201, 202)
            for user in STUDENTS:
                wait_for(
                    lambda user=user: (
                        api.get(f"/users/{user}").json()["servers"].get("", {}).get("ready")
                    ),
                    f"{user}'s server starting",
                )
                reply = api.post(f"/users/{user}/tokens", json={"note": "hub service tests"})
                reply.raise_for_status()
                hub.tokens[user] = reply.json()["token"]
                servers.append(hub.server_pid(user))
            yield hub
        finally:
            for user in STUDENTS:
                with contextlib.suppress(httpx.HTTPError):
                    api.delete(f"/users/{user}/server")
            api.close()
            _stop(process, servers)
            log.close()


def chat(hub: ServiceHub, user: str, project_id: str, message: str) -> list[dict[str, Any]]:
    """One chat turn on `user`'s copilot, through the hub's proxy; its events."""
    events: list[dict[str, Any]] = []
    rest = ""
    url = hub.server_url(user, "copilot", "projects", project_id, "chat", "stream")
    with (
        httpx.Client(timeout=60, trust_env=False, headers=hub.headers(user)) as client,
        client.stream("POST", url, json={"message": message}) as response,
    ):
        assert response.status_code == 200, response.read()
        for chunk in response.iter_text():
            hub.responses.append(chunk)
            more, rest = parse_sse(rest + chunk)
            events += more
    return events


def test_students_get_sessions_and_labs_from_the_service_and_never_a_secret(
    service_hub: ServiceHub,
) -> None:
    hub = service_hub
    llm = hub.llm
    with httpx.Client(timeout=60, trust_env=False) as client:
        # The service knows each server by its hub token, never tells a secret.
        alice_server = {"Authorization": f"token {hub.server_token('alice')}"}
        bob_server = {"Authorization": f"token {hub.server_token('bob')}"}
        session = hub.seen(client.get(hub.service_url("api", "session"), headers=alice_server))
        assert session.status_code == 200, session.text
        body = session.json()
        assert (body["user"], body["groups"], body["gns3_username"]) == (
            "alice",
            ["students"],
            "hub-alice",
        )
        assert body["model_base_url"] == hub.service_url("v1")
        assert body["policy"]["users_may_choose_endpoints"] is False
        refused = hub.seen(
            client.get(hub.service_url("api", "session"), headers={"Authorization": "token x"})
        )
        assert refused.status_code == 401 and refused.json()["error"]["message"]

        # Alice's lab, created by the service in her pool.
        name = f"alice-lab-{uuid.uuid4().hex[:6]}"
        projects_url = hub.service_url("api", "projects")
        created = hub.seen(client.post(projects_url, headers=alice_server, json={"name": name}))
        assert created.status_code == 201, created.text
        project_id = created.json()["project_id"]
        bad = hub.seen(
            client.post(hub.service_url("api", "projects"), headers=alice_server, json={"nom": 1})
        )
        assert bad.status_code == 400 and "name" in bad.json()["error"]["message"]

        # Her copilot, in hub mode, says so and sees her project.
        status = hub.seen(
            client.get(hub.server_url("alice", "copilot", "status"), headers=hub.headers("alice"))
        )
        assert status.status_code == 200, status.text
        assert status.json()["mode_summary"] == (
            f"hub mode, service {hub.url}services/{SERVICE}/, reachable"
        )
        assert status.json()["gns3"]["authenticated"] is True
        listed = hub.seen(
            client.get(hub.server_url("alice", "copilot", "projects"), headers=hub.headers("alice"))
        )
        assert [p["project_id"] for p in listed.json()] == [project_id]

        # She cannot point her copilot elsewhere.
        elsewhere = hub.seen(
            client.put(
                hub.server_url("alice", "copilot", "llm-config"),
                headers=hub.headers("alice"),
                json={"base_url": "https://api.openai.com/v1", "api_key": "sk-mine"},
            )
        )
        assert elsewhere.status_code == 403
        assert "hub mode" in elsewhere.json()["error"]["message"]

        # Alice chats through the gateway: the upstream sees the class key, usage is hers.
        opened = hub.seen(
            client.post(
                hub.server_url("alice", "copilot", "projects", project_id, "open"),
                headers=hub.headers("alice"),
            )
        )
        assert opened.status_code == 200, opened.text
        llm.add(text("Your lab is empty.", usage={"prompt_tokens": 600, "completion_tokens": 5}))
        events = chat(hub, "alice", project_id, "What is in my lab?")
        kinds = [e["type"] for e in events]
        assert kinds[-1] == "done" and "error" not in kinds, events
        assert "".join(e.get("content", "") for e in events) == "Your lab is empty."
        upstream = llm.chat_requests
        assert upstream and all(
            r.headers.get("authorization") == f"Bearer {UPSTREAM_KEY}" for r in upstream
        )
        with sqlite3.connect(hub.directory / "service-data" / "usage.db") as db:
            rows = db.execute(
                "SELECT hub_user, status, prompt_tokens, turn_id IS NOT NULL FROM model_calls "
                "ORDER BY started_at"
            ).fetchall()
        assert rows[0] == ("alice", "ok", 600, 1), rows

        # Bob sees nothing of alice's lab through his copilot...
        bob = hub.headers("bob")
        theirs = hub.seen(client.get(hub.server_url("bob", "copilot", "projects"), headers=bob))
        assert theirs.status_code == 200
        assert project_id not in theirs.text
        for verb, parts in (
            ("POST", ("open",)),
            ("POST", ("close",)),
            ("DELETE", ()),
        ):
            answer = hub.seen(
                client.request(
                    verb,
                    hub.server_url("bob", "copilot", "projects", project_id, *parts),
                    headers=bob,
                )
            )
            assert answer.status_code in (403, 404), (verb, parts, answer.text)
        # ... nor with the GNS3 token his own server can get.
        bob_session = client.get(hub.service_url("api", "session"), headers=bob_server).json()
        gns3 = f"{bob_session['gns3_url']}/v3"
        bob_gns3 = {"Authorization": f"Bearer {bob_session['gns3_token']}"}
        listed = client.get(f"{gns3}/projects", headers=bob_gns3)
        assert listed.status_code == 200 and project_id not in listed.text
        for verb, path in (
            ("GET", ""),
            ("POST", "/open"),
            ("POST", "/close"),
            ("DELETE", ""),
        ):
            answer = client.request(verb, f"{gns3}/projects/{project_id}{path}", headers=bob_gns3)
            assert answer.status_code == 403, (verb, path, answer.text)
        mine = hub.seen(
            client.get(hub.server_url("alice", "copilot", "projects"), headers=hub.headers("alice"))
        )
        assert [p["status"] for p in mine.json()] == ["opened"]

        # Alice is over her budget: the readable line is her turn's error; bob goes on.
        events = chat(hub, "alice", project_id, "And now?")
        errors = [e["error"] for e in events if e["type"] == "error"]
        assert errors == [
            f"Your copilot budget for today is used up: 605 of {DAILY_TOKENS} tokens; it "
            "resets at 00:00 UTC."
        ], events
        bob_lab = hub.seen(
            client.post(
                hub.service_url("api", "projects"),
                headers=bob_server,
                json={"name": f"bob-lab-{uuid.uuid4().hex[:6]}"},
            )
        )
        assert bob_lab.status_code == 201, bob_lab.text
        bob_project = bob_lab.json()["project_id"]
        assert hub.seen(
            client.post(
                hub.server_url("bob", "copilot", "projects", bob_project, "open"), headers=bob
            )
        ).is_success
        llm.add(text("Hello bob.", usage={"prompt_tokens": 50, "completion_tokens": 3}))
        llm.add(text("Bob's lab", when=TITLE_REPLY))
        events = chat(hub, "bob", bob_project, "hello")
        assert [e["type"] for e in events][-1] == "done" and not [
            e for e in events if e["type"] == "error"
        ], events

    # No class secret in a student's server, kernel, files, or anything sent back.
    with httpx.Client(timeout=60, trust_env=False, headers=hub.headers("alice")) as client:
        kernel = client.post(hub.server_url("alice", "api", "kernels"), json={}).json()["id"]
        try:
            server_pid = hub.server_pid("alice")
            kernel_pids = wait_for(lambda: children(server_pid), "alice's kernel process")
            for pid in [server_pid, hub.server_pid("bob"), *kernel_pids]:
                env = environ(pid)
                assert env.get("GNS3_COPILOT_HUB_URL"), pid
                for secret in hub.secrets:
                    assert secret not in "\0".join(f"{k}={v}" for k, v in env.items()), pid
        finally:
            client.delete(hub.server_url("alice", "api", "kernels", kernel))
    for path in (hub.directory / "home").rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            for secret in hub.secrets:
                assert secret.encode() not in content, path
    for secret in hub.secrets:
        assert not [r for r in hub.responses if secret in r], secret


# -- the instructor dashboard in chromium, logged in through the hub ------------------------

def log_in_through_hub(tab: Any, hub: ServiceHub, user: str) -> Any:
    """Open the dashboard in a browser with no session: the service sends it to the hub's
    login (DummyAuthenticator's form), then back through OAuth; the dashboard's response."""
    tab.context.clear_cookies()
    tab.goto(hub.service_url(""))
    assert "/hub/login" in tab.url, tab.url
    tab.fill("#username_input", user)
    tab.fill("#password_input", "any password (DummyAuthenticator)")
    with tab.expect_response(lambda r: r.url == hub.service_url("")) as answer:
        tab.click("#login_submit")
    return answer.value


def gns3_projects(hub: ServiceHub, user: str) -> dict[str, str]:
    """`user`'s GNS3 projects (name -> id), asked of GNS3 with their own GNS3 token."""
    server = {"Authorization": f"token {hub.server_token(user)}"}
    session = httpx.get(hub.service_url("api", "session"), headers=server, trust_env=False)
    session.raise_for_status()
    body = session.json()
    listed = httpx.get(
        f"{body['gns3_url']}/v3/projects",
        headers={"Authorization": f"Bearer {body['gns3_token']}"},
        trust_env=False,
    )
    listed.raise_for_status()
    return {p["name"]: p["project_id"] for p in listed.json()}


def tokens_today(hub: ServiceHub) -> dict[str, int]:
    with sqlite3.connect(hub.directory / "service-data" / "usage.db") as db:
        rows = db.execute(
            "SELECT hub_user, SUM(prompt_tokens + completion_tokens) FROM model_calls "
            "GROUP BY hub_user"
        ).fetchall()
    return dict(rows)


@pytest.mark.browser
def test_the_instructor_uses_the_dashboard_through_the_hub_and_a_student_gets_403(
    service_hub: ServiceHub,
    gns3_http: httpx.Client,
    page: Any,  # noqa: F811  (the fixtures imported above)
    screenshots: Path,  # noqa: F811
) -> None:
    hub = service_hub
    if "alice" not in tokens_today(hub):  # run alone: alice's chat is the test above's
        hub.llm.add(text("Hi.", usage={"prompt_tokens": 300, "completion_tokens": 2}))
        called = httpx.post(
            hub.service_url("v1", "chat", "completions"),
            headers={"Authorization": f"Bearer {hub.server_token('alice')}"},
            json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
            timeout=30,
            trust_env=False,
        )
        assert called.status_code == 200, called.text
    hub.llm.add(text("Hi bob.", usage={"prompt_tokens": 40, "completion_tokens": 2}))
    called = httpx.post(
        hub.service_url("v1", "chat", "completions"),
        headers={"Authorization": f"Bearer {hub.server_token('bob')}"},
        json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
        timeout=30,
        trust_env=False,
    )
    assert called.status_code == 200, called.text
    used = tokens_today(hub)

    template = f"OSPF lab {uuid.uuid4().hex[:6]}"
    made = gns3_http.post("/v3/projects", json={"name": template})
    assert made.status_code == 201, made.text
    template_id = made.json()["project_id"]
    gns3_http.post(f"/v3/projects/{template_id}/close")
    try:
        # Carol, an instructor, logs in through the hub and sees both students' usage.
        response = log_in_through_hub(page, hub, INSTRUCTOR)
        assert response.status == 200
        assert page.locator(".nav-user").inner_text() == INSTRUCTOR
        # The JSON API answers the browser's login cookie too.
        from_browser = page.request.get(hub.service_url("api", "students"))
        assert from_browser.status == 200 and from_browser.json()["students"]
        for student in STUDENTS:
            row = page.locator(f'tr[data-student="{student}"]')
            assert row.locator(".tokens-today").inner_text() == f"{used[student]:,}"
            assert f"/ {DAILY_TOKENS}" in row.locator(".usage").inner_text()
        assert used["alice"] > 0 and used["bob"] > 0

        # She assigns the template lab to both: each gets a copy in their own pool.
        form = page.locator("#assign-form")
        form.locator('select[name="template"]').select_option(template)
        for student in STUDENTS:
            form.get_by_label(student).check()
        form.get_by_role("button", name="Assign").click()
        assert f"Lab '{template}' assigned to" in page.locator(".alert-success").inner_text()
        copies = {student: gns3_projects(hub, student) for student in STUDENTS}
        for student in STUDENTS:
            assert lab_name(template, student) in copies[student], copies
            assert lab_name(template, "alice" if student == "bob" else "bob") not in copies[
                student
            ]

        # She resets alice's copy to the template: a new project, bob's untouched.
        alice_row = page.locator('tr[data-student="alice"]')
        project = alice_row.locator(f'.project[data-project="{lab_name(template, "alice")}"]')
        project.locator("summary").click()
        project.get_by_role("button", name="Reset to template").click()
        assert "was reset to the template" in page.locator(".alert-success").inner_text()
        after = {student: gns3_projects(hub, student) for student in STUDENTS}
        alice_lab, bob_lab = lab_name(template, "alice"), lab_name(template, "bob")
        assert after["alice"][alice_lab] != copies["alice"][alice_lab]
        assert after["bob"][bob_lab] == copies["bob"][bob_lab]
        page.screenshot(path=screenshots / "hub-service-dashboard.png", full_page=True)
        assert page.page_errors == []

        # The same as a JSON API with a hub token (e.g. from an instructor's notebook).
        carol_token = hub.api.post(f"/users/{INSTRUCTOR}/tokens", json={"note": "dashboard"})
        carol_token.raise_for_status()
        api = hub.service_url("api", "students")
        listed = httpx.get(
            api,
            headers={"Authorization": f"token {carol_token.json()['token']}"},
            trust_env=False,
        )
        assert listed.status_code == 200, listed.text
        assert {s["user"] for s in listed.json()["students"]} >= set(STUDENTS)
        # Assigned to the group: the hub's members, dave too (never seen by the service);
        # alice and bob keep the copies they have.
        by_group = httpx.post(
            hub.service_url("api", "labs", "assign"),
            headers={"Authorization": f"token {carol_token.json()['token']}"},
            json={"template": template, "group": "students"},
            timeout=60,
            trust_env=False,
        )
        assert by_group.status_code == 200, by_group.text
        copies = by_group.json()
        assert set(copies) == {*STUDENTS, NEWCOMER}
        assert copies["bob"]["project_id"] == after["bob"][bob_lab]
        assert copies[NEWCOMER]["name"] == lab_name(template, NEWCOMER)
        for headers in (hub.headers("bob"), {}):
            refused = httpx.get(api, headers=headers, trust_env=False)
            assert refused.status_code == 403
            assert "for the course's instructors" in refused.json()["error"]["message"]

        # Bob, a student, logged in through the hub: 403.
        response = log_in_through_hub(page, hub, "bob")
        assert response.status == 403
        assert "You are logged in as bob" in page.inner_text("main")
        page.screenshot(path=screenshots / "hub-service-dashboard-403.png", full_page=True)
    finally:
        copy_names = {lab_name(template, s) for s in (*STUDENTS, NEWCOMER)} | {template}
        for project in gns3_http.get("/v3/projects").json():
            if project["name"] in copy_names:
                gns3_http.delete(f"/v3/projects/{project['project_id']}")
