"""`GET copilot/status` through a real Jupyter server (pytest-jupyter)."""

from __future__ import annotations

import json
import socket

import pytest


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def gns3_traits() -> dict[str, str]:
    return {"gns3_url": closed_port_url(), "gns3_username": "admin", "gns3_password": "x"}


@pytest.fixture
def jp_server_config(gns3_traits: dict[str, str], tmp_path):  # type: ignore[no-untyped-def]
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_gns3_copilot": True}},
        "GNS3Copilot": {**gns3_traits, "data_dir": str(tmp_path / "copilot-data")},
    }


async def test_status_reports_versions_and_unreachable_gns3(jp_fetch, gns3_traits) -> None:
    # Given a server whose GNS3 URL points at a closed port
    # When the status is requested
    response = await jp_fetch("copilot", "status")
    # Then it answers 200 with versions and an explanation of what is wrong
    assert response.code == 200
    body = json.loads(response.body)
    assert body["version"]
    assert body["packages"]["jupyter_server"]
    assert body["gns3"]["url"] == gns3_traits["gns3_url"]
    assert body["gns3"]["reachable"] is False
    assert gns3_traits["gns3_url"] in body["gns3"]["error"]
    assert body["data_dir"].endswith("copilot-data")
    assert "password" not in response.body.decode()


async def test_status_needs_authentication(jp_fetch) -> None:
    from tornado.httpclient import HTTPClientError

    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("copilot", "status", headers={"Authorization": ""})
    assert info.value.code == 403


@pytest.mark.lab
class TestWithLab:
    @pytest.fixture
    def gns3_traits(self, gns3_lab) -> dict[str, str]:  # type: ignore[override]
        return {
            "gns3_url": gns3_lab.url,
            "gns3_username": gns3_lab.username,
            "gns3_password": gns3_lab.password,
        }

    async def test_status_with_a_running_gns3(self, jp_fetch) -> None:
        response = await jp_fetch("copilot", "status")
        gns3 = json.loads(response.body)["gns3"]
        assert gns3["reachable"] is True
        assert gns3["version"] == "3.0.6"
        assert gns3["authenticated"] is True
        assert gns3["error"] is None


@pytest.mark.lab
class TestWithWrongPassword:
    @pytest.fixture
    def gns3_traits(self, gns3_lab) -> dict[str, str]:  # type: ignore[override]
        return {"gns3_url": gns3_lab.url, "gns3_username": "admin", "gns3_password": "wrong"}

    async def test_status_says_the_credentials_are_wrong(self, jp_fetch) -> None:
        gns3 = json.loads((await jp_fetch("copilot", "status")).body)["gns3"]
        assert gns3["reachable"] is True
        assert gns3["authenticated"] is False
        assert "GNS3_PASSWORD" in gns3["error"]
        assert "wrong" not in gns3["error"]


# -- the context limit: a setting, a known family's default, or a guess --------------------


def test_context_limit_status_says_when_it_is_a_guess() -> None:
    from jupyter_gns3_copilot.server.status import context_limit_status

    alias = context_limit_status("school-default", None)
    assert (alias.limit, alias.source, alias.guessed) == (32, "guess", True)
    assert alias.note is not None and "'school-default'" in alias.note
    assert "c.GNS3Copilot.context_limit or PUT copilot/llm-config" in alias.note
    family = context_limit_status("openai/gpt-4o", None)
    assert (family.limit, family.source, family.family, family.guessed) == (
        128,
        "model_family",
        "gpt-4o",
        False,
    )
    assert family.note is None
    chosen = context_limit_status("school-default", 200)
    assert (chosen.limit, chosen.source, chosen.guessed, chosen.note) == (
        200,
        "setting",
        False,
        None,
    )


ALIAS = {"llm_model": "school-default", "llm_base_url": "http://127.0.0.1:9/v1"}


class TestContextLimitInTheReport:
    @pytest.fixture(params=[{}, {"context_limit": 128}], ids=["alias", "alias-with-limit"])
    def model_traits(self, request: pytest.FixtureRequest) -> dict[str, object]:
        return {**ALIAS, **request.param}

    @pytest.fixture
    def jp_server_config(self, gns3_traits, model_traits, tmp_path):  # type: ignore[no-untyped-def]
        return {
            "ServerApp": {"jpserver_extensions": {"jupyter_gns3_copilot": True}},
            "GNS3Copilot": {
                **gns3_traits,
                **model_traits,
                "data_dir": str(tmp_path / "copilot-data"),
            },
        }

    async def test_status_says_whether_the_context_limit_is_a_guess(
        self, jp_fetch, model_traits
    ) -> None:
        body = json.loads((await jp_fetch("copilot", "status")).body)
        # The report's other keys are still there.
        assert {"version", "python", "packages", "gns3", "model", "user", "data_dir"} <= set(body)
        assert body["model"]["model"] == "school-default"
        context = body["model"]["context"]
        if "context_limit" in model_traits:
            assert context == {
                "limit": 128,
                "source": "setting",
                "family": None,
                "guessed": False,
                "note": None,
            }
        else:
            assert (context["limit"], context["source"], context["guessed"]) == (32, "guess", True)
            assert "context_limit" in context["note"]
