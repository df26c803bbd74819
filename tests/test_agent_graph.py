"""The agent graph and its parts: state and limits, prompts, history conversion and repair,
the abort registry, the tool-call accumulator, and the compiled graph run directly against
the scripted model server (a TEST DOUBLE of the OpenAI API, strict about orphaned tool
calls) with an in-memory checkpointer. Tests marked `lab` use the real local GNS3 lab.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ValidationError
from support.agent import agent_context, custom, run_turn
from support.http_counting import CountingTransport

from jupyter_gns3_copilot.agent import tokens
from jupyter_gns3_copilot.agent.abort import AbortRegistry, SessionBusy
from jupyter_gns3_copilot.agent.agent_context import tool_schema_tokens
from jupyter_gns3_copilot.agent.context import TOPOLOGY_PLACEHOLDER
from jupyter_gns3_copilot.agent.graph import build_graph
from jupyter_gns3_copilot.agent.history import (
    OpenAIMessage,
    from_openai_message,
    placeholder_results,
    to_openai_message,
    unanswered_tool_calls,
)
from jupyter_gns3_copilot.agent.limits import TurnLimits
from jupyter_gns3_copilot.agent.prompts import (
    ABORTED_RESULT,
    clean_title,
    fallback_title,
    system_prompt,
    tool_limit_message,
)
from jupyter_gns3_copilot.agent.state import turn_input, user_message
from jupyter_gns3_copilot.agent.tool_call_stream import ToolCallStreamAccumulator
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, error, text, tool_call
from jupyter_gns3_copilot.testing.scripted_llm import tool_calls as tool_replies
from jupyter_gns3_copilot.testing.scripted_llm_script import ToolCall

# -- state, limits, prompts ----------------------------------------------------------------


def test_turn_limits_keep_to_their_ranges() -> None:
    """Defaults are 20 iterations and unlimited (999) tool calls; values outside 1-100,
    1-50 and 0.0-2.0 are refused; the recursion limit never cuts a turn short."""
    limits = TurnLimits()
    assert (limits.max_iterations, limits.tool_call_budget, limits.temperature) == (20, 999, None)
    assert TurnLimits(max_iterations=100, max_tool_calls=50, temperature=2.0).recursion_limit > 200
    for bad in (
        {"max_iterations": 0},
        {"max_iterations": 101},
        {"max_tool_calls": 51},
        {"max_tool_calls": 0},
        {"temperature": -0.1},
        {"temperature": 2.1},
    ):
        with pytest.raises(ValidationError):
            TurnLimits(**bad)


def test_turn_input_resets_the_per_turn_counters() -> None:
    message = user_message("hello", "m1")
    state = turn_input(message, "s1", TurnLimits(max_iterations=5, max_tool_calls=3))
    assert state == {
        "messages": [message],
        "llm_calls": 0,
        "remaining_steps": 5,
        "session_id": "s1",
        "abort": False,
        "max_tool_calls": 3,
        "tool_calls_count": 0,
    }
    assert message.id == "m1" and "created_at" in message.metadata  # type: ignore[attr-defined]


def test_prompts_titles_and_limit_messages() -> None:
    """The prompt keeps the topology placeholder and names the mode; titles are cleaned to
    40 characters with a 30-character fallback; the tool limit message names the limit."""
    prompt = system_prompt("teaching_assistant")
    assert TOPOLOGY_PLACEHOLDER in prompt and "teaching_assistant" in prompt
    assert "lab_automation_assistant" in system_prompt("lab_automation_assistant")
    assert system_prompt("teaching_assistant", "Mine ({mode}): {{topology_info}}") == (
        "Mine (teaching_assistant): {{topology_info}}"
    )
    assert clean_title('"OSPF adjacency troubleshooting."\nExtra line') == (
        "OSPF adjacency troubleshooting"
    )
    assert len(clean_title("Title: " + "x" * 80)) == 40
    assert fallback_title("  Why can't   PC1 ping PC3 across the routers?") == (
        "Why can't PC1 ping PC3 across"
    )
    assert tool_limit_message(3, 3) == (
        "Tool call limit reached (3 calls). Please simplify your request or break it into "
        "smaller steps. Current tool call count: 3/3."
    )


# -- history ---------------------------------------------------------------------------------


def test_history_converts_to_the_openai_format_and_back() -> None:
    """Tool calls become OpenAI function calls with JSON text arguments, timestamps stay in
    metadata (empty when absent), ids are generated when missing, and the conversion
    round-trips."""
    ai = AIMessage(
        content="",
        id="a1",
        tool_calls=[{"name": "get_topology", "args": {"x": "é"}, "id": "call_1"}],
        metadata={"created_at": "2026-03-08T01:33:17.848519"},
    )
    converted = to_openai_message(ai).model_dump(exclude_none=True)
    assert converted == {
        "id": "a1",
        "role": "assistant",
        "content": "",
        "metadata": {"created_at": "2026-03-08T01:33:17.848519"},
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_topology", "arguments": '{"x": "é"}'},
            },
        ],
    }
    tool = ToolMessage(content='{"status": "ok"}', tool_call_id="call_1", name="get_topology")
    tool_converted = to_openai_message(tool)
    assert (tool_converted.role, tool_converted.tool_call_id) == ("tool", "call_1")
    assert tool_converted.metadata == {}
    blocks = AIMessage(content=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    assert to_openai_message(blocks).content == "ab"
    image = HumanMessage(content=[{"type": "image_url", "image_url": {"url": "x"}}])
    assert json.loads(to_openai_message(image).content) == image.content
    assert to_openai_message(HumanMessage(content="hi")).id  # generated

    back = from_openai_message(converted)
    assert isinstance(back, AIMessage)
    assert back.tool_calls[0]["args"] == {"x": "é"} and back.id == "a1"
    broken = OpenAIMessage(
        id="a2",
        role="assistant",
        content="",
        tool_calls=[{"id": "c", "function": {"name": "t", "arguments": "{oops"}}],
    )
    assert from_openai_message(broken).invalid_tool_calls[0]["args"] == "{oops"  # type: ignore[attr-defined]


def test_unanswered_tool_calls_and_their_placeholders() -> None:
    """Only the last assistant message's unanswered calls count; placeholders use known
    results first."""
    ai = AIMessage(
        content="",
        tool_calls=[
            {"name": "a", "args": {}, "id": "c1"},
            {"name": "b", "args": {}, "id": "c2"},
            {"name": "c", "args": {}, "id": "c3"},
        ],
    )
    messages = [HumanMessage("hi"), ai, ToolMessage(content="done", tool_call_id="c1")]
    pending = unanswered_tool_calls(messages)
    assert [(c.id, c.name) for c in pending] == [("c2", "b"), ("c3", "c")]
    results = placeholder_results(pending, ABORTED_RESULT, known={"c3": "real"})
    assert [(r.tool_call_id, r.content) for r in results] == [
        ("c2", ABORTED_RESULT),
        ("c3", "real"),
    ]
    assert unanswered_tool_calls([*messages, *results]) == []
    assert unanswered_tool_calls([HumanMessage("hi")]) == []


# -- abort registry and the accumulator ------------------------------------------------------


async def test_abort_registry_tracks_running_turns() -> None:
    registry = AbortRegistry()
    flag = registry.begin("s1")
    with pytest.raises(SessionBusy, match="already answering"):
        registry.begin("s1")
    assert registry.request_abort("s1") and flag.is_set()
    assert not registry.request_abort("other")
    registry.end("s1", flag)
    assert not registry.is_running("s1")
    assert not registry.begin("s1").is_set()  # a new turn starts with a cleared flag


def test_tool_call_accumulator_phases() -> None:
    """The three phases of a streamed call: an opening payload with empty arguments, one payload per
    fragment with the arguments so far (no interval between payloads), and `complete:
    true` at the finish."""
    acc = ToolCallStreamAccumulator(interval=0)
    opened = acc.add([{"name": "run_show_commands", "args": "", "id": "call_9", "index": 0}])
    grown = acc.add([{"name": None, "args": '{"devices":', "id": None, "index": 0}])
    grown += acc.add([{"name": None, "args": " []}", "id": None, "index": 0}])
    second = acc.add([{"name": "get_topology", "args": "{}", "id": "call_10", "index": 1}])
    finished = acc.finish()
    dumped = [p.model_dump(exclude_none=True) for p in [*opened, *grown, *second, *finished]]
    assert [d["function"]["arguments"] for d in dumped] == [
        "",
        '{"devices":',
        '{"devices": []}',
        "",
        "{}",
        '{"devices": []}',
        "{}",
    ]
    assert [d["function"].get("complete") for d in dumped] == [None] * 5 + [True, True]
    assert dumped[0] == {
        "id": "call_9",
        "type": "function",
        "function": {"name": "run_show_commands", "arguments": ""},
    }
    assert acc.finish() == []


def test_tool_call_arguments_are_coalesced_but_only_grow_and_end_complete() -> None:
    """A 20-device call streamed in 228 fragments: at most one growing payload per
    interval (a stepped clock stands for time passing), each a prefix of the next, and the
    last one complete with every fragment in it."""
    arguments = json.dumps(
        {"devices": [{"device_name": f"PC{n}", "commands": ["show ip"]} for n in range(20)]}
    )
    size = -(-len(arguments) // 228)
    fragments = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    now = [0.0]
    acc = ToolCallStreamAccumulator(interval=0.05, clock=lambda: now[0])
    payloads = acc.add([{"name": "run_vpcs_commands", "args": "", "id": "c1", "index": 0}])
    for fragment in fragments:
        now[0] += 0.001  # a fast stream: 1 ms between fragments
        payloads += acc.add([{"name": None, "args": fragment, "id": None, "index": 0}])
    payloads += acc.finish()

    sent = [p.function.arguments for p in payloads]
    assert len(fragments) > 200 and len(payloads) <= len(fragments) // 50 + 3
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(sent))
    assert [p.function.complete for p in payloads][-1] is True
    assert sent[-1] == arguments and json.loads(sent[-1])["devices"][19]["device_name"] == "PC19"
    assert all(p.function.complete is None for p in payloads[:-1])


# -- the graph, run directly -----------------------------------------------------------------


async def test_graph_runs_tools_concurrently_but_answers_in_call_order(
    scripted_llm: ScriptedLLM,
) -> None:
    """Given one reply with three read-only calls (one with malformed JSON arguments); then
    all three get a result, in call order, the malformed one says why, and the strict
    server accepts the next request."""
    scripted_llm.add(
        tool_replies(
            ToolCall(name="device_skills", arguments={"device_type": "vpcs"}, id="c1"),
            ToolCall(name="device_skills", arguments="{not json", id="c2"),
            ToolCall(name="device_skills", arguments={}, id="c3"),
        ),
        text("Read them."),
        text("Skills", when={"tools": False}),
    )
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        items = await run_turn(graph, context, "What skills are there?")
        state = (await graph.aget_state({"configurable": {"thread_id": "t1"}})).values
    tool_messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    # The malformed call is an invalid tool call, which LangChain sends after the valid ones.
    assert [m.tool_call_id for m in tool_messages] == ["c1", "c3", "c2"]
    assert "not valid JSON" in tool_messages[2].content
    assert json.loads(tool_messages[0].content)
    assert len(custom(items, "tool_start")) == 3 and len(custom(items, "tool_end")) == 3
    assert state["conversation_title"] == "Skills" and state["tool_calls_count"] == 3
    assert [r.status for r in scripted_llm.chat_requests] == [200, 200, 200]


async def test_iterations_count_model_calls(scripted_llm: ScriptedLLM) -> None:
    """Given max_iterations=2 and a model that always wants a tool; then the first call's
    tool runs, the second call's does not (no model call would read it), and the turn ends
    after exactly two model calls with an iteration_limit notice."""
    for _ in range(2):
        scripted_llm.add(tool_call("device_skills", {}))
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        items = await run_turn(graph, context, "loop", limits=TurnLimits(max_iterations=2))
        state = (await graph.aget_state({"configurable": {"thread_id": "t1"}})).values
    assert len(scripted_llm.chat_requests) == 2 and scripted_llm.remaining == 0
    assert len(custom(items, "llm_start")) == 2 and len(custom(items, "tool_start")) == 1
    (notice,) = custom(items, "iteration_limit")
    assert "max_iterations=2" in notice["message"]
    assert json.loads(state["messages"][-1].content)["status"] == "not_executed"
    assert state["llm_calls"] == 2 and state["remaining_steps"] == 0


async def test_title_model_is_separate_and_falls_back(
    scripted_llm: ScriptedLLM, make_scripted_llm: Any
) -> None:
    """Given a separate title model; then titles come from it, cut to 40 characters; when it
    fails, the title is the user's first 30 characters; either way it runs once."""
    titles = make_scripted_llm([text("A very long title that goes on and on and on forever")])
    scripted_llm.add(text("Answer one."), text("Answer two."))
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm, title_llm=titles) as context:
        await run_turn(graph, context, "first question")
        await run_turn(graph, context, "second question")
        state = (await graph.aget_state({"configurable": {"thread_id": "t1"}})).values
    assert state["conversation_title"] == "A very long title that goes on and on an"
    assert len(titles.chat_requests) == 1 and "tools" not in titles.chat_requests[0].body
    assert all(r.body.get("tools") for r in scripted_llm.chat_requests)

    failing = make_scripted_llm([error(503)])
    scripted_llm.add(text("Answer."))
    async with agent_context(scripted_llm, title_llm=failing) as context:
        await run_turn(graph, context, "How do I configure OSPF area 0 on R1?", thread="t2")
        state = (await graph.aget_state({"configurable": {"thread_id": "t2"}})).values
    assert state["conversation_title"] == "How do I configure OSPF area 0"


