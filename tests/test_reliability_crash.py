"""Reliability: a Jupyter server killed with SIGKILL while a tool runs on a REAL
VPCS console, restarted on the same data directory, at once returns a history valid for the
model API, and the session's next turn works.

Real parts: a `jupyter server` subprocess (`testing.local_stack.JupyterServer`), the local
GNS3 lab, SQLite. The model is the scripted OpenAI-compatible server (a TEST DOUBLE, strict
about orphaned tool calls like the real API): no language model runs here.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from support.server import (
    TITLE_REPLY,
    add_pcs,
    call,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
)

from jupyter_gns3_copilot.agent.history import placeholder_id, with_placeholder_results
from jupyter_gns3_copilot.agent.prompts import INTERRUPTED_RESULT
from jupyter_gns3_copilot.events import parse_event
from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.scripted_llm import DEFAULT_TEST_API_KEY, text, tool_call

pytestmark = pytest.mark.reliability

BUSY_PC1 = {"devices": [{"device": "PC1", "commands": ["sleep 20"]}]}
"""A tool call that keeps a real VPCS busy for 20 seconds (`sleep` blocks its console)."""
REPLAY_MODEL = "replay-check"
OPENAI_FIELDS = ("role", "content", "name", "tool_call_id", "tool_calls")


def test_a_history_read_shows_the_repair_of_unanswered_calls_without_changing_it() -> None:
    """Given a history ending with an assistant message whose second call has no result;
    when it is read with placeholders; then that call gets the interrupted result with an
    id derived from the call, stamped like the assistant message, and reading again gives
    the same messages (an answered history is returned as it is)."""
    asking = AIMessage(
        content="",
        id="ai-1",
        metadata={"created_at": "2026-01-01T00:00:00+00:00"},
        tool_calls=[
            {"name": "get_topology", "args": {}, "id": "c1", "type": "tool_call"},
            {"name": "start_nodes", "args": {"nodes": ["PC1"]}, "id": "c2", "type": "tool_call"},
        ],
    )
    answered = ToolMessage(content="{}", tool_call_id="c1", name="get_topology", id="t1")
    history = [HumanMessage("hi", id="h1"), asking, answered]

    repaired = with_placeholder_results(history, INTERRUPTED_RESULT)

    assert repaired[:3] == history and len(history) == 3
    [placeholder] = repaired[3:]
    assert isinstance(placeholder, ToolMessage)
    assert (placeholder.tool_call_id, placeholder.name) == ("c2", "start_nodes")
    assert placeholder.id == placeholder_id("c2") and placeholder.content == INTERRUPTED_RESULT
    assert placeholder.metadata == {"created_at": "2026-01-01T00:00:00+00:00"}
    assert with_placeholder_results(history, INTERRUPTED_RESULT) == repaired
    assert with_placeholder_results(repaired, INTERRUPTED_RESULT) == repaired


@pytest.fixture
def jp_server_config(gns3_lab: Any, scripted_llm: Any, tmp_path: Path) -> dict[str, Any]:
    return server_config(
        tmp_path / "copilot-data", **lab_traits(gns3_lab), **model_traits(scripted_llm)
    )


@pytest.mark.lab
async def test_a_turn_still_running_is_read_as_it_is_not_repaired(
    jp_fetch: Any, gns3_project: Any, scripted_llm: Any
) -> None:
    """Given a turn whose tool is running in this server; when its history is read; then
    the call is shown without a placeholder (its result is coming, nothing crashed); once
    the turn is aborted, the stored history answers the call."""
    await add_pcs(gns3_project, "PC1", start=True)
    scripted_llm.add(
        tool_call("run_vpcs_commands", BUSY_PC1, id="call_busy"),
        text("Ping", when={**TITLE_REPLY, "model": "scripted-model"}),
    )
    chat = ("copilot", "projects", gns3_project.project_id, "chat")
    stream = open_stream(
        jp_fetch,
        *chat,
        "stream",
        body={"message": "Ping from PC1", "copilot_mode": "lab_automation_assistant"},
    )
    started = await stream.until("tool_start", timeout=60)
    session_id = started[-1]["session_id"]
    running = await call(jp_fetch, *chat, "sessions", session_id, "history")
    aborted = await call(jp_fetch, *chat, "sessions", session_id, "abort", method="POST")
    events = await stream.finish(timeout=60)

    assert [m["role"] for m in running.body["messages"]] == ["user", "assistant"], running.body
    assert aborted.code == 200 and kinds(events)[-2:] == ["abort", "done"]
    after = await call(jp_fetch, *chat, "sessions", session_id, "history")
    assert [m["role"] for m in after.body["messages"]] == ["user", "assistant", "tool"]
    assert after.body["messages"][2]["tool_call_id"] == "call_busy"


# -- kill -9 mid-tool -------------------------------------------------------------------------


@pytest.fixture
def server_dir(tmp_path: Path) -> Path:
    return tmp_path / "jupyter"


@pytest.fixture
def servers(gns3_lab: Any, scripted_llm: Any, server_dir: Path) -> Iterator[list[JupyterServer]]:
    """Jupyter servers started by the test on one work (and data) directory; all stopped."""
    started: list[JupyterServer] = []
    yield started
    for server in started:
        server.stop()


def start_server(servers: list[JupyterServer], lab: Any, llm: Any, work_dir: Path) -> JupyterServer:
    server = JupyterServer(lab, ModelEndpoint.scripted_model(llm), work_dir)
    servers.append(server)
    return server.start()


def api(server: JupyterServer) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.url}copilot/",
        headers={"Authorization": f"token {server.token}"},
        timeout=httpx.Timeout(30.0),
        trust_env=False,
    )


def events_until(response: httpx.Response, kind: str) -> list[dict[str, Any]]:
    """SSE events read from `response` up to and including the first of type `kind`."""
    events: list[dict[str, Any]] = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            events.append(parse_event(json.loads(line[len("data: ") :])).model_dump())
            if events[-1]["type"] == kind:
                return events
    raise AssertionError(f"the stream ended without a {kind!r} event: {events}")


def replay(llm: Any, messages: list[dict[str, Any]]) -> httpx.Response:
    """Send `messages` as an OpenAI chat request to the strict scripted model."""
    body = {
        "model": REPLAY_MODEL,
        "messages": [
            {key: message[key] for key in OPENAI_FIELDS if message.get(key) is not None}
            for message in messages
        ],
    }
    headers = {"Authorization": f"Bearer {DEFAULT_TEST_API_KEY}"}
    return httpx.post(
        f"{llm.base_url}/chat/completions", json=body, headers=headers, trust_env=False
    )


@pytest.mark.lab
@pytest.mark.slow
def test_after_kill_9_mid_tool_the_history_is_valid_at_once_and_the_next_turn_works(
    gns3_lab: Any,
    gns3_project: Any,
    scripted_llm: Any,
    servers: list[JupyterServer],
    server_dir: Path,
) -> None:
    """Given a turn whose tool keeps a real VPCS busy for 20 s; when the Jupyter server
    is killed with SIGKILL while the command runs and started again on the same data
    directory; then the session's history read at once ends with the call and an
    interrupted placeholder result, the strict model accepts it as a request, reading it
    again gives the same messages, and the next turn of the session is answered."""
    asyncio.run(add_pcs(gns3_project, "PC1", start=True))
    scripted_llm.add(
        tool_call("run_vpcs_commands", BUSY_PC1, id="call_busy"),
        text("Ping", when={**TITLE_REPLY, "model": "scripted-model"}),
    )
    chat = f"projects/{gns3_project.project_id}/chat"
    first = start_server(servers, gns3_lab, scripted_llm, server_dir)
    body = {"message": "Ping from PC1", "copilot_mode": "lab_automation_assistant"}
    with api(first) as client, client.stream("POST", f"{chat}/stream", json=body) as response:
        assert response.status_code == 200
        # The tool has started: its 20 s command is being sent or running.
        started = events_until(response, "tool_start")
        os.kill(first.pid, signal.SIGKILL)
    session_id = started[-1]["session_id"]
    first.stop()  # reaps the killed process; nothing of it is left running

    second = start_server(servers, gns3_lab, scripted_llm, server_dir)
    with api(second) as client:
        reply = client.get(f"{chat}/sessions/{session_id}/history")
        assert reply.status_code == 200, reply.text
        messages = reply.json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
        assert messages[1]["tool_calls"][0]["id"] == "call_busy"
        assert messages[2]["tool_call_id"] == "call_busy"
        assert json.loads(messages[2]["content"])["status"] == "aborted"
        assert "interrupted" in messages[2]["content"]
        assert client.get(f"{chat}/sessions/{session_id}/history").json()["messages"] == messages

        scripted_llm.add(text("Valid.", when={"model": REPLAY_MODEL}))
        accepted = replay(scripted_llm, messages)
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["choices"][0]["message"]["content"] == "Valid."

        scripted_llm.add(text("Back after the crash.", when={"last_message": "again"}))
        follow = client.post(
            f"{chat}/stream",
            json={"message": "again", "session_id": session_id, "stream": False},
            timeout=60,
        )
        assert follow.status_code == 200, follow.text
        assert follow.json()["status"] == "done", follow.text
        assert follow.json()["message"] == "Back after the crash."
        after = client.get(f"{chat}/sessions/{session_id}/history").json()["messages"]
    assert [m["role"] for m in after] == ["user", "assistant", "tool", "user", "assistant"]
    # The next turn wrote the repair the read showed: the same message (its own time).
    assert after[2] == messages[2] | {"metadata": after[2]["metadata"]}
    [next_turn] = [r for r in scripted_llm.chat_requests if r.body.get("tools")][-1:]
    sent = [m["role"] for m in next_turn.messages if m["role"] != "system"]
    assert sent == ["user", "assistant", "tool", "user"]
