"""The chat service end to end: the scripted model server (a TEST DOUBLE of the OpenAI API,
strict about orphaned tool calls) drives the real graph, whose tools act on REAL VPCS nodes
in the local GNS3 lab, with the project's real SQLite store.

Fixtures: `gns3_project` (a fresh project in the session's lab), `scripted_llm` /
`make_scripted_llm` / `scripted_model_settings` (the model double), `tmp_path` (the data
directory).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from support.agent import (
    USER,
    assert_tool_call_contract,
    collect,
    copilot,
    tool_call_runs,
    wire,
)
from support.http_counting import CountingTransport

from jupyter_gns3_copilot.agent.llm_access import TURN_HEADER, ModelSettings
from jupyter_gns3_copilot.agent.prompts import ABORTED_RESULT, INTERRUPTED_RESULT
from jupyter_gns3_copilot.chat.manager import ProjectAgentManager
from jupyter_gns3_copilot.chat.options import TurnOptions
from jupyter_gns3_copilot.chat.settings import ChatSettings
from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget
from jupyter_gns3_copilot.events import ChatEvent
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, error, html_page, text
from jupyter_gns3_copilot.testing.scripted_llm import tool_call as tool_reply
from jupyter_gns3_copilot.testing.scripted_llm import tool_calls as tool_replies
from jupyter_gns3_copilot.testing.scripted_llm_script import ToolCall
from jupyter_gns3_copilot.tools import LabAccess
from jupyter_gns3_copilot.tools.modes import TEACHING_TOOLS

pytestmark = pytest.mark.lab

TITLE_REPLY = {"tools": False}
"""`when` for the title request (the only one offering no tools)."""


async def add_pcs(project: Any, *names: str) -> None:
    async with GNS3Client(project.url, token=project.token) as gns3:
        for index, name in enumerate(names):
            await gns3.create_node_from_template(project.project_id, "VPCS", name, x=index * 150)


def kinds(events: list[dict[str, Any]], *, progress: bool = False) -> list[str]:
    return [e["type"] for e in events if progress or e["type"] != "progress"]


def tool_call_events(count: int) -> list[str]:
    """A call's tool_call events in `tool_call_runs(kinds(...))`: one run of them (the
    opening one, growing arguments coalesced by time, the complete one)."""
    return ["tool_call"]


async def test_full_turn_runs_tools_on_real_vpcs(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given two stopped VPCS and a model that starts them, reads their addresses and
    answers; when the user asks; then the stream is exactly the expected event sequence, the
    tools really ran, statistics equal the scripted usage, the title is generated outside
    stream and statistics, and the history is in the OpenAI message format."""
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
            usage={"prompt_tokens": 900, "completion_tokens": 12},
        ),
        text("VPCS check", when=TITLE_REPLY, usage={"prompt_tokens": 80, "completion_tokens": 3}),
    )
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(
            service.stream_chat(
                "Start my PCs and check PC1", user_id=USER, llm=scripted_model_settings
            )
        )
        session_id = events[-1]["session_id"]
        session = await service.sessions.get_session(session_id, user_id=USER)
        history = await service.sessions.get_history(session_id, user_id=USER)

    assert tool_call_runs(kinds(events)) == [
        *tool_call_events(3),
        "tool_start",
        "tool_end",
        *tool_call_events(4),
        "tool_start",
        "tool_end",
        "content",
        "content",
        "content",
        "content",
        "done",
    ]
    assert {e["session_id"] for e in events} == {session_id}
    calls = [e["tool_call"] for e in events if e["type"] == "tool_call"]
    assert_tool_call_contract(
        [c for c in calls if c["id"] == "call_start"], "start_nodes", {"nodes": ["PC1", "PC2"]}
    )
    assert_tool_call_contract(
        [c for c in calls if c["id"] == "call_show"], "run_show_commands", show
    )

    by_type: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_type.setdefault(event["type"], []).append(event)
    assert [e["tool_call_id"] for e in by_type["tool_start"]] == ["call_start", "call_show"]
    started, shown = (json.loads(e["tool_output"]) for e in by_type["tool_end"])
    assert started["status"] == "success"
    assert "PC1" in json.dumps(shown) and "show ip" in json.dumps(shown)
    progress = by_type["progress"]
    assert progress and all(p["tool_call_id"] in ("call_start", "call_show") for p in progress)
    every_kind = kinds(events, progress=True)
    assert every_kind.index("progress") > every_kind.index("tool_start")
    assert "".join(e["content"] for e in by_type["content"]) == (
        "Both PCs are up; PC1 has no address."
    )
    assert "VPCS check" not in json.dumps(events[:-1]), "the title node is not streamed"
    assert events[-1]["type"] == "done" and events[-1]["title"] == "VPCS check"
    assert {k: events[-1]["statistics"][k] for k in ("llm_calls", "message_count")} == {
        "llm_calls": 3,
        "message_count": 4,
    }, "the user's message, one reply, two tool results (the statistics rules)"

    # The topology is in the system prompt, fetched again after start_nodes changed the lab.
    requests = scripted_llm.chat_requests
    assert len(requests) == 4 and all(r.status == 200 for r in requests)
    prompts = [r.messages[0]["content"] for r in requests[:3]]
    assert "PC1" in prompts[0] and "stopped" in prompts[0] and "started" in prompts[1]
    assert not requests[3].body.get("tools")
    # The turn's three calls carry its id (a hub gateway counts turns by it).
    assert requests[0].headers.get(TURN_HEADER)
    assert {r.headers.get(TURN_HEADER) for r in requests[:3]} == {requests[0].headers[TURN_HEADER]}

    assert session is not None and session.title == "VPCS check"
    assert (session.message_count, session.llm_calls_count) == (4, 3)
    assert (session.input_tokens, session.output_tokens) == (2100, 72)
    assert session.total_tokens == 2172

    assert history is not None and history.title == "VPCS check" and history.llm_calls == 3
    messages = [m.model_dump(exclude_none=True) for m in history.messages]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert all("created_at" in m["metadata"] for m in messages)
    assert messages[1]["tool_calls"] == [
        {
            "id": "call_start",
            "type": "function",
            "function": {"name": "start_nodes", "arguments": '{"nodes": ["PC1", "PC2"]}'},
        },
    ]
    assert messages[2]["tool_call_id"] == "call_start"
    assert messages[2]["content"] == by_type["tool_end"][0]["tool_output"]
    assert messages[5]["id"] == by_type["content"][0]["message_id"]