async def test_no_secret_in_checkpoints(scripted_llm: ScriptedLLM) -> None:
    """The API key and GNS3 token travel in the runtime context only: the checkpoints do
    not hold them."""
    scripted_llm.add(tool_call("get_topology", {}), text("ok"), text("T", when={"tools": False}))
    saver = InMemorySaver()
    graph = build_graph(saver)
    async with agent_context(scripted_llm, token="gns3-token-do-not-store") as context:
        await run_turn(graph, context, "hi")
    stored = repr(saver.storage) + repr(dict(saver.writes)) + repr(dict(saver.blobs))
    assert "sk-graph-test" not in stored and "gns3-token-do-not-store" not in stored
    assert "get_topology" in stored


@pytest.mark.lab
async def test_topology_is_read_once_per_turn_and_after_lab_changes(
    gns3_project: Any, scripted_llm: ScriptedLLM
) -> None:
    """Given a turn of three model calls whose tools do not touch the lab; then the topology
    is read once and every call's system prompt shows it; after a tool that changes the
    lab (create_nodes), it is read again and the next prompt shows the new node."""
    scripted_llm.add(
        tool_call("device_skills", {}),
        tool_call("device_skills", {"device_type": "vpcs"}),
        tool_call("create_nodes", {"nodes": [{"template": "VPCS", "name": "PC9"}]}),
        text("PC9 is there."),
        text("Lab", when={"tools": False}),
    )
    transport = CountingTransport()
    graph = build_graph(InMemorySaver())
    async with agent_context(
        scripted_llm,
        gns3_url=gns3_project.url,
        project_id=gns3_project.project_id,
        token=gns3_project.token,
        transport=transport,
    ) as context:
        await run_turn(graph, context, "Add PC9")
    link_reads = [p for p in transport.paths if p.endswith("/links")]
    # Two reads for the prompts; create_nodes reads the lab twice itself (whether it follows
    # the drawing's layout, then to lay it out again: tools/placement.py).
    assert len(link_reads) == 2 + 2
    prompts = [r.messages[0]["content"] for r in scripted_llm.chat_requests[:4]]
    assert "(none)" in prompts[0] and prompts[0] == prompts[1] == prompts[2]
    assert "PC9" in prompts[3] and "PC9" not in prompts[2]


