"""Reliability: a console is never left wedged, on REAL VPCS consoles.

Two VPCS linked back to back in the local GNS3 lab (`gns3_project`), so a ping to the
neighbour answers every second for as long as it runs. Each test starts a ping that would
run for a day through `run_show_commands`, ends it early the way a turn can (its command
deadline, the abort event, a cancelled task), and proves the console answers the next
command at once, from the same pool and from a second pool (another user's turn).
Every console byte goes through GNS3's telnet proxy to the real VPCS program; the tests
marked with `transport` run twice, over telnet and over GNS3's console websocket. The
first test needs no lab: the direct tool route refuses an oversized command before any
console is involved (GNS3 is configured at a closed port).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import telnetlib3
from support.server import call, kinds, lab_traits, open_stream, server_config

from jupyter_gns3_copilot.console import ConsolePool, ConsoleTransport
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, TEACHING, ToolContext, execute_tool

ENDLESS_PING = "ping 10.0.0.2 -c 99999"
both_transports = pytest.mark.parametrize("transport", ["telnet", "websocket"])


def client_for(project: Any) -> GNS3Client:
    return GNS3Client(
        project.url, username=project.username, password=project.password, token=project.token
    )


def show_ip(device: str = "PC1") -> dict[str, Any]:
    return {"devices": [{"device": device, "commands": ["show ip"]}]}


def endless_ping() -> dict[str, Any]:
    return {"devices": [{"device": "PC1", "commands": [ENDLESS_PING]}]}


@contextlib.asynccontextmanager
async def two_pcs(
    project: Any, transport: ConsoleTransport = "telnet"
) -> AsyncIterator[ToolContext]:
    """PC1 (10.0.0.1) and PC2 (10.0.0.2) linked, started and addressed; a lab-mode context
    whose consoles go over `transport`."""
    async with client_for(project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3,
            project_id=project.project_id,
            consoles=pool,
            mode=LAB_AUTOMATION,
            console_transport=transport,
        )
        for index, name in enumerate(("PC1", "PC2")):
            await gns3.create_node_from_template(project.project_id, "VPCS", name, x=index * 150)
        await gns3.create_link(project.project_id, "PC1", "e0", "PC2", "e0")
        started = await execute_tool(ctx, "start_nodes", {"nodes": ["PC1", "PC2"]})
        assert started.ok, started.result
        addressed = await execute_tool(
            ctx,
            "run_vpcs_commands",
            {
                "devices": [
                    {"device": "PC1", "commands": ["ip 10.0.0.1/24"]},
                    {"device": "PC2", "commands": ["ip 10.0.0.2/24"]},
                ]
            },
        )
        assert addressed.ok, addressed.result
        yield ctx


async def assert_usable_by_anyone(ctx: ToolContext) -> float:
    """`show ip` on PC1 succeeds from the same pool and from a fresh one (another user);
    returns the seconds the first of them took."""
    before = time.monotonic()
    same = await execute_tool(ctx, "run_show_commands", show_ip())
    took = time.monotonic() - before
    [entry] = same.result
    assert entry["status"] == "success", entry
    assert "IP/MASK     : 10.0.0.1/24" in entry["output"]
    async with ConsolePool() as other_pool:
        other = ToolContext(
            gns3=ctx.gns3,
            project_id=ctx.project_id,
            consoles=other_pool,
            mode=TEACHING,
            console_transport=ctx.devices.console_transport,
        )
        [entry] = (await execute_tool(other, "run_show_commands", show_ip())).result
    assert entry["status"] == "success", entry
    return took


@pytest.fixture
def jp_server_config(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """The extension; GNS3 is the local lab for `lab` tests, a closed port otherwise."""
    lab = request.getfixturevalue("gns3_lab") if request.node.get_closest_marker("lab") else None
    return server_config(tmp_path / "copilot-data", **(lab_traits(lab) if lab else {}))


async def test_the_tool_route_refuses_an_oversized_command_naming_the_limit(jp_fetch) -> None:
    reply = await call(
        jp_fetch,
        *("copilot", "projects", "0b7e7a53-5c3e-4b8e-9a53-1a2b3c4d5e6f", "tools"),
        "run_show_commands",
        method="POST",
        body={"arguments": {"devices": [{"device": "PC1", "commands": ["x" * 100_000]}]}},
    )
    assert reply.code == 400, reply.body
    assert reply.error["field"] == "arguments.devices.0.commands"
    assert "a console command may have at most 512" in reply.error["message"]
    assert "100000 characters" in reply.error["message"]


@pytest.mark.lab
@pytest.mark.slow
@both_transports
async def test_a_ping_past_its_deadline_is_interrupted_and_the_console_answers(
    gns3_project: Any, transport: ConsoleTransport
) -> None:
    """Given a ping of 99999 probes and a 3 s command timeout (automation mode, no cap); when the
    deadline passes, then the result says it was interrupted with Ctrl-C and the console
    is back, with the replies so far; `show ip` then works at once, for anyone."""
    async with two_pcs(gns3_project, transport) as lab:
        lab.command_timeout = 3
        before = time.monotonic()
        outcome = await execute_tool(lab, "run_show_commands", endless_ping())
        interrupted_after = time.monotonic() - before - lab.command_timeout
        [entry] = outcome.result
        assert entry["status"] == "failed"
        assert entry["error"] == (
            f"{ENDLESS_PING}: PC1: no prompt within 3 s after '{ENDLESS_PING}'; interrupted it "
            "(Ctrl-C), and the console is back at its prompt."
        )
        assert "10.0.0.2 icmp_seq=1 ttl=64" in entry["output"]
        lab.command_timeout = 30
        took = await assert_usable_by_anyone(lab)
        print(f"\nfrom deadline to prompt: {interrupted_after:.3f} s; next show ip: {took:.3f} s")


@pytest.mark.lab
@pytest.mark.slow
@both_transports
async def test_an_aborted_ping_is_interrupted_before_the_tool_returns(
    gns3_project: Any, transport: ConsoleTransport
) -> None:
    """Given a long ping streaming its replies; when the turn's abort event is set, then
    the tool returns aborted, saying the command was interrupted and the console is back;
    `show ip` then works at once, for anyone."""
    async with two_pcs(gns3_project, transport) as lab:
        lab.abort = asyncio.Event()
        replies = asyncio.Event()

        def progress(event: dict[str, Any]) -> None:
            if "icmp_seq=2" in event["message"]:
                replies.set()

        lab.progress = progress
        pinging = asyncio.ensure_future(execute_tool(lab, "run_show_commands", endless_ping()))
        await replies.wait()
        lab.abort.set()
        aborted_at = time.monotonic()
        [entry] = (await pinging).result
        print(f"\nfrom abort to the tool's result: {time.monotonic() - aborted_at:.3f} s")
        assert entry["status"] == "failed"
        assert entry["error"] == (
            f"{ENDLESS_PING}: Stopped: the request was aborted. The command was interrupted "
            "and the console is back at its prompt."
        )
        assert "icmp_seq=2 " in entry["output"]
        lab.abort = None
        await assert_usable_by_anyone(lab)


@pytest.mark.lab
@pytest.mark.slow
async def test_a_turn_cancelled_mid_command_leaves_the_console_usable(gns3_project: Any) -> None:
    """Given a long ping streaming its replies; when the task running the tool is
    cancelled (a turn torn down, no abort event), then the cancellation ends only after
    the ping was interrupted, and `show ip` works at once, for anyone."""
    async with two_pcs(gns3_project) as lab:
        replies = asyncio.Event()
        lab.progress = lambda event: replies.set() if "icmp_seq=2" in event["message"] else None
        pinging = asyncio.ensure_future(execute_tool(lab, "run_show_commands", endless_ping()))
        await replies.wait()
        pinging.cancel()
        cancelled_at = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await pinging
        print(f"\nfrom cancel to the end of the task: {time.monotonic() - cancelled_at:.3f} s")
        await assert_usable_by_anyone(lab)


@pytest.mark.lab
@pytest.mark.slow
@both_transports
async def test_teaching_mode_caps_an_endless_ping_and_streams_its_replies(
    gns3_project: Any, transport: ConsoleTransport
) -> None:
    """Given teaching mode; when a ping of 99999 probes is asked for, then it is sent as
    `-c 10` and the result says so, and progress events carry the growing output while
    the replies arrive, before the tool ends."""
    async with two_pcs(gns3_project, transport) as lab:
        lab.mode = TEACHING
        events: list[tuple[float, dict[str, Any]]] = []
        lab.progress = lambda event: events.append((time.monotonic(), event))
        outcome = await execute_tool(lab, "run_show_commands", endless_ping())
        [entry] = outcome.result
        assert entry["status"] == "success", entry
        assert entry["capped_commands"] == [
            {
                "command": ENDLESS_PING,
                "sent": "ping 10.0.0.2 -c 10",
                "reason": "capped to `-c 10` in teaching mode (at most 10 probes)",
            }
        ]
        assert entry["capped_info"] == (
            f"`{ENDLESS_PING}` was sent as `ping 10.0.0.2 -c 10`: capped to `-c 10` in "
            "teaching mode (at most 10 probes)"
        )
        assert entry["commands"] == [ENDLESS_PING]
        assert entry["output"].startswith("PC1> ping 10.0.0.2 -c 10\n")
        assert "icmp_seq=10 " in entry["output"] and "icmp_seq=11 " not in entry["output"]

        streamed = [event for _, event in events if event["message"] != "PC1: success"]
        assert len(streamed) >= 2
        assert all(e["node"] == "PC1" and e["tool"] == "run_show_commands" for e in streamed)
        assert all(e["message"].startswith("PC1> ping 10.0.0.2 -c 10\n") for e in streamed)
        lengths = [len(e["message"]) for e in streamed]
        assert lengths == sorted(lengths) and lengths[0] < lengths[-1]
        assert "icmp_seq=1 " in streamed[0]["message"]
        span = events[-1][0] - events[0][0]
        rate = len(streamed) / span if span else float("inf")
        print(f"\n{len(streamed)} progress events over {span:.1f} s ({rate:.2f}/s)")


@pytest.mark.lab
@pytest.mark.slow
async def test_a_ping_someone_left_running_is_interrupted_by_the_next_user(
    gns3_project: Any,
) -> None:
    """Given a ping of 99999 probes typed into PC1's console by someone else (a raw telnet
    client, as GNS3's console window is) and left running after they disconnect; when
    another user runs `show ip`, then waking the console interrupts the ping and the
    command succeeds."""
    async with two_pcs(gns3_project) as lab:
        pc1 = await lab.gns3.find_node(lab.project_id, "PC1")
        target = await lab.console_target(pc1)
        reader, writer = await telnetlib3.open_connection(
            target.host, target.port, encoding="utf-8", force_binary=True, connect_maxwait=1.0
        )
        writer.write(ENDLESS_PING + "\n")
        seen = ""
        while "icmp_seq=2 " not in seen:
            seen += await asyncio.wait_for(reader.read(4096), 10)
        writer.close()
        async with ConsolePool() as other_pool:
            other = ToolContext(
                gns3=lab.gns3, project_id=lab.project_id, consoles=other_pool, mode=TEACHING
            )
            [entry] = (await execute_tool(other, "run_show_commands", show_ip())).result
        assert entry["status"] == "success", entry
        assert "IP/MASK     : 10.0.0.1/24" in entry["output"]


@pytest.mark.lab
@pytest.mark.slow
async def test_over_http_a_capped_ping_streams_its_replies_and_stops_on_abort(
    jp_fetch, gns3_project: Any
) -> None:
    """Given the direct tool route in teaching mode (a ping of 99999 probes, as a
    student might send); when its SSE stream is read, then progress events carry the growing
    output while the ping still runs (an abort sent after the second one still finds it
    running), the result says the ping was capped and interrupted, and the next request
    on PC1 works."""
    async with two_pcs(gns3_project):
        tool = ("copilot", "projects", gns3_project.project_id, "tools", "run_show_commands")
        stream = open_stream(jp_fetch, *tool, body={"arguments": endless_ping()})
        run_id = (await stream.until("tool_start"))[-1]["session_id"]
        outputs: list[str] = []
        while len(outputs) < 2:
            [*_, event] = await stream.until("progress")
            if event.get("node") == "PC1" and "icmp_seq=" in event["message"]:
                outputs.append(event["message"])
        abort = await call(
            jp_fetch,
            *("copilot", "projects", gns3_project.project_id, "chat", "sessions", run_id),
            "abort",
            method="POST",
        )
        assert abort.body == {"status": "ok", "session_id": run_id}
        events = await stream.finish(timeout=30)
        assert kinds(events)[-3:] == ["tool_end", "abort", "done"]
        [entry] = json.loads(events[-3]["tool_output"])
        assert entry["capped_info"].startswith(
            f"`{ENDLESS_PING}` was sent as `ping 10.0.0.2 -c 10`"
        )
        assert entry["error"].endswith(
            "Stopped: the request was aborted. The command was interrupted and the console is "
            "back at its prompt."
        )
        assert outputs[0].startswith("PC1> ping 10.0.0.2 -c 10\n")
        assert len(outputs[0]) < len(outputs[1]) and outputs[1].startswith(outputs[0])

        shown = await call(
            jp_fetch,
            *tool,
            method="POST",
            body={"arguments": show_ip(), "stream": False},
        )
        assert (
            shown.code == 200
            and "IP/MASK     : 10.0.0.1/24" in shown.body["tool_calls"][0]["output"]
        )
