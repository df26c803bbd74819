"""The kernel client without a Jupyter server: discovery from environment variables and
jupyter_server's runtime files, HTTP and SSE against a tiny local HTTP server (a TEST
DOUBLE standing in for the copilot routes: it answers what each test scripts), error
mapping, and turns built from event lists."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.tiny_server import TinyServer, json_route, send, sse_route

from jupyter_gns3_copilot.events import parse_event, sse_message
from jupyter_gns3_copilot.notebook.api_client import CopilotClient
from jupyter_gns3_copilot.notebook.discovery import (
    ServerInfo,
    discover,
    explicit_server,
    running_servers,
)
from jupyter_gns3_copilot.notebook.errors import (
    ENABLE_HINT,
    ApiError,
    ExtensionNotLoaded,
    NotAuthorized,
    ServerNotFound,
    ServerUnreachable,
)
from jupyter_gns3_copilot.notebook.turn import TurnRecorder

# -- discovery --------------------------------------------------------------------------------


def no_servers() -> list[dict[str, Any]]:
    return []


def test_jupyterhub_variables_come_before_the_published_ones() -> None:
    """Given a kernel under JupyterHub (service URL bound to every interface) that also
    sees the extension's variables; when it looks for its server; then it uses the hub's
    URL, reachable on 127.0.0.1, with the hub token in Jupyter's header scheme."""
    env = {
        "JUPYTERHUB_SERVICE_URL": "http://0.0.0.0:41234/user/alice",
        "JUPYTERHUB_API_TOKEN": "hub-token",
        "GNS3_COPILOT_SERVER_URL": "http://127.0.0.1:9999/",
        "GNS3_COPILOT_SERVER_TOKEN": "server-token",
    }
    server = discover(env, parent_pid=1, list_servers=no_servers)
    assert server == ServerInfo("http://127.0.0.1:41234/user/alice/", "hub-token", "jupyterhub")
    assert server.headers() == {"Authorization": "token hub-token"}
    assert "hub-token" not in repr(server)


def test_a_hub_prefix_alone_takes_host_and_port_from_the_published_url() -> None:
    env = {
        "JUPYTERHUB_SERVICE_PREFIX": "/user/bob/",
        "JUPYTERHUB_API_TOKEN": "bob-token",
        "GNS3_COPILOT_SERVER_URL": "http://127.0.0.1:8123/user/bob/",
    }
    server = discover(env, parent_pid=1, list_servers=no_servers)
    assert (server.url, server.token, server.source) == (
        "http://127.0.0.1:8123/user/bob/",
        "bob-token",
        "jupyterhub",
    )


def test_the_extension_published_url_and_token_are_used() -> None:
    env = {
        "GNS3_COPILOT_SERVER_URL": "http://127.0.0.1:8888/a%40b",
        "GNS3_COPILOT_SERVER_TOKEN": "t",
    }
    server = discover(env, parent_pid=1, list_servers=no_servers)
    assert (server.url, server.token, server.source) == (
        "http://127.0.0.1:8888/a%40b/",
        "t",
        "extension",
    )


def test_the_running_server_that_is_the_kernels_parent_is_found(tmp_path: Path) -> None:
    """Given jupyter_server runtime files for two live servers; when a kernel whose parent
    is one of them looks (no variables set); then it finds that one, with its token."""
    me, other = os.getpid(), os.getppid()
    for pid, port, token in ((other, 8001, "other"), (me, 8002, "mine")):
        info = {
            "url": f"http://localhost:{port}/",
            "hostname": "localhost",
            "port": port,
            "base_url": "/",
            "token": token,
            "pid": pid,
            "root_dir": str(tmp_path),
            "secure": False,
            "sock": "",
            "password": False,
            "version": "2.21.1",
        }
        (tmp_path / f"jpserver-{pid}.json").write_text(json.dumps(info))
    server = discover({}, parent_pid=me, list_servers=lambda: running_servers(str(tmp_path)))
    assert (server.url, server.token, server.source) == (
        "http://127.0.0.1:8002/",
        "mine",
        "running-server",
    )