@pytest.fixture
def fresh_counters(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process-wide token counters (and the cached tool costs) as in a new server."""
    monkeypatch.setattr(tokens, "_counters", {})
    tool_schema_tokens.cache_clear()
    yield
    tool_schema_tokens.cache_clear()


async def test_a_turn_well_inside_the_window_builds_no_tokenizer(
    scripted_llm: ScriptedLLM, fresh_counters: None
) -> None:
    scripted_llm.add(text("Hello."), text("Greeting", when={"tools": False}))
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm) as context:
        await run_turn(graph, context, "hi")
    assert [r.status for r in scripted_llm.chat_requests] == [200, 200]
    assert not tokens.token_counter_for_model("scripted-model").loaded


async def test_a_turn_near_the_limit_counts_exactly_and_trims(
    scripted_llm: ScriptedLLM, fresh_counters: None
) -> None:
    """Given an 8K window (its byte bound cannot hold even the tool schemas) and a first
    answer far too long for it; then the second turn's request leaves the first exchange
    out, counted with the encoding."""
    long_answer = "The OSPF neighbours are all in FULL state. " * 300
    scripted_llm.add(
        text(long_answer),
        text("Neighbours", when={"tools": False}),
        text("Short answer."),
    )
    graph = build_graph(InMemorySaver())
    async with agent_context(scripted_llm, context_limit=8) as context:
        await run_turn(graph, context, "first question")
        await run_turn(graph, context, "second question")
    assert tokens.token_counter_for_model("scripted-model").loaded
    asked = [r for r in scripted_llm.chat_requests if r.body.get("tools")]
    assert [m["content"] for m in asked[1].messages[1:]] == ["second question"]
