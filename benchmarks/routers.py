"""Real FRR routers in a lab: how fast they come up and converge, what they cost idle, and
`show ip ospf neighbor` on all three through the `run_show_commands` tool.

Starts a local GNS3 lab (labkit) and, per run, builds the routed triangle of
`testing.routed_lab` (3 FRR routers, 2 VPCS) in a new project, then measures:

- ready: from `start_all` until every console answers (routers and PCs);
- Full: from the end of the configuration by console (addresses, OSPF, the PCs) until
  every router sees its two neighbours Full (`show ip ospf neighbor json`);
- idle CPU: each router's QEMU process's CPU time (user + system, from /proc) over IDLE
  seconds with nothing typed, in % of one core;
- RSS: each router's QEMU process's resident memory at the end of the idle window;
- one router alone: R1 stopped and started again while the others idle, until its
  console answers, and the CPU seconds its QEMU spent so far (what a boot costs, whatever
  the load);
- the tool: `show ip ospf neighbor` on R1, R2 and R3 in one `run_show_commands` call as
  the direct tool run streams it (`server.tool_runs.run_tool`), from `tool_start` to
  `tool_end`, with the console sessions open (warm), median of REPS calls.

The QEMU processes are found by the node id GNS3 passes them (`-uuid`), so this also works
on a lab it did not start. Prints each run's figures, then medians over the runs (per
router for CPU and RSS); the line `FRR router: ready in X s, OSPF full in Y s, idle CPU
Z % of a core, RSS W MB` (goals: 10 s, 15 s, 3 %, 300 MB) and the tool's line (goal
100 ms). No KVM here: the routers' CPUs are emulated, so a loaded machine slows them a lot.

    .venv/bin/python benchmarks/routers.py [--runs 3] [--idle 20] [--reps 20]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.console import ConsolePool, wait_ready
from jupyter_gns3_copilot.events import ToolEndEvent, ToolStartEvent
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.server.tool_runs import run_tool
from jupyter_gns3_copilot.testing.pytest_plugin import ExternalLab
from jupyter_gns3_copilot.testing.routed_lab import (
    BOOT_TIMEOUT,
    ROUTERS,
    build_triangle,
    configure_triangle,
    console_targets,
    start_triangle,
    until_full,
)
from jupyter_gns3_copilot.tools import ToolContext

TICKS = os.sysconf("SC_CLK_TCK")
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20
SHOW = "show ip ospf neighbor"


@dataclass
class Run:
    ready: float
    full: float
    cpu: dict[str, float]
    """Router -> idle CPU in % of one core."""
    rss: dict[str, float]
    """Router -> resident memory in MB."""
    tool_ms: list[float] = field(default_factory=list)
    alone: float = 0.0
    """Seconds until R1's console answers when it is started alone."""
    boot_cpu: float = 0.0
    """CPU seconds R1's QEMU spent until then."""


