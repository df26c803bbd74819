"""Time from a chat request to the model request, over HTTP on a warm server.

A Jupyter server with the copilot runs in a child process; a real local GNS3 lab holds the
project (two VPCS nodes and a link between them, opened); the scripted model server (TEST
DOUBLE of the OpenAI API, `testing.scripted_llm.ScriptedLLM`, in this process) records when
each request arrived (`RecordedRequest.received`, wall clock, so comparable across
processes). Each repetition sends `POST {base_url}copilot/projects/{id}/chat/stream`,
alternately a new session and a follow-up in the previous one, reads the whole turn,
and takes the model request's arrival minus the moment just before the client sent the
request. The first turns (imports, connections, first compile) are left out.

`--compare SRC` starts a second server with `PYTHONPATH=SRC` (another checkout of the
copilot, e.g. the main branch) and interleaves its turns with this one's, on the same
project, lab and model server; besides each tree's medians it prints the median of the
per-pair differences (a pair's two turns run one right after the other, so they share
the machine's load of the moment).

`--tool-turns N` then times N turns of three model calls in one session (the model runs
`show ip` on PC1, then on PC2, then answers; both PCs are started for it): from each
model request's arrival to the next one's (the scripted reply, the tool's console
work, the graph's step with its checkpoints, the next call's setup; the history grows by
six messages a turn: the message counts of the last turn's requests are printed).

The last line is this tree's median over both kinds: `time to model call: 14 ms`.

    .venv/bin/python benchmarks/time_to_model.py [--reps 15] [--compare /path/to/main]
        [--tool-turns 8]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

import httpx
from _common import gns3_lab, parse_args
from server_stream import RunningServer, jupyter_server

from jupyter_gns3_copilot.gns3 import GNS3Client, Project
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text, tool_call

WARM_UP = 2
TITLE_REPLY = {"tools": False}
"""The title request is the only one offering no tools."""
KINDS = ("new session", "follow-up")


async def one_turn(
    client: httpx.AsyncClient, url: str, llm: ScriptedLLM, session_id: str | None
) -> tuple[float, str]:
    """Seconds from sending one chat request to the model request's arrival, and the
    turn's session id."""
    llm.add(text("ok"), text("Benchmark", when=TITLE_REPLY))
    seen = len(llm.chat_requests)
    body: dict[str, object] = {"message": "What is in the lab?", "stream": False}
    if session_id is not None:
        body["session_id"] = session_id
    sent = time.time()
    reply = await client.post(url, json=body)
    reply.raise_for_status()
    chat = next(r for r in llm.chat_requests[seen:] if r.body.get("tools"))
    return chat.received - sent, reply.json()["session_id"]


async def tool_turn(
    client: httpx.AsyncClient, url: str, llm: ScriptedLLM, session_id: str | None
) -> tuple[list[float], list[int], str]:
    """One turn of three model calls (two `show ip` tool calls, then text): seconds from
    each model request's arrival to the next one's, the messages each request carried,
    and the turn's session id."""
    llm.add(
        tool_call("run_show_commands", {"devices": [{"device": "PC1", "commands": ["show ip"]}]}),
        tool_call("run_show_commands", {"devices": [{"device": "PC2", "commands": ["show ip"]}]}),
        text("Both have no address yet."),
        text("Benchmark", when=TITLE_REPLY),
    )
    seen = len(llm.chat_requests)
    body: dict[str, object] = {"message": "Show both addresses", "stream": False}
    if session_id is not None:
        body["session_id"] = session_id
    reply = await client.post(url, json=body)
    reply.raise_for_status()
    calls = [r for r in llm.chat_requests[seen:] if r.body.get("tools")]
    assert len(calls) == 3, calls
    steps = [after.received - before.received for before, after in itertools.pairwise(calls)]
    return steps, [len(call.messages) for call in calls], reply.json()["session_id"]