async def start_pcs(project: Any, *names: str) -> None:
    """Create VPCS nodes `names`, start them and wait for their consoles."""
    await add_pcs(project, *names)
    async with GNS3Client(project.url, token=project.token) as gns3, ConsolePool() as pool:
        await gns3.start_all(project.project_id)
        for node in await gns3.list_nodes(project.project_id):
            await pool.wait_ready(
                ConsoleTarget.from_node(node, server_host="127.0.0.1"), timeout=30
            )


async def stream_until(events: AsyncIterator[ChatEvent], kind: str) -> list[dict[str, Any]]:
    """Events up to and including the first of type `kind` (as `wire` gives them)."""
    seen = []
    async for event in events:
        seen.append(wire(event))
        if event.type == kind:
            return seen
    raise AssertionError(f"the stream ended without a {kind!r} event: {kinds(seen)}")


@pytest.mark.slow
async def test_abort_stops_a_long_tool_and_keeps_history_valid(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a VPCS pinging an absent host 30 times; when the user aborts once the tool
    started; then the tool stops (its result says aborted), the stream ends with abort and
    done, no further model call is made, and the next turn's history is accepted by the
    strict model server."""
    await start_pcs(gns3_project, "PC1")
    commands = {
        "devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24", "ping 10.0.0.99 -c 30"]}]
    }
    scripted_llm.add(
        tool_reply("run_vpcs_commands", commands, id="call_ping"),
        text("Stopped as asked.", when={"last_message": "continue"}),
        text("Ping", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path, default_mode="lab_automation_assistant") as service:
        stream = service.stream_chat("Ping from PC1", user_id=USER, llm=scripted_model_settings)
        events = await stream_until(stream, "tool_start")
        session_id = events[-1]["session_id"]
        assert await service.sessions.abort_session(session_id, user_id=USER)
        events += await collect(stream)
        assert kinds(events)[-3:] == ["tool_end", "abort", "done"]
        result = json.loads(events[-3]["tool_output"])
        assert "aborted" in json.dumps(result)
        assert len(scripted_llm.chat_requests) == 1
        assert not service.engine.turns.is_running(session_id)

        follow_up = await collect(
            service.stream_chat(
                "continue", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
    assert kinds(follow_up) == ["content", "done"]
    last = scripted_llm.chat_requests[1]
    assert last.status == 200
    assert [m["role"] for m in last.messages] == ["system", "user", "assistant", "tool", "user"]


@pytest.mark.slow
async def test_execution_time_limit_stops_a_long_tool_and_keeps_history_valid(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a VPCS pinging an absent host 30 times (~30 s) and a 5 s execution time limit;
    when the turn runs; then the limit cancels the ping like an abort (its result says
    aborted, the console is usable again), the stream ends with an error naming the limit
    and done (no abort event: the user did not abort), no further model call is made, and
    the next turn's history is accepted by the strict model server."""
    await start_pcs(gns3_project, "PC1")
    commands = {
        "devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24", "ping 10.0.0.99 -c 30"]}]
    }
    scripted_llm.add(
        tool_reply("run_vpcs_commands", commands, id="call_ping"),
        tool_reply(
            "run_vpcs_commands",
            {"devices": [{"device": "PC1", "commands": ["show ip"]}]},
            id="call_show",
            when={"last_message": "continue"},
        ),
        text("PC1's address is shown.", when={"last_message": "IP/MASK"}),
        text("Ping", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path, default_mode="lab_automation_assistant") as service:
        events = await collect(
            service.stream_chat(
                "Ping from PC1",
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(max_execution_time_seconds=5),
            )
        )
        session_id = events[-1]["session_id"]
        assert kinds(events)[-3:] == ["tool_end", "error", "done"]
        assert "abort" not in kinds(events)
        # Stopped by the console (per-device error) or cancelled after the grace: aborted.
        assert "aborted" in events[-3]["tool_output"]
        assert "max_execution_time_seconds=5" in events[-2]["error"]
        assert len(scripted_llm.chat_requests) == 1
        history = await service.sessions.get_history(session_id, user_id=USER)
        assert history is not None
        assert [m.role for m in history.messages] == ["user", "assistant", "tool"]

        follow_up = await collect(
            service.stream_chat(
                "continue", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
    assert "error" not in kinds(follow_up)
    show = next(e for e in follow_up if e["type"] == "tool_end")
    assert "IP/MASK" in show["tool_output"]
    assert all(request.status == 200 for request in scripted_llm.chat_requests)
    assert [m["role"] for m in scripted_llm.chat_requests[1].messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "user",
    ]


async def test_abort_after_a_complete_tool_call_answers_it_with_a_placeholder(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a slow reply whose tool call is complete before the reply ends; when the user
    aborts then; then the tool never runs, abort_handler_node answers the call with
    {"status": "aborted"}, and the stream ends with tool_end, abort, done."""
    scripted_llm.add(
        tool_reply("get_topology", {}, id="call_topo", chunk_delay=0.3),
        text("Fine.", when={"last_message": "again"}),
        text("Lab", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path) as service:
        stream = service.stream_chat("Show the lab", user_id=USER, llm=scripted_model_settings)
        events = []
        async for sent in stream:
            event = wire(sent)
            events.append(event)
            if event.get("tool_call", {}).get("function", {}).get("complete"):
                await service.sessions.abort_session(event["session_id"], user_id=USER)
        session_id = events[-1]["session_id"]
        history = await service.sessions.get_history(session_id, user_id=USER)
        await collect(
            service.stream_chat(
                "again", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
    assert "tool_start" not in kinds(events)
    assert kinds(events)[-3:] == ["tool_end", "abort", "done"]
    assert events[-3]["tool_output"] == ABORTED_RESULT
    assert history is not None
    assert [m.role for m in history.messages] == ["user", "assistant", "tool"]
    assert json.loads(history.messages[-1].content) == {"status": "aborted"}
    assert scripted_llm.chat_requests[1].status == 200


async def test_abort_during_a_streamed_answer_keeps_the_text_shown(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a slowly streamed answer; when the user aborts after two pieces; then the stream
    stops promptly with abort and done, and the history keeps the text that was shown."""
    pieces = [f"part{i} " for i in range(20)]
    scripted_llm.add(text(pieces, chunk_delay=0.2))
    async with copilot(gns3_project, tmp_path) as service:
        stream = service.stream_chat("Explain OSPF", user_id=USER, llm=scripted_model_settings)
        events = await stream_until(stream, "content")
        events += await stream_until(stream, "content")
        session_id = events[-1]["session_id"]
        await service.sessions.abort_session(session_id, user_id=USER)
        events += await collect(stream)
        history = await service.sessions.get_history(session_id, user_id=USER)
        session = await service.sessions.get_session(session_id, user_id=USER)
    assert kinds(events)[-2:] == ["abort", "done"]
    shown = "".join(e["content"] for e in events if e["type"] == "content")
    assert history is not None and history.messages[-1].content == shown
    assert len(shown) < len("".join(pieces))
    assert session is not None and (session.message_count, session.llm_calls_count) == (2, 1)


async def test_max_iterations_one_means_one_model_call_and_no_tool(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given max_iterations=1 and a model asking for a tool; then exactly one model call is
    made, the tool does not run, its result says why, the user gets an error event saying
    the turn stopped, and the history stays valid for the next turn."""
    scripted_llm.add(
        tool_reply("get_topology", {}, id="call_topo"),
        text("Next turn.", when={"last_message": "go on"}),
        text("Lab", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(
            service.stream_chat(
                "Show the lab",
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(max_iterations=1),
            )
        )
        session_id = events[-1]["session_id"]
        await collect(
            service.stream_chat(
                "go on", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
    assert tool_call_runs(kinds(events)) == [*tool_call_events(2), "tool_end", "error", "done"]
    assert json.loads(events[-3]["tool_output"])["status"] == "not_executed"
    assert "max_iterations=1" in events[-2]["error"] and "get_topology" in events[-2]["error"]
    requests = scripted_llm.chat_requests
    assert len(requests) == 3 and requests[1].status == 200
    turn_ids = [r.headers.get(TURN_HEADER) for r in requests if r.body.get("tools")]
    assert len(turn_ids) == 2 and all(turn_ids) and turn_ids[0] != turn_ids[1], turn_ids


async def test_max_tool_calls_refuses_calls_beyond_the_limit(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given max_tool_calls=2 and a reply with three tool calls; then two run and the third
    gets the tool-limit message, which the model reads in its next call."""
    scripted_llm.add(
        tool_replies(
            ToolCall(name="get_topology", id="call_1"),
            ToolCall(name="list_templates", id="call_2"),
            ToolCall(name="get_topology", id="call_3"),
        ),
        text("Done with two."),
        text("Title", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(
            service.stream_chat(
                "Look around",
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(max_tool_calls=2),
            )
        )
    started = sorted(e["tool_call_id"] for e in events if e["type"] == "tool_start")
    ended = {e["tool_call_id"]: e["tool_output"] for e in events if e["type"] == "tool_end"}
    limit_message = (
        "Tool call limit reached (2 calls). Please simplify your request or break it into "
        "smaller steps. Current tool call count: 2/2."
    )
    assert started == ["call_1", "call_2"]
    assert ended["call_3"] == limit_message
    assert json.loads(ended["call_1"])["project"]
    second = scripted_llm.chat_requests[1].messages
    assert [m.get("tool_call_id") for m in second if m["role"] == "tool"] == [
        "call_1",
        "call_2",
        "call_3",
    ]
    assert second[-1]["content"] == limit_message


async def test_temperature_reaches_the_request_and_is_validated(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a temperature override of 0.3; then the model request carries it; without an
    override none is sent; 2.5 is refused with an error event before any model call."""
    scripted_llm.add(text("Warm."), text("Title", when=TITLE_REPLY), text("Default."))
    async with copilot(gns3_project, tmp_path) as service:
        first = await collect(
            service.stream_chat(
                "hi",
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(temperature=0.3),
            )
        )
        session_id = first[-1]["session_id"]
        await collect(
            service.stream_chat(
                "again", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
        refused = await collect(
            service.stream_chat(
                "hot",
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(temperature=2.5),
            )
        )
    requests = scripted_llm.chat_requests
    assert requests[0].body["temperature"] == 0.3
    assert "temperature" not in requests[2].body
    assert len(requests) == 3
    assert kinds(refused) == ["error", "done"]
    assert "temperature" in refused[0]["error"]


@pytest.mark.slow
async def test_teaching_mode_refuses_config_and_reports_blocked_commands(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given teaching mode and a model that insists on configuring PC1 (VPCS and config
    tools, which it is not offered, then an address change through the show tool); then
    the model was offered exactly the tools the mode allows, both config calls are refused
    and the `ip` command is reported blocked, `show ip` still runs, and PC1 really has no
    address afterwards."""
    await start_pcs(gns3_project, "PC1")
    set_ip = {"devices": [{"device": "PC1", "commands": ["ip 10.0.0.5/24"]}]}
    sneaky = {"devices": [{"device": "PC1", "commands": ["show ip", "ip 10.0.0.5/24"]}]}
    scripted_llm.add(
        tool_reply("run_vpcs_commands", set_ip, id="call_vpcs"),
        tool_reply("run_config_commands", set_ip, id="call_config"),
        tool_reply("run_show_commands", sneaky, id="call_show"),
        text("I cannot change devices in teaching mode."),
        text("Title", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(
            service.stream_chat(
                "Give PC1 10.0.0.5/24",
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(mode="teaching_assistant"),
            )
        )
    results = {
        e["tool_call_id"]: json.loads(e["tool_output"]) for e in events if e["type"] == "tool_end"
    }
    offered = {tool["function"]["name"] for tool in scripted_llm.chat_requests[0].body["tools"]}
    assert offered == TEACHING_TOOLS - {"check_objectives"}
    assert results["call_vpcs"]["status"] == "refused"
    assert results["call_config"]["status"] == "refused"
    (pc1,) = results["call_show"]
    assert [b["command"] for b in pc1["blocked_commands"]] == ["ip 10.0.0.5/24"]
    assert all(b["reason"] for b in pc1["blocked_commands"])
    assert "show ip" in json.dumps(pc1["output"])

    async with (
        GNS3Client(gns3_project.url, token=gns3_project.token) as gns3,
        ConsolePool() as pool,
    ):
        node = await gns3.find_node(gns3_project.project_id, "PC1")
        target = ConsoleTarget.from_node(node, server_host="127.0.0.1")
        (result,) = await pool.run_many([(target, ["show ip"])])
    assert "10.0.0.5" not in json.dumps(result.model_dump(mode="json"))


async def test_crash_left_tool_call_is_repaired_before_the_next_model_call(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a checkpoint that ends with an assistant tool call and no result (the process
    died between the model's reply and the tool); when the restarted service gets the next
    message; then a placeholder result is added first and the strict model server accepts
    the request."""
    scripted_llm.add(text("Hello."), text("Title", when=TITLE_REPLY), text("Recovered."))
    async with copilot(gns3_project, tmp_path) as service:
        first = await collect(service.stream_chat("hi", user_id=USER, llm=scripted_model_settings))
        session_id = first[-1]["session_id"]
        orphan = AIMessage(
            content="", tool_calls=[{"name": "get_topology", "args": {}, "id": "call_lost"}]
        )
        await service.engine.graph.aupdate_state(
            {"configurable": {"thread_id": session_id}}, {"messages": [orphan]}, as_node="llm_call"
        )
    async with copilot(gns3_project, tmp_path) as restarted:
        events = await collect(
            restarted.stream_chat(
                "still there?", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
        session = await restarted.sessions.get_session(session_id, user_id=USER)
    assert kinds(events) == ["content", "done"]
    request = scripted_llm.chat_requests[-1]
    assert request.status == 200
    assert [m["role"] for m in request.messages] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "tool",
        "user",
    ]
    assert request.messages[4]["tool_call_id"] == "call_lost"
    assert request.messages[4]["content"] == INTERRUPTED_RESULT
    # hi + Hello + (placeholder + still there? + Recovered)
    assert session is not None and session.message_count == 5


def stored_files(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (database, WAL, journal), by name."""
    return {path.name: path.read_bytes() for path in directory.rglob("*") if path.is_file()}


async def test_no_secret_reaches_the_data_directory(
    gns3_project: Any, make_scripted_llm: Any, tmp_path: Path
) -> None:
    """Given a model endpoint that requires its API key and a turn that calls GNS3; then
    no file in the data directory contains the API key, the GNS3 token or password."""
    api_key = "sk-test-do-not-store-4f9d2c"
    server = make_scripted_llm(
        [
            tool_reply("get_topology", {}),
            text("Here is your lab."),
            text("Lab", when=TITLE_REPLY),
        ],
        api_key=api_key,
    )
    llm = ModelSettings(base_url=server.base_url, api_key=api_key, model="scripted-model")
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(service.stream_chat("my lab?", user_id=USER, llm=llm))
        token = service.engine.lab.gns3.token
    assert kinds(events)[-1] == "done" and "error" not in kinds(events)
    assert all(r.headers["authorization"] == f"Bearer {api_key}" for r in server.chat_requests)
    stored = stored_files(tmp_path)
    assert "copilot_checkpoints.db" in stored
    secrets = [api_key, token or "", gns3_project.token, f"{gns3_project.password}\x00"]
    for name, data in stored.items():
        for secret in filter(None, secrets):
            assert secret.encode() not in data, f"{secret[:6]}... found in {name}"


@pytest.mark.slow
async def test_consumer_leaving_mid_tool_still_saves_stats_and_valid_history(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a turn running a long tool; when the consumer stops reading (aclose); then the
    turn is cancelled, its statistics are saved (user message, reply, tool result, the
    call's tokens), the call gets a placeholder result and the next turn is accepted."""
    await start_pcs(gns3_project, "PC1")
    commands = {
        "devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24", "ping 10.0.0.99 -c 30"]}]
    }
    scripted_llm.add(
        tool_reply(
            "run_vpcs_commands",
            commands,
            id="call_ping",
            usage={"prompt_tokens": 300, "completion_tokens": 30},
        ),
        text("Back.", usage={"prompt_tokens": 400, "completion_tokens": 2}),
        text("Title", when=TITLE_REPLY),
    )
    async with copilot(gns3_project, tmp_path, default_mode="lab_automation_assistant") as service:
        stream = service.stream_chat("Ping", user_id=USER, llm=scripted_model_settings)
        events = await stream_until(stream, "tool_start")
        await stream.aclose()
        session_id = events[-1]["session_id"]
        session = await service.sessions.get_session(session_id, user_id=USER)
        history = await service.sessions.get_history(session_id, user_id=USER)
        assert not service.engine.turns.is_running(session_id)
        follow_up = await collect(
            service.stream_chat(
                "hello again", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
    assert session is not None
    assert (session.message_count, session.llm_calls_count) == (3, 1)
    assert (session.input_tokens, session.output_tokens) == (300, 30)
    assert history is not None
    assert [m.role for m in history.messages] == ["user", "assistant", "tool"]
    assert json.loads(history.messages[-1].content)["status"] == "aborted"
    assert kinds(follow_up) == ["content", "done"]
    assert scripted_llm.chat_requests[1].status == 200


async def test_consumer_leaving_mid_answer_saves_the_call(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a slowly streamed answer; when the consumer stops after the first piece; then
    the model call and the user message are counted and the session can go on."""
    scripted_llm.add(text([f"w{i} " for i in range(20)], chunk_delay=0.1), text("Again."))
    async with copilot(gns3_project, tmp_path) as service:
        stream = service.stream_chat("Talk", user_id=USER, llm=scripted_model_settings)
        events = await stream_until(stream, "content")
        await stream.aclose()
        session_id = events[-1]["session_id"]
        session = await service.sessions.get_session(session_id, user_id=USER)
        follow_up = await collect(
            service.stream_chat(
                "more",
                session_id=session_id,
                user_id=USER,
                llm=scripted_model_settings,
                options=TurnOptions(max_iterations=1),
            )
        )
    assert session is not None
    assert (session.message_count, session.llm_calls_count) == (1, 1)
    assert kinds(follow_up) == ["content", "done"]


async def test_second_stream_on_a_busy_session_gets_a_clear_error(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a session whose turn is streaming; when a second message is sent to it; then
    the second stream is an error (saying so) and done, and the first turn completes."""
    scripted_llm.add(text(["a", "b", "c", "d"], chunk_delay=0.2), text("T", when=TITLE_REPLY))
    async with copilot(gns3_project, tmp_path) as service:
        first = service.stream_chat("one", user_id=USER, llm=scripted_model_settings)
        events = await stream_until(first, "content")
        session_id = events[-1]["session_id"]
        second = await collect(
            service.stream_chat(
                "two", session_id=session_id, user_id=USER, llm=scripted_model_settings
            )
        )
        events += await collect(first)
    assert kinds(second) == ["error", "done"]
    assert "already answering" in second[0]["error"]
    assert kinds(events) == ["content"] * 4 + ["done"]
    assert len(scripted_llm.chat_requests) == 2


async def test_heartbeats_fill_silence(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a model that takes a while to answer and a short heartbeat interval; then
    heartbeat events come before the answer."""
    scripted_llm.add(text("Finally.", first_byte_delay=0.6), text("T", when=TITLE_REPLY))
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(
            service.stream_chat(
                "slow?", user_id=USER, llm=scripted_model_settings, heartbeat_interval=0.1
            )
        )
    assert kinds(events)[0] == "heartbeat"
    assert [kind for kind in kinds(events) if kind != "heartbeat"] == ["content", "done"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (error(401), "API key"),
        (html_page(), "web page"),
        (error(500, "upstream exploded"), "upstream exploded"),
    ],
)
async def test_model_errors_become_readable_error_events(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
    reply: Any,
    expected: str,
) -> None:
    """Given a model endpoint failing; then the stream is one readable error and done, the
    call is counted, and the user's message is kept for the next turn."""
    scripted_llm.add(reply, text("Back again."))
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(service.stream_chat("hi", user_id=USER, llm=scripted_model_settings))
        session_id = events[-1]["session_id"]
        session = await service.sessions.get_session(session_id, user_id=USER)
    assert kinds(events) == ["error", "done"]
    assert expected in events[0]["error"]
    assert "Traceback" not in events[0]["error"]
    assert session is not None and (session.message_count, session.llm_calls_count) == (1, 1)


async def test_sessions_are_per_user(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a session of one user; then another user can neither see, read, rename, pin,
    abort, delete nor continue it; its owner can, and deletion removes its checkpoints."""
    scripted_llm.add(text("Hi."), text("Greeting", when=TITLE_REPLY))
    async with copilot(gns3_project, tmp_path) as service:
        events = await collect(service.stream_chat("hi", user_id=USER, llm=scripted_model_settings))
        sid = events[-1]["session_id"]
        other = "student2"
        assert await service.sessions.list_sessions(user_id=other) == []
        assert await service.sessions.get_history(sid, user_id=other) is None
        assert await service.sessions.rename_session(sid, "mine now", user_id=other) is None
        assert await service.sessions.pin_session(sid, user_id=other) is None
        assert await service.sessions.abort_session(sid, user_id=other) is False
        assert await service.sessions.delete_session(sid, user_id=other) is False
        intruder = await collect(
            service.stream_chat("hello", session_id=sid, user_id=other, llm=scripted_model_settings)
        )
        assert kinds(intruder) == ["error", "done"] and "not found" in intruder[0]["error"]

        renamed = await service.sessions.rename_session(sid, "My chat", user_id=USER)
        pinned = await service.sessions.pin_session(sid, user_id=USER)
        assert renamed is not None and renamed.title == "My chat"
        assert pinned is not None and pinned.pinned
        assert [s.thread_id for s in await service.sessions.list_sessions(user_id=USER)] == [sid]
        assert await service.sessions.delete_session(sid, user_id=USER)
        assert await service.sessions.list_sessions(user_id=USER) == []
        snapshot = await service.engine.graph.aget_state({"configurable": {"thread_id": sid}})
        assert snapshot.values == {}
    assert len(scripted_llm.chat_requests) == 2


async def test_manager_keeps_one_service_per_project(gns3_project: Any, tmp_path: Path) -> None:
    """Given the manager; then get_agent returns the same open service for a project until
    remove_agent closes it; close_all closes the rest."""
    async with (
        GNS3Client(gns3_project.url, token=gns3_project.token) as gns3,
        ConsolePool() as pool,
    ):
        manager = ProjectAgentManager(ChatSettings(tmp_path), LabAccess(gns3, pool))
        first = await manager.get_agent(gns3_project.project_id)
        assert await manager.get_agent(gns3_project.project_id.upper()) is first
        await manager.remove_agent(gns3_project.project_id)
        assert first.store.closed
        second = await manager.get_agent(gns3_project.project_id)
        assert second is not first
        await manager.close_all()
        assert second.store.closed
    assert (tmp_path / "projects" / gns3_project.project_id / "copilot_checkpoints.db").exists()


async def test_concurrent_sessions_of_one_project_stream_side_by_side(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given two users chatting at once in one project; then both turns complete with
    their own statistics, and share one read of the topology, which both prompts show."""
    scripted_llm.add(
        text(["x"] * 5, chunk_delay=0.05, usage={"prompt_tokens": 10, "completion_tokens": 5}),
        text(["y"] * 5, chunk_delay=0.05, usage={"prompt_tokens": 20, "completion_tokens": 5}),
        text("T1", when=TITLE_REPLY),
        text("T2", when=TITLE_REPLY),
    )
    await add_pcs(gns3_project, "PC1")
    transport = CountingTransport()
    async with copilot(gns3_project, tmp_path, transport) as service:
        results = await asyncio.gather(
            collect(service.stream_chat("a", user_id="u1", llm=scripted_model_settings)),
            collect(service.stream_chat("b", user_id="u2", llm=scripted_model_settings)),
        )
        sessions = [
            await service.sessions.get_session(events[-1]["session_id"], user_id=user)
            for events, user in zip(results, ["u1", "u2"], strict=True)
        ]
    assert all(kinds(events)[-1] == "done" and "error" not in kinds(events) for events in results)
    assert sorted(s.input_tokens for s in sessions if s) == [10, 20]
    assert len([path for path in transport.paths if path.endswith("/links")]) == 1
    assert all("PC1" in r.messages[0]["content"] for r in scripted_llm.chat_requests[:2])


async def test_closing_the_service_aborts_running_turns(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a turn streaming slowly; when the service closes (project closed); then the
    turn ends with abort and done, its statistics saved before the database closed."""
    scripted_llm.add(text([f"p{i} " for i in range(50)], chunk_delay=0.1))
    async with copilot(gns3_project, tmp_path) as service:
        stream = service.stream_chat("Talk", user_id=USER, llm=scripted_model_settings)
        events = await stream_until(stream, "content")
        rest = asyncio.ensure_future(collect(stream))
        await service.close()
        events += await rest
        assert service.store.closed
    assert kinds(events)[-2:] == ["abort", "done"]
    async with copilot(gns3_project, tmp_path) as reopened:
        session = await reopened.sessions.get_session(events[-1]["session_id"], user_id=USER)
    assert session is not None and (session.message_count, session.llm_calls_count) == (2, 1)


async def test_reply_chunks_reach_the_stream_without_a_wake_up_each(
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """The model's reply reaches the turn's queue on the loop itself: a
    200-chunk answer streams as 200 pieces with far fewer `call_soon_threadsafe` calls than
    chunks (LangGraph's `messages` mode made one per chunk). The loop's method is wrapped
    to count its calls; nothing is replaced."""
    pieces = [f"w{i} " for i in range(200)]
    scripted_llm.add(text(pieces), text("T", when=TITLE_REPLY))
    loop = asyncio.get_running_loop()
    wakeups = 0
    original = loop.call_soon_threadsafe

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal wakeups
        wakeups += 1
        return original(*args, **kwargs)

    async with copilot(gns3_project, tmp_path) as service:
        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        try:
            events = await collect(
                service.stream_chat("hi", user_id=USER, llm=scripted_model_settings)
            )
        finally:
            del loop.call_soon_threadsafe
    content = [e["content"] for e in events if e["type"] == "content"]
    assert "".join(content) == "".join(pieces) and len(content) == len(pieces)
    assert kinds(events)[-1] == "done"
    assert wakeups < len(pieces) // 4
