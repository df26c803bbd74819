"""What the Jupyter server adds to a chat stream: the HTTP SSE endpoint vs
`AgentService.stream_chat` called directly vs a bare `ChatOpenAI.astream`, against the same
scripted model server in the same run.

The scripted model server (TEST DOUBLE of the OpenAI API, `python -m
jupyter_gns3_copilot.testing.scripted_llm script.json`) and a Jupyter server with the
copilot extension each run in their own process; a real local GNS3 lab holds the project
(the endpoint checks that it is opened and the turn reads its topology). Each repetition
times, in order, one bare `astream`, one `stream_chat` turn and one
`POST {base_url}copilot/projects/{id}/chat/stream` read with an async httpx client (each
turn a new session; their title call after the answer is not timed). Replies are CHUNKS
content pieces with no delay. Medians over REPS repetitions after one warm-up of each:

- content events per second, from sending the request to the last piece (over HTTP the
  pieces, since the relay merges those queued within a frame; how many content events
  carried them is printed too);
- time to the first content piece;
- a 20-device tool call streamed in 228 fragments: bare, first fragment -> last chunk;
  over HTTP, first `tool_call` event -> the `complete` one, and how many events.

The last line is the HTTP endpoint's content events/s over the bare stream's:
`http ratio vs bare: 0.83`.

    .venv/bin/python benchmarks/server_stream.py [--reps 7] [--chunks 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _common import gns3_lab, parse_args
from langchain_core.messages import HumanMessage
from stream_overhead import PROMPT, Sample, bare, chat, scripted_server, timed

from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
from jupyter_gns3_copilot.chat.service import AgentService
from jupyter_gns3_copilot.chat.settings import ChatSettings
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.tools import LabAccess

SERVER_START_TIMEOUT = 90.0
MODEL = "scripted-model"


DEVICES = 20
TOOL_FRAGMENTS = 228
"""A 20-device `run_show_commands` call streamed as a real model did: 228 fragments."""


def write_script(path: Path, runs: int, chunks: int) -> None:
    """Per run: bare, stream_chat (+ its title), HTTP (+ its title); then the tool call
    bare, and over HTTP (+ the answer after the tool, + its title)."""
    long_reply = {"content": [f"w{i} " for i in range(chunks)]}
    title = {"when": {"last_message": "^User: "}, "content": "Benchmark"}
    devices = [{"device": f"PC{n}", "commands": ["show ip"]} for n in range(DEVICES)]
    call = {"name": "run_show_commands", "arguments": {"devices": devices}}
    tool_reply = {"tool_calls": [{**call, "id": "call_bench", "chunks": TOOL_FRAGMENTS}]}
    after_tool = {"content": "Done."}
    replies = [long_reply, long_reply, title, long_reply, title]
    replies += [tool_reply, tool_reply, after_tool, title]
    path.write_text(json.dumps({"description": "server stream", "replies": replies * runs}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class RunningServer:
    url: str
    """The server's base URL (with its base_url)."""
    token: str
    log: Path
    pid: int


