"""Behind a real gateway: empty answers, retries, error events inside a
stream, a key refused upstream of the gateway, and the context limit of a model alias.

LiteLLM itself is not installed here. The scripted model server (a TEST DOUBLE of the
OpenAI API, strict about orphaned tool calls) imitates exactly what LiteLLM proxy 1.108
was seen sending: an empty stream ending with finish reason "stop" for an upstream web
page, `data: {"error": {...}}` after some content when the upstream died mid-answer, a
401 whose message starts "litellm.AuthenticationError: ... OpenAIException - ...", and
429 / 5xx with `retry-after` headers. The graph runs directly (no lab needed) and through
the chat service and the chat routes on the real local GNS3 lab.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support.agent import USER, agent_context, collect, copilot, custom, run_turn
from support.server import (
    TITLE_REPLY,
    call,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
)

from jupyter_gns3_copilot.agent.graph import build_graph
from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.agent.llm_errors import ModelCallError
from jupyter_gns3_copilot.testing.scripted_llm import (
    ScriptedLLM,
    broken_stream,
    error,
    text,
)

LITELLM_UPSTREAM_401 = (
    "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key "
    "provided: sk-upst****wxyz.\n\nLiteLLM: model group 'school-default' failed with the "
    "error above. No fallback was attempted."
)
"""LiteLLM 1.108's answer when its upstream provider refuses the gateway's own key."""


def with_retries(settings: ModelSettings, retries: int, budget: float = 10.0) -> ModelSettings:
    return settings.model_copy(update={"max_retries": retries, "retry_budget": budget})


class RetryScheduled(logging.Handler):
    """Sets `event` when the graph logs that it will retry a model call (a hook to act
    while the retry waits, without sleeping)."""

    def __init__(self, event: asyncio.Event) -> None:
        super().__init__(logging.INFO)
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Model call failed"):
            self.event.set()


# -- the graph, run directly (no lab) ------------------------------------------------------


async def test_an_empty_answer_is_an_error_and_the_next_turn_works(
    scripted_llm: ScriptedLLM,
) -> None:
    """Given a gateway's empty stream (no text, no tool call, finish reason "stop"); then
    the turn fails with "the model returned an empty answer", nothing empty is saved, and
    the next turn is accepted by the strict model."""
    scripted_llm.add(text(""), text("Hello again."), text("Greeting", when=TITLE_REPLY))
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        with pytest.raises(ModelCallError) as raised:
            await run_turn(graph, context, "hi")
        await run_turn(graph, context, "hi again")
        state = (await graph.aget_state({"configurable": {"thread_id": "t1"}})).values
    assert raised.value.kind == "empty_reply"
    assert str(raised.value).startswith("The model returned an empty answer")
    assert [type(m) for m in state["messages"]] == [HumanMessage, HumanMessage, AIMessage]
    assert state["messages"][-1].content == "Hello again."
    assert [r.status for r in scripted_llm.chat_requests] == [200, 200, 200]


async def test_429_with_retry_after_is_retried_then_answers(scripted_llm: ScriptedLLM) -> None:
    wait = {"retry-after-ms": "20"}
    scripted_llm.add(error(429, headers=wait), error(503, headers=wait), text("Made it."))
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        context.settings = with_retries(context.settings, 2)
        items = await run_turn(graph, context, "hi")
    assert [r.status for r in scripted_llm.chat_requests][:3] == [429, 503, 200]
    assert len(custom(items, "llm_start")) == 1  # retries are one model call for the stats


async def test_500s_stop_after_max_retries_with_a_clear_message(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.add(*[error(500, "upstream down", headers={"retry-after-ms": "10"})] * 4)
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        context.settings = with_retries(context.settings, 2)
        with pytest.raises(ModelCallError) as raised:
            await run_turn(graph, context, "hi")
    assert len(scripted_llm.chat_requests) == 3
    assert raised.value.kind == "server_error"
    assert "HTTP 500: upstream down" in str(raised.value)
    assert str(raised.value).endswith("(Retried 2 times.)")


async def test_a_retry_after_beyond_the_budget_stops_at_once(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.add(*[error(429, headers={"retry-after": "60"})] * 3)
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        context.settings = with_retries(context.settings, 2, budget=10)
        with pytest.raises(ModelCallError) as raised:
            await run_turn(graph, context, "hi")
    assert len(scripted_llm.chat_requests) == 1
    assert raised.value.kind == "rate_limit"
    assert (
        "The endpoint asked to wait 60 s before trying again, longer than the copilot waits "
        "(10 s): try again in 60 s." in str(raised.value)
    )


async def test_the_budget_bounds_the_total_time_spent_retrying(
    scripted_llm: ScriptedLLM,
) -> None:
    """Given 5 retries allowed but a 2 s budget and an endpoint asking 1.2 s each time;
    then the second retry would start after the budget: 2 requests, whatever their speed."""
    scripted_llm.add(*[error(503, headers={"retry-after-ms": "1200"})] * 6)
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        context.settings = with_retries(context.settings, 5, budget=2.0)
        with pytest.raises(ModelCallError) as raised:
            await run_turn(graph, context, "hi")
    assert len(scripted_llm.chat_requests) == 2
    assert "asked to wait 2 s" in str(raised.value) and "(2 s)" in str(raised.value)


async def test_stop_during_a_retry_wait_ends_the_turn(
    scripted_llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    scripted_llm.add(error(429, headers={"retry-after": "30"}), text("never asked for"))
    graph = build_graph(InMemorySaver())
    scheduled = asyncio.Event()
    handler = RetryScheduled(scheduled)
    graph_log = logging.getLogger("jupyter_gns3_copilot.agent.model_node")
    caplog.set_level(logging.INFO, logger=graph_log.name)
    graph_log.addHandler(handler)
    try:
        async with agent_context(scripted_llm) as context:
            context.settings = with_retries(context.settings, 2, budget=60)
            turn = asyncio.ensure_future(run_turn(graph, context, "hi"))
            await asyncio.wait_for(scheduled.wait(), 30)
            context.abort.set()
            await asyncio.wait_for(turn, 30)
            state = (await graph.aget_state({"configurable": {"thread_id": "t1"}})).values
    finally:
        graph_log.removeHandler(handler)
    assert len(scripted_llm.chat_requests) == 1
    assert state["abort"] is True
    assert [type(m) for m in state["messages"]] == [HumanMessage]


# -- the chat service on the lab -----------------------------------------------------------


@pytest.mark.lab
@pytest.mark.parametrize(
    ("replies", "expected", "shown"),
    [
        pytest.param([text("")], "The model returned an empty answer", "", id="empty"),
        pytest.param(
            [broken_stream(["Half of ", "the answer"], chunks=2)],
            "broke during the answer (an error event in the stream",
            "Half of the answer",
            id="error-event",
        ),
        pytest.param(
            [error(401, LITELLM_UPSTREAM_401, type="authentication_error", code="401")],
            "its upstream provider (OpenAI) refused the gateway's own key",
            "",
            id="upstream-401",
        ),
    ],
)
async def test_gateway_failures_are_error_events_and_the_next_turn_works(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
    replies: list[Any],
    expected: str,
    shown: str,
) -> None:
    scripted_llm.add(*replies, text("Back again."), text("Title", when=TITLE_REPLY))
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(service.stream_chat("hi", user_id=USER, llm=scripted_model_settings))
        session_id = events[-1]["session_id"]
        again = await collect(
            service.stream_chat(
                "again", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
        history = await service.sessions.get_history(session_id, user_id=USER)
    assert [kind for kind in kinds(events) if kind != "content"] == ["error", "done"]
    assert "".join(e["content"] for e in events if e["type"] == "content") == shown
    error_text = next(e["error"] for e in events if e["type"] == "error")
    assert expected in error_text
    assert "The model call failed" not in error_text and "check the API key" not in error_text
    assert "sk-upst" not in error_text
    assert kinds(again) == ["content", "done"]
    assert history is not None
    assert [m.role for m in history.messages] == ["user", "user", "assistant"]
    assert scripted_llm.chat_requests[-2].status == 200  # the strict model took the history


# -- the chat routes through a real Jupyter server -----------------------------------------


@pytest.fixture
def jp_server_config(gns3_lab: Any, scripted_llm: ScriptedLLM, tmp_path: Path) -> dict[str, Any]:
    # The admin's default of 2 retries, unlike the other server tests.
    return server_config(
        tmp_path / "copilot-data",
        **lab_traits(gns3_lab),
        **model_traits(scripted_llm, llm_max_retries=2),
    )


def chat_stream(project: Any) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "chat", "stream")


@pytest.mark.lab
async def test_an_empty_answer_is_an_error_over_sse_and_stream_false(
    jp_fetch: Any, gns3_project: Any, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.add(text(""), text(""), text("Hello."), text("Title", when=TITLE_REPLY))
    stream = open_stream(jp_fetch, *chat_stream(gns3_project), body={"message": "hi"})
    events = await stream.finish()
    assert kinds(events)[-2:] == ["error", "done"]
    assert "The model returned an empty answer" in events[-2]["error"]
    session_id = events[-1]["session_id"]

    summary = await call(
        jp_fetch,
        *chat_stream(gns3_project),
        method="POST",
        body={"message": "hi?", "stream": False, "session_id": session_id},
    )
    assert summary.code == 200 and summary.body["status"] == "error"
    assert "The model returned an empty answer" in summary.body["errors"][0]
    follow = await call(
        jp_fetch,
        *chat_stream(gns3_project),
        method="POST",
        body={"message": "hello?", "stream": False, "session_id": session_id},
    )
    assert (follow.body["status"], follow.body["message"]) == ("done", "Hello.")


@pytest.mark.lab
async def test_the_admins_retries_honour_retry_after_through_the_route(
    jp_fetch: Any, gns3_project: Any, scripted_llm: ScriptedLLM
) -> None:
    wait = {"retry-after-ms": "20"}
    scripted_llm.add(error(429, headers=wait), error(429, headers=wait), error(429, headers=wait))
    reply = await call(
        jp_fetch,
        *chat_stream(gns3_project),
        method="POST",
        body={"message": "hi", "stream": False},
    )
    assert [r.status for r in scripted_llm.chat_requests] == [429, 429, 429]
    assert reply.body["status"] == "error"
    assert "limiting the request rate (HTTP 429" in reply.body["errors"][0]
    assert reply.body["errors"][0].endswith("(Retried 2 times.)")
