"""Human approval before changes through a real Jupyter server: the REAL
local GNS3 lab (nothing is created before the decision, the node is there after an
approval), the scripted model server (a TEST DOUBLE of the OpenAI API, strict about
orphaned tool calls, so a history the approval path left invalid fails the next request),
SQLite checkpoints, and a server process restarted on the same data directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.server import (
    TITLE_REPLY,
    TokenUsersIdentityProvider,
    add_pcs,
    as_user,
    call,
    eventually,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    parse_sse,
    server_config,
)

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.scripted_llm import ToolCall, text, tool_calls
from jupyter_gns3_copilot.testing.scripted_llm import tool_call as tool_reply

pytestmark = pytest.mark.lab

LAB_MODE = "lab_automation_assistant"
CREATE_PC3 = {"nodes": [{"template": "VPCS", "name": "PC3"}]}
CHANGES = {"require_approval": "changes"}
"""The server's default (the test helpers default to "none")."""


@pytest.fixture
def copilot_traits() -> dict[str, Any]:
    return {"require_approval": "changes", "heartbeat_interval": 0.5}


@pytest.fixture
def jp_server_config(gns3_lab, scripted_llm, tmp_path: Path, copilot_traits) -> dict[str, Any]:
    config = server_config(
        tmp_path / "copilot-data",
        **lab_traits(gns3_lab),
        **model_traits(scripted_llm),
        **copilot_traits,
    )
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


def project_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, *rest)


def chat_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "chat", *rest)


async def node_names(project: Any) -> set[str]:
    async with GNS3Client(project.url, token=project.token) as gns3:
        return {node.name for node in await gns3.list_nodes(project.project_id)}


def ask_for_pc3(jp_fetch: Any, project: Any, **body: Any) -> Any:
    return open_stream(
        jp_fetch,
        *chat_path(project, "stream"),
        body={"message": "Add PC3", "copilot_mode": LAB_MODE, **body},
        headers=as_user("alice"),
    )


async def follow_up(jp_fetch: Any, project: Any, session_id: str, message: str) -> Any:
    """Alice's next message in `session_id`, answered as one JSON summary."""
    return await call(
        jp_fetch,
        *chat_path(project, "stream"),
        method="POST",
        body={"message": message, "session_id": session_id, "stream": False},
        headers=as_user("alice"),
    )


async def decide(
    jp_fetch: Any, project: Any, session_id: str, approval_id: str, user: str = "alice", **body
) -> Any:
    return await call(
        jp_fetch,
        *chat_path(project, "sessions", session_id, "approvals", approval_id),
        method="POST",
        body=body,
        headers=as_user(user),
    )


