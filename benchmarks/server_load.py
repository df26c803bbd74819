"""Turns per second and CPU per turn on one Jupyter server, with 1 user and with waves of
30 users at once (goal: the server's CPU per one-tool turn <= 25 ms; 30 users at once at
least 3x the 7-9 turns/s measured before).

A Jupyter server with the copilot runs in a child process, the scripted model server
(TEST DOUBLE of the OpenAI API, `python -m jupyter_gns3_copilot.testing.scripted_llm`) in
another, and a real local GNS3 lab holds PROJECTS projects of one started VPCS each. Every
turn is a new session, sent as `POST {base_url}copilot/projects/{id}/chat/stream` (read by
`concurrent_streams.one_chat`'s minimal HTTP/1.1 client, so the client's own CPU use stays
small) asking for PC1's address; the model answers with one `run_show_commands` call
(`show ip` on PC1, through its real console), then with the answer; the title call
follows. USERS users are spread over the projects in turn.

Phases, after two warm-up turns per project: SEQUENTIAL turns one after another (one
user), then WAVES waves of USERS turns started together. For each: turns per second, p50
and p95 turn time (request sent -> `done`), and the CPU time per turn, read from
`/proc/<pid>/stat` before and after, of the Jupyter server, the GNS3 server (the lab's
`gns3server`; unknown for a lab given by GNS3_COPILOT_TEST_LAB_URL) and the scripted model
server, with each one's share of one core while the phase ran (a process near 100% is the
one that serializes), less each one's CPU use in 5 s without turns measured first (kept
consoles, the lab's nodes); and how busy the whole machine was (on a shared machine, other
work slows every figure but the CPU per turn).

`--profile PROFILE` samples each Jupyter server with py-spy (the thread holding the GIL,
so what runs Python) during each phase and writes collapsed stacks next to PROFILE.

`--compare SRC` starts a second Jupyter server with `PYTHONPATH=SRC` (another checkout of
the copilot, e.g. the main branch) and runs the same phases on it after this tree's, with
the same lab and model server and projects of its own.

The last lines are this tree's figures:
`turns per second at 30 users: X`, `server CPU per one-tool turn: Y ms` (sequential) and
`GNS3 CPU per turn: Z ms` (sequential).

    .venv/bin/python benchmarks/server_load.py [--users 30] [--waves 5] [--sequential 30]
        [--projects 30] [--compare /path/to/main] [--profile /tmp/load]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from _common import gns3_lab, parse_args
from concurrent_streams import ChatRun, one_chat, percentile
from server_stream import RunningServer, jupyter_server
from stream_overhead import scripted_server

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer

QUESTION = "What is the address of PC1?"
SHOW_IP = {"devices": [{"device": "PC1", "commands": ["show ip"]}]}
WARM_UP = 2
"""Turns per project and server before measuring (imports, the database, the console)."""
TICKS = os.sysconf("SC_CLK_TCK")
IDLE_SECONDS = 5.0
"""How long each process's CPU use without turns is measured, to leave it out."""


