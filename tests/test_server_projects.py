"""Projects through the extension and the chat services' lifecycle, against the real local
GNS3 lab: list, open, close, delete, topology in three formats, services closed with their
projects and at server stop; who may close and delete. Several users come from
`TokenUsersIdentityProvider`, a TEST identity provider mapping tokens to user names."""

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
    copilot_app,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
)

from jupyter_gns3_copilot.testing.scripted_llm import text

pytestmark = pytest.mark.lab


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def copilot_traits() -> dict[str, Any]:
    return {}


@pytest.fixture
def jp_server_config(
    gns3_lab, scripted_llm, data_dir: Path, copilot_traits: dict[str, Any]
) -> dict[str, Any]:
    config = server_config(
        data_dir, **lab_traits(gns3_lab), **model_traits(scripted_llm), **copilot_traits
    )
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


ALICE, BOB = as_user("alice"), as_user("bob")
LAB_MODE = {"copilot_mode": "lab_automation_assistant"}


def project_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, *rest)


async def chat_once(jp_fetch: Any, project: Any, scripted_llm: Any) -> str:
    scripted_llm.add(text("Hello."), text("Hello", when=TITLE_REPLY))
    reply = await call(
        jp_fetch,
        *project_path(project, "chat", "stream"),
        method="POST",
        body={"message": "hi", "stream": False},
    )
    assert reply.body["status"] == "done", reply.body
    return str(reply.body["session_id"])


async def test_projects_lists_gns3_projects_with_their_status(jp_fetch, gns3_project) -> None:
    reply = await call(jp_fetch, "copilot", "projects")
    assert reply.code == 200
    mine = [p for p in reply.body if p["project_id"] == gns3_project.project_id]
    assert mine == [
        {
            "project_id": gns3_project.project_id,
            "name": gns3_project.name,
            "status": "opened",
            "filename": f"{gns3_project.name}.gns3",
        }
    ]


async def test_topology_in_json_text_and_svg(jp_fetch, gns3_project) -> None:
    await add_pcs(gns3_project, "PC1", "PC2")
    as_json = await call(jp_fetch, *project_path(gns3_project, "topology"))
    assert as_json.code == 200
    assert sorted(node["name"] for node in as_json.body["nodes"]) == ["PC1", "PC2"]
    as_text = await call(
        jp_fetch, *project_path(gns3_project, "topology"), params={"format": "text"}
    )
    assert as_text.headers["Content-Type"].startswith("text/plain")
    assert "PC1" in as_text.body and gns3_project.name in as_text.body
    stopped = await call(
        jp_fetch,
        *project_path(gns3_project, "topology"),
        params={"format": "text", "addresses": "true"},
    )
    assert stopped.body == as_text.body, "stopped PCs have no addresses to read"
    bad = await call(
        jp_fetch,
        *project_path(gns3_project, "topology"),
        params={"format": "text", "addresses": "maybe"},
    )
    assert bad.code == 400 and "addresses" in bad.error["message"]
    as_svg = await call(jp_fetch, *project_path(gns3_project, "topology"), params={"format": "svg"})
    assert as_svg.headers["Content-Type"] == "image/svg+xml"
    assert as_svg.body.startswith("<svg") and "PC2" in as_svg.body


async def test_an_unknown_project_is_404(jp_fetch) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    reply = await call(jp_fetch, "copilot", "projects", missing, "topology")
    assert reply.code == 404 and reply.error["type"] == "GNS3NotFound"


async def test_close_and_open_through_the_extension_manage_the_chat_service(
    jp_fetch, jp_serverapp, gns3_project, scripted_llm
) -> None:
    await chat_once(jp_fetch, gns3_project, scripted_llm)
    agents = copilot_app(jp_serverapp).agents()
    service = await agents.get_agent(gns3_project.project_id)
    assert not service.store.closed

    closed = await call(jp_fetch, *project_path(gns3_project, "close"), method="POST")
    assert closed.code == 204
    assert service.store.closed
    listed = await call(jp_fetch, "copilot", "projects")
    [mine] = [p for p in listed.body if p["project_id"] == gns3_project.project_id]
    assert mine["status"] == "closed"
    # The history stays readable while the project is closed
    sessions = await call(jp_fetch, *project_path(gns3_project, "chat", "sessions"))
    assert len(sessions.body) == 1

    opened = await call(jp_fetch, *project_path(gns3_project, "open"), method="POST")
    assert opened.code == 200 and opened.body["status"] == "opened"
    reopened = await agents.get_agent(gns3_project.project_id)
    assert reopened is not service and not reopened.store.closed


async def test_deleting_needs_the_admin_setting_and_lab_mode(
    jp_fetch, gns3_project, gns3_http
) -> None:
    # Given the default settings (allow_project_delete off) and a user in teaching mode
    reply = await call(jp_fetch, *project_path(gns3_project), method="DELETE")
    # Then deleting is 403 naming both, and the project is still in GNS3
    assert reply.code == 403
    assert reply.error["type"] == "ProjectDeleteForbidden"
    assert reply.error["setting"] == "allow_project_delete"
    assert "c.GNS3Copilot.allow_project_delete" in reply.error["message"]
    assert "lab_automation_assistant" in reply.error["message"]
    # Automation mode alone is not enough either
    assert (await call(jp_fetch, "copilot", "llm-config", method="PUT", body=LAB_MODE)).code == 200
    again = await call(jp_fetch, *project_path(gns3_project), method="DELETE")
    assert again.code == 403 and "lab_automation_assistant" not in again.error["message"]
    assert gns3_http.get(f"/v3/projects/{gns3_project.project_id}").status_code == 200