async def test_approve_runs_the_waiting_change_and_the_stream_goes_on(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given a model that creates PC3; when the turn streams, then it pauses with
    approval_required (the plan in words) and nothing exists in GNS3 yet, the session
    lists the pending approval, another user's decision is 404 and a bad body 400; when
    alice approves, then 200 JSON, the open stream goes on (approval_resolved, tool_start,
    tool_end, the answer), PC3 exists, and deciding again is 409."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("PC3 is there.", when={"last_message": "PC3"}),
        text("Add PC3", when=TITLE_REPLY),
    )
    stream = ask_for_pc3(jp_fetch, gns3_project)
    asked = (await stream.until("approval_required"))[-1]
    session_id, approval_id = asked["session_id"], asked["approval_id"]
    assert asked["tool_call_id"] == "call_create" and asked["tool_name"] == "create_nodes"
    assert asked["tool_input"] == CREATE_PC3
    assert asked["summary"] == "create PC3 (VPCS)"
    assert "PC3" not in await node_names(gns3_project)
    await stream.until("heartbeat")  # the waiting stream stays open with heartbeats
    assert not stream.task.done()

    listed = await call(
        jp_fetch,
        *chat_path(gns3_project, "sessions", session_id, "approvals"),
        headers=as_user("alice"),
    )
    assert listed.code == 200 and [a["approval_id"] for a in listed.body] == [approval_id]
    assert listed.body[0]["summary"] == "create PC3 (VPCS)" and listed.body[0]["expires_at"]
    assert set(listed.body[0]) == {
        "approval_id",
        "tool_call_id",
        "tool_name",
        "tool_input",
        "summary",
        "asked_at",
        "expires_at",
    }, "the turn's internals (mode, temperature, time limit) stay out of the listing"
    foreign = await decide(
        jp_fetch, gns3_project, session_id, approval_id, "bob", decision="approve"
    )
    assert foreign.code == 404 and foreign.error["type"] == "ApprovalNotFound"
    unknown = await decide(jp_fetch, gns3_project, session_id, "nope", decision="approve")
    assert unknown.code == 404
    bad = await decide(jp_fetch, gns3_project, session_id, approval_id, decision="maybe")
    assert bad.code == 400

    approved = await decide(jp_fetch, gns3_project, session_id, approval_id, decision="approve")
    assert approved.code == 200
    assert approved.body == {"status": "ok", "approval_id": approval_id, "decision": "approve"}
    rest = await stream.finish()
    after = kinds(rest)[kinds(rest).index("approval_required") :]
    assert after == [
        "approval_required",
        "approval_resolved",
        "tool_start",
        "tool_end",
        "content",
        "done",
    ]
    resolved = next(e for e in rest if e["type"] == "approval_resolved")
    assert resolved["decision"] == "approve" and resolved["tool_call_id"] == "call_create"
    assert "PC3" in await node_names(gns3_project)
    again = await decide(jp_fetch, gns3_project, session_id, approval_id, decision="reject")
    assert again.code == 409 and again.error["type"] == "AlreadyDecided"


async def test_reject_tells_the_model_who_declined_and_why(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given a turn paused at creating PC3; when alice rejects it with a comment; then
    nothing is created, the call's result says the user declined (with the comment), and
    the model, which only answers a request holding that result, continues."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("Understood, no PC3.", when={"last_message": "declined.*call it PC9"}),
        text("Add PC3", when=TITLE_REPLY),
    )
    stream = ask_for_pc3(jp_fetch, gns3_project)
    asked = (await stream.until("approval_required"))[-1]
    rejected = await decide(
        jp_fetch,
        gns3_project,
        asked["session_id"],
        asked["approval_id"],
        decision="reject",
        comment="call it PC9",
    )
    assert rejected.code == 200
    events = await stream.finish()
    assert kinds(events)[-4:] == ["approval_resolved", "tool_end", "content", "done"]
    end = next(e for e in events if e["type"] == "tool_end")
    result = json.loads(end["tool_output"])
    assert result["status"] == "declined" and result["comment"] == "call it PC9"
    assert "".join(e["content"] for e in events if e["type"] == "content") == (
        "Understood, no PC3."
    )
    assert "PC3" not in await node_names(gns3_project)


async def test_abort_while_waiting_runs_nothing_and_leaves_a_valid_history(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given a turn paused at an approval; when the session is aborted; then the stream
    ends (aborted result, abort, done), nothing was created, and the next turn's request
    (strict model) is accepted."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("Add PC3", when=TITLE_REPLY),
        text("Fine.", when={"last_message": "never mind"}),
    )
    stream = ask_for_pc3(jp_fetch, gns3_project)
    asked = (await stream.until("approval_required"))[-1]
    session_id = asked["session_id"]
    aborted = await call(
        jp_fetch,
        *chat_path(gns3_project, "sessions", session_id, "abort"),
        method="POST",
        headers=as_user("alice"),
    )
    assert aborted.code == 200 and aborted.body["status"] == "ok"
    events = await stream.finish()
    assert kinds(events)[-3:] == ["tool_end", "abort", "done"]
    assert "aborted" in events[-3]["tool_output"]
    assert "PC3" not in await node_names(gns3_project)
    late = await decide(
        jp_fetch, gns3_project, session_id, asked["approval_id"], decision="approve"
    )
    assert late.code == 409
    follow = await follow_up(jp_fetch, gns3_project, session_id, "never mind")
    assert follow.code == 200 and follow.body["message"] == "Fine."


