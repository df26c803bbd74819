"""`agent.completions.DirectCompletions`: the copilot's model client sends streamed calls
itself (and other calls through the SDK without its per-message walk), and the endpoint
receives exactly the body a plain `ChatOpenAI` sends. The endpoint is the scripted model
server (a TEST DOUBLE of the OpenAI API, a real HTTP server) recording each request's
JSON body.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from support.tiny_server import TinyServer, sse_route

from jupyter_gns3_copilot.agent.completions import DirectCompletions
from jupyter_gns3_copilot.agent.llm_access import TURN_HEADER, ModelSettings, make_chat_model
from jupyter_gns3_copilot.testing.scripted_llm import DEFAULT_TEST_API_KEY, ScriptedLLM, text

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run_show_commands",
            "description": "Run show commands.",
            "parameters": {"type": "object", "properties": {"devices": {"type": "array"}}},
        },
    }
]
HISTORY = [
    SystemMessage("You are a copilot. Lab: PC1, PC2."),
    HumanMessage("Show PC1's address"),
    AIMessage(
        "Checking ",
        tool_calls=[
            {
                "name": "run_show_commands",
                "args": {"devices": [{"device": "PC1", "commands": ["show ip"]}]},
                "id": "call_1",
                "type": "tool_call",
            }
        ],
    ),
    ToolMessage('{"PC1": "IP/MASK : 0.0.0.0/0"}', tool_call_id="call_1"),
    AIMessage("PC1 has no address."),
    HumanMessage([{"type": "text", "text": "And PC2? "}, {"type": "text", "text": "Ünïcode too."}]),
]


def settings(server: ScriptedLLM) -> ModelSettings:
    return ModelSettings(
        base_url=server.base_url, api_key=DEFAULT_TEST_API_KEY, model="gpt-4o", max_retries=0
    )


def plain_model(server: ScriptedLLM, *, streaming: bool) -> ChatOpenAI:
    """The `ChatOpenAI` `make_chat_model` builds, with the SDK's own client."""
    model = make_chat_model(settings(server), streaming=streaming)
    assert isinstance(model.async_client, DirectCompletions)
    model.async_client = model.root_async_client.chat.completions
    return model


async def body_sent(server: ScriptedLLM, model: ChatOpenAI, *, stream: bool) -> dict[str, Any]:
    server.add(text("ok"))
    seen = len(server.chat_requests)
    bound = model.bind(extra_body={"tools": TOOLS}, extra_headers={"X-Turn": "t1"})
    if stream:
        async for _ in bound.astream(HISTORY):
            pass
    else:
        await bound.ainvoke(HISTORY)
    (request,) = server.chat_requests[seen:]
    return request.body


