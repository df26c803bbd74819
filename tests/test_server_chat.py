"""The chat API through a real Jupyter server: SSE read while it streams, tools on REAL VPCS
nodes of the local GNS3 lab, the scripted model server (a TEST DOUBLE of the OpenAI API,
strict about orphaned tool calls), abort, disconnects, sessions and direct tool runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.agent import tool_call_runs
from support.server import (
    TITLE_REPLY,
    add_pcs,
    call,
    copilot_app,
    eventually,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    parse_sse,
    server_config,
    wait_until_console_busy,
)

from jupyter_gns3_copilot.testing.scripted_llm import text
from jupyter_gns3_copilot.testing.scripted_llm import tool_call as tool_reply

pytestmark = pytest.mark.lab

PING_30 = {"devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24", "ping 10.0.0.99 -c 30"]}]}
"""A tool call that runs for about 30 seconds (VPCS pinging an absent host)."""


@pytest.fixture
def copilot_traits() -> dict[str, Any]:
    return {}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "copilot-data"


@pytest.fixture
def jp_server_config(gns3_lab, scripted_llm, data_dir: Path, copilot_traits) -> dict[str, Any]:
    return server_config(
        data_dir, **lab_traits(gns3_lab), **model_traits(scripted_llm), **copilot_traits
    )


def chat_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "chat", *rest)


def tool_call_events(fragments: int) -> list[str]:
    """A call's tool_call events in `tool_call_runs(kinds(...))`: one run of them (the
    opening one, growing arguments coalesced by time, the complete one)."""
    return ["tool_call"]


async def wait_for_history(
    jp_fetch: Any, project: Any, session_id: str, roles: list[str]
) -> list[dict[str, Any]]:
    """The session's messages once their roles are `roles` (the turn ended unseen)."""

    async def messages() -> list[dict[str, Any]] | None:
        reply = await call(jp_fetch, *chat_path(project, "sessions", session_id, "history"))
        if reply.code == 200 and [m["role"] for m in reply.body["messages"]] == roles:
            return list(reply.body["messages"])
        return None

    return await eventually(messages, f"the history of {session_id} becoming {roles}")


async def wait_for_statistics(
    jp_fetch: Any, project: Any, expected: dict[str, int]
) -> dict[str, Any]:
    """The project's only session once its statistics include `expected` (they are saved
    after the history when a turn ends unseen)."""

    async def session() -> dict[str, Any] | None:
        [row] = (await call(jp_fetch, *chat_path(project, "sessions"))).body
        return row if {key: row[key] for key in expected} == expected else None

    return await eventually(session, f"the statistics becoming {expected}")