async def measure(
    lab: LabServer,
    servers: dict[str, RunningServer],
    llm: ScriptedLLM,
    reps: int,
    tool_turns: int,
) -> tuple[dict[str, dict[str, list[float]]], dict[str, list[float]], list[int]]:
    """Times to the model call by tree and kind; the tool turns' steps by tree; the
    messages in the last tool turn's requests."""
    times = {label: {kind: [] for kind in KINDS} for label in servers}
    steps: dict[str, list[float]] = {label: [] for label in servers}
    sizes: list[int] = []
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-ttm-{uuid.uuid4().hex[:6]}")
        clients = {
            label: httpx.AsyncClient(
                headers={"Authorization": f"token {server.token}"},
                timeout=60,
                trust_env=False,
            )
            for label, server in servers.items()
        }
        try:
            for name in ("PC1", "PC2"):
                await gns3.create_node_from_template(project.project_id, "VPCS", name)
            await gns3.create_link(project.project_id, "PC1", "e0", "PC2", "e0")
            sessions: dict[str, str | None] = dict.fromkeys(servers)
            for rep in range(2 * (reps + WARM_UP)):
                kind = KINDS[rep % 2]
                for label, server in servers.items():
                    given = sessions[label] if kind == "follow-up" else None
                    seconds, sessions[label] = await one_turn(
                        clients[label], chat_url(server, project), llm, given
                    )
                    if rep >= 2 * WARM_UP:
                        times[label][kind].append(seconds)
            if tool_turns:
                await gns3.start_all(project.project_id)
                sessions = dict.fromkeys(servers)
                for rep in range(tool_turns + 1):
                    for label, server in servers.items():
                        gaps, sizes, sessions[label] = await tool_turn(
                            clients[label], chat_url(server, project), llm, sessions[label]
                        )
                        if rep:  # the first turn opens the consoles
                            steps[label] += gaps
        finally:
            for client in clients.values():
                await client.aclose()
            await gns3.delete_project(project.project_id)
    return times, steps, sizes


def chat_url(server: RunningServer, project: Project) -> str:
    return f"{server.url}copilot/projects/{project.project_id}/chat/stream"


def ms(values: list[float]) -> str:
    return (
        f"median {statistics.median(values) * 1000:6.1f} ms (min {min(values) * 1000:.1f}, "
        f"max {max(values) * 1000:.1f}, {len(values)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15, help="timed turns of each kind")
    parser.add_argument("--compare", help="another copilot source tree, run interleaved")
    parser.add_argument(
        "--tool-turns", type=int, default=0, help="timed turns of three model calls"
    )
    args = parse_args(parser, reps=1)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="bench-time-to-model-"))
    with ExitStack() as stack:
        llm = stack.enter_context(ScriptedLLM())
        lab = stack.enter_context(gns3_lab(work / "lab"))
        servers = {"this tree": stack.enter_context(jupyter_server(lab, llm.base_url, work))}
        if args.compare:
            other = jupyter_server(lab, llm.base_url, work / "compare", pythonpath=args.compare)
            servers[args.compare] = stack.enter_context(other)
        times, steps, sizes = asyncio.run(measure(lab, servers, llm, args.reps, args.tool_turns))
    for label, kinds in times.items():
        for kind, values in kinds.items():
            print(f"{label:>20} {kind:12} {ms(values)}")
    if args.compare:
        for kind in KINDS:
            pairs = zip(times["this tree"][kind], times[args.compare][kind], strict=True)
            print(f"{'pairs':>20} {kind:12} this minus other {ms([a - b for a, b in pairs])}")
    if args.tool_turns:
        for label, values in steps.items():
            print(f"{label:>20} model request -> next in a tool turn {ms(values)}")
        print(f"messages sent in the last tool turn's calls: {sizes}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ours = times["this tree"]["new session"] + times["this tree"]["follow-up"]
    print(f"time to model call: {statistics.median(ours) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
