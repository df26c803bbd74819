"""The instructor guide's JupyterHub recipe (docs/instructor/jupyterhub.md) on a REAL
JupyterHub: the page's own settings file names, `jupyterhub_config.py` and start commands,
read from the page and run as written (`testing.hub_recipe`: only its fixed paths and
ports are moved, and an admin API service is added for the test). The shared-password
authenticator, the simple local process spawner, configurable-http-proxy from npm, the
real gns3-server 3.0.6 of the lab kit, and the scripted model server (a TEST DOUBLE of the
OpenAI API, a real HTTP server) as the gateway's upstream, requiring the upstream key.

The hub runs the service `gns3-copilot` with the GNS3 admin password and the model key in
the SERVICE's environment only; `GNS3_COPILOT_HUB_SECRET` is not set, so the service makes
its own account secret in its data directory. The class of the page: alice and bob
(group `students`), carol (group `instructors`); and dave, a student added to the hub's
group by the test, who never starts a server.

What is proved: no class secret in a student's server's or kernel's environment
(`/proc/<pid>/environ`), in their home directory, or in any response; alice's chat goes
through the gateway (the upstream sees the real key, the usage store records alice); bob
can neither list, open, close nor delete alice's project, through his copilot or with the
GNS3 token found in his own server; alice over the budget carol set gets the readable line
as her turn's error event while bob's turn still works; the service restarts in place with
the page's command and the copilot goes on; in chromium (marked `browser`), carol logs in
through the hub's login form and the service's OAuth, sees both students' usage on the
dashboard, makes a template, edits a copy (her own GNS3 token changes it, as her copilot
would), saves it, assigns it (each student's GNS3 token lists their own copy, with her
node) and resets alice's; the same API answers her hub token, and assigning to the group
reaches its hub members (dave, never seen by the service); bob, logged in the same way,
gets 403.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

# Chromium fixtures (and the no-op stand-ins for pytest-jupyter's per-test event loop,
# which would close Playwright's), for the dashboard test below.
from support.chromium import (  # noqa: F401
    browser_context,
    jp_asyncio_loop,
    jp_server_cleanup,
    page,
    screenshots,
)
from support.hub import (
    MODEL,
    ServiceHub,
    children,
    environ,
    proxy_command,
    recipe_values,
    remove_class_projects,
)
from support.server import TITLE_REPLY, parse_sse

from jupyter_gns3_copilot.hub.app import SECRET_FILE
from jupyter_gns3_copilot.hub.lab_accounts import lab_name
from jupyter_gns3_copilot.hub.restart import PID_FILE
from jupyter_gns3_copilot.testing.hub_recipe import RecipeHub, wait_for
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

pytestmark = [pytest.mark.lab, pytest.mark.hub, pytest.mark.slow]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "instructor" / "jupyterhub.md"
STUDENTS = ("alice", "bob")
INSTRUCTOR = "carol"
NEWCOMER = "dave"
"""A student of the hub's group who has never started a server or used the copilot."""
UPSTREAM_KEY = "sk-upstream-class-key-7GqVt2LmZ"
SHARED_PASSWORD = "the-class-password-4Wq"
DAILY_TOKENS = 500
"""The students' budget carol sets on the dashboard (the page's policy gives 50,000)."""


@pytest.fixture(scope="module")
def service_hub(
    gns3_lab: Any, gns3_http: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceHub]:
    directory = tmp_path_factory.mktemp("hub-recipe") / "srv"
    with ScriptedLLM(api_key=UPSTREAM_KEY, models=[MODEL]) as llm:
        values = recipe_values(gns3_lab, llm, UPSTREAM_KEY, SHARED_PASSWORD)
        with RecipeHub(PAGE, directory, values, proxy=proxy_command()) as recipe:
            hub = ServiceHub(recipe, llm, secrets=(UPSTREAM_KEY, gns3_lab.password))
            # dave joins the hub's group students; he never starts a server.
            recipe.api.post("/users", json={"usernames": [NEWCOMER]}).raise_for_status()
            recipe.api.post("/groups/students/users", json={"users": [NEWCOMER]}).raise_for_status()
            for user in STUDENTS:
                hub.start_server(user)
            # The service made its account secret (the page sets none), readable by it only.
            secret_file = directory / "gns3-copilot" / SECRET_FILE
            assert secret_file.stat().st_mode & 0o777 == 0o600
            hub.secrets += (secret_file.read_text().strip(),)
            # carol, an instructor, sets the students' budget with the dashboard's API.
            carol = recipe.api.post(f"/users/{INSTRUCTOR}/tokens", json={"note": "budgets"})
            carol.raise_for_status()
            budget = httpx.put(
                hub.dashboard_url("api", "budgets", "groups", "students"),
                headers={"Authorization": f"token {carol.json()['token']}"},
                json={"daily_tokens": DAILY_TOKENS},
                trust_env=False,
            )
            assert budget.status_code == 204, budget.text
            try:
                yield hub
            finally:
                remove_class_projects(gns3_http)


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