@pytest.mark.slow
async def test_a_full_turn_streams_its_events_while_tools_run_on_real_vpcs(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given two stopped VPCS and a model that starts them, reads PC1's address and answers;
    when the user asks through the SSE endpoint; then events arrive while the turn runs,
    in the expected sequence, each with the session id, the tool outputs are the real
    devices' answers, and the session's statistics and history follow."""
    await add_pcs(gns3_project, "PC1", "PC2")
    show = {"devices": [{"device": "PC1", "commands": ["show ip"]}]}
    scripted_llm.add(
        tool_reply(
            "start_nodes",
            {"nodes": ["PC1", "PC2"]},
            id="call_start",
            usage={"prompt_tokens": 500, "completion_tokens": 20},
        ),
        tool_reply(
            "run_show_commands",
            show,
            id="call_show",
            argument_chunks=4,
            usage={"prompt_tokens": 700, "completion_tokens": 40},
        ),
        text(
            ["Both PCs ", "are up; ", "PC1 has ", "no address."],
            chunk_delay=0.05,
            usage={"prompt_tokens": 900, "completion_tokens": 12},
        ),
        text("VPCS check", when=TITLE_REPLY),
    )
    stream = open_stream(
        jp_fetch, *chat_path(gns3_project, "stream"), body={"message": "Start my PCs"}
    )
    [opening] = await stream.until("heartbeat")
    first = await stream.until("tool_call")
    assert not stream.task.done(), "events must arrive while the turn still runs"
    events = await stream.finish()

    assert first == [events[1]]
    assert first[0]["tool_call"]["function"] == {"name": "start_nodes", "arguments": ""}
    assert tool_call_runs(kinds(events), of=("tool_call", "content")) == [
        *tool_call_events(3),
        "tool_start",
        "tool_end",
        *tool_call_events(4),
        "tool_start",
        "tool_end",
        "content",
        "done",
    ]
    session_id = opening["session_id"]
    assert all(event["session_id"] == session_id for event in events)
    ends = [event for event in events if event["type"] == "tool_end"]
    assert [end["tool_call_id"] for end in ends] == ["call_start", "call_show"]
    shown = json.loads(ends[1]["tool_output"])
    assert "PC1" in json.dumps(shown) and "IP/MASK" in json.dumps(shown)
    assert "".join(e["content"] for e in events if e["type"] == "content") == (
        "Both PCs are up; PC1 has no address."
    )

    sessions = await call(jp_fetch, *chat_path(gns3_project, "sessions"))
    assert sessions.code == 200
    [session] = sessions.body
    assert session["thread_id"] == session_id
    assert session["title"] == "VPCS check"
    assert (session["input_tokens"], session["output_tokens"]) == (2100, 72)
    assert session["llm_calls_count"] == 3
    history = await call(jp_fetch, *chat_path(gns3_project, "sessions", session_id, "history"))
    assert history.code == 200
    roles = [message["role"] for message in history.body["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert history.body["messages"][1]["tool_calls"][0]["function"]["name"] == "start_nodes"
    last_two = await call(
        jp_fetch,
        *chat_path(gns3_project, "sessions", session_id, "history"),
        params={"limit": 2},
    )
    assert [m["role"] for m in last_two.body["messages"]] == ["tool", "assistant"]


async def test_sessions_can_be_renamed_pinned_listed_and_deleted(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    scripted_llm.add(
        text("One."),
        text("First", when=TITLE_REPLY),
        text("Two."),
        text("Second", when=TITLE_REPLY),
    )
    ids = []
    for message in ("first", "second"):
        events = await open_stream(
            jp_fetch, *chat_path(gns3_project, "stream"), body={"message": message}
        ).finish()
        ids.append(events[-1]["session_id"])
    first, second = ids
    listed = await call(jp_fetch, *chat_path(gns3_project, "sessions"))
    assert [s["thread_id"] for s in listed.body] == [second, first]

    renamed = await call(
        jp_fetch,
        *chat_path(gns3_project, "sessions", first),
        method="PATCH",
        body={"title": "  OSPF lab  "},
    )
    assert renamed.code == 200 and renamed.body["title"] == "OSPF lab"
    pinned = await call(jp_fetch, *chat_path(gns3_project, "sessions", first, "pin"), method="PUT")
    assert pinned.code == 200 and pinned.body["pinned"] is True
    listed = await call(jp_fetch, *chat_path(gns3_project, "sessions"), params={"limit": 1})
    assert [s["thread_id"] for s in listed.body] == [first]
    unpinned = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", first, "pin"), method="DELETE"
    )
    assert unpinned.body["pinned"] is False

    deleted = await call(jp_fetch, *chat_path(gns3_project, "sessions", first), method="DELETE")
    assert deleted.code == 204
    again = await call(jp_fetch, *chat_path(gns3_project, "sessions", first, "history"))
    assert again.code == 404
    listed = await call(jp_fetch, *chat_path(gns3_project, "sessions"))
    assert [s["thread_id"] for s in listed.body] == [second]


async def test_stream_false_answers_one_json_body(jp_fetch, gns3_project, scripted_llm) -> None:
    await add_pcs(gns3_project, "PC1")
    scripted_llm.add(
        tool_reply("get_topology", {}, id="call_topo"),
        text(["PC1 is ", "alone."]),
        text("Topology", when=TITLE_REPLY),
    )
    reply = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "What is in my lab?", "stream": False},
    )
    assert reply.code == 200
    assert reply.headers["Content-Type"].startswith("application/json")
    body = reply.body
    assert body["status"] == "done" and body["errors"] == []
    assert body["message"] == "PC1 is alone."
    [tool] = body["tool_calls"]
    assert (tool["id"], tool["name"], tool["arguments"]) == ("call_topo", "get_topology", "{}")
    assert "PC1" in tool["output"]
    # The session can be continued with the returned id
    scripted_llm.add(text("Still alone."))
    follow = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "And now?", "stream": False, "session_id": body["session_id"]},
    )
    assert (
        follow.body["message"] == "Still alone." and follow.body["session_id"] == body["session_id"]
    )


async def test_runtime_limits_and_temperature_reach_the_turn(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    scripted_llm.add(
        tool_reply("get_topology", {}, id="call_1"),
        text("Stopped.", when=TITLE_REPLY),
    )
    reply = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "look", "stream": False, "max_iterations": 1, "temperature": 0.7},
    )
    assert reply.code == 200
    assert scripted_llm.chat_requests[0].body["temperature"] == 0.7
    [tool] = reply.body["tool_calls"]
    assert "not executed" in tool["output"] or "iteration" in tool["output"].lower()
    assert reply.body["status"] == "error"  # the iteration-limit notice is an error event


@pytest.mark.slow
async def test_abort_from_a_second_request_while_a_tool_runs(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given a turn whose tool pings for 30 s; when a second request aborts the session
    once the tool started; then the tool stops, the stream ends with tool_end (aborted),
    abort and done, no further model call is made, and the session goes on validly."""
    await add_pcs(gns3_project, "PC1", start=True)
    scripted_llm.add(
        tool_reply("run_vpcs_commands", PING_30, id="call_ping"),
        text("Stopped as asked.", when={"last_message": "continue"}),
        text("Ping", when=TITLE_REPLY),
    )
    stream = open_stream(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        body={"message": "Ping from PC1", "copilot_mode": "lab_automation_assistant"},
    )
    started = await stream.until("tool_start")
    session_id = started[-1]["session_id"]
    busy = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "hurry", "session_id": session_id},
    )
    assert busy.code == 409 and busy.error["type"] == "SessionBusy"
    undeletable = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", session_id), method="DELETE"
    )
    assert undeletable.code == 409 and "abort it" in undeletable.error["message"]
    abort = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", session_id, "abort"), method="POST"
    )
    assert abort.code == 200 and abort.body == {"status": "ok", "session_id": session_id}
    events = await stream.finish(timeout=20)
    assert kinds(events)[-3:] == ["tool_end", "abort", "done"]
    assert "aborted" in events[-3]["tool_output"]
    assert len(scripted_llm.chat_requests) == 1

    again = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", session_id, "abort"), method="POST"
    )
    assert again.body["status"] == "not_running"
    follow = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "continue", "session_id": session_id, "stream": False},
    )
    assert follow.body["message"] == "Stopped as asked."
    assert scripted_llm.chat_requests[1].status == 200


