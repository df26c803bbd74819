"""The instructor dashboard's JSON API on a real tornado server on 127.0.0.1,
with the real gns3-server 3.0.6 of the lab kit (admin credentials), the real SQLite usage
store and, for budgets and the question log, the real model gateway in the same service in
front of the scripted model server (TEST DOUBLE of the OpenAI API, a real HTTP server).

The one stand-in is `caller_from_request`: it stands for JupyterHub's HubOAuth / HubAuth (a
header or cookie -> hub user, groups and admin flag lookup that needs a running hub); the
real hub path is wired and tested with the hub service.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.dashboard import UPSTREAM_KEY, Service, dashboard_service, record_usage

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.gns3.access import pools_of
from jupyter_gns3_copilot.gns3.errors import GNS3AuthError
from jupyter_gns3_copilot.hub.lab_accounts import lab_name
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

UNREACHABLE_GNS3 = "http://127.0.0.1:9"


def student(overview: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in overview["students"] if s["user"] == name)


# -- with the GNS3 lab ------------------------------------------------------------------------


@pytest.mark.lab
async def test_the_api_shows_usage_and_labs_assigns_a_template_and_resets_a_lab(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    gns3 = GNS3Client(gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password)
    async with gns3, dashboard_service(tmp_path, gns3, account_prefix=prefix) as service:
        await record_usage(service.store, "alice", 400, "turn-a1")
        await record_usage(service.store, "alice", 200, "turn-a2")
        await record_usage(service.store, "bob", 120, "turn-b1")
        template = await gns3.create_project(f"{prefix}ospf")
        await gns3.create_node_from_template(template.project_id, "VPCS", "PC1")
        await gns3.close_project(template.project_id)

        async with service.client() as api:
            before = (await api.get("api/students")).json()
            alice = student(before, "alice")
            assert (alice["tokens_today"], alice["daily_budget"], alice["turns_today"]) == (
                600,
                1000,
                2,
            )
            assert alice["budget_source"] == "group students" and alice["projects"] == []
            assert student(before, "bob")["tokens_total"] == 120
            assert template.project_id in {t["project_id"] for t in before["templates"]}
            assert before["course_tokens_today"] == 720 and before["gns3_error"] is None

            # alice by name, bob as a student of the group "students"
            response = await api.post(
                "api/labs/assign",
                json={"template": template.name, "students": ["alice"], "group": "students"},
            )
            assert response.status_code == 200, response.text
            copies = response.json()
            assert {who: c["name"] for who, c in copies.items()} == {
                who: lab_name(template.name, who) for who in ("alice", "bob")
            }
            for who, copy in copies.items():
                pool = await service.deps.accounts.student_projects(who)
                assert [p.project_id for p in pool] == [copy["project_id"]]

            # alice works on her copy: the dashboard shows the nodes' states
            mine = copies["alice"]["project_id"]
            await gns3.open_project(mine)
            (node,) = await gns3.list_nodes(mine)
            await gns3.start_node(mine, node.node_id)
            after = (await api.get("api/students")).json()
            (project,) = student(after, "alice")["projects"]
            assert project["status"] == "opened" and project["template"] == template.name
            assert [(n["name"], n["status"]) for n in project["nodes"]] == [("PC1", "started")]
            (bobs,) = student(after, "bob")["projects"]
            assert bobs["project_id"] == copies["bob"]["project_id"]
            assert bobs["status"] == "closed" and bobs["nodes"] is None
            offered = {t["project_id"] for t in after["templates"]}
            assert template.project_id in offered and mine not in offered

            # a student's copy is no template
            refused = await api.post(
                "api/labs/assign", json={"template": mine, "students": ["bob"]}
            )
            assert refused.status_code == 400 and refused.json()["error"]["field"] == "template"
            assert "a project of alice's" in refused.json()["error"]["message"]

            reset = await api.post(
                "api/labs/reset",
                json={"student": "alice", "project": mine, "template": template.name},
            )
            assert reset.status_code == 200, reset.text
            fresh = reset.json()
            assert fresh["name"] == copies["alice"]["name"] and fresh["project_id"] != mine
            assert [
                p.project_id for p in await service.deps.accounts.student_projects("alice")
            ] == [fresh["project_id"]]
            assert [p.project_id for p in await service.deps.accounts.student_projects("bob")] == [
                copies["bob"]["project_id"]
            ]

            # bob's lab back to a snapshot: same project, the node added since is gone
            bobs_id = copies["bob"]["project_id"]
            await gns3.open_project(bobs_id)
            await gns3.create_snapshot(bobs_id, "start")
            await gns3.create_node_from_template(bobs_id, "VPCS", "Extra")
            restored = await api.post(
                "api/labs/reset",
                json={"student": "bob", "project": copies["bob"]["name"], "snapshot": "start"},
            )
            assert restored.status_code == 200, restored.text
            assert restored.json()["project_id"] == bobs_id
            (bobs,) = student((await api.get("api/students")).json(), "bob")["projects"]
            assert [n["name"] for n in bobs["nodes"]] == ["PC1"]

            missing = await api.post(
                "api/labs/reset",
                json={"student": "alice", "project": fresh["project_id"], "snapshot": "nope"},
            )
            assert missing.status_code == 404
            assert "no snapshot 'nope'" in missing.json()["error"]["message"]
            not_hers = await api.post(
                "api/labs/reset",
                json={
                    "student": "alice",
                    "project": copies["bob"]["project_id"],
                    "template": template.name,
                },
            )
            assert not_hers.status_code == 404
            assert "has no project" in not_hers.json()["error"]["message"]


@pytest.mark.lab
async def test_an_instructor_makes_edits_saves_and_deletes_a_template(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    """Given ines (an instructor) on the dashboard; then she makes an empty template, edits
    it through her own copy (with her own GNS3 token, as her copilot would), saves it back,
    makes a second one from her project, and deletes one; the templates stay out of every
    account's reach, and a project not made on the dashboard is never changed there."""
    gns3 = GNS3Client(gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password)
    async with gns3, dashboard_service(tmp_path, gns3, account_prefix=prefix) as service:
        accounts = service.deps.accounts
        name = f"{prefix}OSPF lab"
        async with service.client("ines") as api:
            made = await api.post("api/templates", json={"name": name})
            assert made.status_code == 200, made.text
            template = made.json()
            assert (template["name"], template["made_here"]) == (name, True)
            stored = await gns3.get_project(template["project_id"])
            assert stored.status == "closed"
            pools = await pools_of(accounts.access, template["project_id"])
            assert [p.name for p in pools] == [accounts.templates_pool_name]
            offered = (await api.get("api/students")).json()["templates"]
            assert {"project_id": template["project_id"], "name": name, "made_here": True} in (
                offered
            )
            taken = await api.post("api/templates", json={"name": name})
            assert taken.status_code == 409 and name in taken.json()["error"]["message"]

            # Edit: her own copy, which her GNS3 token reaches, the template it does not.
            edited = await api.post("api/templates/edit", json={"template": name})
            assert edited.status_code == 200, edited.text
            copy = edited.json()
            assert copy["name"] == lab_name(name, "ines")
            token = (await accounts.students.student_token("ines")).token.get_secret_value()
            async with GNS3Client(gns3_lab.url, token=token) as as_ines:
                assert [p.project_id for p in await as_ines.list_projects()] == [copy["project_id"]]
                await as_ines.open_project(copy["project_id"])
                await as_ines.create_node_from_template(copy["project_id"], "VPCS", "PC1")
                with pytest.raises(GNS3AuthError) as refused:
                    await as_ines.get_project(template["project_id"])
                assert refused.value.status == 403

            # Save it back: a new template under the same name, with her PC1.
            saved = await api.post(
                "api/templates/save", json={"template": name, "project": copy["name"]}
            )
            assert saved.status_code == 200, saved.text
            replaced = saved.json()
            assert replaced["name"] == name and replaced["project_id"] != template["project_id"]
            names = [p.name for p in await gns3.list_projects()]
            assert names.count(name) == 1 and not [n for n in names if "(new " in n], names
            assigned = await api.post(
                "api/labs/assign", json={"template": name, "students": ["alice"]}
            )
            assert assigned.status_code == 200, assigned.text
            alices = assigned.json()["alice"]["project_id"]
            await gns3.open_project(alices)
            assert [n.name for n in await gns3.list_nodes(alices)] == ["PC1"]

            # A second template from her project; then the first one deleted.
            second = await api.post(
                "api/templates", json={"name": f"{name} 2", "project": copy["name"]}
            )
            assert second.status_code == 200, second.text
            await gns3.open_project(second.json()["project_id"])
            assert [n.name for n in await gns3.list_nodes(second.json()["project_id"])] == ["PC1"]
            await gns3.close_project(second.json()["project_id"])
            deleted = await api.post("api/templates/delete", json={"template": name})
            assert deleted.status_code == 204, deleted.text
            assert name not in {
                t["name"] for t in (await api.get("api/students")).json()["templates"]
            }
            assert [p.project_id for p in await accounts.student_projects("alice")] == [alices]

            # Refused: another project than hers, a project not made here, a student's.
            not_hers = await api.post(
                "api/templates/save", json={"template": f"{name} 2", "project": alices}
            )
            assert not_hers.status_code == 404 and "has no project" in not_hers.text
            other = await gns3.create_project(f"{prefix}not a dashboard template")
            await gns3.close_project(other.project_id)
            for action, body in (
                ("save", {"template": other.name, "project": copy["name"]}),
                ("delete", {"template": other.name}),
            ):
                refused = await api.post(f"api/templates/{action}", json=body)
                assert refused.status_code == 400, refused.text
                assert refused.json()["error"]["field"] == "template"
                assert "not made on this dashboard" in refused.json()["error"]["message"]
            students = await api.post("api/templates/delete", json={"template": alices})
            assert students.status_code == 400 and "a project of alice's" in students.text
            assert await gns3.get_project(other.project_id)
        async with service.client("alice") as api:
            response = await api.post("api/templates", json={"name": f"{prefix}mine"})
            assert response.status_code == 403


