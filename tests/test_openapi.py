"""The API's OpenAPI document (`server/openapi.py`): it names exactly the routes and verbs
the server has, it is valid OpenAPI 3.1, and a REAL Jupyter server (pytest-jupyter, an odd
base_url) serves it to logged-in users, with answers that match its schemas: the status,
settings, tool catalogue, session list and error bodies without GNS3, and on the real lab
the project, topology and `"stream": false` tool-run answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tornado.web
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from support.server import call, lab_traits, server_config

from jupyter_gns3_copilot.server.api_operations import operations
from jupyter_gns3_copilot.server.errors import ErrorAnswer, bad_input
from jupyter_gns3_copilot.server.handlers import default_handlers
from jupyter_gns3_copilot.server.openapi import openapi_document, route_template

VERBS = ("get", "post", "put", "patch", "delete")
BASE_URL = "/jupyter/odd-base/"


@pytest.fixture
def jp_base_url() -> str:
    return BASE_URL


@pytest.fixture
def copilot_traits() -> dict[str, Any]:
    return {}


@pytest.fixture
def jp_server_config(tmp_path: Path, copilot_traits: dict[str, Any]) -> dict[str, Any]:
    return server_config(tmp_path / "copilot-data", **copilot_traits)


def answer_schema(
    document: dict[str, Any], path: str, method: str, status: int, media: str
) -> dict[str, Any]:
    """The document's schema of one answer, resolvable on its own."""
    responses = document["paths"][path][method]["responses"]
    schema = responses[str(status)]["content"][media]["schema"]
    return {**schema, "components": document["components"]}


def assert_matches(document: dict[str, Any], path: str, method: str, reply: Any) -> None:
    """The reply's JSON body is valid for its status in the document."""
    schema = answer_schema(document, path, method, reply.code, "application/json")
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(reply.body)]
    assert errors == [], f"{method.upper()} {path} {reply.code}: {errors}"


def handler_verbs() -> set[tuple[str, str]]:
    """(path, verb) of every verb the copilot's handlers implement."""
    found = set()
    for pattern, handler in default_handlers:
        for verb in VERBS:
            if getattr(handler, verb) is not getattr(tornado.web.RequestHandler, verb):
                found.add((route_template(pattern), verb))
    return found


def test_the_document_names_every_route_and_verb_and_no_other() -> None:
    documented = {(op.path, op.method) for op in operations()}
    assert documented == handler_verbs()
    assert len(documented) == len(operations()), "an operation is listed twice"


def test_the_document_is_valid_openapi_with_a_description_for_every_operation() -> None:
    document = openapi_document("/")
    validate(document)
    for path, verbs in document["paths"].items():
        for verb, operation in verbs.items():
            assert operation["description"], f"{verb} {path} has no handler docstring"
    # The chat's events are one discriminated union, one schema per event type
    events = document["components"]["schemas"]["ChatEvent"]
    assert {"content", "tool_end", "approval_required", "done"} <= set(
        events["discriminator"]["mapping"]
    )


@pytest.mark.parametrize(
    "error",
    [
        bad_input("message", "must contain more than whitespace"),
        ErrorAnswer(503, "closed", type="ConfigurationError", setting="llm_model"),
        ErrorAnswer(400, "bad", type="ValidationError", errors=[{"field": "a", "rule": "b"}]),
    ],
)
def test_every_error_body_matches_the_documented_error_schema(error: ErrorAnswer) -> None:
    document = openapi_document("/")
    schema = answer_schema(document, "/copilot/status", "get", 503, "application/json")
    assert list(Draft202012Validator(schema).iter_errors(error.body())) == []


async def test_the_server_serves_the_document_under_its_base_url(jp_fetch) -> None:
    # Given a server with an odd base_url, when a logged-in user asks for the document
    reply = await call(jp_fetch, "copilot", "openapi.json")
    # Then it is valid OpenAPI whose server is that base_url, the same as the docs' document
    assert reply.code == 200
    validate(reply.body)
    assert reply.body["servers"][0]["url"] == BASE_URL
    assert reply.body["paths"] == openapi_document("/")["paths"]
    # And it needs a login, as every route
    refused = await call(jp_fetch, "copilot", "openapi.json", headers={"Authorization": ""})
    assert refused.code == 403


async def test_answers_without_gns3_match_the_document(jp_fetch) -> None:
    document = (await call(jp_fetch, "copilot", "openapi.json")).body
    project, session = "0b5f2a7c-3e8d-4a55-b7e1-2f0c9a4d6e11", "s-1"
    sessions = f"/copilot/projects/{project}/chat/sessions"
    checks = [
        ("/copilot/status", "get", ("copilot", "status"), None),
        ("/copilot/llm-config", "get", ("copilot", "llm-config"), None),
        ("/copilot/llm-config", "put", ("copilot", "llm-config"), {"temperature": 0.3}),
        ("/copilot/llm-config", "put", ("copilot", "llm-config"), {"temperature": 9}),
        ("/copilot/tools", "get", ("copilot", "tools"), None),
        ("/copilot/projects", "get", ("copilot", "projects"), None),
        (
            "/copilot/projects/{project_id}/chat/sessions",
            "get",
            tuple(sessions.strip("/").split("/")),
            None,
        ),
        (
            "/copilot/projects/{project_id}/chat/sessions/{session_id}/history",
            "get",
            (*sessions.strip("/").split("/"), session, "history"),
            None,
        ),
        (
            "/copilot/projects/{project_id}/chat/stream",
            "post",
            ("copilot", "projects", project, "chat", "stream"),
            {"message": " "},
        ),
        (
            "/copilot/notebook-projects",
            "put",
            ("copilot", "notebook-projects"),
            {"path": "/a.ipynb", "project_id": project, "session_id": session},
        ),
    ]
    seen = set()
    for path, method, parts, body in checks:
        reply = await call(jp_fetch, *parts, method=method.upper(), body=body)
        assert_matches(document, path, method, reply)
        seen.add(reply.code)
    # The checks above met answers and errors alike: 200, 400 (bad input), 404, 502 (GNS3)
    assert {200, 400, 404, 502} <= seen


@pytest.mark.lab
class TestOnTheLab:
    @pytest.fixture
    def copilot_traits(self, gns3_lab) -> dict[str, Any]:  # type: ignore[override]
        return lab_traits(gns3_lab)

    async def test_project_topology_and_tool_answers_match_the_document(
        self, jp_fetch, gns3_project
    ) -> None:
        document = (await call(jp_fetch, "copilot", "openapi.json")).body
        project = ("copilot", "projects", gns3_project.project_id)
        opened = await call(jp_fetch, *project, "open", method="POST")
        assert_matches(document, "/copilot/projects/{project_id}/open", "post", opened)
        listed = await call(jp_fetch, "copilot", "projects")
        assert_matches(document, "/copilot/projects", "get", listed)
        topology = await call(jp_fetch, *project, "topology")
        assert_matches(document, "/copilot/projects/{project_id}/topology", "get", topology)
        run = await call(
            jp_fetch,
            *project,
            "tools",
            "get_topology",
            method="POST",
            body={"arguments": {}, "stream": False},
        )
        assert run.code == 200 and run.body["status"] == "done", json.dumps(run.body)
        assert_matches(document, "/copilot/projects/{project_id}/tools/{tool_name}", "post", run)
