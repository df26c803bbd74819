"""No secret reaches the data directory or the server log: the administrator's API key and
GNS3 password (given through the environment), a user's own API key (given through
`PUT copilot/llm-config`) and the GNS3 token the server logs in with.

Two scripted model servers (TEST DOUBLES) each accept one key only, which proves that each
key travels to its own endpoint and nowhere else."""

from __future__ import annotations

import logging
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
    files_under,
    server_config,
)

from jupyter_gns3_copilot.testing.scripted_llm import text
from jupyter_gns3_copilot.testing.scripted_llm import tool_call as tool_reply

pytestmark = pytest.mark.lab

ADMIN_KEY = "sk-admin-SECRET-4f2a9c1d7e"
USER_KEY = "sk-alice-SECRET-8b3e6f0a2c"


@pytest.fixture
def endpoints(make_scripted_llm) -> dict[str, Any]:
    return {
        "admin": make_scripted_llm(api_key=ADMIN_KEY),
        "alice": make_scripted_llm(api_key=USER_KEY),
    }


@pytest.fixture
def jp_server_config(
    gns3_lab, endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("GNS3_PASSWORD", gns3_lab.password)
    config = server_config(
        tmp_path / "data",
        gns3_url=gns3_lab.url,
        gns3_username=gns3_lab.username,
        llm_base_url=endpoints["admin"].base_url,
        llm_model="scripted-model",
        llm_max_retries=0,
    )
    for secret in ("gns3_password", "llm_api_key"):
        del config["GNS3Copilot"][secret]  # from the environment, as an operator would
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


def script(llm: Any) -> None:
    llm.add(
        tool_reply("run_show_commands", {"devices": [{"device": "PC1", "commands": ["show ip"]}]}),
        text("PC1 has no address."),
        text("Addresses", when=TITLE_REPLY),
    )


@pytest.mark.slow
async def test_no_secret_reaches_the_data_directory_or_the_log(
    jp_fetch, jp_serverapp, gns3_project, gns3_lab, endpoints, tmp_path: Path, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    await add_pcs(gns3_project, "PC1", start=True)
    script(endpoints["admin"])
    script(endpoints["alice"])
    alice, bob = as_user("alice"), as_user("bob")
    configured = await call(
        jp_fetch,
        "copilot",
        "llm-config",
        method="PUT",
        body={"base_url": endpoints["alice"].base_url, "api_key": USER_KEY},
        headers=alice,
    )
    assert configured.body["api_key_source"] == "user"

    chat = ("copilot", "projects", gns3_project.project_id, "chat", "stream")
    for who in (alice, bob):
        reply = await call(
            jp_fetch, *chat, method="POST", body={"message": "PC1?", "stream": False}, headers=who
        )
        assert reply.body["status"] == "done", reply.body
        assert reply.body["message"] == "PC1 has no address."
    # Each key went to its own endpoint only (each server refuses any other key)
    assert all(r.status == 200 for r in endpoints["admin"].chat_requests)
    assert all(r.status == 200 for r in endpoints["alice"].chat_requests)
    status = await call(jp_fetch, "copilot", "status", headers=bob)
    assert status.body["gns3"]["authenticated"] is True

    gns3_token = copilot_app(jp_serverapp).gns3_client().token
    secrets = [ADMIN_KEY, USER_KEY, gns3_lab.password, gns3_token]
    assert gns3_token
    stored = files_under(tmp_path / "data")
    assert any(name.endswith(".db") for name in stored)
    assert any(name.endswith(".llm-config") for name in stored)
    for name, content in stored.items():
        for secret in secrets:
            assert secret.encode() not in content, f"{secret[:6]}... found in {name}"
    log_text = caplog.text
    assert "Copilot" in log_text  # the extension's own lines are captured
    for secret in secrets:
        assert secret not in log_text, f"{secret[:6]}... found in the server log"
