"""Model settings, the ChatOpenAI factory and error messages, against the scripted server."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from pydantic import ValidationError

from jupyter_gns3_copilot.agent.models import (
    DEFAULT_CONTEXT_LIMIT,
    ModelCallError,
    ModelSettings,
    default_context_limit,
    describe_model_error,
    make_chat_model,
    shared_chat_model,
    tiktoken_model_name,
)
from jupyter_gns3_copilot.testing.scripted_llm import (
    DEFAULT_TEST_API_KEY,
    ScriptedLLM,
    error,
    html_page,
    text,
    tool_call,
)

SECRET = "sk-proj-very-secret-0123456789"


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("gpt-4o", 128),
        ("gpt-4o-mini-2024-07-18", 128),
        ("openai/gpt-4.1-mini", 1047),
        ("gpt-5-mini", 272),
        ("o3-mini", 200),
        ("deepseek-chat", 64),
        ("Qwen/Qwen2.5-72B-Instruct", 32),
        ("llama3.1:8b", 128),
        ("meta-llama/Llama-3.3-70B-Instruct", 128),
        ("llama3:8b", 8),
        ("mistral-large-latest", 128),
        ("mixtral-8x7b", 32),
        ("anthropic/claude-sonnet-4", 200),
        ("my-finetune", DEFAULT_CONTEXT_LIMIT),
    ],
)
def test_context_limit_defaults_by_family(model: str, limit: int) -> None:
    assert default_context_limit(model) == limit
    assert ModelSettings(model=model).context_limit == limit
    assert ModelSettings(model=model, context_limit=16).context_limit == 16


def test_settings_validation_and_defaults(caplog: pytest.LogCaptureFixture) -> None:
    settings = ModelSettings(model="gpt-4o", base_url="http://gw.example:4000/v1/")
    assert settings.base_url == "http://gw.example:4000/v1"
    assert settings.context_strategy == "balanced"
    assert settings.temperature is None

    with caplog.at_level(logging.WARNING):
        fallback = ModelSettings(model="gpt-4o", context_strategy="greedy")
    assert fallback.context_strategy == "balanced"
    assert "Unknown context_strategy 'greedy'" in caplog.text
    assert ModelSettings(model="x", context_strategy="aggressive").context_strategy == "aggressive"

    for bad in ({"temperature": 2.5}, {"context_limit": 0}, {"base_url": "api.openai.com"}):
        with pytest.raises(ValidationError):
            ModelSettings(model="gpt-4o", **bad)


def test_api_key_never_shows() -> None:
    settings = ModelSettings(model="gpt-4o", api_key=SECRET)
    model = make_chat_model(settings)
    assert SECRET not in repr(settings)
    assert SECRET not in str(settings.model_dump())
    assert SECRET not in repr(model)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", None),
        ("o3-mini", None),
        ("openai/gpt-4o", "gpt-4o"),
        ("GPT-4.1", "gpt-4.1"),
        ("qwen2.5:7b", "gpt-4"),
    ],
)
def test_tiktoken_model_name(model: str, expected: str | None) -> None:
    assert tiktoken_model_name(model) == expected
    assert make_chat_model(ModelSettings(model=model)).tiktoken_model_name == expected


def settings_for(server: ScriptedLLM, **fields: Any) -> ModelSettings:
    values = {
        "base_url": server.base_url,
        "api_key": SECRET,
        "model": "qwen2.5:7b",
        "max_retries": 0,
        **fields,
    }
    return ModelSettings.model_validate(values)


async def test_streamed_text_with_usage_temperature_and_key(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(
        text("PC1 answers pings.", chunks=4, usage={"prompt_tokens": 50, "completion_tokens": 6})
    )
    model = make_chat_model(settings_for(scripted_llm, temperature=0.3))

    chunks = [chunk async for chunk in model.astream("Can PC1 ping PC2?")]

    assert [c.content for c in chunks if c.content] == ["PC1 a", "nswer", "s pi", "ngs."]
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage == [
        {
            "input_tokens": 50,
            "output_tokens": 6,
            "total_tokens": 56,
            "input_token_details": {},
            "output_token_details": {},
        }
    ]
    (request,) = scripted_llm.requests
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["temperature"] == 0.3
    assert request.body["model"] == "qwen2.5:7b"
    assert request.headers["authorization"] == f"Bearer {SECRET}"


async def test_temperature_override_reaches_the_request(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("a"), text("b"))
    settings = settings_for(scripted_llm, temperature=0.3)
    await make_chat_model(settings, temperature=1.2).ainvoke("hi")
    await make_chat_model(settings.model_copy(update={"temperature": None})).ainvoke("hi")
    overridden, unset = scripted_llm.requests
    assert overridden.body["temperature"] == 1.2
    assert "temperature" not in unset.body
    with pytest.raises(ValueError, match=r"between 0\.0 and 2\.0"):
        make_chat_model(settings, temperature=2.1)


async def test_streamed_tool_call_arrives_in_chunks(scripted_llm: ScriptedLLM) -> None:
    arguments = {"devices": [{"device": "PC1", "commands": ["show ip", "ping 10.0.0.2"]}]}
    scripted_llm.add(tool_call("run_vpcs_commands", arguments, id="call_7", argument_chunks=4))
    model = make_chat_model(settings_for(scripted_llm))

    merged: AIMessageChunk | None = None
    fragments = []
    async for chunk in model.astream("Check PC1"):
        assert isinstance(chunk, AIMessageChunk)
        fragments.extend(chunk.tool_call_chunks)
        merged = chunk if merged is None else merged + chunk

    assert [f["name"] for f in fragments] == ["run_vpcs_commands", None, None, None, None]
    assert [f["id"] for f in fragments] == ["call_7", None, None, None, None]
    assert fragments[0]["args"] == ""
    assert merged is not None
    assert merged.tool_calls == [
        {"name": "run_vpcs_commands", "args": arguments, "id": "call_7", "type": "tool_call"}
    ]
    assert merged.response_metadata["finish_reason"] == "tool_calls"
    assert merged.usage_metadata is not None


async def test_non_streaming_model(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("Short title", usage={"prompt_tokens": 20, "completion_tokens": 2}))
    model = make_chat_model(settings_for(scripted_llm), streaming=False)
    reply = await model.ainvoke("Name this chat")
    assert reply.content == "Short title"
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["total_tokens"] == 22
    assert scripted_llm.requests[0].body["stream"] is False


async def test_rate_limit_is_retried(scripted_llm: ScriptedLLM) -> None:
    fast_retry = {"retry-after-ms": "1"}
    scripted_llm.add(error(429, headers=fast_retry), error(429, headers=fast_retry), text("ok"))
    reply = await make_chat_model(settings_for(scripted_llm, max_retries=2)).ainvoke("hi")
    assert reply.content == "ok"
    assert [r.status for r in scripted_llm.requests] == [429, 429, 200]


ERROR_CASES = [
    pytest.param(
        error(401, f"Incorrect API key provided: {SECRET}."),
        "auth",
        ["rejected the API key (HTTP 401)", "OPENAI_API_KEY", "llm_api_key"],
        id="401",
    ),
    pytest.param(
        error(429),
        "rate_limit",
        ["limiting the request rate (HTTP 429", "still after 1 retry"],
        id="429",
    ),
    pytest.param(
        error(429, "You exceeded your current quota", code="insufficient_quota"),
        "quota",
        ["no quota left"],
        id="429-quota",
    ),
    pytest.param(
        error(500, f"upstream crashed while using key {SECRET}"),
        "server_error",
        ["failed (HTTP 500: upstream crashed", "[API key hidden]"],
        id="500",
    ),
    pytest.param(
        error(404),
        "not_found",
        ["Model 'qwen2.5:7b' was not found", "llm_model", "OPENAI_BASE_URL"],
        id="404",
    ),
    pytest.param(
        error(
            400,
            "This model's maximum context length is 32768 tokens",
            code="context_length_exceeded",
        ),
        "context_length",
        ["too long for model 'qwen2.5:7b'", "c.GNS3Copilot.context_limit"],
        id="400-context",
    ),
    pytest.param(
        html_page(502),
        "html_page",
        ["web page (HTTP 502)", "check the base URL", "and the API key", "OPENAI_BASE_URL"],
        id="html-502",
    ),
    pytest.param(
        html_page(200, "<!DOCTYPE html><title>Sign in</title>"),
        "empty_reply",
        ["empty answer", "check the base URL", "and the API key"],
        id="html-200-streamed",
    ),
]


@pytest.mark.parametrize(("reply", "kind", "phrases"), ERROR_CASES)
async def test_errors_become_clear_messages(
    scripted_llm: ScriptedLLM, reply: Any, kind: str, phrases: list[str]
) -> None:
    retried = 1 if kind == "rate_limit" else 0
    scripted_llm.add(*[reply] * (retried + 1))
    if retried:
        reply.headers["retry-after-ms"] = "1"
    settings = settings_for(scripted_llm, max_retries=retried)
    with pytest.raises(Exception) as raised:
        await make_chat_model(settings).ainvoke("hi")

    with_settings = describe_model_error(raised.value, settings)
    without_settings = describe_model_error(raised.value)
    assert isinstance(with_settings, ModelCallError)
    assert with_settings.kind == without_settings.kind == kind
    for phrase in phrases:
        assert phrase in str(with_settings)
    if kind != "context_length":
        assert scripted_llm.base_url in str(with_settings)
    for described in (with_settings, without_settings):
        assert SECRET not in str(described)
        assert SECRET not in repr(described)


async def test_html_page_with_status_200_without_streaming(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(html_page(200, "<html><body>Welcome to nginx!</body></html>"))
    settings = settings_for(scripted_llm)
    with pytest.raises(ValueError) as raised:
        await make_chat_model(settings, streaming=False).ainvoke("hi")
    described = describe_model_error(raised.value, settings)
    assert described.kind == "html_page"
    assert "web page instead of an API response: check the base URL" in str(described)


async def test_refused_connection_names_the_url_and_setting() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = ModelSettings(
        base_url=f"http://127.0.0.1:{port}/v1", api_key=SECRET, model="gpt-4o", max_retries=0
    )
    with pytest.raises(Exception) as raised:
        await make_chat_model(settings).ainvoke("hi")
    described = describe_model_error(raised.value, settings)
    assert described.kind == "unreachable"
    assert str(described) == (
        f"Cannot reach the model endpoint at http://127.0.0.1:{port}/v1 (connection refused). "
        "Check that the model server is running and that the base URL is right "
        "(OPENAI_BASE_URL or c.GNS3Copilot.llm_base_url)."
    )
    assert describe_model_error(raised.value).kind == "unreachable"


async def test_slow_endpoint_times_out(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("late", first_byte_delay=5))
    settings = settings_for(scripted_llm, timeout=0.2)
    with pytest.raises(Exception) as raised:
        await make_chat_model(settings).ainvoke("hi")
    described = describe_model_error(raised.value, settings)
    assert described.kind == "timeout"
    assert "did not answer within 0.2 s" in str(described)


async def test_connection_lost_midway(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(text("z" * 60, chunks=60, chunk_delay=0.05))
    settings = settings_for(scripted_llm)
    received = 0
    with pytest.raises(Exception) as raised:
        async for _ in make_chat_model(settings).astream("hi"):
            received += 1
            if received == 3:
                scripted_llm.stop()
    described = describe_model_error(raised.value, settings)
    assert described.kind == "connection_lost"
    assert "broke during the answer" in str(described)


def test_no_key_is_sent_as_a_placeholder_and_explained(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(error(401))
    settings = ModelSettings(base_url=scripted_llm.base_url, model="gpt-4o", max_retries=0)
    with pytest.raises(Exception) as raised:
        make_chat_model(settings).invoke("hi")
    assert scripted_llm.requests[0].headers["authorization"] == "Bearer no-api-key-set"
    assert "No API key is set" in str(describe_model_error(raised.value, settings))


def test_fixture_settings_point_at_the_fixture_server(
    scripted_llm: ScriptedLLM, scripted_model_settings: ModelSettings
) -> None:
    scripted_llm.add(text("hello"))
    assert make_chat_model(scripted_model_settings).invoke("hi").content == "hello"
    auth = scripted_llm.requests[0].headers["authorization"]
    assert auth == f"Bearer {DEFAULT_TEST_API_KEY}"


def test_a_base_url_reused_in_a_new_event_loop_still_works() -> None:
    """Regression: langchain-openai's process-wide pool kept connections of a closed loop,
    so a second loop reaching the same base URL (a reused port) got "Event loop is closed"."""
    with ScriptedLLM() as first:
        port = first.port
        first.add(text("first"))
        settings = settings_for(first)
        assert asyncio.run(make_chat_model(settings).ainvoke("hi")).content == "first"
    with ScriptedLLM(port=port) as second:
        second.add(text("second"))
        assert asyncio.run(make_chat_model(settings).ainvoke("hi")).content == "second"


def test_shared_chat_model_is_one_per_loop_and_arguments() -> None:
    settings = ModelSettings(model="gpt-4o", base_url="http://127.0.0.1:9/v1")

    async def models() -> tuple[object, ...]:
        return (
            shared_chat_model(settings),
            shared_chat_model(settings),
            shared_chat_model(settings, temperature=0.5),
            shared_chat_model(settings, streaming=False),
        )

    first = asyncio.run(models())
    assert first[0] is first[1]
    assert len({id(model) for model in first}) == 3
    assert asyncio.run(models())[0] is not first[0]
