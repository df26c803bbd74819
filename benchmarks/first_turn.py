"""The first chat turn after a Jupyter server starts vs a warm turn, and how long
`GET api/status` (Jupyter's own, which every user and kernel depends on) takes meanwhile.

A scripted model server (TEST DOUBLE of the OpenAI API) and a real local GNS3 lab (an
opened project) are shared; the Jupyter server with the copilot is started STARTS times in
a child process. Each start: wait until `api/status` answers; `GET copilot/status`, as a
notebook connecting with `%copilot` does (it answers once the warm-up thread has imported
the copilot's modules); THINK seconds (default 0); one turn (the first), then WARM more
turns, each `POST copilot/projects/{id}/chat/stream` read to its `done` event over HTTP.
While each of these runs, `api/status` is requested every 20 ms and its latencies kept. Medians per
kind of turn; the last line is the median first turn minus the median warm turn:

    first turn over warm: 0.31 s

    .venv/bin/python benchmarks/first_turn.py [--starts 3] [--warm 3] [--think 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
from _common import gns3_lab, parse_args
from server_stream import jupyter_server
from stream_overhead import scripted_server

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.testing.local_stack import delete_projects

STATUS_EVERY = 0.02
"""Pause between two `api/status` requests (a busy server's other users and kernels)."""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_script(path: Path, turns: int) -> None:
    answer = {"content": ["Hello", " from", " the", " copilot."]}
    title = {"content": "Benchmark"}
    path.write_text(json.dumps({"description": "first turn", "replies": [answer, title] * turns}))


@contextlib.contextmanager
def new_project(lab: LabServer, prefix: str) -> Iterator[str]:
    """The id of a new, empty project on `lab`, named `prefix` and a random suffix; deleted
    afterwards (the lab may be one the tests share)."""

    async def create() -> str:
        async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
            project = await gns3.create_project(f"{prefix}-{uuid.uuid4().hex[:6]}")
            return project.project_id

    project_id = asyncio.run(create())
    try:
        yield project_id
    finally:
        delete_projects(lab, [project_id])


async def status_latencies(client: httpx.AsyncClient, url: str, stop: asyncio.Event) -> list[float]:
    samples: list[float] = []
    while not stop.is_set():
        began = time.perf_counter()
        (await client.get(f"{url}api/status")).raise_for_status()
        samples.append(time.perf_counter() - began)
        await asyncio.sleep(STATUS_EVERY)
    return samples


async def timed_status(url: str, token: str, path: str) -> tuple[float, list[float]]:
    """Seconds `GET path` takes, and `api/status` latencies meanwhile."""
    return await with_status_poll(url, token, lambda client: client.get(f"{url}{path}"))


async def one_turn(url: str, token: str, project_id: str) -> tuple[float, list[float]]:
    """Seconds from the request to `done`, and `api/status` latencies meanwhile."""

    async def turn(client: httpx.AsyncClient) -> None:
        done = False
        stream_url = f"{url}copilot/projects/{project_id}/chat/stream"
        async with client.stream("POST", stream_url, json={"message": "Hi"}) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[len("data: ") :])
                    if event["type"] == "error":
                        raise RuntimeError(f"turn failed: {event}")
                    done = done or event["type"] == "done"
        if not done:
            raise RuntimeError("the turn ended without done")

    return await with_status_poll(url, token, turn)


async def with_status_poll(
    url: str, token: str, work: Callable[[httpx.AsyncClient], Awaitable[Any]]
) -> tuple[float, list[float]]:
    headers = {"Authorization": f"token {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=120, trust_env=False) as client,
        httpx.AsyncClient(headers=headers, timeout=120, trust_env=False) as status,
    ):
        stop = asyncio.Event()
        poller = asyncio.create_task(status_latencies(status, url, stop))
        began = time.perf_counter()
        result = await work(client)
        if isinstance(result, httpx.Response):
            result.raise_for_status()
        elapsed = time.perf_counter() - began
        stop.set()
        return elapsed, await poller


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3, help="server starts (median)")
    parser.add_argument("--warm", type=int, default=3, help="warm turns after each first one")
    parser.add_argument("--think", type=float, default=0.0, help="seconds before the first turn")
    args = parse_args(parser, starts=1, warm=1)
    print(f"load average: {load()}")
    work = Path(tempfile.mkdtemp(prefix="bench-first-turn-"))
    write_script(work / "script.json", args.starts * (1 + args.warm))
    connect: list[float] = []
    connect_status: list[float] = []
    first: list[float] = []
    warm: list[float] = []
    first_status: list[float] = []
    warm_status: list[float] = []
    with (
        scripted_server(work / "script.json") as model_url,
        gns3_lab(work / "lab") as lab,
        new_project(lab, "bench-first") as project_id,
    ):
        for start in range(args.starts):
            with jupyter_server(lab, model_url, work / f"start{start}", "api/status") as server:
                # A notebook connecting (`%copilot`) asks copilot/status first, which
                # answers once the copilot's modules are imported.
                elapsed, latencies = asyncio.run(
                    timed_status(server.url, server.token, "copilot/status")
                )
                connect.append(elapsed)
                connect_status.extend(latencies)
                time.sleep(args.think)  # the student typing
                elapsed, latencies = asyncio.run(one_turn(server.url, server.token, project_id))
                first.append(elapsed)
                first_status.extend(latencies)
                for _ in range(args.warm):
                    elapsed, latencies = asyncio.run(one_turn(server.url, server.token, project_id))
                    warm.append(elapsed)
                    warm_status.extend(latencies)
    for label, turns, latencies in (
        ("connect", connect, connect_status),
        ("first turn", first, first_status),
        ("warm turn", warm, warm_status),
    ):
        shown = " ".join(f"{t:.2f}" for t in turns)
        print(
            f"{label:10}: median {statistics.median(turns):5.2f} s ({shown}); api/status "
            f"during it: median {statistics.median(latencies) * 1000:5.1f} ms, "
            f"max {max(latencies) * 1000:6.1f} ms ({len(latencies)} requests)"
        )
    print(f"load average: {load()}")
    print(f"first turn over warm: {statistics.median(first) - statistics.median(warm):.2f} s")


if __name__ == "__main__":
    main()
