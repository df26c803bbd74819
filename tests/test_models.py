"""Model settings, the ChatOpenAI factory and error messages, against the scripted server."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import socket
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from pydantic import ValidationError

from jupyter_gns3_copilot.agent.llm_access import (
    DEFAULT_CONTEXT_LIMIT,
    ModelSettings,
    default_context_limit,
    make_chat_model,
    shared_chat_model,
    tiktoken_model_name,
)
from jupyter_gns3_copilot.agent.llm_errors import (
    ModelCallError,
    describe_model_error,
    empty_answer_error,
)
from jupyter_gns3_copilot.agent.llm_retries import ModelRetries, retry_after
from jupyter_gns3_copilot.testing.scripted_llm import (
    DEFAULT_TEST_API_KEY,
    Completion,
    ScriptedLLM,
    StreamError,
    broken_stream,
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


async def test_the_chat_model_makes_one_attempt_retries_are_the_callers(
    scripted_llm: ScriptedLLM,
) -> None:
    """The openai client's own retries are off (they would wait up to two minutes per
    retry and multiply behind a retrying gateway): `ModelRetries` decides instead."""
    fast_retry = {"retry-after-ms": "1"}
    scripted_llm.add(error(429, headers=fast_retry), text("ok"))
    with pytest.raises(Exception) as raised:
        await make_chat_model(settings_for(scripted_llm, max_retries=2)).ainvoke("hi")
    assert describe_model_error(raised.value).kind == "rate_limit"
    assert [r.status for r in scripted_llm.requests] == [429]


class FakeClock:
    """A monotonic clock the test moves by hand (no waiting in a unit test)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def failure(server: ScriptedLLM, reply: Any) -> BaseException:
    """The exception a real model call raises for `reply` (one attempt)."""
    server.add(reply)
    with pytest.raises(Exception) as raised:
        await make_chat_model(settings_for(server)).ainvoke("hi")
    return raised.value


async def test_retries_honour_retry_after_within_the_budget(scripted_llm: ScriptedLLM) -> None:
    settings = settings_for(scripted_llm, max_retries=5, retry_budget=10)
    asked_ms = await failure(scripted_llm, error(429, headers={"retry-after-ms": "2500"}))
    asked_s = await failure(scripted_llm, error(503, headers={"retry-after": "4"}))
    clock = FakeClock()
    retries = ModelRetries(settings, clock=clock)
    assert retries.next_delay(asked_ms) == 2.5
    clock.now += 3.0
    assert retries.next_delay(asked_s) == 4.0
    clock.now += 4.5
    # 7.5 s spent: a 4 s wait would start the retry after the 10 s budget, so we stop.
    assert retries.next_delay(asked_s) is None
    assert retries.retries == 2 and retries.refused_wait == 4.0
    explained = retries.explain(describe_model_error(asked_s, settings))
    assert "asked to wait 4 s before trying again, longer than the copilot waits (10 s)" in (
        str(explained)
    )
    assert explained.kind == "server_error" and explained.status == 503


async def test_retries_stop_at_max_retries_and_on_final_errors(scripted_llm: ScriptedLLM) -> None:
    server_error = await failure(scripted_llm, error(500))
    bad_request = await failure(scripted_llm, error(400))
    no_quota = await failure(scripted_llm, error(429, code="insufficient_quota"))
    told_not_to = await failure(scripted_llm, error(503, headers={"x-should-retry": "false"}))
    settings = settings_for(scripted_llm, max_retries=2)
    retries = ModelRetries(settings, clock=FakeClock())
    for final in (bad_request, no_quota, told_not_to):
        assert retries.next_delay(final) is None
    first, second = retries.next_delay(server_error), retries.next_delay(server_error)
    # No header: exponential backoff (0.5 s, then 1 s) less at most 25 % jitter.
    assert first is not None and 0.375 <= first <= 0.5
    assert second is not None and 0.75 <= second <= 1.0
    assert retries.next_delay(server_error) is None  # max_retries reached
    assert "(Retried 2 times.)" in str(retries.explain(describe_model_error(server_error)))
    assert ModelRetries(settings_for(scripted_llm)).next_delay(server_error) is None