async def read_until(response: httpx.Response, kind: str) -> list[dict[str, Any]]:
    """Events of an httpx streaming response up to the first of type `kind`."""
    buffer, seen = "", []
    async for chunk in response.aiter_text():
        events, buffer = parse_sse(buffer + chunk)
        seen += events
        if any(event["type"] == kind for event in events):
            return seen
    raise AssertionError(f"no {kind} event in {kinds(seen)}")


async def leave_during_tool(
    jp_fetch, jp_http_port: int, jp_base_url: str, jp_auth_header, project: Any, body: dict
) -> str:
    """Start a chat with an async httpx client, leave once a tool started; the session id."""
    await call(jp_fetch, "copilot", "status")  # the server listens
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}" + "/".join(chat_path(project, "stream"))
    async with (
        httpx.AsyncClient(headers=jp_auth_header, timeout=60, trust_env=False) as client,
        client.stream("POST", url, json=body) as response,
    ):
        assert response.status_code == 200
        events = await read_until(response, "tool_start")
    return events[-1]["session_id"]


@pytest.mark.slow
async def test_a_client_leaving_mid_tool_aborts_the_turn_consistently(
    jp_fetch, jp_http_port, jp_base_url, jp_auth_header, gns3_project, scripted_llm
) -> None:
    """Given on_disconnect = abort (the default); when the client disconnects while a tool
    runs; then the turn stops soon, its statistics are saved and the tool call has a
    result, so the next turn is accepted by the strict model server."""
    await add_pcs(gns3_project, "PC1", start=True)
    scripted_llm.add(
        tool_reply(
            "run_vpcs_commands",
            PING_30,
            id="call_ping",
            usage={"prompt_tokens": 300, "completion_tokens": 30},
        ),
        text("Back.", when={"last_message": "again"}),
        text("Ping", when=TITLE_REPLY),
    )
    body = {"message": "Ping", "copilot_mode": "lab_automation_assistant"}
    session_id = await leave_during_tool(
        jp_fetch, jp_http_port, jp_base_url, jp_auth_header, gns3_project, body
    )
    messages = await wait_for_history(
        jp_fetch, gns3_project, session_id, ["user", "assistant", "tool"]
    )
    assert "aborted" in messages[-1]["content"]
    await wait_for_statistics(
        jp_fetch,
        gns3_project,
        {"message_count": 3, "llm_calls_count": 1, "input_tokens": 300, "output_tokens": 30},
    )
    assert len(scripted_llm.chat_requests) == 1
    follow = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "again", "session_id": session_id, "stream": False},
    )
    assert follow.body["message"] == "Back."


