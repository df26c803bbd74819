"""Projects through the extension and the chat services' lifecycle (seed 000 "Project
Lifecycle Integration"), against the real local GNS3 lab: list, open, close, delete,
topology in three formats, services closed with their projects and at server stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_server_support import (
    TITLE_REPLY,
    add_pcs,
    call,
    copilot_app,
    lab_traits,
    model_traits,
    server_config,
)

from jupyter_gns3_copilot.testing.scripted_llm import text

pytestmark = pytest.mark.lab


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def jp_server_config(gns3_lab, scripted_llm, data_dir: Path) -> dict[str, Any]:
    return server_config(data_dir, **lab_traits(gns3_lab), **model_traits(scripted_llm))


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


async def test_deleting_a_project_deletes_its_sessions_and_data(
    jp_fetch, jp_serverapp, gns3_project, gns3_http, scripted_llm, data_dir: Path
) -> None:
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