def write_script(path: Path, turns: int) -> None:
    """Per turn, in any order across turns: the tool call (the request ending with the
    question), the answer (the request ending otherwise: with the tool's output) and the title (the
    request offering no tools)."""
    call = {
        "when": {"tools": True, "last_message": re.escape(QUESTION)},
        "tool_calls": [{"name": "run_show_commands", "arguments": SHOW_IP}],
    }
    answer = {
        "when": {"tools": True, "last_message": f"^(?!{re.escape(QUESTION)})"},
        "content": "PC1 has no address.",
    }
    title = {"when": {"tools": False}, "content": "PC1 address"}
    path.write_text(
        json.dumps({"description": "server load", "replies": [call, answer, title] * turns})
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_busy() -> tuple[float, float]:
    """Seconds the machine's CPUs have been busy and in all (idle and waiting for I/O
    are not busy), from the first line of /proc/stat."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / TICKS, sum(ticks) / TICKS


def child_pid(marker: str) -> int:
    """The pid of this process's child whose command line contains `marker`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if ppid == os.getpid() and marker in command:
            return int(entry.name)
    raise RuntimeError(f"no child process running {marker}")


@dataclass
class Phase:
    """One phase's turns on one server and what the processes spent meanwhile."""

    turns: int
    seconds: float
    times: list[float]
    cpu: dict[str, float]
    """Process label -> CPU seconds during the phase."""
    errors: list[str]
    machine: float
    """How busy the whole machine was meanwhile (every process, every CPU), 0-1."""
    idle: dict[str, float] = field(default_factory=dict)
    """Process label -> its CPU use without turns (share of a core), left out of
    `per_turn`: consoles kept open, a lab's nodes, timers."""

    def cpu_share(self) -> dict[str, float]:
        """Process label -> its CPU use meanwhile, as a share of a core."""
        return {label: cpu / self.seconds for label, cpu in self.cpu.items()}

    def per_turn(self, label: str) -> float:
        """Seconds of CPU process `label` spent per turn, its idle use left out."""
        return (self.cpu[label] - self.idle.get(label, 0.0) * self.seconds) / self.turns

    def line(self) -> str:
        per_turn = "  ".join(
            f"{label} {self.per_turn(label) * 1000:5.1f} ms ({cpu / self.seconds:4.0%})"
            for label, cpu in self.cpu.items()
        )
        return (
            f"{self.turns / self.seconds:6.1f} turns/s  p50 {percentile(self.times, 0.5):6.3f} s"
            f"  p95 {percentile(self.times, 0.95):6.3f} s  CPU per turn (share of a core): "
            f"{per_turn}  machine busy {self.machine:.0%} of {os.cpu_count()} CPUs  "
            f"errors {len(self.errors)}"
        )


async def timed_phase(pids: dict[str, int], turns: Callable[[], Awaitable[list[ChatRun]]]) -> Phase:
    """Run `turns` and read the CPU `pids` spent meanwhile."""
    before = {label: cpu_seconds(pid) for label, pid in pids.items()}
    busy_before, total_before = machine_busy()
    began = time.perf_counter()
    runs = await turns()
    seconds = time.perf_counter() - began
    busy_after, total_after = machine_busy()
    machine = (busy_after - busy_before) / (total_after - total_before)
    cpu = {label: cpu_seconds(pid) - before[label] for label, pid in pids.items()}
    errors = [error for run in runs for error in run.errors]
    times = [run.done for run in runs if run.done is not None] or [float("nan")]
    return Phase(len(runs), seconds, times, cpu, errors, machine)


@contextmanager
def profiled(pid: int, output: str | None) -> Iterator[None]:
    """With `output`, py-spy samples process `pid` meanwhile, the thread holding the GIL
    (what runs Python), and writes collapsed stacks (one line per stack,
    `thread;frame;frame count`) to `output`."""
    if output is None:
        yield
        return
    py_spy = str(Path(sys.executable).with_name("py-spy"))
    command = [py_spy, "record", "--pid", str(pid), "--format", "raw", "--threads", "--gil"]
    process = subprocess.Popen([*command, "--rate", "250", "--output", output])
    time.sleep(1.0)  # py-spy attaches
    try:
        yield
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def user_urls(server: RunningServer, projects: list[str], users: int) -> Iterator[str]:
    """The chat URL of each of `users` users, spread over `projects` in turn."""
    for user in range(users):
        yield f"{server.url}copilot/projects/{projects[user % len(projects)]}/chat/stream"


async def resting() -> list[ChatRun]:
    """No turns for `IDLE_SECONDS`."""
    await asyncio.sleep(IDLE_SECONDS)
    return []


async def sequential(
    server: RunningServer, projects: list[str], args: argparse.Namespace
) -> list[ChatRun]:
    """SEQUENTIAL turns one after another, spread over the projects."""
    urls = list(user_urls(server, projects, args.sequential))
    return [await one_chat(url, server.token, QUESTION) for url in urls]


async def waves(
    server: RunningServer, projects: list[str], args: argparse.Namespace
) -> list[ChatRun]:
    """WAVES waves of USERS turns started together."""
    runs: list[ChatRun] = []
    urls = list(user_urls(server, projects, args.users))
    for _ in range(args.waves):
        runs += await asyncio.gather(*(one_chat(url, server.token, QUESTION) for url in urls))
    return runs


async def measure(
    lab: LabServer,
    servers: dict[str, RunningServer],
    pids: dict[str, int],
    args: argparse.Namespace,
) -> tuple[dict[str, dict[str, Phase]], dict[str, Phase]]:
    """Each server's phases, and its minutes without turns (before the phases)."""
    results: dict[str, dict[str, Phase]] = {}
    idle: dict[str, Phase] = {}
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        # One server after the other, each on its own projects: a console two servers keep
        # open shows each one the other's commands (and a kept console that printed
        # meanwhile is checked before use), and the lab has consoles for 30-odd nodes.
        for label, server in servers.items():
            projects: list[str] = []
            try:
                for _ in range(args.projects):
                    project = await gns3.create_project(f"bench-load-{uuid.uuid4().hex[:6]}")
                    projects.append(project.project_id)
                    await gns3.create_node_from_template(project.project_id, "VPCS", "PC1")
                    await gns3.start_all(project.project_id)
                for url in user_urls(server, projects, args.projects):
                    for _ in range(WARM_UP):
                        run = await one_chat(url, server.token, QUESTION)
                        if run.errors:
                            raise RuntimeError(f"warm-up turn on {label}: {run.errors}")
                each = {**pids, "jupyter": server.pid}
                idle[label] = await timed_phase(each, resting)
                results[label] = {}
                for phase in ("1 user", f"{args.users} users"):
                    turns = functools.partial(
                        sequential if phase == "1 user" else waves, server, projects, args
                    )
                    tree = "this" if label == "this tree" else "compare"
                    output = f"{args.profile}.{tree}.{phase.split()[0]}" if args.profile else None
                    with profiled(server.pid, output):
                        results[label][phase] = await timed_phase(each, turns)
                    results[label][phase].idle = idle[label].cpu_share()
            finally:
                for project_id in projects:
                    await gns3.delete_project(project_id)
    return results, idle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=30, help="users at once in a wave")
    parser.add_argument("--waves", type=int, default=5)
    parser.add_argument("--sequential", type=int, default=30, help="turns of one user")
    parser.add_argument("--projects", type=int, default=30, help="projects the users share")
    parser.add_argument("--compare", help="another copilot source tree, run after this one")
    parser.add_argument(
        "--profile",
        help="py-spy's collapsed stacks of each server, to PROFILE.this.1 (one user), "
        "PROFILE.this.<users> (the waves), PROFILE.compare.* (the --compare tree)",
    )
    args = parse_args(parser, users=2, waves=1, sequential=2, projects=1)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="bench-server-load-"))
    trees = 2 if args.compare else 1
    turns = trees * (WARM_UP * args.projects + args.sequential + args.users * args.waves)
    write_script(work / "script.json", turns)
    with ExitStack() as stack:
        model_url = stack.enter_context(scripted_server(work / "script.json"))
        lab = stack.enter_context(gns3_lab(work / "lab"))
        pids = {"model": child_pid("jupyter_gns3_copilot.testing.scripted_llm")}
        if isinstance(lab, LabServer):
            pids["GNS3"] = lab.pid
        servers = {"this tree": stack.enter_context(jupyter_server(lab, model_url, work))}
        if args.compare:
            other = jupyter_server(lab, model_url, work / "compare", pythonpath=args.compare)
            servers[args.compare] = stack.enter_context(other)
        results, idle = asyncio.run(measure(lab, servers, pids, args))
    for label, phases in results.items():
        shares = "  ".join(f"{name} {share:.1%}" for name, share in idle[label].cpu_share().items())
        print(f"{label:>20} no turns: CPU (share of a core, left out below) {shares}")
        for name, phase in phases.items():
            print(f"{label:>20} {name:>9}: {phase.line()}")
            for error in sorted(set(phase.errors))[:5]:
                print(f"{'':>32}{error}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ours = results["this tree"]
    waves, alone = ours[f"{args.users} users"], ours["1 user"]
    print(f"turns per second at {args.users} users: {waves.turns / waves.seconds:.1f}")
    print(f"server CPU per one-tool turn: {alone.per_turn('jupyter') * 1000:.0f} ms")
    gns3 = f"{alone.per_turn('GNS3') * 1000:.0f} ms" if "GNS3" in alone.cpu else "unknown"
    print(f"GNS3 CPU per turn: {gns3}")


if __name__ == "__main__":
    main()
