"""Which model names a new session, per user: the admin's `title_model` for users on the
admin's endpoint, the user's own chat model for users who chose their own endpoint (their
first exchange must not go to the admin's endpoint for a title). Two scripted model servers
(TEST DOUBLES of the OpenAI API), users from the test identity provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.server import (
    TITLE_REPLY,
    TokenUsersIdentityProvider,
    as_user,
    call,
    lab_traits,
    model_traits,
    server_config,
)

from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

pytestmark = pytest.mark.lab

ALICE, BOB = as_user("alice"), as_user("bob")


@pytest.fixture
def own_llm(make_scripted_llm: Any) -> ScriptedLLM:
    """Bob's own model endpoint."""
    return make_scripted_llm()


@pytest.fixture
def jp_server_config(
    gns3_lab: Any, scripted_llm: ScriptedLLM, own_llm: ScriptedLLM, tmp_path: Path
) -> dict[str, Any]:
    traits = model_traits(
        scripted_llm,
        title_model="school-title-model",
        allowed_base_urls=[scripted_llm.base_url, own_llm.base_url],
    )
    config = server_config(tmp_path / "data", **lab_traits(gns3_lab), **traits)
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


async def first_turn(jp_fetch: Any, project: Any, headers: dict[str, str]) -> None:
    reply = await call(
        jp_fetch,
        "copilot",
        "projects",
        project.project_id,
        "chat",
        "stream",
        method="POST",
        body={"message": "hello", "stream": False},
        headers=headers,
    )
    assert reply.code == 200 and reply.body["status"] == "done", reply.body


async def test_titles_use_the_admin_title_model_only_on_the_admin_endpoint(
    jp_fetch: Any, gns3_project: Any, scripted_llm: ScriptedLLM, own_llm: ScriptedLLM
) -> None:
    scripted_llm.add(text("Hi Alice."), text("Greeting", when=TITLE_REPLY))
    await first_turn(jp_fetch, gns3_project, ALICE)
    chat, title = scripted_llm.chat_requests
    assert (chat.body["model"], title.body["model"]) == ("scripted-model", "school-title-model")

    settings = {"base_url": own_llm.base_url, "model": "bobs-model", "api_key": "sk-bob-123456"}
    reply = await call(jp_fetch, "copilot", "llm-config", method="PUT", body=settings, headers=BOB)
    assert reply.code == 200, reply.body
    own_llm.add(text("Hi Bob."), text("Greeting", when=TITLE_REPLY))
    await first_turn(jp_fetch, gns3_project, BOB)
    assert len(scripted_llm.chat_requests) == 2  # nothing of Bob's reached the admin's
    assert [r.body["model"] for r in own_llm.chat_requests] == ["bobs-model", "bobs-model"]
    assert not own_llm.chat_requests[1].body.get("tools")
