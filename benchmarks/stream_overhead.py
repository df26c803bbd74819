"""What the chat service adds to a model's stream: `AgentService.stream_chat` vs a bare
`ChatOpenAI.astream`, against the same scripted model server in the same run.

The scripted model server (TEST DOUBLE of the OpenAI API) runs in its own process, so it
does not compete with the measured client for the interpreter, and streams replies of
CHUNKS content pieces with no delay. Each repetition times one bare `astream` and one
`stream_chat` turn (a new session each: session row, checkpoints, statistics, topology
from a real local GNS3 lab, context trimming, the title model call after the answer is
not timed). Figures are medians over REPS repetitions after one warm-up of each:

- content events (chunks) per second, from sending the request to the last piece;
- time to the first content piece.

Goals: ratio stream_chat / bare >= 0.5; <= 15 ms added to the first event.

    .venv/bin/python benchmarks/stream_overhead.py [--reps 7] [--chunks 2000] [--no-lab]

`--no-lab` points the copilot at a GNS3 address where nothing listens (the topology fetch
fails at once) instead of starting the local lab.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import gns3_lab, parse_args
from langchain_core.messages import HumanMessage

from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
from jupyter_gns3_copilot.agent.topology_source import read_topology
from jupyter_gns3_copilot.chat.service import AgentService
from jupyter_gns3_copilot.chat.settings import ChatSettings
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.tools import LabAccess

PROMPT = "Stream me a long answer."
UNREACHABLE_GNS3 = "http://127.0.0.1:9"


@dataclass
class Sample:
    first: float
    """Seconds to the first content piece."""
    rate: float
    """Content pieces per second, from the request to the last piece."""
    pieces: int


def write_script(path: Path, runs: int, chunks: int) -> None:
    """Two long replies per run (bare, then stream_chat) and title replies for the turns."""
    long_reply = {"content": [f"w{i} " for i in range(chunks)]}
    title = {"when": {"last_message": "^User: "}, "content": "Benchmark"}
    replies = [long_reply, long_reply, title] * runs
    path.write_text(json.dumps({"description": "stream overhead", "replies": replies}))


@contextmanager
def url_printing_child(command: list[str], what: str, *, quiet: bool = False) -> Iterator[str]:
    """`command` in a child process that prints its base URL first; yields that URL.
    `quiet`: its standard error (a scripted model's line per request) is dropped."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL if quiet else None, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"{what} did not start: {line!r}")
        yield line
    finally:
        process.terminate()
        process.wait(timeout=10)


def scripted_server(script: Path, *, quiet: bool = False) -> AbstractContextManager[str]:
    """The scripted model CLI in a child process; yields its base URL (`quiet`: without
    its line per request)."""
    return url_printing_child(
        [sys.executable, "-m", "jupyter_gns3_copilot.testing.scripted_llm", str(script)],
        "scripted model server",
        quiet=quiet,
    )


async def timed(pieces: AsyncIterator[Any], is_content: Callable[[Any], bool]) -> Sample:
    began = time.perf_counter()
    first = last = 0.0
    count = 0
    async for item in pieces:
        if is_content(item):
            last = time.perf_counter() - began
            count += 1
            if count == 1:
                first = last
    if not count:
        raise RuntimeError("no content received")
    return Sample(first=first, rate=count / last, pieces=count)


async def bare(settings: ModelSettings) -> Sample:
    model = make_chat_model(settings)
    return await timed(model.astream([HumanMessage(PROMPT)]), lambda chunk: bool(chunk.content))


async def chat(service: AgentService, settings: ModelSettings) -> Sample:
    events = service.stream_chat(PROMPT, user_id="bench", llm=settings, session_id=None)
    return await timed(events, lambda event: event.type == "content")


@asynccontextmanager
async def copilot(gns3_url: str, username: str, password: str) -> AsyncIterator[AgentService]:
    """A service for a new project (a random id when there is no lab)."""
    async with (
        GNS3Client(gns3_url, username=username, password=password) as gns3,
        ConsolePool() as pool,
    ):
        lab = gns3_url != UNREACHABLE_GNS3
        if lab:
            project = await gns3.create_project(f"bench-stream-{uuid.uuid4().hex[:6]}")
            project_id = project.project_id
        else:
            project_id = str(uuid.uuid4())
        data_dir = Path(tempfile.mkdtemp(prefix="bench-stream-"))
        service = await AgentService.open(
            project_id, ChatSettings(data_dir), lab=LabAccess(gns3, pool)
        )
        try:
            yield service
        finally:
            await service.close()
            if lab:
                await gns3.delete_project(project_id)


async def measure(base_url: str, gns3_url: str, username: str, password: str, reps: int) -> None:
    settings = ModelSettings(
        base_url=base_url, api_key="sk-bench", model="scripted-model", max_retries=0, timeout=120
    )
    async with copilot(gns3_url, username, password) as service:
        runs: dict[str, list[Sample]] = {"bare astream": [], "stream_chat": []}
        measured: list[tuple[str, Callable[[], Awaitable[Sample]]]] = [
            ("bare astream", lambda: bare(settings)),
            ("stream_chat", lambda: chat(service, settings)),
        ]
        for rep in range(reps + 1):
            for label, run in measured:
                sample = await run()
                if rep:  # the first repetition warms up imports, connections and tokenizers
                    runs[label].append(sample)
        print(f"\n{'':14} {'events/s':>10} {'first event ms':>15}  (medians of {reps} runs)")
        medians = {}
        for label, samples in runs.items():
            rate = statistics.median(s.rate for s in samples)
            first = statistics.median(s.first for s in samples)
            medians[label] = (rate, first)
            print(f"{label:14} {rate:10.0f} {first * 1000:15.1f}   ({samples[0].pieces} pieces)")
        ratio = medians["stream_chat"][0] / medians["bare astream"][0]
        added = (medians["stream_chat"][1] - medians["bare astream"][1]) * 1000
        print(f"ratio stream_chat / bare = {ratio:.2f} (goal >= 0.5)")
        print(f"added to the first event = {added:.1f} ms (goal <= 15 ms)")
        if gns3_url != UNREACHABLE_GNS3:
            reads = []
            for _ in range(reps):
                began = time.perf_counter()
                await read_topology(service.engine.lab.gns3, service.engine.project_id)
                reads.append(time.perf_counter() - began)
            print(
                f"  of which the turn's topology read from GNS3 (one round trip, overlapping the "
                f"session bookkeeping) alone takes {statistics.median(reads) * 1000:.1f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="timed runs of each (median)")
    parser.add_argument("--chunks", type=int, default=2000, help="content pieces per reply")
    parser.add_argument("--no-lab", action="store_true", help="do not start the GNS3 lab")
    args = parse_args(parser, reps=1, chunks=10)
    script = Path(tempfile.mkdtemp(prefix="bench-script-")) / "script.json"
    write_script(script, args.reps + 1, args.chunks)
    with scripted_server(script) as base_url:
        if args.no_lab:
            asyncio.run(measure(base_url, UNREACHABLE_GNS3, "admin", "admin", args.reps))
            return
        began = time.perf_counter()
        with gns3_lab() as lab:
            print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
            asyncio.run(measure(base_url, lab.url, lab.username, lab.password, args.reps))


if __name__ == "__main__":
    main()
