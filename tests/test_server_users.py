"""Two users on one server cannot see, rename, pin, delete, continue or abort each other's
sessions. Users come from `TokenUsersIdentityProvider`, a TEST
identity provider mapping tokens to user names (as JupyterHub's does for hub users)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.server import (
    TITLE_REPLY,
    TokenUsersIdentityProvider,
    add_pcs,
    as_user,
    call,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
)

from jupyter_gns3_copilot.testing.scripted_llm import text
from jupyter_gns3_copilot.testing.scripted_llm import tool_call as tool_reply

pytestmark = pytest.mark.lab

ALICE, BOB = as_user("alice"), as_user("bob")


@pytest.fixture
def jp_server_config(gns3_lab, scripted_llm, tmp_path: Path) -> dict[str, Any]:
    config = server_config(tmp_path / "data", **lab_traits(gns3_lab), **model_traits(scripted_llm))
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


def chat(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "chat", *rest)


async def alice_chats(jp_fetch: Any, project: Any, scripted_llm: Any) -> str:
    scripted_llm.add(text("Hi Alice."), text("Greeting", when=TITLE_REPLY))
    reply = await call(
        jp_fetch,
        *chat(project, "stream"),
        method="POST",
        body={"message": "hello", "stream": False},
        headers=ALICE,
    )
    assert reply.code == 200 and reply.body["status"] == "done"
    return str(reply.body["session_id"])


async def test_users_only_ever_see_their_own_sessions(jp_fetch, gns3_project, scripted_llm) -> None:
    session_id = await alice_chats(jp_fetch, gns3_project, scripted_llm)
    session = ("sessions", session_id)

    # Bob sees none of Alice's sessions, and may not ask for hers
    assert (await call(jp_fetch, *chat(gns3_project, "sessions"), headers=BOB)).body == []
    forbidden = await call(
        jp_fetch, *chat(gns3_project, "sessions"), params={"user_id": "alice"}, headers=BOB
    )
    assert forbidden.code == 403
    # Every operation on her session is 404 for him, as for a session that does not exist
    for method, suffix, body in [
        ("GET", ("history",), None),
        ("GET", ("export",), None),
        ("PATCH", (), {"title": "mine now"}),
        ("PUT", ("pin",), None),
        ("DELETE", ("pin",), None),
        ("POST", ("abort",), None),
        ("DELETE", (), None),
    ]:
        reply = await call(
            jp_fetch, *chat(gns3_project, *session, *suffix), method=method, body=body, headers=BOB
        )
        assert reply.code == 404, (method, suffix, reply.body)
        assert reply.error["type"] == "SessionNotFound"
    # He cannot continue her conversation either
    hijack = await call(
        jp_fetch,
        *chat(gns3_project, "stream"),
        method="POST",
        body={"message": "what did she say?", "session_id": session_id},
        headers=BOB,
    )
    assert hijack.code == 404

    # Alice's session is untouched and hers to manage
    mine = await call(
        jp_fetch, *chat(gns3_project, "sessions"), params={"user_id": "alice"}, headers=ALICE
    )
    [listed] = mine.body
    assert (listed["thread_id"], listed["user_id"], listed["title"]) == (
        session_id,
        "alice",
        "Greeting",
    )
    assert listed["pinned"] is False
    history = await call(jp_fetch, *chat(gns3_project, *session, "history"), headers=ALICE)
    assert [m["content"] for m in history.body["messages"]] == ["hello", "Hi Alice."]
    renamed = await call(
        jp_fetch, *chat(gns3_project, *session), method="PATCH", body={"title": "A"}, headers=ALICE
    )
    assert renamed.code == 200
    deleted = await call(jp_fetch, *chat(gns3_project, *session), method="DELETE", headers=ALICE)
    assert deleted.code == 204


@pytest.mark.slow
async def test_a_user_cannot_abort_another_users_running_turn(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    await add_pcs(gns3_project, "PC1", start=True)
    ping = {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.99 -c 30"]}]}
    scripted_llm.add(tool_reply("run_vpcs_commands", ping, id="call_ping"))
    stream = open_stream(
        jp_fetch,
        *chat(gns3_project, "stream"),
        body={"message": "ping", "copilot_mode": "lab_automation_assistant"},
        headers=ALICE,
    )
    session_id = (await stream.until("tool_start"))[-1]["session_id"]
    abort = ("sessions", session_id, "abort")
    assert (
        await call(jp_fetch, *chat(gns3_project, *abort), method="POST", headers=BOB)
    ).code == 404
    assert not stream.task.done()
    mine = await call(jp_fetch, *chat(gns3_project, *abort), method="POST", headers=ALICE)
    assert mine.body["status"] == "ok"
    assert kinds(await stream.finish(timeout=20))[-2:] == ["abort", "done"]


async def test_model_settings_are_per_user(jp_fetch) -> None:
    changed = await call(
        jp_fetch,
        "copilot",
        "llm-config",
        method="PUT",
        body={"model": "alice-model", "copilot_mode": "lab_automation_assistant"},
        headers=ALICE,
    )
    assert changed.body["model"] == "alice-model"
    bobs = await call(jp_fetch, "copilot", "llm-config", headers=BOB)
    assert bobs.body["model"] == "scripted-model"
    assert bobs.body["copilot_mode"] == "teaching_assistant"
    status = await call(jp_fetch, "copilot", "status", headers=ALICE)
    assert status.body["user"] == "alice" and status.body["model"]["model"] == "alice-model"


async def test_the_server_token_is_the_instructor(jp_fetch) -> None:
    status = await call(jp_fetch, "copilot", "status")
    assert status.body["user"] == "instructor"
    nobody = await call(jp_fetch, "copilot", "status", headers={"Authorization": "token nope"})
    assert nobody.code == 403


async def test_notebook_projects_are_kept_per_user(jp_fetch) -> None:
    """What a notebook uses is kept per user: Alice's notebook at a path is not Bob's,
    a later project of the notebook replaces the earlier one but keeps its conversation,
    and bad input is a 400 naming the field."""
    route = ("copilot", "notebook-projects")
    first, second = "0b0b0b0b-1111-2222-3333-444444444444", "1c1c1c1c-1111-2222-3333-444444444444"
    path = "/home/class/lab 1.ipynb"
    put = await call(
        jp_fetch,
        *route,
        method="PUT",
        body={"path": path, "project_id": first.upper(), "session_id": "s-1"},
        headers=ALICE,
    )
    assert put.code == 200 and (put.body["project_id"], put.body["session_id"]) == (first, "s-1")
    await call(
        jp_fetch, *route, method="PUT", body={"path": path, "project_id": second}, headers=ALICE
    )
    alice = (await call(jp_fetch, *route, params={"path": path}, headers=ALICE)).body
    assert (alice["project_id"], alice["session_id"]) == (second, None)
    assert alice["sessions"] == {first: "s-1"}
    bob = (await call(jp_fetch, *route, params={"path": path}, headers=BOB)).body
    assert bob["project_id"] is None and bob["sessions"] == {}

    no_path = await call(jp_fetch, *route, headers=ALICE)
    assert no_path.code == 400 and no_path.error["field"] == "path"
    bad_id = await call(
        jp_fetch, *route, method="PUT", body={"path": path, "project_id": "x"}, headers=ALICE
    )
    assert bad_id.code == 400 and bad_id.error["field"] == "project_id"


async def test_a_notebook_is_found_by_its_contents_path_too(jp_fetch, jp_root_dir: Path) -> None:
    """The sidebar knows a notebook by its contents path (`dir/lab 2.ipynb`), its kernel by
    `JPY_SESSION_NAME` (jupyter_server's working directory for that path joined with the
    file name): both name the same record."""
    folder = jp_root_dir / "week 3"
    folder.mkdir()
    (folder / "lab 2.ipynb").write_text("{}")
    project = "2d2d2d2d-1111-2222-3333-444444444444"
    route = ("copilot", "notebook-projects")
    kernel_path = str(folder / "lab 2.ipynb")
    await call(
        jp_fetch,
        *route,
        method="PUT",
        body={"path": kernel_path, "project_id": project},
        headers=ALICE,
    )
    found = await call(jp_fetch, *route, params={"notebook": "week 3/lab 2.ipynb"}, headers=ALICE)
    assert found.code == 200 and found.body["project_id"] == project, found.body
    assert found.body["path"] == kernel_path
    other = await call(jp_fetch, *route, params={"notebook": "week 3/other.ipynb"}, headers=ALICE)
    assert other.body["project_id"] is None
    empty = await call(jp_fetch, *route, params={"notebook": " "}, headers=ALICE)
    assert empty.code == 400 and empty.error["field"] == "path"