def gateway_call(hub: ServiceHub, user: str) -> httpx.Response:
    """One model call through the gateway with `user`'s server's token."""
    return httpx.post(
        hub.service_url("v1", "chat", "completions"),
        headers={"Authorization": f"Bearer {hub.server_token(user)}"},
        json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
        timeout=30,
        trust_env=False,
    )


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
            f"hub mode, service {hub.service_url('')}, reachable"
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
        with sqlite3.connect(hub.directory / "gns3-copilot" / "usage.db") as db:
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


def test_the_service_restarts_in_place_with_the_guides_command(service_hub: ServiceHub) -> None:
    """The page's restart command: the same process afterwards (the hub saw no exit), a
    second start line in the hub's log, and alice's copilot goes on through the gateway."""
    hub = service_hub
    pid_file = hub.directory / "gns3-copilot" / PID_FILE
    pid = int(pid_file.read_text())
    started = hub.recipe.log_text().count("Copilot hub service on")
    hub.recipe.run_block("recipe-restart", required=("service.pid",))
    wait_for(
        lambda: hub.recipe.log_text().count("Copilot hub service on") == started + 1,
        "the service's restart",
    )
    assert int(pid_file.read_text()) == pid and Path(f"/proc/{pid}").exists()
    assert "exited with status" not in hub.recipe.log_text()
    hub.llm.add(text("Still here.", usage={"prompt_tokens": 5, "completion_tokens": 2}))
    assert gateway_call(hub, "bob").status_code == 200
    status = httpx.get(
        hub.server_url("alice", "copilot", "status"), headers=hub.headers("alice"), timeout=30
    )
    assert status.json()["mode_summary"].endswith(", reachable"), status.text


# -- the instructor dashboard in chromium, logged in through the hub ------------------------


def log_in_through_hub(tab: Any, hub: ServiceHub, user: str) -> Any:
    """Open the dashboard in a browser with no session: the service sends it to the hub's
    login (the shared-password form), then back through OAuth; the dashboard's response."""
    tab.context.clear_cookies()
    tab.goto(hub.dashboard_url(""))
    assert "/hub/login" in tab.url, tab.url
    tab.fill("#username_input", user)
    tab.fill("#password_input", SHARED_PASSWORD)
    with tab.expect_response(lambda r: r.url == hub.dashboard_url("")) as answer:
        tab.click("#login_submit")
    return answer.value


def gns3_session(hub: ServiceHub, user: str) -> dict[str, Any]:
    """`user`'s session, as their server gets it from the service."""
    server = {"Authorization": f"token {hub.server_token(user)}"}
    session = httpx.get(hub.service_url("api", "session"), headers=server, trust_env=False)
    session.raise_for_status()
    return dict(session.json())


def gns3_projects(hub: ServiceHub, user: str) -> dict[str, str]:
    """`user`'s GNS3 projects (name -> id), asked of GNS3 with their own GNS3 token."""
    body = gns3_session(hub, user)
    listed = httpx.get(
        f"{body['gns3_url']}/v3/projects",
        headers={"Authorization": f"Bearer {body['gns3_token']}"},
        trust_env=False,
    )
    listed.raise_for_status()
    return {p["name"]: p["project_id"] for p in listed.json()}


def tokens_today(hub: ServiceHub) -> dict[str, int]:
    with sqlite3.connect(hub.directory / "gns3-copilot" / "usage.db") as db:
        rows = db.execute(
            "SELECT hub_user, SUM(prompt_tokens + completion_tokens) FROM model_calls "
            "GROUP BY hub_user"
        ).fetchall()
    return dict(rows)


def node_names(gns3_http: httpx.Client, project_id: str) -> list[str]:
    gns3_http.post(f"/v3/projects/{project_id}/open").raise_for_status()
    names = sorted(n["name"] for n in gns3_http.get(f"/v3/projects/{project_id}/nodes").json())
    gns3_http.post(f"/v3/projects/{project_id}/close")
    return names