@contextmanager
def jupyter_server(
    lab: LabServer,
    model_url: str,
    work: Path,
    ready_path: str = "copilot/status",
    pythonpath: str | None = None,
    copilot: bool = True,
) -> Iterator[RunningServer]:
    """A Jupyter server with the copilot in a child process (its files under `work`),
    yielded once `ready_path` answers 200; `pythonpath` replaces PYTHONPATH (another
    source tree of the copilot, to compare); `copilot=False`: the same server with the
    copilot disabled."""
    port, token = free_port(), secrets.token_hex(16)
    root = work / "jupyter"
    root.mkdir(parents=True, exist_ok=True)
    data_dir = work / "data"
    env = {
        **os.environ,
        "GNS3_URL": lab.url,
        "GNS3_USER": lab.username,
        "GNS3_PASSWORD": lab.password,
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "sk-bench",
        "GNS3_COPILOT_MODEL": MODEL,
        "GNS3_COPILOT_DATA_DIR": str(data_dir),
        "JUPYTER_CONFIG_DIR": str(root / "config"),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
    }
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.base_url=/bench/",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.jpserver_extensions=jupyter_gns3_copilot={copilot}",
        "--GNS3Copilot.llm_max_retries=0",
        "--ServerApp.log_level=WARN",
    ]
    log = (root / "server.log").open("w")
    # In `root`, not the caller's directory: `python -m` puts the working directory first
    # on sys.path, ahead of PYTHONPATH, so a checkout's root would shadow `pythonpath`.
    process = subprocess.Popen(command, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/bench/"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter server exited; see {log.name}")
            try:
                reply = httpx.get(
                    f"{url}{ready_path}",
                    headers={"Authorization": f"token {token}"},
                    timeout=5,
                    trust_env=False,
                )
                if reply.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter server not ready in {SERVER_START_TIMEOUT:g} s")
            time.sleep(0.2)
        yield RunningServer(url, token, root / "server.log", process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


async def bare_tool_call(settings: ModelSettings) -> float:
    """Seconds from a bare stream's first tool-call fragment to its last chunk."""
    model = make_chat_model(settings)
    first = last = 0.0
    async for chunk in model.astream([HumanMessage(PROMPT)]):
        last = time.perf_counter()
        if chunk.tool_call_chunks and not first:
            first = last
    return last - first


async def http_tool_call(client: httpx.AsyncClient, url: str) -> tuple[float, int]:
    """Over HTTP: seconds from the first `tool_call` event to the complete one, and the
    number of `tool_call` events."""
    first = complete = 0.0
    count = 0
    async for event in sse_events(client, url):
        if event["type"] == "tool_call":
            count += 1
            first = first or time.perf_counter()
            if event["tool_call"]["function"].get("complete"):
                complete = time.perf_counter()
    return complete - first, count


async def content_pieces(
    events: AsyncIterator[dict[str, Any]], seen: list[int] | None = None
) -> AsyncIterator[str]:
    """The reply's pieces (`w<i> `) as they arrive, however many one content event holds
    (the relay sends at most one write a frame, merging the pieces queued meanwhile); each
    content event appends 1 to `seen`."""
    async for event in events:
        if event["type"] == "content":
            if seen is not None:
                seen.append(1)
            for piece in event["content"].split(" ")[:-1]:
                yield piece + " "


async def sse_events(client: httpx.AsyncClient, url: str) -> AsyncIterator[dict[str, Any]]:
    """The events of one chat turn through the HTTP endpoint."""
    async with client.stream("POST", url, json={"message": PROMPT}) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                yield json.loads(line[len("data: ") :])


async def measure(model_url: str, lab: LabServer, server_url: str, token: str, reps: int) -> None:
    settings = ModelSettings(
        base_url=model_url, api_key="sk-bench", model=MODEL, max_retries=0, timeout=120
    )
    async with (
        GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3,
        ConsolePool() as pool,
        httpx.AsyncClient(
            headers={"Authorization": f"token {token}"}, timeout=120, trust_env=False
        ) as client,
    ):
        project = await gns3.create_project(f"bench-server-{uuid.uuid4().hex[:6]}")
        data_dir = Path(tempfile.mkdtemp(prefix="bench-direct-"))
        service = await AgentService.open(
            project.project_id, ChatSettings(data_dir), lab=LabAccess(gns3, pool)
        )
        stream_url = f"{server_url}copilot/projects/{project.project_id}/chat/stream"
        try:
            runs: dict[str, list[Sample]] = {"bare astream": [], "stream_chat": [], "HTTP SSE": []}
            tool_calls: dict[str, list[float]] = {"bare": [], "HTTP": []}
            tool_events: list[int] = []
            content_events: list[int] = []
            for rep in range(reps + 1):
                seen: list[int] = []
                samples = {
                    "bare astream": await bare(settings),
                    "stream_chat": await chat(service, settings),
                    "HTTP SSE": await timed(
                        content_pieces(sse_events(client, stream_url), seen), bool
                    ),
                }
                bare_call = await bare_tool_call(settings)
                http_call, events = await http_tool_call(client, stream_url)
                if rep:  # the first repetition warms up imports, connections, tokenizers
                    for label, sample in samples.items():
                        runs[label].append(sample)
                    tool_calls["bare"].append(bare_call)
                    tool_calls["HTTP"].append(http_call)
                    tool_events.append(events)
                    content_events.append(len(seen))
        finally:
            await service.close()
            await gns3.delete_project(project.project_id)
    print(f"\n{'':14} {'events/s':>10} {'first event ms':>15}  (medians of {reps} runs)")
    medians = {}
    for label, samples in runs.items():
        rate = statistics.median(s.rate for s in samples)
        first = statistics.median(s.first for s in samples)
        medians[label] = (rate, first)
        print(f"{label:14} {rate:10.0f} {first * 1000:15.1f}   ({samples[0].pieces} pieces)")
    http, direct = medians["HTTP SSE"], medians["stream_chat"]
    print(f"HTTP SSE: the pieces came in {statistics.median(content_events):.0f} content events")
    print(
        f"HTTP SSE / stream_chat events/s = {http[0] / direct[0]:.2f}; "
        f"the endpoint adds {(http[1] - direct[1]) * 1000:.1f} ms to the first event"
    )
    bare_call, http_call = (statistics.median(tool_calls[k]) for k in ("bare", "HTTP"))
    print(
        f"{DEVICES}-device tool call ({TOOL_FRAGMENTS} fragments): bare first fragment -> "
        f"last chunk {bare_call * 1000:.1f} ms; HTTP first tool_call -> complete "
        f"{http_call * 1000:.1f} ms in {statistics.median(tool_events):.0f} events "
        f"(added: {(http_call - bare_call) * 1000:.1f} ms)"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"http ratio vs bare: {http[0] / medians['bare astream'][0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="timed runs of each (median)")
    parser.add_argument("--chunks", type=int, default=2000, help="content pieces per reply")
    args = parse_args(parser, reps=1, chunks=10)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="bench-server-stream-"))
    write_script(work / "script.json", args.reps + 1, args.chunks)
    began = time.perf_counter()
    with (
        scripted_server(work / "script.json") as model_url,
        gns3_lab(work / "lab") as lab,
    ):
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        with jupyter_server(lab, model_url, work) as server:
            asyncio.run(measure(model_url, lab, server.url, server.token, args.reps))


if __name__ == "__main__":
    main()