class TestTimeout:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {"require_approval": "changes", "approval_timeout": 1.0}

    async def test_an_unanswered_approval_counts_as_rejected(
        self, jp_fetch, gns3_project, scripted_llm
    ) -> None:
        """Given `approval_timeout` 1 s; when nobody decides; then the stream resolves
        the approval as "timeout", nothing is created and the model reads why."""
        scripted_llm.add(
            tool_reply("create_nodes", CREATE_PC3, id="call_create"),
            text("Nobody approved.", when={"last_message": "No one approved"}),
            text("Add PC3", when=TITLE_REPLY),
        )
        events = await ask_for_pc3(jp_fetch, gns3_project).finish()
        resolved = next(e for e in events if e["type"] == "approval_resolved")
        assert resolved["decision"] == "timeout"
        assert kinds(events)[-4:] == ["approval_resolved", "tool_end", "content", "done"]
        assert json.loads(events[-3]["tool_output"])["decision"] == "timeout"
        assert "PC3" not in await node_names(gns3_project)


async def test_a_client_that_leaves_detaches_and_the_decision_streams_the_rest(
    jp_fetch, jp_base_url, jp_http_port, gns3_project, scripted_llm
) -> None:
    """Given a turn paused at an approval; when its client disconnects; then the approval
    stays pending (listed, nothing created) and approving it answers the rest of the turn
    as SSE."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("Done after you came back.", when={"last_message": "PC3"}),
        text("Add PC3", when=TITLE_REPLY),
    )
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}copilot/projects/"
    url += f"{gns3_project.project_id}/chat/stream"
    body = {"message": "Add PC3", "copilot_mode": LAB_MODE}
    async with (
        httpx.AsyncClient(trust_env=False, timeout=60) as client,
        client.stream("POST", url, json=body, headers=as_user("alice")) as response,
    ):
        buffer = ""
        asked = None
        async for chunk in response.aiter_text():
            events, buffer = parse_sse(buffer + chunk)
            asked = next((e for e in events if e["type"] == "approval_required"), None)
            if asked:
                break
    assert asked is not None
    session_id = asked["session_id"]
    path = chat_path(gns3_project, "sessions", session_id, "approvals")

    async def pending() -> list[Any]:
        return (await call(jp_fetch, *path, headers=as_user("alice"))).body

    assert [a["approval_id"] for a in await pending()] == [asked["approval_id"]]
    resumed = await decide(
        jp_fetch, gns3_project, session_id, asked["approval_id"], decision="approve"
    )
    assert resumed.code == 200 and resumed.headers["Content-Type"].startswith("text/event-stream")
    events, _ = parse_sse(resumed.body)
    assert kinds(events) == ["approval_resolved", "tool_start", "tool_end", "content", "done"]
    assert "PC3" in await node_names(gns3_project)
    assert await pending() == []


class TestAutoApprovalForbidden:
    @pytest.fixture
    def copilot_traits(self) -> dict[str, Any]:
        return {"require_approval": "changes", "allow_auto_approval": False}

    async def test_auto_approval_is_403_where_the_admin_forbids_it(
        self, jp_fetch, gns3_project
    ) -> None:
        reply = await call(
            jp_fetch,
            *chat_path(gns3_project, "stream"),
            method="POST",
            body={"message": "Add PC3", "approval": "auto"},
            headers=as_user("alice"),
        )
        assert reply.code == 403 and reply.error["field"] == "approval"
        assert "allow_auto_approval" in reply.error["message"]


async def test_auto_approval_where_allowed_runs_changes_without_asking(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("Created.", when={"last_message": "PC3"}),
        text("Add PC3", when=TITLE_REPLY),
    )
    events = await ask_for_pc3(jp_fetch, gns3_project, approval="auto").finish()
    assert "approval_required" not in kinds(events)
    assert kinds(events)[-4:] == ["tool_start", "tool_end", "content", "done"]
    assert "PC3" in await node_names(gns3_project)


@pytest.mark.slow
def test_a_restarted_server_answers_the_pending_approval_with_the_rest_of_the_turn(
    gns3_lab: Any, gns3_project: Any, scripted_llm: Any, tmp_path: Path
) -> None:
    """Given a turn paused at an approval in one server process; when that process stops
    and a new one starts on the same data directory; then the approval is listed there
    and approving it streams the rest of the turn (the node is created)."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("Created after the restart.", when={"last_message": "PC3"}),
        text("Add PC3", when={**TITLE_REPLY, "model": "scripted-model"}),
    )
    chat = f"projects/{gns3_project.project_id}/chat"
    servers = []
    try:
        first = JupyterServer(
            gns3_lab, ModelEndpoint.scripted_model(scripted_llm), tmp_path, traits=CHANGES
        )
        servers.append(first.start())
        body = {"message": "Add PC3", "copilot_mode": LAB_MODE}
        with (
            _api(first) as client,
            client.stream("POST", f"{chat}/stream", json=body) as response,
        ):
            asked = _events_until(response, "approval_required")[-1]
        first.stop()
        session_id, approval_id = asked["session_id"], asked["approval_id"]

        second = JupyterServer(
            gns3_lab, ModelEndpoint.scripted_model(scripted_llm), tmp_path, traits=CHANGES
        )
        servers.append(second.start())
        with _api(second) as client:
            listed = client.get(f"{chat}/sessions/{session_id}/approvals")
            assert listed.status_code == 200, listed.text
            assert [a["approval_id"] for a in listed.json()] == [approval_id]
            reply = client.post(
                f"{chat}/sessions/{session_id}/approvals/{approval_id}",
                json={"decision": "approve"},
                timeout=60,
            )
            assert reply.status_code == 200, reply.text
            events, _ = parse_sse(reply.text)
            assert kinds(events) == [
                "approval_resolved",
                "tool_start",
                "tool_end",
                "content",
                "done",
            ]
    finally:
        for server in servers:
            server.stop()
    import asyncio

    assert "PC3" in asyncio.run(node_names(gns3_project))