def qemu_pids(node_ids: dict[str, str]) -> dict[str, int]:
    """Router name -> the pid of the QEMU process GNS3 started for its node (its command
    line carries `-uuid NODE_ID`)."""
    wanted = {node_id: name for name, node_id in node_ids.items()}
    found: dict[str, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if "qemu" not in argv[0].decode(errors="replace"):
            continue
        for flag, value in itertools.pairwise(argv):
            if flag == b"-uuid" and value.decode() in wanted:
                found[wanted[value.decode()]] = int(entry.name)
    missing = sorted(set(node_ids) - set(found))
    if missing:
        raise RuntimeError(f"no QEMU process found for {missing}")
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime: fields 14, 15


def rss_mb(pid: int) -> float:
    """Resident memory of `pid` in MB."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_MB


async def idle_cost(
    pids: dict[str, int], seconds: float
) -> tuple[dict[str, float], dict[str, float]]:
    """Each router's CPU (% of a core) over `seconds` with nothing typed, and its RSS."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    began = time.monotonic()
    await asyncio.sleep(seconds)
    elapsed = time.monotonic() - began
    cpu = {name: (cpu_seconds(pid) - before[name]) / elapsed * 100 for name, pid in pids.items()}
    return cpu, {name: rss_mb(pid) for name, pid in pids.items()}


async def tool_latency(ctx: ToolContext) -> float:
    """Seconds from `tool_start` to `tool_end` of one `run_show_commands` call asking
    every router for its OSPF neighbours."""
    arguments = {"devices": [{"device": router, "commands": [SHOW]} for router in ROUTERS]}
    started = ended = None
    async for event in run_tool(
        ctx,
        "run_show_commands",
        arguments,
        run_id=f"bench-{uuid.uuid4().hex[:8]}",
        abort=asyncio.Event(),
        heartbeat_interval=None,
    ):
        if isinstance(event, ToolStartEvent):
            started = time.perf_counter()
        elif isinstance(event, ToolEndEvent):
            ended = time.perf_counter()
            if event.outcome != "ok" or "Full" not in event.tool_output:
                raise RuntimeError(f"{SHOW} did not show Full neighbours: {event.tool_output}")
    if started is None or ended is None:
        raise RuntimeError("the tool run had no tool_start or no tool_end")
    return ended - started


async def one_run(gns3: GNS3Client, idle: float, reps: int) -> Run:
    project = await gns3.create_project(f"bench-routers-{uuid.uuid4().hex[:8]}")
    pid = project.project_id
    try:
        await build_triangle(gns3, pid)
        ready = await start_triangle(gns3, pid)
        await configure_triangle(gns3, pid)
        full = await until_full(gns3, pid)
        nodes = {n.name: n.node_id for n in await gns3.list_nodes(pid) if n.name in ROUTERS}
        cpu, rss = await idle_cost(qemu_pids(nodes), idle)
        run = Run(ready, full, cpu, rss)
        async with ConsolePool() as pool:
            ctx = ToolContext(gns3=gns3, project_id=pid, consoles=pool)
            await tool_latency(ctx)  # opens every console session: warm from here
            run.tool_ms = [await tool_latency(ctx) * 1000 for _ in range(reps)]
        run.alone, run.boot_cpu = await boot_alone(gns3, pid, ROUTERS[0], nodes[ROUTERS[0]])
        return run
    finally:
        await gns3.close_project(pid)
        await gns3.delete_project(pid)


async def boot_alone(
    gns3: GNS3Client, project_id: str, router: str, node_id: str
) -> tuple[float, float]:
    """Stop `router` (node `node_id`) and start it again alone (the others idle): the
    seconds until its console answers, and the CPU seconds its QEMU spent booting."""
    await gns3.stop_node(project_id, node_id)
    began = time.monotonic()
    await gns3.start_node(project_id, node_id)
    await wait_ready((await console_targets(gns3, project_id))[router], timeout=BOOT_TIMEOUT)
    elapsed = time.monotonic() - began
    return elapsed, cpu_seconds(qemu_pids({router: node_id})[router])


def per_router(values: dict[str, float], unit: str) -> str:
    return ", ".join(f"{name} {value:.1f}{unit}" for name, value in sorted(values.items()))


async def measure(lab: LabServer | ExternalLab, runs: int, idle: float, reps: int) -> None:
    done: list[Run] = []
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        for index in range(1, runs + 1):
            run = await one_run(gns3, idle, reps)
            done.append(run)
            print(
                f"run {index}: ready {run.ready:.1f} s, Full {run.full:.1f} s, "
                f"idle CPU {per_router(run.cpu, ' %')}, RSS {per_router(run.rss, ' MB')}, "
                f"{SHOW} x3 median {statistics.median(run.tool_ms):.1f} ms, "
                f"{ROUTERS[0]} alone ready {run.alone:.1f} s on {run.boot_cpu:.1f} s of CPU",
                flush=True,
            )
    ready = statistics.median(r.ready for r in done)
    full = statistics.median(r.full for r in done)
    cpu = statistics.median(v for r in done for v in r.cpu.values())
    rss = statistics.median(v for r in done for v in r.rss.values())
    tool = sorted(ms for r in done for ms in r.tool_ms)
    alone = statistics.median(r.alone for r in done)
    boot_cpu = statistics.median(r.boot_cpu for r in done)
    print(f"one FRR router started alone: ready in {alone:.1f} s, {boot_cpu:.1f} s of CPU")
    print(f"loadavg at the end: {os.getloadavg()[0]:.1f} (2 cores)")
    print(
        f"{SHOW} on {len(ROUTERS)} routers via run_show_commands, tool_start -> tool_end "
        f"(warm): median {statistics.median(tool):.1f} ms, max {tool[-1]:.1f} ms over "
        f"{len(tool)} calls (goal 100 ms)"
    )
    print(
        f"FRR router: ready in {ready:.1f} s, OSPF full in {full:.1f} s, idle CPU "
        f"{cpu:.1f} % of a core, RSS {rss:.0f} MB (medians over {len(done)} runs; "
        "goals 10 s, 15 s, 3 %, 300 MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="triangles built (median)")
    parser.add_argument("--idle", type=float, default=20.0, help="idle window (seconds)")
    parser.add_argument("--reps", type=int, default=20, help="tool calls per run (median)")
    args = parse_args(parser, runs=1, idle=2.0, reps=1)
    began = time.perf_counter()
    with gns3_lab() as lab:
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}", flush=True)
        asyncio.run(measure(lab, args.runs, args.idle, args.reps))


if __name__ == "__main__":
    main()
