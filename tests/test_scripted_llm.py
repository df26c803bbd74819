"""The scripted OpenAI-compatible server, read over real HTTP with httpx (raw SSE)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.testing.scripted_llm import (
    ScriptedLLM,
    ScriptError,
    ToolCall,
    broken_stream,
    error,
    html_page,
    load_script,
    text,
    tool_call,
    tool_calls,
)

USER = [{"role": "user", "content": "What is PC1's address?"}]


def chat(model: str = "scripted-model", **fields: Any) -> dict[str, Any]:
    return {"model": model, "messages": fields.pop("messages", USER), **fields}


def read_sse(server: ScriptedLLM, body: dict[str, Any]) -> tuple[list[Any], httpx.Response]:
    """POST a streaming request; the decoded `data:` payloads (the last one raw) in order."""
    events: list[Any] = []
    with (
        httpx.Client(base_url=server.base_url, timeout=10) as client,
        client.stream("POST", "/chat/completions", json={**body, "stream": True}) as response,
    ):
        assert response.status_code == 200
        raw = "".join(response.iter_text())
    for block in raw.split("\n\n"):
        if block:
            assert block.startswith("data: ")
            data = block.removeprefix("data: ")
            events.append(data if data == "[DONE]" else json.loads(data))
    return events, response


def deltas(events: list[Any]) -> list[dict[str, Any]]:
    return [
        event["choices"][0]["delta"] for event in events if event != "[DONE]" and event["choices"]
    ]


def test_stream_sends_chunks_in_the_api_order(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(
        tool_calls(
            ToolCall(name="get_topology", id="call_a", chunks=1),
            ToolCall(
                name="run_show_commands",
                arguments={"devices": [{"device": "PC1", "commands": ["show ip"]}]},
                id="call_b",
                chunks=3,
            ),
            content=["Let me ", "check."],
            usage={"prompt_tokens": 120, "completion_tokens": 30},
        )
    )
    events, response = read_sse(scripted_llm, chat(stream_options={"include_usage": True}))

    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    arguments = '{"devices":[{"device":"PC1","commands":["show ip"]}]}'
    assert deltas(events) == [
        {"role": "assistant", "content": ""},
        {"content": "Let me "},
        {"content": "check."},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_topology", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "run_show_commands", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 1, "function": {"arguments": arguments[:18]}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": arguments[18:36]}}]},
        {"tool_calls": [{"index": 1, "function": {"arguments": arguments[36:]}}]},
        {},
    ]
    finish = [event["choices"][0]["finish_reason"] for event in events[:-2]]
    assert finish == [None] * 9 + ["tool_calls"]
    assert events[-2]["choices"] == []
    assert events[-2]["usage"] == {
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "total_tokens": 150,
    }
    assert events[-1] == "[DONE]"
    assert {event["id"] for event in events[:-1]} == {events[0]["id"]}
    assert all(event["object"] == "chat.completion.chunk" for event in events[:-1])


def test_text_is_cut_into_the_requested_number_of_chunks(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("PC1 is 10.0.0.1/24", chunks=5))
    events, _ = read_sse(scripted_llm, chat())
    pieces = [delta["content"] for delta in deltas(events)[1:-1]]
    assert len(pieces) == 5
    assert "".join(pieces) == "PC1 is 10.0.0.1/24"
    assert events[-2]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("stream_options", [None, {"include_usage": False}])
def test_no_usage_chunk_unless_asked(scripted_llm: ScriptedLLM, stream_options: Any) -> None:
    scripted_llm.add(text("hi", usage={"prompt_tokens": 5, "completion_tokens": 1}))
    body = chat() if stream_options is None else chat(stream_options=stream_options)
    events, _ = read_sse(scripted_llm, body)
    assert all(event == "[DONE]" or event["choices"] for event in events)
    assert not any("usage" in event for event in events if event != "[DONE]")


def test_non_streaming_request_gets_one_completion_with_usage(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.add(
        tool_call("start_nodes", {"nodes": ["*"]}, id="call_1", argument_chunks=4),
        text("Done.", usage={"prompt_tokens": 40, "completion_tokens": 2}),
    )
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        first = client.post("/chat/completions", json=chat()).json()
        second = client.post("/chat/completions", json=chat(stream=False)).json()

    assert first["object"] == "chat.completion"
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert first["choices"][0]["message"]["content"] is None
    assert first["choices"][0]["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "start_nodes", "arguments": '{"nodes":["*"]}'},
        }
    ]
    assert first["usage"]["total_tokens"] > 0
    assert second["choices"][0]["message"]["content"] == "Done."
    assert second["usage"] == {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42}


def assistant_calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "get_topology", "arguments": "{}"}}
            for i in ids
        ],
    }


def tool_result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": '{"status": "ok"}'}


@pytest.mark.parametrize(
    ("history", "complaint"),
    [
        ([assistant_calls("call_a", "call_b"), tool_result("call_a")], "call_b"),
        ([assistant_calls("call_a")], "call_a"),
        (
            [assistant_calls("call_a"), USER[0], tool_result("call_a")],
            "did not have response messages: call_a",
        ),
        ([tool_result("call_x")], "must be a response to a preceeding message"),
        ([assistant_calls("call_a"), tool_result("call_a"), tool_result("call_a2")], "preceeding"),
    ],
)
def test_unanswered_or_stray_tool_calls_get_400(
    scripted_llm: ScriptedLLM, history: list[dict[str, Any]], complaint: str
) -> None:
    scripted_llm.add(text("fine"))
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        rejected = client.post("/chat/completions", json=chat(messages=[*USER, *history]))
        assert rejected.status_code == 400
        body = rejected.json()["error"]
        assert complaint in body["message"]
        assert body["type"] == "invalid_request_error"
        assert set(body) == {"message", "type", "param", "code"}

        history = [*USER, assistant_calls("call_a", "call_b")]
        history += [tool_result("call_b"), tool_result("call_a"), USER[0]]
        accepted = client.post("/chat/completions", json=chat(messages=history))
    assert accepted.status_code == 200
    assert accepted.json()["choices"][0]["message"]["content"] == "fine"
    assert [r.reply_index for r in scripted_llm.requests] == [None, 0]


@pytest.mark.parametrize(
    "body",
    [
        {"messages": USER},
        {"model": "m", "messages": []},
        chat(temperature=2.5),
        chat(stream_options={"include_usage": True}),
    ],
)
def test_requests_the_real_api_refuses_get_400(scripted_llm: ScriptedLLM, body: Any) -> None:
    scripted_llm.add(text("unused"))
    response = httpx.post(f"{scripted_llm.base_url}/chat/completions", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert scripted_llm.remaining == 1


def test_error_reply_has_an_openai_body_and_headers(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(error(429, headers={"retry-after-ms": "10"}), error(503, "overloaded"))
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        limited = client.post("/chat/completions", json=chat(stream=True))
        failed = client.post("/chat/completions", json=chat())
    assert limited.status_code == 429
    assert limited.headers["retry-after-ms"] == "10"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert failed.status_code == 503
    assert failed.json() == {
        "error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}
    }


def test_html_page_reply(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(html_page(), html_page(200, "<!DOCTYPE html><p>Sign in</p>"))
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        gateway = client.post("/chat/completions", json=chat(stream=True))
        login = client.post("/chat/completions", json=chat())
    assert gateway.status_code == 502
    assert gateway.headers["content-type"].startswith("text/html")
    assert "502 Bad Gateway" in gateway.text
    assert login.status_code == 200
    assert login.text == "<!DOCTYPE html><p>Sign in</p>"


def test_broken_stream_ends_with_a_gateway_error_event(scripted_llm: ScriptedLLM) -> None:
    """As LiteLLM 1.108 does when its upstream dies mid-answer: the content so far, then
    `data: {"error": {...}}` with the status as a string, and no finish chunk or [DONE]."""
    scripted_llm.add(
        broken_stream(["Hello ", "there "], chunks=2),
        broken_stream("x", message="upstream overloaded", code="503"),
    )
    events, _ = read_sse(scripted_llm, chat(stream_options={"include_usage": True}))
    assert deltas(events[:-1]) == [
        {"role": "assistant", "content": ""},
        {"content": "Hello "},
        {"content": "there "},
    ]
    assert events[-1]["error"]["code"] == "500"
    assert events[-1]["error"]["type"] is None
    assert "peer closed connection" in events[-1]["error"]["message"]
    assert "[DONE]" not in events
    # A request that does not stream gets the error as an HTTP status.
    failed = httpx.post(f"{scripted_llm.base_url}/chat/completions", json=chat())
    assert failed.status_code == 503
    assert failed.json()["error"]["message"] == "upstream overloaded"


def test_empty_answer_is_a_finish_without_content(scripted_llm: ScriptedLLM) -> None:
    """What a gateway makes of an upstream that sent a web page with HTTP 200."""
    scripted_llm.add(text(""))
    events, _ = read_sse(scripted_llm, chat())
    assert deltas(events) == [{"role": "assistant", "content": ""}, {}]
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert events[-1] == "[DONE]"


def test_running_out_of_replies_is_a_clear_500(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("only one"))
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        assert client.post("/chat/completions", json=chat()).status_code == 200
        exhausted = client.post("/chat/completions", json=chat())
    assert exhausted.status_code == 500
    assert exhausted.json()["error"]["message"] == "scripted model: no reply left for request #2"


def test_when_conditions_pick_the_reply(scripted_llm: ScriptedLLM) -> None:
    tools = [{"type": "function", "function": {"name": "get_topology", "parameters": {}}}]
    scripted_llm.add(
        text("Main answer", when={"tools": True}),
        text("Lab check", when={"tools": False, "last_message": r"(?i)title"}),
        text("Ping reply", when={"any_message": "ping"}),
    )
    title_request = chat(messages=[{"role": "user", "content": "Write a title for: hi"}])
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        title = client.post("/chat/completions", json=title_request).json()
        main = client.post("/chat/completions", json=chat(tools=tools)).json()
        unmatched = client.post("/chat/completions", json=chat())
        ping = chat(messages=[{"role": "user", "content": "ping PC2"}])
        pinged = client.post("/chat/completions", json=ping).json()
    assert title["choices"][0]["message"]["content"] == "Lab check"
    assert main["choices"][0]["message"]["content"] == "Main answer"
    assert unmatched.status_code == 500
    assert "1 replies are waiting" in unmatched.json()["error"]["message"]
    assert pinged["choices"][0]["message"]["content"] == "Ping reply"
    assert [r.reply_index for r in scripted_llm.requests] == [1, 0, None, 2]


def test_every_request_is_recorded_with_its_headers(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("a"), text("b"))
    headers = {"Authorization": "Bearer sk-travels-123"}
    with httpx.Client(base_url=scripted_llm.base_url, headers=headers) as client:
        client.post("/chat/completions", json=chat(temperature=0.3))
        client.get("/models")
        client.post("/chat/completions", json=chat(stream=True))

    first, models, second = scripted_llm.requests
    assert [r.number for r in scripted_llm.requests] == [1, 2, 3]
    assert first.body["temperature"] == 0.3
    assert first.messages == USER
    assert first.headers["authorization"] == "Bearer sk-travels-123"
    assert "sk-travels-123" not in repr(scripted_llm.requests)
    assert (models.method, models.path, models.status) == ("GET", "/v1/models", 200)
    assert second.body["stream"] is True
    assert scripted_llm.chat_requests == [first, second]

    scripted_llm.reset([text("c")])
    assert scripted_llm.requests == []
    assert scripted_llm.remaining == 1


def test_models_listing_and_unknown_paths(scripted_llm: ScriptedLLM) -> None:
    with httpx.Client(base_url=scripted_llm.base_url) as client:
        listing = client.get("/models").json()
        missing = client.post("/completions", json=chat())
    assert [model["id"] for model in listing["data"]] == ["scripted-model"]
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == "Invalid URL (POST /v1/completions)"


def test_api_key_can_be_required(make_scripted_llm: Any) -> None:
    server = make_scripted_llm([text("welcome")], api_key="sk-right")
    url = f"{server.base_url}/chat/completions"
    wrong = httpx.post(url, json=chat(), headers={"Authorization": "Bearer sk-wrong"})
    right = httpx.post(url, json=chat(), headers={"Authorization": "Bearer sk-right"})
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    assert "sk-right" not in wrong.text
    assert right.status_code == 200
    assert server.env() == {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-right"}


def test_client_leaving_midway_is_recorded(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("x" * 50, chunks=50, chunk_delay=0.02))
    with (
        httpx.Client(base_url=scripted_llm.base_url) as client,
        client.stream("POST", "/chat/completions", json=chat(stream=True)) as response,
    ):
        next(response.iter_lines())
    deadline = time.monotonic() + 5
    while not scripted_llm.requests[0].disconnected and time.monotonic() < deadline:
        time.sleep(0.01)
    assert scripted_llm.requests[0].disconnected


def test_stop_ends_an_answer_in_progress() -> None:
    server = ScriptedLLM([text("y" * 100, chunks=100, chunk_delay=0.05)]).start()
    with (
        httpx.Client(base_url=server.base_url) as client,
        client.stream("POST", "/chat/completions", json=chat(stream=True)) as response,
    ):
        lines = response.iter_lines()
        next(lines)
        server.stop()
        with pytest.raises(httpx.RemoteProtocolError):
            list(lines)
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url


def test_json_script_file(tmp_path: Path, make_scripted_llm: Any) -> None:
    script = {
        "description": "PC1 ping check",
        "replies": [
            {
                "tool_calls": [
                    {"name": "run_vpcs_commands", "arguments": {"devices": []}, "id": "call_1"}
                ],
                "usage": {"prompt_tokens": 812, "completion_tokens": 31},
            },
            {"type": "completion", "content": "The ping succeeded.", "chunks": 4},
            {"when": {"tools": False}, "content": "PC1 ping check"},
            {"type": "error", "status": 429, "headers": {"retry-after-ms": "10"}},
            {"type": "html", "status": 404},
            {"content": "Half", "stream_error": {"message": "upstream died", "code": "502"}},
        ],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    assert [reply.type for reply in load_script(path)] == [
        "completion",
        "completion",
        "completion",
        "error",
        "html",
        "completion",
    ]
    assert load_script(path)[-1].stream_error.code == "502"  # type: ignore[union-attr]
    path.with_name("bare.json").write_text(json.dumps(script["replies"]))
    assert len(load_script(path.with_name("bare.json"))) == 6

    server = make_scripted_llm(path)
    events, _ = read_sse(server, chat(stream_options={"include_usage": True}))
    assert deltas(events)[1]["tool_calls"][0]["function"]["name"] == "run_vpcs_commands"
    assert events[-2]["usage"]["total_tokens"] == 843


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("{not json", "is not valid JSON"),
        ('[{"type": "error"}]', "status"),
        ('[{"content": "hi", "chunk": 3}]', "chunk"),
        ('[{"type": "video"}]', "video"),
    ],
)
def test_bad_script_files_are_explained(tmp_path: Path, content: str, complaint: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ScriptError, match=complaint) as raised:
        load_script(path)
    assert str(path) in str(raised.value)
    with pytest.raises(ScriptError, match="Cannot read"):
        load_script(tmp_path / "missing.json")


def test_restart_listens_on_the_same_port() -> None:
    server = ScriptedLLM([text("one"), text("two")]).start()
    try:
        base_url = server.base_url
        server.stop()
        server.start()
        assert server.base_url == base_url
        reply = httpx.post(f"{base_url}/chat/completions", json=chat()).json()
        assert reply["choices"][0]["message"]["content"] == "one"
    finally:
        server.stop()


def test_command_line_serves_a_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"content": "from the command line"}]))
    command = [sys.executable, "-m", "jupyter_gns3_copilot.testing.scripted_llm", str(path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        reply = httpx.post(f"{base_url}/chat/completions", json=chat(), timeout=10).json()
        assert reply["choices"][0]["message"]["content"] == "from the command line"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0
    assert "request #1 POST /v1/chat/completions -> HTTP 200, reply 0" in stderr