def test_retry_after_headers() -> None:
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "1.5"}) == 1.5
    assert retry_after({"llm_provider-retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "-3"}) == 0.0
    assert retry_after({"retry-after": "1e999"}) == float("inf")
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (retry_after({"retry-after": in_a_minute}) or 0) <= 61


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
        ["limiting the request rate (HTTP 429", "Wait a moment"],
        id="429",
    ),
    pytest.param(
        # What LiteLLM 1.108 answers when its upstream refuses the gateway's own key.
        error(
            401,
            "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect "
            f"API key provided: {SECRET}.\n\nLiteLLM: model group 'school-default' failed "
            "with the error above. No fallback was attempted.",
            type="authentication_error",
            code="401",
        ),
        "upstream_auth",
        [
            "accepted your API key, but its upstream provider (OpenAI) refused the "
            "gateway's own key (HTTP 401)",
            "tell the administrator of the gateway",
        ],
        id="401-upstream",
    ),
    pytest.param(
        # What LiteLLM answers when it refuses the user's own (virtual) key.
        error(
            401,
            "Authentication Error, Invalid proxy server token passed. Received API Key = "
            f"{SECRET}, Key Hash (Token) = 0123abcd. Unable to find token in cache",
            type="auth_error",
            code="401",
        ),
        "auth",
        ["rejected the API key (HTTP 401)", "OPENAI_API_KEY"],
        id="401-gateway",
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
    scripted_llm.add(reply)
    settings = settings_for(scripted_llm)
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


async def test_a_gateway_error_event_mid_stream_is_a_broken_connection(
    scripted_llm: ScriptedLLM,
) -> None:
    """LiteLLM ends a stream whose upstream died with `data: {"error": {...}}`; the user
    gets the same message as for a connection broken during the answer."""
    scripted_llm.add(broken_stream(["Part of ", "the answer"], chunks=2))
    settings = settings_for(scripted_llm)
    received = []
    with pytest.raises(Exception) as raised:
        async for chunk in make_chat_model(settings).astream("hi"):
            received.append(chunk.content)
    assert "".join(received) == "Part of the answer"
    for described in (
        describe_model_error(raised.value, settings),
        describe_model_error(raised.value),
    ):
        assert described.kind == "connection_lost"
        assert str(described).startswith(
            f"The connection to the model endpoint at {scripted_llm.base_url} broke during "
            "the answer (an error event in the stream; the endpoint reported: "
            "litellm.APIConnectionError"
        )
        assert str(described).endswith("Try again.")
        assert "The model call failed" not in str(described)


async def test_a_context_overflow_reported_mid_stream_says_so(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(
        Completion(
            stream_error=StreamError(
                message="maximum context length exceeded", code="context_length_exceeded"
            )
        )
    )
    with pytest.raises(Exception) as raised:
        async for _ in make_chat_model(settings_for(scripted_llm)).astream("hi"):
            pass
    assert describe_model_error(raised.value).kind == "context_length"


def test_an_empty_answer_is_explained() -> None:
    settings = ModelSettings(model="school-default", base_url="http://gw.example:4000/v1")
    stopped = empty_answer_error(settings, "stop")
    assert stopped.kind == "empty_reply"
    assert str(stopped).startswith(
        'The model returned an empty answer: no text and no tool call (finish reason "stop").'
    )
    assert "http://gw.example:4000/v1" in str(stopped)
    assert "output limit" in str(empty_answer_error(settings, "length"))
    assert "content filter" in str(empty_answer_error(None, "content_filter"))


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
            await shared_chat_model(settings),
            await shared_chat_model(settings),
            await shared_chat_model(settings, temperature=0.5),
            await shared_chat_model(settings, streaming=False),
        )

    first = asyncio.run(models())
    assert first[0] is first[1]
    assert len({id(model) for model in first}) == 3
    assert asyncio.run(models())[0] is not first[0]