async def test_streamed_request_body_is_the_sdks(scripted_llm: ScriptedLLM) -> None:
    """Given a history with a system prompt, tool calls, a tool result and content parts;
    when it is streamed through the copilot's model and through a plain one; then the
    endpoint receives the same JSON body, messages in order, tools from `extra_body`."""
    ours = await body_sent(scripted_llm, make_chat_model(settings(scripted_llm)), stream=True)
    plain = await body_sent(scripted_llm, plain_model(scripted_llm, streaming=True), stream=True)
    assert ours == plain
    assert [m["role"] for m in ours["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert ours["tools"] == TOOLS
    assert ours["stream"] is True


async def test_raw_response_request_body_is_the_sdks(scripted_llm: ScriptedLLM) -> None:
    """Given the non-streaming model (titles; LangChain calls `with_raw_response.create`);
    when the same history is sent; then the body is the plain model's too."""
    model = make_chat_model(settings(scripted_llm), streaming=False)
    ours = await body_sent(scripted_llm, model, stream=False)
    plain = await body_sent(scripted_llm, plain_model(scripted_llm, streaming=False), stream=False)
    assert ours == plain
    assert len(ours["messages"]) == len(HISTORY)


def test_other_attributes_are_the_wrapped_resources() -> None:
    """The wrapper is only in the way of `create`: everything else is openai's."""
    completions = openai.AsyncOpenAI(
        api_key="unused", base_url="http://127.0.0.1:9"
    ).chat.completions
    wrapped = DirectCompletions(completions, http=None, api_key="unused")
    assert wrapped.with_streaming_response.create == completions.with_streaming_response.create


def chunk(**fields: Any) -> str:
    """One chat.completion.chunk event's JSON."""
    return json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o", **fields})


async def test_a_streamed_answer_is_read_by_the_event_stream_rules() -> None:
    """Given an endpoint streaming with CRLF line ends, a comment, an event of another
    name, one event's data over two lines, and bytes after `[DONE]`; when the copilot's
    model is streamed twice; then both answers are the content and usage sent, the key and
    the turn header travel, and the second call reuses the first one's connection (the
    answer was read to its end)."""
    delta = chunk(choices=[{"index": 0, "delta": {"content": "world"}, "finish_reason": None}])
    events = [
        "data: "
        + chunk(choices=[{"index": 0, "delta": {"role": "assistant", "content": "Hello "}}])
        + "\r\n\r\n",
        ": keep-alive\r\n\r\n",
        'event: ping\r\ndata: {"note": "not a chunk"}\r\n\r\n',
        # One JSON object over two data lines (joined with a line feed).
        "data: " + delta.replace(", ", ",\r\ndata: ", 1) + "\r\n\r\n",
        "data: " + chunk(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]) + "\n\n",
        "data: "
        + chunk(choices=[], usage={"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9})
        + "\n\n",
        "data: [DONE]\n\n",
        'data: {"after": "done"}\n\n',
    ]
    server = TinyServer().start()
    try:
        server.routes[("POST", "/a%40b/v1/chat/completions")] = sse_route(events)
        model = make_chat_model(
            ModelSettings(base_url=f"{server.url}v1", api_key="sk-test-0123", model="gpt-4o")
        ).bind(extra_headers={TURN_HEADER: "turn-1"})
        for _ in range(2):
            reply = None
            async for piece in model.astream(HISTORY):
                reply = piece if reply is None else reply + piece
            assert reply is not None
            assert reply.content == "Hello world"
            assert reply.usage_metadata is not None
            assert reply.usage_metadata["total_tokens"] == 9
    finally:
        server.stop()
    first, second = server.requests
    assert first["headers"]["Authorization"] == "Bearer sk-test-0123"
    assert first["headers"][TURN_HEADER] == "turn-1"
    assert json.loads(first["body"])["stream"] is True
    assert second["client"] == first["client"]


async def test_a_proxy_set_in_the_environment_carries_the_model_calls(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Given a school network's proxy in the environment (`HTTP_PROXY`, here a TEST DOUBLE
    answering as the model); when the copilot's model is made and streamed; then the call
    goes through the proxy (the request names the model's URL in full), and langchain-openai
    logs no warning that the proxy is shadowed (its socket options, which would shadow it,
    are for clients of its own, and the copilot gives it its own)."""
    from langchain_openai.chat_models import _client_utils

    events = [
        "data: "
        + chunk(choices=[{"index": 0, "delta": {"role": "assistant", "content": "via proxy"}}])
        + "\n\n",
        "data: " + chunk(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]) + "\n\n",
        "data: [DONE]\n\n",
    ]
    proxy = TinyServer().start()
    try:
        proxy.routes[("POST", "http://models.invalid/v1/chat/completions")] = sse_route(events)
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        monkeypatch.setattr(_client_utils, "_proxy_env_warning_emitted", False)
        with caplog.at_level(logging.INFO, logger="langchain_openai"):
            model = make_chat_model(
                ModelSettings(base_url="http://models.invalid/v1", api_key="sk-x", model="gpt-4o")
            )
            reply = await model.ainvoke(HISTORY)
    finally:
        proxy.stop()
    assert reply.content == "via proxy"
    assert [r["path"] for r in proxy.requests] == ["http://models.invalid/v1/chat/completions"]
    assert not [r.getMessage() for r in caplog.records if "proxy" in r.getMessage()]
