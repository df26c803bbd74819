"""Many chats at once on one Jupyter server (goal: p95 time to first event <= 200 ms, no
errors, no "database is locked").

CHATS chats of one project start together, each a new session, through
`POST {base_url}copilot/projects/{id}/chat/stream` (one connection per chat, as from as
many browsers or kernels; read by a minimal HTTP/1.1 client so the client's own CPU use
stays small next to the server's),
against the scripted model server (TEST DOUBLE of the OpenAI API, its own process) whose
answers stream PIECES pieces with 20 ms before each, and a real local GNS3 lab holding the
project. All chats write to the project's one SQLite database (sessions, checkpoints,
statistics) at the same time. Repeated ROUNDS times; figures over every chat:

- time to the first event (p50, p95, max), from sending the request: the heartbeat the
  stream opens with once the request is checked and the turn started;
- time to the first content event (the model's first piece reaching the client);
- time to `done`;
- failures: HTTP errors, `error` events, streams without `done`, and "database is locked"
  anywhere in the events or the server's log.

    .venv/bin/python benchmarks/concurrent_streams.py [--chats 50] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from _common import gns3_lab, parse_args
from server_stream import jupyter_server
from stream_overhead import PROMPT, scripted_server

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer

CHUNK_DELAY = 0.020
GOAL_P95_MS = 200.0


@dataclass
class ChatRun:
    headers: float | None = None
    first: float | None = None
    content: float | None = None
    done: float | None = None
    errors: list[str] = field(default_factory=list)


def write_script(path: Path, chats: int, pieces: int) -> None:
    """One answer per chat (requests offering tools) and one title per chat."""
    answer = {
        "when": {"tools": True},
        "content": [f"piece {i} " for i in range(pieces)],
        "chunk_delay": CHUNK_DELAY,
    }
    title = {"when": {"tools": False}, "content": "Concurrent"}
    path.write_text(json.dumps({"replies": [answer] * chats + [title] * chats}))


async def one_chat(url: str, token: str, message: str = PROMPT) -> ChatRun:
    """One chat (a new session asking `message`) on its own connection, read with a
    minimal HTTP/1.1 client: fifty httpx streams in this process would spend more CPU
    than the server does, and on a machine with few cores the figures would measure the
    client."""
    run = ChatRun()
    target = httpx.URL(url)
    body = json.dumps({"message": message}).encode()
    head = (
        f"POST {target.raw_path.decode()} HTTP/1.1\r\nHost: {target.host}:{target.port}\r\n"
        f"Authorization: token {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    began = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection(target.host, target.port)
    except OSError as exc:
        run.errors.append(f"connect: {exc}")
        return run
    try:
        writer.write(head + body)
        status_line = await reader.readline()
        run.headers = time.perf_counter() - began
        headers = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
        status = int(status_line.split()[1])
        if status != 200:
            text = (await reader.read(400)).decode(errors="replace")
            run.errors.append(f"HTTP {status}: {text[:200]}")
            return run
        if "transfer-encoding: chunked" not in headers:
            run.errors.append("the stream is not chunked")
            return run
        buffer = b""
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                break
            buffer += (await reader.readexactly(size + 2))[:-2]
            *messages, buffer = buffer.split(b"\n\n")
            elapsed = time.perf_counter() - began
            for message in messages:
                if not message.startswith(b"data: "):
                    continue
                event = json.loads(message[len(b"data: ") :])
                if run.first is None:
                    run.first = elapsed
                if event["type"] == "content" and run.content is None:
                    run.content = elapsed
                elif event["type"] == "error":
                    run.errors.append(event["error"])
                elif event["type"] == "done":
                    run.done = elapsed
    except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
        run.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        writer.close()
    if run.done is None and not run.errors:
        run.errors.append("the stream ended without done")
    return run


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def measure(lab: LabServer, server_url: str, token: str, chats: int, rounds: int) -> None:
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-concurrent-{uuid.uuid4().hex[:6]}")
        url = f"{server_url}copilot/projects/{project.project_id}/chat/stream"
        runs: list[ChatRun] = []
        try:
            # Warm-up: the first chat opens the project's database and imports the agent.
            await one_chat(url, token)
            for _ in range(rounds):
                runs += await asyncio.gather(*(one_chat(url, token) for _ in range(chats)))
        finally:
            await gns3.delete_project(project.project_id)
    headers = [r.headers * 1000 for r in runs if r.headers is not None]
    firsts = [r.first * 1000 for r in runs if r.first is not None]
    contents = [r.content * 1000 for r in runs if r.content is not None]
    dones = [r.done * 1000 for r in runs if r.done is not None]
    errors = [error for r in runs for error in r.errors]
    print(f"\n{len(runs)} chats ({rounds} rounds of {chats} at once)")
    print(
        f"headers ms:     p50 {percentile(headers, 0.5):6.1f}  p95 "
        f"{percentile(headers, 0.95):6.1f}  max {max(headers):6.1f}"
    )
    print(
        f"first event ms: p50 {percentile(firsts, 0.5):6.1f}  p95 {percentile(firsts, 0.95):6.1f}"
        f"  max {max(firsts):6.1f}   (goal p95 <= {GOAL_P95_MS:g})"
    )
    print(
        f"first content:  p50 {percentile(contents, 0.5):6.1f}  p95 "
        f"{percentile(contents, 0.95):6.1f}  max {max(contents):6.1f}"
    )
    print(
        f"done ms:        p50 {percentile(dones, 0.5):6.1f}  p95 {percentile(dones, 0.95):6.1f}"
        f"  (median {statistics.median(dones):.1f})"
    )
    print(f"errors: {len(errors)}")
    for error in sorted(set(errors))[:10]:
        print(f"  {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pieces", type=int, default=10, help="answer pieces, 20 ms each")
    args = parse_args(parser, chats=2, rounds=1, pieces=2)
    work = Path(tempfile.mkdtemp(prefix="bench-concurrent-"))
    write_script(work / "script.json", args.chats * args.rounds + 1, args.pieces)
    began = time.perf_counter()
    with (
        scripted_server(work / "script.json") as model_url,
        gns3_lab(work / "lab") as lab,
    ):
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        with jupyter_server(lab, model_url, work) as server:
            asyncio.run(measure(lab, server.url, server.token, args.chats, args.rounds))
    locked = "database is locked" in server.log.read_text(errors="replace")
    print(f'"database is locked" in the server log: {"yes" if locked else "no"}')


if __name__ == "__main__":
    main()