class TestFinishOnDisconnect:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {"on_disconnect": "finish"}

    @pytest.mark.slow
    async def test_a_client_leaving_mid_tool_lets_the_turn_finish(
        self, jp_fetch, jp_http_port, jp_base_url, jp_auth_header, gns3_project, scripted_llm
    ) -> None:
        await add_pcs(gns3_project, "PC1", start=True)
        ping = {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.99 -c 2"]}]}
        scripted_llm.add(
            tool_reply("run_vpcs_commands", ping, id="call_ping"),
            text("No answer from 10.0.0.99."),
            text("Ping", when=TITLE_REPLY),
        )
        body = {"message": "Ping", "copilot_mode": "lab_automation_assistant"}
        session_id = await leave_during_tool(
            jp_fetch, jp_http_port, jp_base_url, jp_auth_header, gns3_project, body
        )
        messages = await wait_for_history(
            jp_fetch, gns3_project, session_id, ["user", "assistant", "tool", "assistant"]
        )
        assert messages[-1]["content"] == "No answer from 10.0.0.99."
        assert json.loads(messages[2]["content"])[0]["status"] == "success"


class TestHeartbeat:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {"heartbeat_interval": 0.3}

    async def test_heartbeats_fill_a_silent_model(
        self, jp_fetch, gns3_project, scripted_llm
    ) -> None:
        scripted_llm.add(text("Late.", first_byte_delay=1.2), text("T", when=TITLE_REPLY))
        events = await open_stream(
            jp_fetch, *chat_path(gns3_project, "stream"), body={"message": "hello"}
        ).finish()
        assert kinds(events, progress=True).count("heartbeat") >= 3  # opening + silence
        assert kinds(events) == ["content", "done"]

    @pytest.mark.slow
    async def test_heartbeats_fill_a_silent_direct_tool_run(self, jp_fetch, gns3_project) -> None:
        await add_pcs(gns3_project, "PC1", start=True)
        ping = {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.99 -c 2"]}]}
        events = await open_stream(
            jp_fetch,
            *tool_path(gns3_project, "run_vpcs_commands"),
            body={"arguments": ping, "copilot_mode": "lab_automation_assistant"},
        ).finish()
        assert kinds(events, progress=True).count("heartbeat") >= 3
        assert kinds(events) == ["tool_call", "tool_start", "tool_end", "done"]


async def test_a_closed_project_is_409_saying_how_to_open_it(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    closed = await call(
        jp_fetch, "copilot", "projects", gns3_project.project_id, "close", method="POST"
    )
    assert closed.code == 204
    reply = await call(
        jp_fetch, *chat_path(gns3_project, "stream"), method="POST", body={"message": "hi"}
    )
    assert reply.code == 409
    assert reply.error["type"] == "ProjectNotOpened"
    assert f"projects/{gns3_project.project_id}/open" in reply.error["message"]
    assert gns3_project.name in reply.error["message"]
    opened = await call(
        jp_fetch, "copilot", "projects", gns3_project.project_id, "open", method="POST"
    )
    assert opened.code == 200 and opened.body["status"] == "opened"
    scripted_llm.add(text("Hello."), text("T", when=TITLE_REPLY))
    reply = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "hi", "stream": False},
    )
    assert reply.body["message"] == "Hello."


def gns3_requests(jp_serverapp: Any) -> list[str]:
    """The requests this server sends to the real GNS3 lab from now on ("GET /v3/..."),
    recorded by an httpx event hook on its GNS3 client."""
    asked: list[str] = []

    async def record(request: httpx.Request) -> None:
        asked.append(f"{request.method} {request.url.path}")

    copilot_app(jp_serverapp).gns3_client()._http.event_hooks["request"].append(record)
    return asked


async def test_a_turn_asks_gns3_for_project_nodes_and_links_once_each(
    jp_fetch, jp_serverapp, gns3_project, gns3_http, scripted_llm
) -> None:
    """The project check shares its lookup with the turn's topology read."""
    stream = chat_path(gns3_project, "stream")
    scripted_llm.add(text("Hello."), text("T", when=TITLE_REPLY), text("Again."))
    first = await call(jp_fetch, *stream, method="POST", body={"message": "hi", "stream": False})
    asked = gns3_requests(jp_serverapp)
    body = {"message": "again", "stream": False, "session_id": first.body["session_id"]}
    second = await call(jp_fetch, *stream, method="POST", body=body)
    assert second.body["message"] == "Again."
    project = f"GET /v3/projects/{gns3_project.project_id}"
    assert sorted(asked) == [project, f"{project}/links", f"{project}/nodes"]

    # Closed in GNS3 itself (the copilot keeps the project's agent): still the clear 409.
    gns3_http.post(f"/v3/projects/{gns3_project.project_id}/close").raise_for_status()
    closed = await call(jp_fetch, *stream, method="POST", body=body)
    assert closed.code == 409 and closed.error["type"] == "ProjectNotOpened"
    gns3_http.post(f"/v3/projects/{gns3_project.project_id}/open").raise_for_status()
    scripted_llm.add(text("Open again."))
    reopened = await call(jp_fetch, *stream, method="POST", body=body)
    assert reopened.body["message"] == "Open again."


async def test_a_one_command_turn_reads_the_lab_from_gns3_once(
    jp_fetch, jp_serverapp, gns3_project, scripted_llm
) -> None:
    """Given a started VPCS; when a turn runs `show ip` on it; then the tool finds the
    device in the turn's own topology read (project, nodes and links asked once each) and
    the template list read by an earlier turn is not asked again."""
    await add_pcs(gns3_project, "PC1")
    show = {"devices": [{"device": "PC1", "commands": ["show ip"]}]}
    scripted_llm.add(
        tool_reply("start_nodes", {"nodes": ["PC1"]}),
        text("Started."),
        text("T", when=TITLE_REPLY),
        tool_reply("run_show_commands", show),
        text("PC1 has no address."),
    )
    stream = chat_path(gns3_project, "stream")
    first = await call(jp_fetch, *stream, method="POST", body={"message": "go", "stream": False})
    assert first.body["message"] == "Started."
    asked = gns3_requests(jp_serverapp)
    body = {"message": "address?", "stream": False, "session_id": first.body["session_id"]}
    second = await call(jp_fetch, *stream, method="POST", body=body)
    [tool] = second.body["tool_calls"]
    assert "IP/MASK" in tool["output"] and second.body["message"] == "PC1 has no address."
    project = f"GET /v3/projects/{gns3_project.project_id}"
    assert sorted(asked) == [project, f"{project}/links", f"{project}/nodes"]


async def test_model_errors_arrive_as_error_events(jp_fetch, gns3_project, scripted_llm) -> None:
    from jupyter_gns3_copilot.testing.scripted_llm import error

    scripted_llm.add(error(401))
    reply = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "hi", "stream": False},
    )
    assert reply.code == 200
    assert reply.body["status"] == "error"
    assert "API key" in reply.body["errors"][0]