def test_no_server_found_says_what_was_tried_and_how_to_connect() -> None:
    with pytest.raises(ServerNotFound) as caught:
        discover({}, parent_pid=1, list_servers=no_servers)
    message = str(caught.value)
    assert "GNS3_COPILOT_SERVER_URL" in message
    assert ENABLE_HINT in message
    assert "%copilot connect" in message
    [line] = caught.value._render_traceback_()
    assert "ServerNotFound" in line


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:8888", "http://127.0.0.1:8888/"),
        ("http://localhost:8888/lab", "http://127.0.0.1:8888/lab/"),
        ("https://hub.example.org/user/x/", "https://hub.example.org/user/x/"),
        ("http://[::]:8888/", "http://[::1]:8888/"),
    ],
)
def test_explicit_urls_are_normalized(given: str, expected: str) -> None:
    assert explicit_server(given, "tok").url == expected


def test_an_unsupported_scheme_is_refused() -> None:
    with pytest.raises(ServerNotFound, match="Unsupported server URL"):
        explicit_server("ftp://127.0.0.1/")


# -- a tiny HTTP server standing in for the copilot routes ----------------------------------


@pytest.fixture
def tiny() -> Iterator[TinyServer]:
    server = TinyServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(tiny: TinyServer) -> Iterator[CopilotClient]:
    with CopilotClient(explicit_server(tiny.url, "secret-token")) as http:
        yield http


STREAM = "/a%40b/copilot/projects/p1/chat/stream"


def event(kind: str, **fields: Any) -> str:
    return sse_message({"type": kind, "session_id": "s1", **fields})


def test_events_arrive_while_the_server_is_still_streaming(
    tiny: TinyServer, client: CopilotClient
) -> None:
    """Given a server that sends one event, then waits; when the client reads the stream;
    then it gets the first event before the server goes on (streaming, not buffering),
    on_open runs first, and events split across chunks or of unknown types are handled."""
    gate = threading.Event()
    content = event("content", content="Hello", message_id="m1")
    tiny.routes[("POST", STREAM)] = sse_route(
        [
            content,
            gate,
            ": a comment line\n\n",
            event("future_kind", anything=1),
            event("tool_call", tool_call={"id": "c1", "function": {"name": "get_topology"}})[:30],
            event("tool_call", tool_call={"id": "c1", "function": {"name": "get_topology"}})[30:],
            event("heartbeat"),
            event("done"),
        ]
    )
    seen: list[str] = []
    stream = client.stream(
        "projects",
        "p1",
        "chat",
        "stream",
        json={"message": "hi"},
        on_open=lambda: seen.append("open"),
    )
    first = next(stream)
    seen.append(first.type)
    assert not gate.is_set()
    gate.set()
    seen += [e.type for e in stream]
    assert seen == ["open", "content", "tool_call", "heartbeat", "done"]
    request = tiny.requests[-1]
    assert request["headers"]["Authorization"] == "token secret-token"
    assert request["headers"]["Accept"] == "text/event-stream"
    assert json.loads(request["body"]) == {"message": "hi"}


def test_a_refused_request_raises_the_servers_error_before_on_open(
    tiny: TinyServer, client: CopilotClient
) -> None:
    tiny.routes[("POST", STREAM)] = json_route(
        409,
        {"error": {"message": "Project 'x' is closed: open it first.", "type": "ProjectNotOpened"}},
    )
    opened: list[bool] = []
    with pytest.raises(ApiError) as caught:
        list(
            client.stream(
                "projects", "p1", "chat", "stream", json={}, on_open=lambda: opened.append(True)
            )
        )
    assert (caught.value.status, caught.value.type) == (409, "ProjectNotOpened")
    assert str(caught.value) == "Project 'x' is closed: open it first."
    assert opened == []


