"""Every copilot route's contract for bad input and failures, through a real Jupyter server
(pytest-jupyter, base_url deliberately odd). GNS3 points at a closed port here; the routes'
happy paths against the real lab are in test_server_chat.py and test_server_projects.py.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.server import call, files_under, server_config

PROJECT = str(uuid.uuid4())
SESSION = str(uuid.uuid4())
CHAT = ("copilot", "projects", PROJECT, "chat", "stream")


@pytest.fixture
def copilot_traits() -> dict[str, Any]:
    return {}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "copilot-data"


@pytest.fixture
def jp_server_config(data_dir: Path, copilot_traits: dict[str, Any]) -> dict[str, Any]:
    return server_config(data_dir, **copilot_traits)


# -- authentication and errors -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "parts"),
    [
        ("GET", ("copilot", "status")),
        ("GET", ("copilot", "llm-config")),
        ("PUT", ("copilot", "llm-config")),
        ("GET", ("copilot", "projects")),
        ("GET", ("copilot", "tools")),
        ("POST", ("copilot", "reload", "skills")),
        ("POST", CHAT),
        ("GET", ("copilot", "projects", PROJECT, "chat", "sessions")),
        ("DELETE", ("copilot", "projects", PROJECT, "chat", "sessions", SESSION)),
        ("POST", ("copilot", "projects", PROJECT, "tools", "get_topology")),
    ],
)
async def test_every_route_needs_authentication(jp_fetch, method: str, parts: tuple) -> None:
    # Given no token, when any copilot route is called, then it answers 403 in JSON
    reply = await call(jp_fetch, *parts, method=method, headers={"Authorization": ""})
    assert reply.code == 403
    assert isinstance(reply.body, dict)


async def test_an_unknown_route_under_copilot_is_not_ours(jp_fetch) -> None:
    reply = await call(jp_fetch, "copilot", "nothing-here")
    assert reply.code == 404


# -- llm-config ----------------------------------------------------------------------------


async def test_llm_config_defaults_say_what_is_missing(jp_fetch) -> None:
    # Given a server with no model configured
    reply = await call(jp_fetch, "copilot", "llm-config")
    # Then the view names the missing settings and holds no key
    assert reply.code == 200
    view = reply.body
    assert view["configured"] is False
    assert [m["setting"] for m in view["missing"]] == ["llm_model", "llm_api_key"]
    assert view["api_key_set"] is False
    assert "api_key" not in view
    assert view["copilot_mode"] == "teaching_assistant"
    assert view["allowed_modes"] == ["teaching_assistant", "lab_automation_assistant"]


async def test_llm_config_put_sets_user_values_and_never_returns_the_key(
    jp_fetch, data_dir: Path
) -> None:
    # When the user sets a model, an endpoint, a key and a mode
    secret = "sk-user-" + uuid.uuid4().hex
    reply = await call(
        jp_fetch,
        "copilot",
        "llm-config",
        method="PUT",
        body={
            "provider": "Ollama",
            "base_url": "http://127.0.0.1:11434/v1/",
            "model": "qwen2.5:7b",
            "api_key": secret,
            "temperature": 0.3,
            "context_strategy": "conservative",
            "copilot_mode": "lab_automation_assistant",
        },
    )
    # Then the effective settings are theirs, the key is only reported as set
    assert reply.code == 200, reply.body
    view = reply.body
    assert view["configured"] is True
    assert view["base_url"] == "http://127.0.0.1:11434/v1"
    assert view["model"] == "qwen2.5:7b"
    assert view["context_limit"] == 32  # qwen's family default
    assert view["api_key_set"] is True and view["api_key_source"] == "user"
    assert view["sources"]["model"] == "user"
    assert secret not in json.dumps(view)
    # And a later GET agrees, while the key is nowhere in clear on disk
    assert (await call(jp_fetch, "copilot", "llm-config")).body == view
    assert all(secret.encode() not in data for data in files_under(data_dir).values())
    # When the user resets the model and removes the key
    reset = await call(
        jp_fetch, "copilot", "llm-config", method="PUT", body={"model": None, "api_key": ""}
    )
    # Then the admin's value is back (none) and no key is set
    assert reset.body["model"] == "" and reset.body["api_key_set"] is False
    assert reset.body["copilot_mode"] == "lab_automation_assistant"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"temperature": 2.5}, "temperature"),
        ({"context_limit": 0}, "context_limit"),
        ({"context_strategy": "greedy"}, "context_strategy"),
        ({"base_url": "ftp://models.example"}, "base_url"),
        ({"copilot_mode": "root"}, "copilot_mode"),
        ({"api_token": "x"}, "api_token"),
        ({"model": ""}, "model"),
    ],
)
async def test_llm_config_put_rejects_bad_values_naming_the_field(
    jp_fetch, body: dict[str, Any], field: str
) -> None:
    reply = await call(jp_fetch, "copilot", "llm-config", method="PUT", body=body)
    assert reply.code == 400
    assert reply.error["field"] == field
    assert reply.error["rule"]


async def test_llm_config_put_rejects_a_body_that_is_not_an_object(jp_fetch) -> None:
    for body in ("not json", "[1, 2]"):
        reply = await call(jp_fetch, "copilot", "llm-config", method="PUT", body=body)
        assert reply.code == 400
        assert reply.error["field"] == "body"


class TestAdminLimits:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {
            "llm_base_url": "http://models.school.example/v1",
            "llm_model": "school-model",
            "llm_api_key": "sk-admin-" + "a" * 20,
            "allowed_modes": ["teaching_assistant"],
            "allowed_base_urls": ["http://models.school.example/v1"],
        }

    async def test_users_stay_within_the_admin_limits(
        self, jp_fetch, caplog: pytest.LogCaptureFixture
    ) -> None:
        # Given an admin allowing one mode and one endpoint
        view = (await call(jp_fetch, "copilot", "llm-config")).body
        assert view["configured"] is True and view["api_key_source"] == "admin"
        # When a user asks for another mode or endpoint, then 400 names the field and the
        # limit in words for the student; the administrator's setting is in the log only
        mode = await call(
            jp_fetch,
            "copilot",
            "llm-config",
            method="PUT",
            body={"copilot_mode": "lab_automation_assistant"},
        )
        assert mode.code == 400 and mode.error["field"] == "copilot_mode"
        assert mode.error["message"] == "Your course allows teaching mode only."
        assert "teaching_assistant" in mode.error["rule"]
        url = await call(
            jp_fetch,
            "copilot",
            "llm-config",
            method="PUT",
            body={"base_url": "http://evil.example/v1"},
        )
        assert url.code == 400 and url.error["field"] == "base_url"
        assert "http://models.school.example/v1" in url.error["rule"]
        # And a chat or a direct tool run asking for a mode the admin does not allow is
        # refused the same way
        chat = await call(
            jp_fetch,
            *CHAT,
            method="POST",
            body={"message": "hi", "copilot_mode": "lab_automation_assistant"},
        )
        assert chat.code == 400 and chat.error["field"] == "copilot_mode"
        run = await call(
            jp_fetch,
            "copilot",
            "projects",
            PROJECT,
            "tools",
            "get_topology",
            method="POST",
            body={"copilot_mode": "lab_automation_assistant"},
        )
        assert run.code == 400 and run.error["message"] == "Your course allows teaching mode only."
        for refused in (mode, url, chat, run):
            assert "GNS3Copilot" not in json.dumps(refused.body)
            assert "setting" not in refused.error
        assert caplog.text.count("is not in c.GNS3Copilot.allowed_modes (teaching_assistant)") == 3
        assert "not in c.GNS3Copilot.allowed_base_urls" in caplog.text


async def test_a_metadata_endpoint_is_refused_naming_the_rule(jp_fetch) -> None:
    reply = await call(
        jp_fetch,
        "copilot",
        "llm-config",
        method="PUT",
        body={"base_url": "http://169.254.169.254/latest", "api_key": "sk-x"},
    )
    assert reply.code == 400 and reply.error["field"] == "base_url"
    assert "cloud metadata address" in reply.error["rule"]
    assert "allowed_base_urls" not in reply.body["error"]["message"]


class TestUnderJupyterHub:
    @pytest.fixture
    def copilot_traits(self, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        # JupyterHub gives every server it spawns this variable (nothing else reads it here)
        monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/alice/")
        return {"llm_base_url": "http://models.school.example/v1", "llm_model": "m"}

    async def test_users_keep_the_admins_endpoint(self, jp_fetch) -> None:
        view = await call(jp_fetch, "copilot", "llm-config")
        assert view.body["allowed_base_urls"] == ["http://models.school.example/v1"]
        reply = await call(
            jp_fetch,
            "copilot",
            "llm-config",
            method="PUT",
            body={"base_url": "https://llm.example/v1", "api_key": "sk-x"},
        )
        assert reply.code == 400 and reply.error["field"] == "base_url"
        assert "http://models.school.example/v1" in reply.error["rule"]
        assert reply.error["message"] == (
            "Your course allows only its own model endpoint (http://models.school.example/v1)."
        )


# -- status ----------------------------------------------------------------------------------


async def test_status_with_gns3_down_reports_the_model_without_the_key(jp_fetch) -> None:
    reply = await call(jp_fetch, "copilot", "status")
    assert reply.code == 200
    assert reply.body["gns3"]["reachable"] is False
    model = reply.body["model"]
    assert model["configured"] is False
    assert model["missing"] == ["llm_model", "llm_api_key"]
    assert "GNS3_COPILOT_MODEL" in model["problems"][0]
    assert reply.body["user"]


# -- chat: bad input and unmet preconditions ------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "message"),
        ({"message": ""}, "message"),
        ({"message": "   "}, "message"),
        ({"message": "x" * 32_001}, "message"),
        ({"message": "hi", "temperature": 2.1}, "temperature"),
        ({"message": "hi", "mode": "voice"}, "mode"),
        ({"message": "hi", "max_iterations": 0}, "max_iterations"),
        ({"message": "hi", "max_iterations": 101}, "max_iterations"),
        ({"message": "hi", "max_tool_calls": 51}, "max_tool_calls"),
        ({"message": "hi", "max_execution_time_seconds": 0}, "max_execution_time_seconds"),
        ({"message": "hi", "max_execution_time_seconds": 3601}, "max_execution_time_seconds"),
        ({"message": "hi", "max_execution_time_seconds": 2.5}, "max_execution_time_seconds"),
        ({"message": "hi", "session_id": "../x"}, "session_id"),
        ({"message": "hi", "stream": "maybe"}, "stream"),
        ({"message": "hi", "max_iteration": 5}, "max_iteration"),
    ],
)
async def test_chat_rejects_bad_input_naming_field_and_rule(
    jp_fetch, body: dict[str, Any], field: str
) -> None:
    reply = await call(jp_fetch, *CHAT, method="POST", body=body)
    assert reply.code == 400
    assert reply.headers["Content-Type"].startswith("application/json")
    assert reply.error["type"] == "ValidationError"
    assert reply.error["field"] == field
    assert reply.error["rule"]


async def test_chat_rejects_a_project_id_that_is_not_a_uuid(jp_fetch) -> None:
    reply = await call(
        jp_fetch,
        "copilot",
        "projects",
        "my-lab",
        "chat",
        "stream",
        method="POST",
        body={"message": "hi"},
    )
    assert reply.code == 400
    assert reply.error["field"] == "project_id"


async def test_chat_without_a_model_names_the_missing_setting(jp_fetch) -> None:
    reply = await call(jp_fetch, *CHAT, method="POST", body={"message": "hi"})
    assert reply.code == 409
    assert reply.error["type"] == "ModelNotConfigured"
    assert reply.error["setting"] == "llm_model"
    assert "GNS3_COPILOT_MODEL" in reply.error["message"]


class TestWithAModel:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "some-model"}

    async def test_chat_with_gns3_down_is_502_naming_url_and_setting(self, jp_fetch) -> None:
        reply = await call(jp_fetch, *CHAT, method="POST", body={"message": "hi"})
        assert reply.code == 502
        assert reply.error["type"] == "GNS3Unreachable"
        assert reply.error["setting"] == "gns3_url"
        assert reply.error["url"] in reply.error["message"]
        assert "GNS3_URL" in reply.error["message"]


# -- sessions ----------------------------------------------------------------------------------


async def test_sessions_of_a_project_without_chats_is_an_empty_list(
    jp_fetch, data_dir: Path
) -> None:
    reply = await call(jp_fetch, "copilot", "projects", PROJECT, "chat", "sessions")
    assert reply.code == 200 and reply.body == []
    # Reading created nothing
    assert not (data_dir / "projects").exists()


async def test_sessions_of_another_user_are_forbidden(jp_fetch) -> None:
    reply = await call(
        jp_fetch, "copilot", "projects", PROJECT, "chat", "sessions", params={"user_id": "bob"}
    )
    assert reply.code == 403
    assert reply.error["field"] == "user_id"


@pytest.mark.parametrize("limit", ["0", "-1", "ten", "1001"])
async def test_sessions_limit_is_checked(jp_fetch, limit: str) -> None:
    reply = await call(
        jp_fetch, "copilot", "projects", PROJECT, "chat", "sessions", params={"limit": limit}
    )
    assert reply.code == 400 and reply.error["field"] == "limit"


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", ("history",), None),
        ("PATCH", (), {"title": "x"}),
        ("DELETE", (), None),
        ("POST", ("abort",), None),
        ("PUT", ("pin",), None),
        ("DELETE", ("pin",), None),
    ],
)
async def test_an_unknown_session_is_404_everywhere(
    jp_fetch, method: str, suffix: tuple, body: Any
) -> None:
    parts = ("copilot", "projects", PROJECT, "chat", "sessions", SESSION, *suffix)
    reply = await call(jp_fetch, *parts, method=method, body=body)
    assert reply.code == 404
    assert reply.error["type"] == "SessionNotFound"


@pytest.mark.parametrize("body", [{}, {"title": ""}, {"title": "  "}, {"title": "x" * 256}])
async def test_rename_checks_the_title(jp_fetch, body: dict[str, Any]) -> None:
    parts = ("copilot", "projects", PROJECT, "chat", "sessions", SESSION)
    reply = await call(jp_fetch, *parts, method="PATCH", body=body)
    assert reply.code == 400 and reply.error["field"] == "title"


# -- projects, topology, tools, skills --------------------------------------------------------


async def test_projects_with_gns3_down_is_502(jp_fetch) -> None:
    reply = await call(jp_fetch, "copilot", "projects")
    assert reply.code == 502
    assert reply.error["setting"] == "gns3_url"


async def test_topology_format_is_checked(jp_fetch) -> None:
    reply = await call(
        jp_fetch, "copilot", "projects", PROJECT, "topology", params={"format": "png"}
    )
    assert reply.code == 400 and reply.error["field"] == "format"


async def test_tools_catalogue_lists_schemas_and_modes(jp_fetch) -> None:
    reply = await call(jp_fetch, "copilot", "tools")
    assert reply.code == 200
    tools = {tool["name"]: tool for tool in reply.body}
    assert tools["run_show_commands"]["modes"] == [
        "teaching_assistant",
        "lab_automation_assistant",
    ]
    assert tools["run_config_commands"]["modes"] == ["lab_automation_assistant"]
    assert tools["create_nodes"]["changes_lab"] is True
    devices = tools["run_show_commands"]["parameters"]["properties"]["devices"]
    # The catalogue shows the argument bounds the model's compact schema leaves out.
    assert devices["minItems"] == 1 and "maxItems" in devices


async def test_tool_run_refusals_before_anything_runs(jp_fetch) -> None:
    tools = ("copilot", "projects", PROJECT, "tools")
    unknown = await call(jp_fetch, *tools, "format_disk", method="POST", body={})
    assert unknown.code == 404 and "run_show_commands" in unknown.error["message"]
    invalid = await call(
        jp_fetch,
        *tools,
        "run_show_commands",
        method="POST",
        body={"arguments": {"devices": "PC1"}},
    )
    assert invalid.code == 400 and invalid.error["field"].startswith("arguments.devices")
    extra = await call(
        jp_fetch, *tools, "get_topology", method="POST", body={"arguments": {}, "x": 1}
    )
    assert extra.code == 400 and extra.error["field"] == "x"
    down = await call(jp_fetch, *tools, "get_topology", method="POST", body={})
    assert down.code == 502


async def test_reload_skills_reports_what_is_in_force(jp_fetch) -> None:
    reply = await call(jp_fetch, "copilot", "reload", "skills", method="POST")
    assert reply.code == 200
    assert reply.body["status"] == "ok"
    assert reply.body["skills"] > 0
    assert {"vpcs", "cisco_ios"} <= set(reply.body["device_types"])
    assert reply.body["command_policy"]["rules"] > 0


# -- bounded bodies ----------------------------------------------------------------------------

BODY_ROUTES = [
    ("PUT", ("copilot", "llm-config")),
    ("POST", CHAT),
    ("PATCH", ("copilot", "projects", PROJECT, "chat", "sessions", SESSION)),
    ("POST", ("copilot", "projects", PROJECT, "tools", "get_topology")),
]
DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 5_000 + "1" + "}" * 5_000


@pytest.mark.parametrize(("method", "parts"), BODY_ROUTES)
@pytest.mark.parametrize(
    "body",
    [DEEP_ARRAY, DEEP_OBJECT, '{"arguments": {"devices": ' + DEEP_ARRAY + "}}"],
    ids=["array-100000-deep", "object-5000-deep", "deep-inside-an-object"],
)
async def test_deeply_nested_json_is_400_naming_the_depth(
    jp_fetch, caplog: pytest.LogCaptureFixture, method: str, parts: tuple, body: str
) -> None:
    reply = await call(jp_fetch, *parts, method=method, body=body)
    assert reply.code == 400, reply.body
    assert reply.error["field"] == "body"
    assert "deeper than 32" in reply.error["rule"]
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text


@pytest.mark.parametrize(("method", "parts"), BODY_ROUTES)
async def test_a_number_of_5000_digits_is_400(jp_fetch, method: str, parts: tuple) -> None:
    reply = await call(jp_fetch, *parts, method=method, body='{"title": ' + "9" * 5_000 + "}")
    assert reply.code == 400 and reply.error["field"] == "body"
    assert "digits" in reply.error["rule"]


async def test_brackets_inside_strings_are_not_nesting(jp_fetch) -> None:
    # A message full of brackets (and escaped quotes) is an ordinary message: the chat
    # goes on to its next check (no model configured), not a 400.
    message = '\\"[{' * 5_000
    body = '{"message": "' + message + '"}'
    reply = await call(jp_fetch, *CHAT, method="POST", body=body)
    assert reply.code == 409 and reply.error["type"] == "ModelNotConfigured"


@pytest.mark.parametrize(("method", "parts"), BODY_ROUTES)
async def test_a_body_over_1_mb_is_413(jp_fetch, method: str, parts: tuple) -> None:
    body = json.dumps({"message": "x" * 1_000_001})
    reply = await call(jp_fetch, *parts, method=method, body=body)
    assert reply.code == 413
    assert reply.headers["Content-Type"].startswith("application/json")
    assert reply.error["type"] == "BodyTooLarge"
    assert "1,000,000 bytes" in reply.error["message"]


async def test_a_chunked_body_over_1_mb_is_413(jp_fetch) -> None:
    # Sent without a Content-Length
    async def produce(write: Any) -> None:
        await write(b'{"message": "')
        for _ in range(20):
            await write(b"x" * 100_000)
        await write(b'"}')

    response = await jp_fetch(*CHAT, method="POST", body_producer=produce, raise_error=False)
    assert response.code == 413
    assert json.loads(response.body)["error"]["type"] == "BodyTooLarge"


async def test_a_body_of_exactly_1_mb_is_read(jp_fetch) -> None:
    padding = 1_000_000 - len('{"message": ""}')
    reply = await call(jp_fetch, *CHAT, method="POST", body='{"message": "' + "x" * padding + '"}')
    assert reply.code == 400 and reply.error["field"] == "message"  # too long, but read
