"""`agent.completions.DirectCompletions`: the copilot's model client sends streamed calls
itself (and other calls through the SDK without its per-message walk), and the endpoint
receives exactly the body a plain `ChatOpenAI` sends. The endpoint is the scripted model
server (a TEST DOUBLE of the OpenAI API, a real HTTP server) recording each request's
JSON body.
"""

from __future__ import annotations

from typing import Any

import openai
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from jupyter_gns3_copilot.agent.completions import DirectCompletions
from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
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