def _api(server: JupyterServer) -> httpx.Client:
    return httpx.Client(
        base_url=f"{server.url}copilot/",
        headers={"Authorization": f"token {server.token}"},
        timeout=httpx.Timeout(30.0),
        trust_env=False,
    )


def _events_until(response: httpx.Response, kind: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            events.append(json.loads(line[len("data: ") :]))
            if events[-1]["type"] == kind:
                return events
    raise AssertionError(f"the stream ended without a {kind!r} event: {events}")


async def test_a_detached_approval_can_be_aborted_or_overtaken_by_a_new_message(
    jp_fetch, jp_base_url, jp_http_port, gns3_project, scripted_llm
) -> None:
    """Given two sessions paused at an approval whose clients left; then their history
    shows the call still unanswered (it waits, it was not interrupted); when one is
    aborted, then nothing runs, nothing is pending and a late decision is 409; when the
    other gets a new message instead, then the waiting call is answered as interrupted
    and the strict model accepts the next request."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_one"),
        text("Add PC3", when=TITLE_REPLY),
        tool_reply("create_nodes", CREATE_PC3, id="call_two"),
        text("Add PC3", when=TITLE_REPLY),
        text("Fine, something else.", when={"last_message": "something else"}),
    )
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}copilot/projects/"
    url += f"{gns3_project.project_id}/chat/stream"
    asked = [await _ask_and_leave(url), await _ask_and_leave(url)]
    first, second = (event["session_id"] for event in asked)
    history = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", first, "history"), headers=as_user("alice")
    )
    assert [m["role"] for m in history.body["messages"]] == ["user", "assistant"]

    aborted = await call(
        jp_fetch,
        *chat_path(gns3_project, "sessions", first, "abort"),
        method="POST",
        headers=as_user("alice"),
    )
    assert aborted.code == 200 and aborted.body["status"] == "ok"
    listed = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", first, "approvals"), headers=as_user("alice")
    )
    assert listed.body == []
    late = await decide(jp_fetch, gns3_project, first, asked[0]["approval_id"], decision="approve")
    assert late.code == 409

    async def next_turn() -> Any:
        # 409 SessionBusy until the server has noticed the second client left.
        reply = await follow_up(jp_fetch, gns3_project, second, "something else")
        return None if reply.code == 409 else reply

    follow = await eventually(next_turn, "the second stream detaching")
    assert follow.code == 200 and follow.body["message"] == "Fine, something else."
    assert "PC3" not in await node_names(gns3_project)


async def _ask_and_leave(url: str, **extra: Any) -> dict[str, Any]:
    """Start a PC3 turn as alice (`extra`: more fields of the chat body), read up to its
    approval_required event, disconnect."""
    body = {"message": "Add PC3", "copilot_mode": LAB_MODE, **extra}
    async with (
        httpx.AsyncClient(trust_env=False, timeout=60) as client,
        client.stream("POST", url, json=body, headers=as_user("alice")) as response,
    ):
        buffer = ""
        async for chunk in response.aiter_text():
            events, buffer = parse_sse(buffer + chunk)
            for event in events:
                if event["type"] == "approval_required":
                    return event
    raise AssertionError("the stream ended without approval_required")


async def test_a_reply_with_two_changes_asks_once_per_call_before_running_either(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given one reply creating PC3 and PC4 (two calls) plus a topology read; when the
    first change is approved, then the second is asked and nothing has run yet; when it is
    rejected, then only PC3 is created, the read runs, and the model reads both results."""
    scripted_llm.add(
        tool_calls(
            ToolCall(name="create_nodes", arguments=CREATE_PC3, id="call_pc3"),
            ToolCall(name="get_topology", arguments={}, id="call_read"),
            ToolCall(
                name="create_nodes",
                arguments={"nodes": [{"template": "VPCS", "name": "PC4"}]},
                id="call_pc4",
            ),
        ),
        text("PC3 only.", when={"last_message": "declined"}),
        text("Add PCs", when=TITLE_REPLY),
    )
    stream = ask_for_pc3(jp_fetch, gns3_project)
    first = (await stream.until("approval_required"))[-1]
    session_id = first["session_id"]
    assert first["tool_call_id"] == "call_pc3"
    approved = await decide(
        jp_fetch, gns3_project, session_id, first["approval_id"], decision="approve"
    )
    assert approved.code == 200
    between = await stream.until("approval_required")
    second = between[-1]
    assert second["tool_call_id"] == "call_pc4" and second["summary"] == "create PC4 (VPCS)"
    assert kinds(between) == ["approval_resolved", "approval_required"]
    assert not {"PC3", "PC4"} & await node_names(gns3_project)
    rejected = await decide(
        jp_fetch, gns3_project, session_id, second["approval_id"], decision="reject"
    )
    assert rejected.code == 200
    events = await stream.finish()
    ends = {e["tool_call_id"]: e["tool_output"] for e in events if e["type"] == "tool_end"}
    assert set(ends) == {"call_pc3", "call_read", "call_pc4"}
    assert json.loads(ends["call_pc4"])["status"] == "declined"
    assert "PC3" in ends["call_read"], "the read ran after the approved create, in order"
    assert {"PC3", "PC4"} & await node_names(gns3_project) == {"PC3"}


class TestTimeLimit:
    """`max_execution_time_seconds` bounds the copilot's own work, not a person's wait."""

    LIMIT = 4
    """Seconds: room enough for the change and the answer on a loaded machine."""

    async def test_the_wait_for_a_decision_does_not_count_against_the_limit(
        self, jp_fetch, gns3_project, scripted_llm
    ) -> None:
        """Given a turn limited to LIMIT s that asks to create PC3; when the person takes
        longer than the limit to approve (2 * LIMIT + 1 heartbeats, 0.5 s apart, go by); then the
        turn is not stopped: the change runs and the answer follows, with no error."""
        scripted_llm.add(
            tool_reply("create_nodes", CREATE_PC3, id="call_create"),
            text("PC3 is there.", when={"last_message": "PC3"}),
            text("Add PC3", when=TITLE_REPLY),
        )
        stream = ask_for_pc3(jp_fetch, gns3_project, max_execution_time_seconds=self.LIMIT)
        asked = (await stream.until("approval_required"))[-1]
        for _ in range(2 * self.LIMIT + 1):  # the person reads the plan, longer than the limit
            waited = await stream.until("heartbeat", timeout=10)
            assert kinds(waited) == [], "only heartbeats while the turn waits"
        approved = await decide(
            jp_fetch, gns3_project, asked["session_id"], asked["approval_id"], decision="approve"
        )
        assert approved.code == 200
        events = await stream.finish()
        assert kinds(events)[kinds(events).index("approval_resolved") :] == [
            "approval_resolved",
            "tool_start",
            "tool_end",
            "content",
            "done",
        ]
        assert "PC3" in await node_names(gns3_project)

    async def test_a_resumed_turn_stops_at_the_time_left_of_its_limit(
        self, jp_fetch, jp_base_url, jp_http_port, gns3_project, scripted_llm
    ) -> None:
        """Given a turn limited to LIMIT s whose client left at the approval, and a model that
        stalls (60 s before answering) after the change; when the change is approved
        through the route; then the resumed turn runs the change and is stopped by the
        limit as a first turn would be (the limit's error, then done), and its history is
        valid (the strict model accepts the next turn)."""
        scripted_llm.add(
            tool_reply("create_nodes", CREATE_PC3, id="call_create"),
            text("Too late.", when={"last_message": "PC3"}, first_byte_delay=60),
            text("Carry on.", when={"last_message": "carry on"}),
            text("Add PC3", when=TITLE_REPLY),
        )
        url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}copilot/projects/"
        url += f"{gns3_project.project_id}/chat/stream"
        asked = await _ask_and_leave(url, max_execution_time_seconds=self.LIMIT)
        session_id = asked["session_id"]
        resumed = await decide(
            jp_fetch, gns3_project, session_id, asked["approval_id"], decision="approve"
        )
        assert resumed.code == 200
        assert resumed.headers["Content-Type"].startswith("text/event-stream")
        events, _ = parse_sse(resumed.body)
        assert kinds(events) == ["approval_resolved", "tool_start", "tool_end", "error", "done"]
        assert f"(max_execution_time_seconds={self.LIMIT})" in events[-2]["error"]
        assert "PC3" in await node_names(gns3_project)
        follow = await follow_up(jp_fetch, gns3_project, session_id, "carry on")
        assert follow.code == 200 and follow.body["message"] == "Carry on."