@pytest.mark.browser
def test_the_instructor_uses_the_dashboard_through_the_hub_and_a_student_gets_403(
    service_hub: ServiceHub,
    gns3_http: httpx.Client,
    page: Any,  # noqa: F811  (the fixtures imported above)
    screenshots: Path,  # noqa: F811
) -> None:
    hub = service_hub
    for student in STUDENTS:  # each student has used the gateway today
        if student not in tokens_today(hub):  # (alice: the first test's chat, when run)
            hub.llm.add(text("Hi.", usage={"prompt_tokens": 40, "completion_tokens": 2}))
            called = gateway_call(hub, student)
            assert called.status_code == 200, called.text
    used = tokens_today(hub)
    template = f"OSPF lab {uuid.uuid4().hex[:6]}"
    try:
        # Carol, an instructor, logs in through the hub and sees both students' usage.
        response = log_in_through_hub(page, hub, INSTRUCTOR)
        assert response.status == 200
        assert page.locator(".nav-user").inner_text() == INSTRUCTOR
        # The JSON API answers the browser's login cookie too.
        from_browser = page.request.get(hub.dashboard_url("api", "students"))
        assert from_browser.status == 200 and from_browser.json()["students"]
        for student in STUDENTS:
            row = page.locator(f'tr[data-student="{student}"]')
            assert row.locator(".tokens-today").inner_text() == f"{used[student]:,}"
            assert f"/ {DAILY_TOKENS}" in row.locator(".usage").inner_text()

        # She makes a template, edits a copy in her own labs and saves it back.
        form = page.locator("#new-template-form")
        form.locator('input[name="name"]').fill(template)
        form.get_by_role("button", name="New template").click()
        assert f"Template '{template}' made (empty)" in page.locator(".alert-success").inner_text()
        row = page.locator(f'tr[data-template="{template}"]')
        row.get_by_role("button", name="Edit a copy").click()
        mine = lab_name(template, INSTRUCTOR)
        assert f"Your copy is '{mine}'" in page.locator(".alert-success").inner_text()
        hub.start_server(INSTRUCTOR)  # her copilot works on her copy with her GNS3 token
        session = gns3_session(hub, INSTRUCTOR)
        as_carol = {"Authorization": f"Bearer {session['gns3_token']}"}
        gns3 = f"{session['gns3_url']}/v3"
        with httpx.Client(base_url=gns3, headers=as_carol, trust_env=False, timeout=60) as carol:
            [copy] = [p for p in carol.get("/projects").json() if p["name"] == mine]
            carol.post(f"/projects/{copy['project_id']}/open").raise_for_status()
            [vpcs] = [t for t in gns3_http.get("/v3/templates").json() if t["name"] == "VPCS"]
            made = carol.post(
                f"/projects/{copy['project_id']}/templates/{vpcs['template_id']}",
                json={"x": 0, "y": 0},
            )
            assert made.status_code == 201, made.text
            [old_template] = [
                t["project_id"]
                for t in gns3_http.get("/v3/projects").json()
                if t["name"] == template
            ]
            assert carol.get(f"/projects/{old_template}").status_code == 403  # no token
        page.reload()
        row = page.locator(f'tr[data-template="{template}"]')
        row.locator('select[name="project"]').select_option(mine)
        row.get_by_role("button", name="Save as this template").click()
        assert f"Template '{template}' is now a copy of your project {mine}" in (
            page.locator(".alert-success").inner_text()
        )

        # She assigns it to both: each gets a copy, with her node, in their own pool.
        form = page.locator("#assign-form")
        form.locator('select[name="template"]').select_option(template)
        for student in STUDENTS:
            form.get_by_label(student, exact=True).check()
        form.get_by_role("button", name="Assign").click()
        assert f"Lab '{template}' assigned to" in page.locator(".alert-success").inner_text()
        copies = {student: gns3_projects(hub, student) for student in STUDENTS}
        for student in STUDENTS:
            other = "alice" if student == "bob" else "bob"
            assert lab_name(template, student) in copies[student], copies
            assert lab_name(template, other) not in copies[student]
        alice_copy = copies["alice"][lab_name(template, "alice")]
        assert len(node_names(gns3_http, alice_copy)) == 1

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
        carol_headers = {"Authorization": f"token {carol_token.json()['token']}"}
        api = hub.service_url("api", "students")
        listed = httpx.get(api, headers=carol_headers, trust_env=False)
        assert listed.status_code == 200, listed.text
        assert {s["user"] for s in listed.json()["students"]} >= set(STUDENTS)
        # Assigned to the group: the hub's members, dave too (never seen by the service);
        # alice and bob keep the copies they have.
        by_group = httpx.post(
            hub.service_url("api", "labs", "assign"),
            headers=carol_headers,
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
        names = {lab_name(template, s) for s in (*STUDENTS, NEWCOMER, INSTRUCTOR)} | {template}
        for project in gns3_http.get("/v3/projects").json():
            if project["name"] in names:
                gns3_http.post(f"/v3/projects/{project['project_id']}/close")
                gns3_http.delete(f"/v3/projects/{project['project_id']}")
