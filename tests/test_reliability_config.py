"""Reliability: the copilot fails closed on a bad configuration.

Each case starts a real Jupyter server (pytest-jupyter) with one invalid setting, given the
way an administrator would (command line, configuration, environment), then calls every
copilot route, the ones that would write included: each answers 503 with the JSON error
naming the setting, and nothing is written, neither in the notebook root nor anywhere
else under the test's directory. An unknown option only warns, as everywhere in Jupyter.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import tornado.web
from support.server import call, files_under, jupyter_process, server_config

from jupyter_gns3_copilot.server.handlers import default_handlers

PATH_VALUES = {
    "project_id": str(uuid.uuid4()),
    "session_id": str(uuid.uuid4()),
    "run_id": str(uuid.uuid4()),
    "tool_name": "get_topology",
    "approval_id": str(uuid.uuid4()),
    "stage": "addressing",
    "node": "PC1",
}
BODIES = {
    "PUT": {"model": "gpt-4o", "api_key": "sk-written-nowhere"},
    "POST": {"message": "hi", "stream": False},
    "PATCH": {"title": "x"},
}


def every_route() -> list[tuple[str, tuple[str, ...]]]:
    """(method, path parts) of every verb of every copilot route, from the route table."""
    routes = []
    for pattern, handler in default_handlers:
        path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: PATH_VALUES[m.group(1)], pattern)
        for method in ("get", "post", "put", "patch", "delete"):
            if getattr(handler, method) is not getattr(tornado.web.RequestHandler, method):
                routes.append((method.upper(), tuple(path.strip("/").split("/"))))
    return routes


ROUTES = every_route()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "copilot-data"


@pytest.fixture
def traits() -> dict[str, Any]:
    return {}


@pytest.fixture
def environment() -> dict[str, str]:
    return {}


@pytest.fixture
def jp_server_config(
    data_dir: Path,
    traits: dict[str, Any],
    environment: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    config = server_config(data_dir)
    config["GNS3Copilot"].update(traits)
    return config


async def assert_closed(jp_fetch: Any, setting: str, tmp_path: Path) -> None:
    before = files_under(tmp_path)
    assert len(ROUTES) >= 19
    for method, parts in ROUTES:
        reply = await call(jp_fetch, *parts, method=method, body=BODIES.get(method))
        assert reply.code == 503, (method, parts, reply.code, reply.body)
        error = reply.error
        assert error["type"] == "ConfigurationError"
        assert error["setting"] == setting
        assert f"c.GNS3Copilot.{setting}" in error["message"]
        assert error["rule"] in error["message"]
    assert files_under(tmp_path) == before
    assert "llm-config.key" not in os.listdir()  # an empty data_dir once meant the cwd


@pytest.mark.slow
def test_a_python_list_argument_closes_every_route_and_writes_nothing(tmp_path: Path) -> None:
    # Given a list spelled as Python, which the command line does not take,
    # on a real `jupyter server` whose working directory is the notebook root
    args = ['--GNS3Copilot.allowed_modes=["teaching_assistant"]']
    with jupyter_process(tmp_path, *args) as (url, headers, log_path):
        before = files_under(tmp_path)
        # When every route is called, then each answers 503 naming the setting
        for method, parts in ROUTES:
            body = BODIES.get(method)
            reply = httpx.request(
                method,
                url + "/".join(parts),
                headers=headers,
                content=json.dumps(body) if body is not None else None,
                timeout=30,
            )
            assert reply.status_code == 503, (method, parts, reply.text)
            error = reply.json()["error"]
            assert error["setting"] == "allowed_modes"
            assert "unknown mode" in error["message"]
            assert "--GNS3Copilot.allowed_modes=teaching_assistant" in error["message"]
        # And nothing was written: not in the notebook root, not in the data directory
        after = files_under(tmp_path)
        changed = {path for path in {*before, *after} if before.get(path) != after.get(path)}
        assert changed <= {str(log_path)}
    assert files_under(tmp_path / "root") == {}
    assert "GNS3 Copilot is CLOSED" in log_path.read_text()


@pytest.mark.parametrize(
    ("traits", "environment", "setting", "reason"),
    [
        ({"data_dir": ""}, {}, "data_dir", "must not be empty"),
        ({"data_dir": "copilot-data"}, {}, "data_dir", "absolute path"),
        ({"heartbeat_interval": "often"}, {}, "heartbeat_interval", "expected a float"),
        ({"allowed_modes": ["teaching"]}, {}, "allowed_modes", "unknown mode 'teaching'"),
        ({"allowed_modes": []}, {}, "allowed_modes", "at least one mode"),
        ({"allowed_base_urls": ["llm.example/v1"]}, {}, "allowed_base_urls", "http://"),
        ({"llm_base_url": "ftp://llm.example"}, {}, "llm_base_url", "http://"),
        (
            {},
            {"GNS3_COPILOT_ALLOWED_MODES": "teaching_assistant, lab"},
            "allowed_modes",
            "unknown mode 'lab'",
        ),
        (
            {},
            {"GNS3_COPILOT_ALLOWED_BASE_URLS": "https://ok.example/v1,llm.example"},
            "allowed_base_urls",
            "'llm.example' must start with",
        ),
        (
            {},
            {"GNS3_COPILOT_CONSOLE_TRANSPORT": "ssh"},
            "console_transport",
            "unknown value 'ssh'; one of: telnet, websocket",
        ),
        (
            {"require_approval": "sometimes"},
            {},
            "require_approval",
            "must be 'changes', 'none' or a list of tool names",
        ),
    ],
    ids=[
        "empty-data-dir",
        "relative-data-dir",
        "not-a-float",
        "unknown-mode",
        "no-mode",
        "url-without-scheme",
        "ftp-base-url",
        "env-unknown-mode",
        "env-bad-url",
        "env-unknown-console-transport",
        "unknown-approval-policy",
    ],
)
async def test_an_invalid_setting_closes_every_route(
    jp_fetch, tmp_path: Path, setting: str, reason: str
) -> None:
    status = await call(jp_fetch, "copilot", "status")
    assert status.code == 503
    assert status.error["setting"] == setting
    assert reason in status.error["rule"]
    await assert_closed(jp_fetch, setting, tmp_path)


class TestClosedNeedsALogin:
    @pytest.fixture
    def traits(self) -> dict[str, Any]:
        return {"data_dir": ""}

    async def test_an_anonymous_caller_gets_403_not_the_problem(self, jp_fetch) -> None:
        # The configuration problem is told to logged-in users only
        reply = await call(jp_fetch, "copilot", "status", headers={"Authorization": ""})
        assert reply.code == 403
        assert "data_dir" not in str(reply.body)


class TestValidSettingsFromTheEnvironment:
    @pytest.fixture
    def environment(self) -> dict[str, str]:
        return {
            "GNS3_COPILOT_ALLOWED_MODES": " teaching_assistant ,",
            "GNS3_COPILOT_ALLOWED_BASE_URLS": "https://api.openai.com/v1, https://llm.example/v1",
        }

    async def test_the_comma_separated_lists_are_the_limits(self, jp_fetch) -> None:
        view = await call(jp_fetch, "copilot", "llm-config")
        assert view.code == 200
        assert view.body["allowed_modes"] == ["teaching_assistant"]
        assert view.body["allowed_base_urls"] == [
            "https://api.openai.com/v1",
            "https://llm.example/v1",
        ]
        lab = await call(
            jp_fetch,
            "copilot",
            "llm-config",
            method="PUT",
            body={"copilot_mode": "lab_automation_assistant"},
        )
        assert lab.code == 400 and lab.error["field"] == "copilot_mode"


class TestAnUnknownOption:
    @pytest.fixture
    def traits(self) -> dict[str, Any]:
        return {"no_such_option": 1}

    @pytest.fixture
    def jp_argv(self) -> list[str]:
        return ["--no-browser"]

    async def test_only_warns(self, jp_fetch) -> None:
        status = await call(jp_fetch, "copilot", "status")
        assert status.code == 200