def test_a_404_without_the_copilots_json_means_the_extension_is_not_loaded(
    client: CopilotClient,
) -> None:
    with pytest.raises(ExtensionNotLoaded) as caught:
        client.get("status")
    assert ENABLE_HINT in str(caught.value)
    assert "/a%40b/copilot/status" in str(caught.value)


def test_the_copilots_own_404_stays_an_api_error(tiny: TinyServer, client: CopilotClient) -> None:
    tiny.routes[("GET", "/a%40b/copilot/projects/p1/chat/sessions/s9/history")] = json_route(
        404, {"error": {"message": "Chat session 's9' not found.", "type": "SessionNotFound"}}
    )
    with pytest.raises(ApiError) as caught:
        client.get("projects", "p1", "chat", "sessions", "s9", "history")
    assert caught.value.type == "SessionNotFound"


def test_a_refused_token_says_how_to_connect(tiny: TinyServer, client: CopilotClient) -> None:
    tiny.routes[("GET", "/a%40b/copilot/llm-config")] = lambda h, _b: send(
        h, 403, "Forbidden", "text/plain"
    )
    with pytest.raises(NotAuthorized, match="--token"):
        client.get("llm-config")


def test_bad_input_keeps_the_field_and_rule(tiny: TinyServer, client: CopilotClient) -> None:
    tiny.routes[("PUT", "/a%40b/copilot/llm-config")] = json_route(
        400,
        {
            "error": {
                "message": "temperature: must be <= 2",
                "type": "ValidationError",
                "field": "temperature",
                "rule": "must be <= 2",
            }
        },
    )
    with pytest.raises(ApiError) as caught:
        client.put("llm-config", json={"temperature": 5})
    assert caught.value.details == {"field": "temperature", "rule": "must be <= 2"}


def test_a_server_that_is_gone_is_reported_as_unreachable() -> None:
    server = TinyServer().start()
    url = server.url
    server.stop()
    with CopilotClient(explicit_server(url)) as http, pytest.raises(ServerUnreachable) as caught:
        http.get("status")
    assert url in str(caught.value)


def test_path_parts_are_quoted() -> None:
    assert (
        CopilotClient.path("projects", "a b/c", "topology") == "copilot/projects/a%20b%2Fc/topology"
    )


# -- turns --------------------------------------------------------------------------------


def ev(kind: str, **fields: Any) -> Any:
    return parse_event({"type": kind, "session_id": "s1", **fields})


def per_device(*entries: tuple[str, str, str]) -> str:
    return json.dumps(
        [
            {"device_name": name, "status": status, "output": output, "commands": ["show ip"]}
            for name, status, output in entries
        ]
    )