async def test_a_turn_that_failed_is_kept_as_failed_in_history_and_export(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given a conversation whose second turn failed (the endpoint answered HTTP 500);
    when the session is read back; then the history gives that turn's error under its
    user message (not a question without an answer), the notebook and Markdown exports
    include it, and the model never reads it in the next turn."""
    from jupyter_gns3_copilot.testing.scripted_llm import error

    scripted_llm.add(
        text("PC1 is up.", when={"last_message": "^Is PC1 up"}),
        text("PC check", when=TITLE_REPLY),
        error(500, "upstream exploded", when={"last_message": "^And PC2"}),
        text("PC2 is up too.", when={"last_message": "^Try again"}),
    )
    stream = chat_path(gns3_project, "stream")
    first = await call(
        jp_fetch, *stream, method="POST", body={"message": "Is PC1 up?", "stream": False}
    )
    session_id = first.body["session_id"]
    failed = await call(
        jp_fetch,
        *stream,
        method="POST",
        body={"message": "And PC2?", "session_id": session_id, "stream": False},
    )
    assert failed.body["status"] == "error"
    [shown] = failed.body["errors"]
    history = (
        await call(jp_fetch, *chat_path(gns3_project, "sessions", session_id, "history"))
    ).body
    asked = [m for m in history["messages"] if m["role"] == "user"]
    assert [m["content"] for m in asked] == ["Is PC1 up?", "And PC2?"]
    [kept] = history["turn_errors"]
    assert kept["message_id"] == asked[1]["id"] and kept["error"] == shown
    assert "HTTP 500" in shown and kept["created_at"]

    export = chat_path(gns3_project, "sessions", session_id, "export")
    markdown = (await call(jp_fetch, *export, params={"format": "md"})).body
    assert "## You\n\nAnd PC2?\n\n> **Error:** " + shown.split("\n")[0] in markdown
    notebook = json.loads((await call(jp_fetch, *export)).body)
    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    at = sources.index("**You asked:**\n\nAnd PC2?")
    assert sources[at + 1].startswith("> **Error:** ") and "HTTP 500" in sources[at + 1]

    again = await call(
        jp_fetch,
        *stream,
        method="POST",
        body={"message": "Try again", "session_id": session_id, "stream": False},
    )
    assert again.body["message"] == "PC2 is up too."
    assert "upstream exploded" not in json.dumps(scripted_llm.chat_requests[-1].body)
    history = (
        await call(jp_fetch, *chat_path(gns3_project, "sessions", session_id, "history"))
    ).body
    assert [e["message_id"] for e in history["turn_errors"]] == [asked[1]["id"]]


# -- direct tool runs ---------------------------------------------------------------------------


def tool_path(project: Any, tool: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "tools", tool)


@pytest.mark.slow
async def test_a_direct_tool_run_streams_progress_and_the_device_output(
    jp_fetch, gns3_project
) -> None:
    await add_pcs(gns3_project, "PC1")
    started = await open_stream(
        jp_fetch, *tool_path(gns3_project, "start_nodes"), body={"arguments": {"nodes": ["PC1"]}}
    ).finish()
    assert kinds(started) == ["tool_call", "tool_start", "tool_end", "done"]
    assert "progress" in kinds(started, progress=True)
    assert json.loads(started[-2]["tool_output"])

    shown = await call(
        jp_fetch,
        *tool_path(gns3_project, "run_show_commands"),
        method="POST",
        body={
            "arguments": {"devices": [{"device": "PC1", "commands": ["show ip"]}]},
            "stream": False,
        },
    )
    assert shown.code == 200 and shown.body["status"] == "done"
    [tool] = shown.body["tool_calls"]
    assert tool["name"] == "run_show_commands" and "IP/MASK" in tool["output"]
    # Teaching mode screens commands as for the model: a config command is blocked, reported
    blocked = await call(
        jp_fetch,
        *tool_path(gns3_project, "run_show_commands"),
        method="POST",
        body={
            "arguments": {"devices": [{"device": "PC1", "commands": ["ip 10.0.0.5/24"]}]},
            "stream": False,
        },
    )
    assert "blocked_commands" in blocked.body["tool_calls"][0]["output"]


async def test_a_chat_session_is_no_run(jp_fetch, gns3_project, scripted_llm) -> None:
    """Given a chat session; then the run routes do not know its id: aborting it, listing
    or deciding its approvals there is 404 with a JSON message; a request naming its run
    twice, differently, is 400."""
    scripted_llm.add(text("Hello."), text("Greeting", when=TITLE_REPLY))
    reply = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "hi", "stream": False},
    )
    session_id = reply.body["session_id"]
    decision = {"decision": "approve"}
    for method, rest, body in (
        ("POST", ("abort",), None),
        ("GET", ("approvals",), None),
        ("POST", ("approvals", "a1"), decision),
    ):
        answer = await call(
            jp_fetch, *run_path(gns3_project, session_id, *rest), method=method, body=body
        )
        assert answer.code == 404, (method, rest)
        assert answer.error["type"] in {"RunNotFound", "ApprovalNotFound"}
        assert session_id in answer.error["message"]
    twice = await call(
        jp_fetch,
        *tool_path(gns3_project, "get_topology"),
        method="POST",
        body={"run_id": "r1", "session_id": "r2", "stream": False},
    )
    assert twice.code == 400 and "run_id" in twice.error["message"]


async def test_a_tool_the_mode_does_not_allow_is_a_refused_card_for_the_student(
    jp_fetch, gns3_project
) -> None:
    """Given teaching mode; when `run_vpcs_commands` is run directly; then nothing runs and
    the refusal comes as the model's call would get it: a `tool_end` whose outcome is
    `refused`, summed up and noted for the student, never the text written for the model."""
    await add_pcs(gns3_project, "PC2")
    body = {
        "arguments": {"devices": [{"device": "PC2", "commands": ["ip 10.0.0.2/24"]}]},
        "copilot_mode": "teaching_assistant",
    }
    events = await open_stream(
        jp_fetch, *tool_path(gns3_project, "run_vpcs_commands"), body=body
    ).finish()
    assert kinds(events) == ["tool_call", "tool_start", "tool_end", "done"]
    [end] = [event for event in events if event["type"] == "tool_end"]
    assert end["outcome"] == "refused"
    assert json.loads(end["tool_output"])["status"] == "refused"
    for shown in (end["summary"], end["note"]):
        assert "Explain to the user" not in shown and "teaching_assistant" not in shown
    assert "PC2" in end["note"]


def run_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "runs", *rest)


@pytest.mark.slow
@pytest.mark.parametrize("client", ["current", "old"])
async def test_a_direct_tool_run_can_be_aborted(
    jp_fetch, jp_serverapp, gns3_project, client: str
) -> None:
    """Given a long direct run named by the request's `run_id`; when the run route aborts
    it, then it ends aborted. An old client naming it `session_id` and aborting it on the
    chat session route (deprecated for runs) still does."""
    await add_pcs(gns3_project, "PC1", start=True)
    run_id = f"run-{client}"
    named = {"run_id": run_id} if client == "current" else {"session_id": run_id}
    stream = open_stream(
        jp_fetch,
        *tool_path(gns3_project, "run_vpcs_commands"),
        body={"arguments": PING_30, "copilot_mode": "lab_automation_assistant", **named},
    )
    started = await stream.until("tool_start")
    assert started[-1]["session_id"] == run_id  # the events' field carries the run's id
    await wait_until_console_busy(copilot_app(jp_serverapp), gns3_project, "PC1")
    if client == "current":
        abort = await call(jp_fetch, *run_path(gns3_project, run_id, "abort"), method="POST")
        assert abort.body == {"status": "ok", "run_id": run_id}
    else:
        abort = await call(
            jp_fetch, *chat_path(gns3_project, "sessions", run_id, "abort"), method="POST"
        )
        assert abort.body == {"status": "ok", "session_id": run_id}
    events = await stream.finish(timeout=15)
    assert kinds(events)[-3:] == ["tool_end", "abort", "done"]
    assert "aborted" in events[-3]["tool_output"]