class TestDeleteAllowed:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {"allow_project_delete": True}

    async def test_teaching_mode_still_may_not_delete(self, jp_fetch, gns3_project) -> None:
        reply = await call(jp_fetch, *project_path(gns3_project), method="DELETE")
        assert reply.code == 403
        assert "it needs the lab_automation_assistant copilot mode" in reply.error["message"]
        assert "setting" not in reply.error

    async def test_deleting_a_project_deletes_its_sessions_and_data(
        self, jp_fetch, jp_serverapp, gns3_project, gns3_http, scripted_llm, data_dir: Path
    ) -> None:
        await deleting_a_project_deletes_its_sessions_and_data(
            jp_fetch, jp_serverapp, gns3_project, gns3_http, scripted_llm, data_dir
        )

    @pytest.mark.slow
    async def test_close_and_delete_wait_for_other_users(
        self, jp_fetch, gns3_project, scripted_llm
    ) -> None:
        # Given Bob in the middle of a turn (a slowly streamed answer)
        scripted_llm.add(text("word " * 100, chunks=100, chunk_delay=0.2))
        bob = open_stream(
            jp_fetch,
            *project_path(gns3_project, "chat", "stream"),
            body={"message": "talk"},
            headers=BOB,
        )
        await bob.until("content")
        session_id = bob.events[0]["session_id"]
        settings = await call(
            jp_fetch, "copilot", "llm-config", method="PUT", body=LAB_MODE, headers=ALICE
        )
        assert settings.code == 200
        # When Alice closes or deletes the project, then 409 counts Bob without naming him
        for method, rest in (("POST", ("close",)), ("DELETE", ())):
            reply = await call(
                jp_fetch, *project_path(gns3_project, *rest), method=method, headers=ALICE
            )
            assert reply.code == 409, reply.body
            assert reply.error["type"] == "ProjectInUse"
            assert "1 other user is using it" in reply.error["message"]
            assert "bob" not in reply.error["message"]
        # And Bob's turn went on; once it is over, Alice may close the project
        assert kinds(bob.events) == ["content"] * len(kinds(bob.events))
        aborted = await call(
            jp_fetch,
            *project_path(gns3_project, "chat", "sessions", session_id, "abort"),
            method="POST",
            headers=BOB,
        )
        assert aborted.body["status"] == "ok"
        assert kinds(await bob.finish())[-2:] == ["abort", "done"]
        closed = await call(
            jp_fetch, *project_path(gns3_project, "close"), method="POST", headers=ALICE
        )
        assert closed.code == 204


async def deleting_a_project_deletes_its_sessions_and_data(
    jp_fetch: Any,
    jp_serverapp: Any,
    gns3_project: Any,
    gns3_http: Any,
    scripted_llm: Any,
    data_dir: Path,
) -> None:
    assert (await call(jp_fetch, "copilot", "llm-config", method="PUT", body=LAB_MODE)).code == 200
    session_id = await chat_once(jp_fetch, gns3_project, scripted_llm)
    folder = data_dir / "projects" / gns3_project.project_id
    assert (folder / "copilot_checkpoints.db").exists()
    service = await copilot_app(jp_serverapp).agents().get_agent(gns3_project.project_id)

    deleted = await call(jp_fetch, *project_path(gns3_project), method="DELETE")
    assert deleted.code == 204
    assert service.store.closed
    assert not folder.exists()
    assert gns3_http.get(f"/v3/projects/{gns3_project.project_id}").status_code == 404
    history = await call(
        jp_fetch, *project_path(gns3_project, "chat", "sessions", session_id, "history")
    )
    assert history.code == 404
    again = await call(jp_fetch, *project_path(gns3_project), method="DELETE")
    assert again.code == 204


async def test_a_project_gone_from_gns3_drops_its_chat_service(
    jp_fetch, jp_serverapp, gns3_project, gns3_http, scripted_llm
) -> None:
    await chat_once(jp_fetch, gns3_project, scripted_llm)
    service = await copilot_app(jp_serverapp).agents().get_agent(gns3_project.project_id)
    assert gns3_http.delete(f"/v3/projects/{gns3_project.project_id}").status_code == 204
    reply = await call(
        jp_fetch,
        *project_path(gns3_project, "chat", "stream"),
        method="POST",
        body={"message": "hi"},
    )
    assert reply.code == 404 and reply.error["type"] == "GNS3NotFound"
    assert service.store.closed


async def test_stopping_the_extension_closes_every_database(
    jp_fetch, jp_serverapp, gns3_project, scripted_llm
) -> None:
    await chat_once(jp_fetch, gns3_project, scripted_llm)
    app = copilot_app(jp_serverapp)
    service = await app.agents().get_agent(gns3_project.project_id)
    await app.stop_extension()
    assert service.store.closed
    assert not app.has_agents()
