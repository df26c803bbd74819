"""The memory a Jupyter server holds for the copilot after its first chat turn (goal
<= +80 MB), measured on real servers over HTTP.

`import_time.py`'s memory line approximates this in one process (the warm-up and a
context preparation); here the whole first turn runs: a real local GNS3 lab holds an
opened project, a scripted model server (TEST DOUBLE of the OpenAI API, child process)
answers the turn and then its session title. Each pair starts, in child processes, the
same Jupyter server twice: with the copilot disabled (once `api/status` answers), and
with it (`copilot/status`, as a notebook connecting does; one turn, `POST
copilot/projects/{id}/chat/stream` read to its `done`). Each is left idle SETTLE seconds,
then its RSS is read (`/proc/PID/status` VmRSS); the copilot's server is read again after
WARM more turns. `--compare SRC` adds, to each pair, a copilot server run from another
checkout (`PYTHONPATH=SRC`, e.g. the main branch), in alternating order.

The last line is this tree's median: `memory after the first turn: +82 MB over a plain
Jupyter server`.

    .venv/bin/python benchmarks/server_memory.py [--pairs 2] [--warm 3] [--compare SRC]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from _common import gns3_lab, parse_args
from first_turn import load, new_project, one_turn, write_script
from server_stream import RunningServer, jupyter_server
from stream_overhead import scripted_server

SETTLE = 2.0
"""Seconds a server idles before its RSS is read (a turn's stragglers: the title)."""


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def settled_rss(server: RunningServer) -> float:
    time.sleep(SETTLE)
    return rss_mb(server.pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--warm", type=int, default=3, help="turns after the first")
    parser.add_argument("--compare", metavar="SRC", help="another checkout to run alongside")
    args = parse_args(parser, pairs=1, warm=0)
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if args.compare:
        trees.append((args.compare, args.compare))
    print(f"load average: {load()}")
    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    write_script(work / "script.json", args.pairs * len(trees) * (1 + args.warm))
    plain: list[float] = []
    first: dict[str, list[float]] = {label: [] for label, _ in trees}
    later: dict[str, list[float]] = {label: [] for label, _ in trees}
    with (
        scripted_server(work / "script.json") as model_url,
        gns3_lab(work / "lab") as lab,
        new_project(lab, "bench-memory") as project_id,
    ):
        for pair in range(args.pairs):
            where = work / f"pair{pair}"
            with jupyter_server(
                lab, model_url, where / "plain", "api/status", copilot=False
            ) as server:
                plain.append(settled_rss(server))
            order = trees if pair % 2 == 0 else trees[::-1]
            for label, pythonpath in order:
                with jupyter_server(
                    lab, model_url, where / str(len(first[label])), pythonpath=pythonpath
                ) as server:
                    asyncio.run(one_turn(server.url, server.token, project_id))
                    first[label].append(settled_rss(server) - plain[-1])
                    for _ in range(args.warm):
                        asyncio.run(one_turn(server.url, server.token, project_id))
                    later[label].append(settled_rss(server) - plain[-1])
    print(f"plain Jupyter server: RSS {' '.join(f'{mb:.0f}' for mb in plain)} MB")
    for label, _ in trees:
        shown = " ".join(f"+{mb:.1f}" for mb in first[label])
        after = " ".join(f"+{mb:.1f}" for mb in later[label])
        print(
            f"{label}: after the first turn {shown} MB (median "
            f"+{statistics.median(first[label]):.1f}); after {args.warm} more {after} MB"
        )
    print(f"load average: {load()}")
    print(
        f"memory after the first turn: +{statistics.median(first['this tree']):.0f} MB "
        "over a plain Jupyter server"
    )


if __name__ == "__main__":
    main()