# -- a device's configuration asks too, by its commands ---------------------------------------

SET_PC3 = {"devices": [{"device": "PC3", "commands": ["show ip", "ip 10.0.0.73/24"]}]}
SHOW_PC3 = {"devices": [{"device": "PC3", "commands": ["show ip", "ping 10.0.0.1 -c 1"]}]}


def tool_path(project: Any, tool: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "tools", tool)


async def pc3_address(jp_fetch: Any, project: Any) -> str:
    """PC3's `show ip` address line, read with a direct run (a diagnostic: no approval)."""
    shown = await call(
        jp_fetch,
        *tool_path(project, "run_vpcs_commands"),
        method="POST",
        body={
            "arguments": {"devices": [{"device": "PC3", "commands": ["show ip"]}]},
            "copilot_mode": LAB_MODE,
            "stream": False,
        },
        headers=as_user("alice"),
    )
    assert shown.code == 200, shown.body
    [device] = json.loads(shown.body["tool_calls"][0]["output"])
    return next(line for line in device["output"].splitlines() if line.startswith("IP/MASK"))


async def test_a_vpcs_address_change_asks_first_and_diagnostics_do_not(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given the default `require_approval = "changes"`; when the model runs `show ip`
    and `ping` on PC3, then nothing is asked; when it runs `show ip` with `ip
    10.0.0.73/24`, then the turn asks once, the plan naming the configuring line, and
    PC3's address is unchanged until alice approves."""
    await add_pcs(gns3_project, "PC3", start=True)
    scripted_llm.add(
        tool_reply("run_vpcs_commands", SHOW_PC3, id="call_show"),
        tool_reply("run_vpcs_commands", SET_PC3, id="call_set"),
        text("PC3 is 10.0.0.73/24.", when={"last_message": "10.0.0.73"}),
        text("Address PC3", when=TITLE_REPLY),
    )
    before = await pc3_address(jp_fetch, gns3_project)
    stream = open_stream(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        body={"message": "Address PC3 as 10.0.0.73/24", "copilot_mode": LAB_MODE},
        headers=as_user("alice"),
    )
    seen = await stream.until("approval_required")
    shown = [e for e in seen if e["type"] == "tool_end"]
    assert [e["tool_call_id"] for e in shown] == ["call_show"], "the diagnostics did not ask"
    asked = seen[-1]
    assert asked["tool_call_id"] == "call_set"
    assert asked["summary"] == "on PC3: ip 10.0.0.73/24 (also runs: show ip)"
    assert await pc3_address(jp_fetch, gns3_project) == before
    approved = await decide(
        jp_fetch, gns3_project, asked["session_id"], asked["approval_id"], decision="approve"
    )
    assert approved.code == 200
    events = await stream.finish()
    assert [e["type"] for e in events if e["type"] == "approval_required"] == [
        "approval_required"
    ], "one approval for the mixed call"
    set_end = next(
        e for e in events if e.get("tool_call_id") == "call_set" and e["type"] == "tool_end"
    )
    assert set_end["outcome"] == "ok"
    assert "10.0.0.73/24" in await pc3_address(jp_fetch, gns3_project)


async def test_a_direct_run_that_configures_asks_on_the_tool_route(jp_fetch, gns3_project) -> None:
    """Given `%copilot run --tool vpcs PC3: ip 10.0.0.73/24` (the tool route); then the run
    asks (listed on the run's approvals route, nothing changed); alice's rejection runs
    nothing; her approval of the same run sent again runs it; without a stream the run
    is refused with a message; "approval": "auto" runs at once."""
    await add_pcs(gns3_project, "PC3", start=True)
    before = await pc3_address(jp_fetch, gns3_project)
    body = {"arguments": SET_PC3, "copilot_mode": LAB_MODE}

    async def run(run_id: str, decision: str, *, old: bool = False) -> list[dict[str, Any]]:
        """The run `run_id` decided on the run routes, or (`old`: a client from before
        run ids) named `session_id` and decided on the chat session routes."""
        stream = open_stream(
            jp_fetch,
            *tool_path(gns3_project, "run_vpcs_commands"),
            body={**body, ("session_id" if old else "run_id"): run_id},
            headers=as_user("alice"),
        )
        asked = (await stream.until("approval_required"))[-1]
        assert asked["summary"] == "on PC3: ip 10.0.0.73/24 (also runs: show ip)"
        route = ("chat", "sessions") if old else ("runs",)
        listed = await call(
            jp_fetch,
            *project_path(gns3_project, *route, run_id, "approvals"),
            headers=as_user("alice"),
        )
        assert [a["approval_id"] for a in listed.body] == [asked["approval_id"]]
        history = await call(
            jp_fetch,
            *chat_path(gns3_project, "sessions", run_id, "history"),
            headers=as_user("alice"),
        )
        assert history.code == 404, "a run is no chat session"

        async def decide_as(user: str) -> Any:
            return await call(
                jp_fetch,
                *project_path(gns3_project, *route, run_id, "approvals", asked["approval_id"]),
                method="POST",
                body={"decision": decision},
                headers=as_user(user),
            )

        assert (await decide_as("bob")).code == 404
        assert await pc3_address(jp_fetch, gns3_project) == before
        taken = await decide_as("alice")
        assert taken.code == 200 and taken.body["decision"] == decision
        return await stream.finish()

    rejected = await run("run-reject", "reject", old=True)
    assert kinds(rejected) == [
        "tool_call",
        "approval_required",
        "approval_resolved",
        "tool_end",
        "done",
    ]
    assert json.loads(rejected[-2]["tool_output"])["status"] == "declined"
    assert rejected[-2]["outcome"] == "refused"
    assert await pc3_address(jp_fetch, gns3_project) == before

    approved = await run("run-approve", "approve")
    assert kinds(approved) == [
        "tool_call",
        "approval_required",
        "approval_resolved",
        "tool_start",
        "tool_end",
        "done",
    ]
    assert approved[-2]["outcome"] == "ok"
    assert approved[-2]["summary"] == "ran `show ip`; `ip 10.0.0.73/24` on PC3 · 1 ok"
    assert "10.0.0.73/24" in await pc3_address(jp_fetch, gns3_project)

    unstreamed = await call(
        jp_fetch,
        *tool_path(gns3_project, "run_vpcs_commands"),
        method="POST",
        body={**body, "stream": False},
        headers=as_user("alice"),
    )
    assert unstreamed.code == 409 and unstreamed.error["type"] == "ApprovalNeeded"
    assert "on PC3: ip 10.0.0.73/24" in unstreamed.error["message"]

    automatic = await call(
        jp_fetch,
        *tool_path(gns3_project, "run_vpcs_commands"),
        method="POST",
        body={
            "arguments": {"devices": [{"device": "PC3", "commands": ["ip 10.0.0.74/24"]}]},
            "copilot_mode": LAB_MODE,
            "stream": False,
            "approval": "auto",
        },
        headers=as_user("alice"),
    )
    assert automatic.code == 200 and automatic.body["tool_calls"][0]["outcome"] == "ok"
    assert automatic.body["tool_calls"][0]["summary"] == "set PC3 10.0.0.74/24"


async def test_an_unstreamed_chat_answers_a_pending_approval_at_once(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given a `"stream": false` turn that creates PC3; then the request answers at once
    with the waiting approval and how to decide; the decision streams the rest."""
    scripted_llm.add(
        tool_reply("create_nodes", CREATE_PC3, id="call_create"),
        text("PC3 is there.", when={"last_message": "PC3"}),
        text("Add PC3", when=TITLE_REPLY),
    )
    waiting = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "Add PC3", "copilot_mode": LAB_MODE, "stream": False},
        headers=as_user("alice"),
    )
    assert waiting.code == 200 and waiting.body["status"] == "waiting_approval"
    approval = waiting.body["approval"]
    session_id = waiting.body["session_id"]
    assert (approval["tool_name"], approval["summary"]) == ("create_nodes", "create PC3 (VPCS)")
    path = "/".join(chat_path(gns3_project, "sessions", session_id, "approvals"))
    decide_line = approval["decide"]
    assert decide_line.startswith("POST /") and decide_line.endswith(
        f"/{path}/{approval['approval_id']}"
    ), decide_line
    assert "PC3" not in await node_names(gns3_project)
    rest = await call(
        jp_fetch,
        *chat_path(gns3_project, "sessions", session_id, "approvals", approval["approval_id"]),
        method="POST",
        body={"decision": "approve"},
        headers=as_user("alice"),
    )
    assert rest.code == 200
    events, _ = parse_sse(rest.body + "\n\n")
    assert kinds(events)[:3] == ["approval_resolved", "tool_start", "tool_end"]
    assert "PC3" in await node_names(gns3_project)