def test_a_turn_is_built_from_its_events() -> None:
    """Given a turn's events (two assistant messages, two tool calls whose arguments
    stream, progress, per-device results, a heartbeat); when they are recorded; then the
    Turn has the final text, each call with parsed arguments and outputs, the latest
    result of each device, and a readable repr."""
    recorder = TurnRecorder("Why can't PC1 ping PC2?", "s1", "p1")
    events = [
        ev("content", content="Let me ", message_id="m1"),
        ev("content", content="check.", message_id="m1"),
        ev("tool_call", tool_call={"id": "c1", "function": {"name": "run_show_commands"}}),
        ev(
            "tool_call",
            tool_call={
                "id": "c1",
                "function": {"name": "run_show_commands", "arguments": '{"devices": [{"dev'},
            },
        ),
        ev(
            "tool_call",
            tool_call={
                "id": "c1",
                "function": {
                    "name": "run_show_commands",
                    "arguments": '{"devices": [{"device": "PC1", "commands": ["show ip"]}]}',
                    "complete": True,
                },
            },
        ),
        ev("tool_start", tool_name="run_show_commands", tool_call_id="c1"),
        ev("progress", tool_name="run_show_commands", tool_call_id="c1", message="PC1: success"),
        ev("heartbeat"),
        ev(
            "tool_end",
            tool_name="run_show_commands",
            tool_call_id="c1",
            tool_output=per_device(
                ("PC1", "success", "IP/MASK : 10.0.0.1/24"), ("PC2", "failed", "")
            ),
        ),
        ev(
            "tool_call",
            tool_call={
                "id": "c2",
                "function": {"name": "get_topology", "arguments": "{}", "complete": True},
            },
        ),
        ev("tool_start", tool_name="get_topology", tool_call_id="c2"),
        ev(
            "tool_end",
            tool_name="get_topology",
            tool_call_id="c2",
            tool_output=json.dumps({"project": "lab", "nodes": []}),
        ),
        ev(
            "tool_end",
            tool_name="run_show_commands",
            tool_call_id="c3",
            tool_output=per_device(("PC1", "success", "IP/MASK : 10.0.0.9/24")),
        ),
        ev("content", content="PC1 is 10.0.0.9/24.", message_id="m2"),
        ev("done"),
    ]
    for item in events:
        recorder.add(item)
    turn = recorder.finish()

    assert turn.status == "done" and turn.ok
    assert turn.text == "PC1 is 10.0.0.9/24."
    assert turn.messages == ["Let me check.", "PC1 is 10.0.0.9/24."]
    assert [call.name for call in turn.tool_calls] == [
        "run_show_commands",
        "get_topology",
        "run_show_commands",
    ]
    first = turn.tool_calls[0]
    assert first.arguments == {"devices": [{"device": "PC1", "commands": ["show ip"]}]}
    assert first.progress == ["PC1: success"]
    assert first.status == "partial", "one device ok, one failed: as the card's badge says"
    assert turn.tool_calls[1].output == {"project": "lab", "nodes": []}
    assert turn.tool_calls[1].status is None
    assert turn.tool_results["PC1"].output == "IP/MASK : 10.0.0.9/24"
    assert turn.tool_results["PC2"].status == "failed"
    assert str(turn.tool_results["PC1"]) == "IP/MASK : 10.0.0.9/24"
    assert len(turn.events) == len(events) - 1
    assert turn.statistics.first_event is not None
    text = repr(turn)
    assert text.startswith("Turn done · session s1")
    assert "tool_results: PC1, PC2" in text
    assert "run_show_commands on PC1, PC2 -> partial" in text


@pytest.mark.parametrize(
    ("tail", "aborted", "status"),
    [
        (["error", "done"], False, "error"),
        (["abort", "done"], False, "aborted"),
        (["error", "abort", "done"], False, "aborted"),
        ([], False, "incomplete"),
        (["content"], True, "aborted"),
    ],
)
def test_a_turns_status_follows_its_last_events(
    tail: list[str], aborted: bool, status: str
) -> None:
    recorder = TurnRecorder("hi", "s1")
    fields = {"error": {"error": "model failed"}, "content": {"content": "x"}}
    for kind in tail:
        recorder.add(ev(kind, **fields.get(kind, {})))
    turn = recorder.finish(aborted=aborted)
    assert turn.status == status
    assert turn.errors == (["model failed"] if "error" in tail else [])


def test_a_direct_run_without_call_ids_is_one_call() -> None:
    recorder = TurnRecorder("run PC1: show ip", "r1")
    recorder.add(ev("tool_start", tool_name="run_show_commands", tool_call_id="direct_1"))
    recorder.add(
        ev(
            "tool_end",
            tool_name="run_show_commands",
            tool_call_id="direct_1",
            tool_output=per_device(("PC1", "success", "ok")),
        )
    )
    recorder.add(ev("done"))
    turn = recorder.finish()
    assert len(turn.tool_calls) == 1
    assert turn.tool_results["PC1"].tool == "run_show_commands"
    assert turn.tool_calls[0].arguments is None