# -- without GNS3 (an unreachable one: the usage part still works) ----------------------------


@asynccontextmanager
async def offline_service(data_dir: Path) -> AsyncIterator[Service]:
    """The dashboard in front of a GNS3 that cannot be reached."""
    async with GNS3Client(UNREACHABLE_GNS3) as gns3, dashboard_service(data_dir, gns3) as service:
        yield service


async def test_a_budget_change_is_applied_by_the_gateway(
    make_scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    upstream = make_scripted_llm(
        [text("one", usage={"prompt_tokens": 50, "completion_tokens": 10})] * 2,
        api_key=UPSTREAM_KEY,
    )
    async with (
        GNS3Client(UNREACHABLE_GNS3) as gns3,
        dashboard_service(tmp_path, gns3, upstream=upstream) as service,
        service.client() as api,
    ):
        await record_usage(service.store, "alice", 300, "turn-1")

        def chat(user: str) -> Any:
            return httpx.post(
                f"{service.gateway_url}/chat/completions",
                headers={"Authorization": f"Bearer {user}"},
                json={"model": "scripted-model", "messages": [{"role": "user", "content": "hi"}]},
                timeout=30,
                trust_env=False,
            )

        assert (await asyncio.to_thread(chat, "alice")).status_code == 200  # 300 < 1000

        response = await api.put("api/budgets/users/alice", json={"daily_tokens": 300})
        assert response.status_code == 204, response.text
        refused = await asyncio.to_thread(chat, "alice")
        assert refused.status_code == 429
        assert refused.json()["error"]["message"] == (
            "Your copilot budget for today is used up: 360 of 300 tokens; it resets at 00:00 UTC."
        )
        assert (await asyncio.to_thread(chat, "bob")).status_code == 200

        overview = (await api.get("api/students")).json()
        assert (
            student(overview, "alice")["daily_budget"],
            student(overview, "alice")["budget_source"],
        ) == (300, "user override")
        assert "Connection refused" in overview["gns3_error"] or overview["gns3_error"]

        response = await api.put("api/budgets/groups/students", json={"daily_tokens": None})
        assert response.status_code == 204
        assert (await api.delete("api/budgets/users/alice")).status_code == 204
        overview = (await api.get("api/students")).json()
        assert student(overview, "alice")["daily_budget"] is None
        assert {"group": "students", "daily_tokens": None, "source": "override"} in overview[
            "groups"
        ]
        assert (await asyncio.to_thread(chat, "alice")).status_code != 429


async def test_usage_exports_as_csv(tmp_path: Path) -> None:
    async with offline_service(tmp_path) as offline:
        await record_usage(offline.store, "alice", 400, "turn-1")
        await record_usage(offline.store, "bob", 100, "turn-2")
        async with offline.client("root") as api:
            response = await api.get("api/usage.csv")
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/csv")
            assert "attachment" in response.headers["content-disposition"]
            lines = response.text.splitlines()
            assert lines[0].startswith("started_at,ended_at,day,user,")
            assert [line.split(",")[3] for line in lines[1:]] == ["alice", "bob"]
            empty = await api.get("api/usage.csv", params={"since": "2027-01-01"})
            assert len(empty.text.splitlines()) == 1
            bad = await api.get("api/usage.csv", params={"until": "yesterday"})
            assert bad.status_code == 400 and bad.json()["error"]["field"] == "until"


async def test_students_and_strangers_get_403(tmp_path: Path) -> None:
    async with offline_service(tmp_path) as offline:
        for user in ("alice", None, "mallory"):
            async with offline.client(user) as api:
                for method, path, body in (
                    ("GET", "api/students", None),
                    ("GET", "api/usage.csv", None),
                    ("PUT", "api/budgets/users/alice", {"daily_tokens": 10**9}),
                    ("POST", "api/labs/assign", {"template": "x", "students": ["alice"]}),
                ):
                    response = await api.request(method, path, json=body)
                    assert response.status_code == 403, (user, path)
                    message = response.json()["error"]["message"]
                    assert "for the course's instructors" in message and "instructors" in message
                page = await api.get("")
                assert page.status_code == 403
                assert page.headers["content-type"].startswith("text/html")
                assert "403 Forbidden" in page.text
        assert (await offline.store.overrides()).users == {}
        async with offline.client("root") as api:  # a hub admin outside the instructors group
            assert (await api.get("api/students")).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("PUT", "api/budgets/users/alice", {"daily_tokens": -5}, "daily_tokens"),
        ("PUT", "api/budgets/users/alice", {"daily_tokens": "lots"}, "daily_tokens"),
        ("PUT", "api/budgets/groups/students", {}, "daily_tokens"),
        ("PUT", "api/budgets/users/alice", {"daily_tokens": 5, "extra": 1}, "extra"),
        ("POST", "api/labs/assign", {"students": ["alice"]}, "template"),
        ("POST", "api/labs/assign", {"template": "t"}, "students or group"),
        ("POST", "api/labs/assign", {"template": "t", "students": ["a b"]}, "students.0"),
        ("POST", "api/labs/assign", {"template": "t", "group": "nobody-here"}, "group"),
        ("POST", "api/labs/reset", {"student": "alice", "project": "p"}, "template or snapshot"),
        (
            "POST",
            "api/labs/reset",
            {"student": "alice", "project": "p", "template": "t", "snapshot": "s"},
            "template or snapshot",
        ),
        ("POST", "api/labs/reset", {"project": "p", "template": "t"}, "student"),
        ("POST", "api/labs/reset", [1, 2], None),
        ("GET", "api/questions?limit=0", None, "limit"),
        ("POST", "api/templates", {"name": "  "}, "name"),
        ("POST", "api/templates", {"project": "p"}, "name"),
        ("POST", "api/templates/save", {"template": "t"}, "project"),
        ("POST", "api/templates/delete", {"name": "t"}, "template"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field(
    make_scripted_llm: Callable[..., ScriptedLLM],
    tmp_path: Path,
    method: str,
    path: str,
    body: Any,
    field: str | None,
) -> None:
    async with (
        GNS3Client(UNREACHABLE_GNS3) as gns3,
        dashboard_service(tmp_path, gns3, log_questions=True) as service,
        service.client() as api,
    ):
        response = await api.request(method, path, json=body)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error.get("field") == field, error
        if field:
            assert error["message"].startswith(field)


async def test_the_api_takes_json_from_the_same_origin_only(tmp_path: Path) -> None:
    async with offline_service(tmp_path) as offline:
        async with offline.client() as api:
            form = await api.put("api/budgets/users/alice", data={"daily_tokens": "5"})
            assert form.status_code == 400 and "JSON" in form.json()["error"]["message"]
            foreign = await api.put(
                "api/budgets/users/alice",
                json={"daily_tokens": 5},
                headers={"Origin": "http://evil.example"},
            )
            assert (
                foreign.status_code == 403 and "Cross-origin" in foreign.json()["error"]["message"]
            )
            same = await api.put(
                "api/budgets/users/alice",
                json={"daily_tokens": 5},
                headers={"Origin": str(api.base_url.copy_with(path="/")).rstrip("/")},
            )
            assert same.status_code == 204
        assert (await offline.store.overrides()).users == {"alice": 5}


async def test_page_forms_need_tornados_xsrf_token(tmp_path: Path) -> None:
    async with offline_service(tmp_path) as offline, offline.client() as api:
        page = await api.get("")
        assert page.status_code == 200 and "Assign a lab" in page.text
        assert "GNS3 did not answer" in page.text
        token = page.text.split('name="_xsrf" value="', 1)[1].split('"', 1)[0]
        cookie = page.cookies.get("_xsrf")
        assert cookie and token and api.cookies.get("_xsrf") == cookie  # sent back by httpx
        data = {"kind": "user", "name": "alice", "daily_tokens": "2,000"}
        forged = await api.post("budgets", data=data)
        assert forged.status_code == 403
        assert (await offline.store.overrides()).users == {}
        done = await api.post("budgets", data={**data, "_xsrf": token})
        assert done.status_code == 200 and done.history[0].status_code == 303
        assert "now has a budget of 2,000 tokens a day" in done.text
        again = await api.get(str(done.url))
        assert "now has a budget" not in again.text
        assert (await offline.store.overrides()).users == {"alice": 2000}
        bad = await api.post(
            "budgets",
            data={**data, "daily_tokens": "many", "_xsrf": token},
        )
        assert bad.status_code == 400 and "daily_tokens: a number of tokens" in bad.text


async def test_the_question_log_is_kept_only_when_on(
    make_scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    question = "Why can PC1 not ping PC2? <script>alert(1)</script> " + "x" * 2000
    for log_questions in (False, True):
        upstream = make_scripted_llm([text("ok")] * 2, api_key=UPSTREAM_KEY)
        data_dir = tmp_path / str(log_questions)
        async with (
            GNS3Client(UNREACHABLE_GNS3) as gns3,
            dashboard_service(
                data_dir, gns3, upstream=upstream, log_questions=log_questions
            ) as service,
            service.client() as api,
        ):
            asked = [{"role": "user", "content": question}]
            continuing = [
                *asked,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "list_nodes", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "PC1, PC2"},
            ]
            for messages in (asked, continuing):
                response = await asyncio.to_thread(
                    httpx.post,
                    f"{service.gateway_url}/chat/completions",
                    headers={"Authorization": "Bearer alice"},
                    json={"model": "scripted-model", "messages": messages},
                    timeout=30,
                    trust_env=False,
                )
                assert response.status_code == 200, response.text
            response = await api.get("api/questions")
            page = await api.get("")
            if not log_questions:
                assert response.status_code == 404
                assert "log_questions" in response.json()["error"]["message"]
                assert "Questions students asked" not in page.text
                assert await service.store.questions() == []
                continue
            assert response.status_code == 200
            (logged,) = response.json()["questions"]
            assert logged["user"] == "alice" and logged["text"] == question[:1000]
            assert "Questions students asked" in page.text
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
            assert "<script>alert" not in page.text
            by_bob = await api.get("api/questions", params={"user": "bob"})
            assert by_bob.json() == {"questions": []}
