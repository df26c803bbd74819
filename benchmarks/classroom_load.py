"""A class at once: N students each send a turn with one device command at the same moment,
on the real hub service, GNS3 and the scripted model; for N = 1 (the reference), 30, 100.

Runs the instructor guide's JupyterHub recipe as written (the real JupyterHub, proxy and
copilot hub service: gateway, accounts, tokens; `_classroom.Classroom`) on a GNS3 lab
(`gns3_lab`, or a new one with extra computes, and then the service's `placement` set to
`least_loaded`), with the scripted model server (TEST DOUBLE of the OpenAI API, its own
process) as the gateway's upstream. The service gives every student their GNS3 account
and a copy of a one-PC template (the dashboard's `api/labs/assign`); each student starts
their PC. GNS3 gives a running VPCS two TCP ports of its server's console range, and the
lab kit's range is 100 ports: one lab server holds 50 students' PCs at most. So the
largest class chooses the extra computes (`computes_needed`: each server kept at most
`PORTS_FILLED` full, the copies not being spread quite evenly), unless `--computes N`
says. Before the turns, the CPU the running PCs take with nobody asking anything is
measured (5 s).

Each student is a student's server's copilot reduced to its client parts, all in this
process (`_classroom.StudentServer`): the hub service client (session, GNS3 token), the
chat model through the gateway with teaching mode's tools, `run_show_commands` on PC1
through GNS3's console websocket with the student's own token, the answer through the
gateway. The copilot's own per-turn work in a student's server (the agent graph, the
SQLite store) is not here: each student's server is their own process, elsewhere; what
is measured is what the class shares.

For each N, ROUNDS waves of N turns started at once, then N model calls at once through
the gateway and N straight to the scripted model. Per N: turns, errors, p50/p95/max turn
time, each process's CPU per turn (the service, GNS3, the hub, the scripted model, and
this process: the N students' clients) and the cores each kept busy during the waves
(1.00: one core all the time, the most a single-threaded process such as GNS3's
controller can use) beside the whole machine's, and what the gateway adds to the first
piece (median through the gateway minus median direct, N calls at once). The last line:
`classroom <N> students: p95 turn X s, errors E` for the largest N. Goals: 0 errors; p95
at 100 students at most 3x one student's turn.

    .venv/bin/python benchmarks/classroom_load.py [--students 30,100] [--rounds 2] [--computes N]

(the default run: 1, 30 and 100 students on the controller's compute and two more).

Needs configurable-http-proxy (`make hub-proxy`; CONFIGURABLE_HTTP_PROXY or the cache's).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from _classroom import (
    Classroom,
    ConsolePortsExhausted,
    CpuMeter,
    Wave,
    first_piece,
    listening_pid,
    percentile,
    student_servers,
    wave,
    write_script,
)
from _common import gns3_lab, parse_args
from stream_overhead import scripted_server

from jupyter_gns3_copilot.labkit.ports import CONSOLE_PORTS

GOAL_RATIO = 3.0
IDLE_SAMPLE = 5.0
"""Seconds of the class's CPU measured with every PC running and no turn."""
PORTS_PER_PC = 2
"""Console ports GNS3 takes for a running VPCS (its console and an internal one)."""
PORTS_FILLED = 0.8
"""How full a server's console range may get: `least_loaded` spreads the copies of each
batch the service assigns over the computes, one batch's remainder may go to the same one."""


def computes_needed(students: int) -> int:
    """The extra computes (beside the controller's own) for `students` running PCs."""
    servers = math.ceil(students * PORTS_PER_PC / (CONSOLE_PORTS * PORTS_FILLED))
    return max(0, servers - 1)


def service_config(computes: int) -> str:
    """The service's settings: with extra computes, each student's copy goes on the least
    loaded compute (the service's `placement`)."""
    return 'c.CopilotHubService.placement = "least_loaded"\n' if computes else ""


def markers(sizes: list[int], rounds: int) -> tuple[list[str], list[str]]:
    turns = ["warm-up s0"]
    turns += [f"turn n{n} r{r} s{i}" for n in sizes for r in range(rounds) for i in range(n)]
    direct = [f"{way} n{n} s{i}" for n in sizes for way in ("gateway", "direct") for i in range(n)]
    return turns, direct


def report(
    n: int, waves: list[Wave], through: list[float], direct: list[float]
) -> tuple[float, int]:
    """Print N's figures; (p95 turn seconds, errors)."""
    turns = [t for w in waves for t in w.turns]
    ok = [t.total for t in turns if not t.error]
    errors = [t.error for t in turns if t.error]
    p95 = percentile(ok, 0.95) if ok else float("nan")
    print(
        f"N={n:<4} turns {len(turns)}, errors {len(errors)}; turn p50 "
        f"{statistics.median(ok) if ok else float('nan'):.2f} s, p95 {p95:.2f} s, max "
        f"{max(ok, default=float('nan')):.2f} s; wave wall "
        f"{', '.join(f'{w.wall:.2f}' for w in waves)} s"
    )
    cpu: dict[str, float] = {}
    for w in waves:
        for name, spent in w.cpu.items():
            cpu[name] = cpu.get(name, 0.0) + spent
    machine = cpu.pop(CpuMeter.MACHINE)
    wall = sum(w.wall for w in waves)
    print(
        "        CPU per turn: "
        + ", ".join(f"{name} {1000 * spent / len(turns):.0f} ms" for name, spent in cpu.items())
    )
    print(
        "        cores busy during the waves: "
        + ", ".join(f"{name} {spent / wall:.2f}" for name, spent in cpu.items())
        + f"; the whole machine {machine / wall:.2f} of {os.cpu_count()}"
    )
    pieces = [t.first_piece for t in turns if t.first_piece is not None]
    if pieces:
        print(
            f"        first piece of the turn's answer (through the gateway, in the wave): "
            f"median {1000 * statistics.median(pieces):.1f} ms"
        )
    if through and direct:
        added = statistics.median(through) - statistics.median(direct)
        print(
            f"        {n} model calls at once, first piece: {1000 * statistics.median(through):.1f}"
            f" ms through the gateway, {1000 * statistics.median(direct):.1f} ms direct: the "
            f"gateway adds {1000 * added:.1f} ms"
        )
    for error in sorted(set(errors))[:5]:
        print(f"        error ({errors.count(error)}x): {error}")
    return p95, len(errors)


async def measure(room: Classroom, model_url: str, sizes: list[int], rounds: int) -> None:
    await room.enrol(max(sizes))
    pids = {
        **room.pids(),
        "model": listening_pid(urlparse(model_url).port or 80),
        "clients": os.getpid(),
    }
    gns3 = [pid for name, pid in pids.items() if name == "gns3" or name.startswith("compute ")]
    meter = CpuMeter(pids, device_parents=gns3)
    async with student_servers(room.service_url, room.students[:1]) as servers:
        await wave(servers, "warm-up", meter)  # this process's imports, the first connections
    print(f"{os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}")
    meter.start()
    await asyncio.sleep(IDLE_SAMPLE)
    idle = meter.stop()
    print(
        f"{len(room.students)} students' PCs running, nobody asking ({IDLE_SAMPLE:g} s): "
        f"their VPCS processes keep {idle[CpuMeter.DEVICES] / IDLE_SAMPLE:.2f} cores busy, "
        f"GNS3 {idle['gns3'] / IDLE_SAMPLE:.2f}, the whole machine "
        f"{idle[CpuMeter.MACHINE] / IDLE_SAMPLE:.2f} of {os.cpu_count()}"
    )
    results: dict[int, tuple[float, int]] = {}
    for n in sizes:
        async with student_servers(room.service_url, room.students[:n]) as servers:
            # Their servers started before the class: each has its session already.
            await asyncio.gather(*(s.hub.session() for s in servers))
            waves = [await wave(servers, f"turn n{n} r{r}", meter) for r in range(rounds)]
            gateway = servers[0].hub.cached
            assert gateway is not None
            through = await asyncio.gather(
                *(
                    first_piece(gateway.model_base_url, f"gateway n{n} s{i}", s.student.hub_token)
                    for i, s in enumerate(servers)
                )
            )
        direct = await asyncio.gather(
            *(first_piece(model_url, f"direct n{n} s{i}") for i in range(n))
        )
        results[n] = report(n, waves, list(through), list(direct))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    largest = max(sizes)
    p95, errors = results[largest]
    if 1 in results and largest != 1:
        ratio = p95 / results[1][0]
        print(f"p95 at {largest} students vs 1 student: {ratio:.1f}x (goal <= {GOAL_RATIO:g}x)")
    print(f"classroom {largest} students: p95 turn {p95:.2f} s, errors {errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--students", default="30,100", help="class sizes after the 1-student reference"
    )
    parser.add_argument("--rounds", type=int, default=2, help="waves of turns per class size")
    parser.add_argument(
        "--computes",
        type=int,
        default=None,
        help="extra GNS3 computes of a new lab (default: as many as the largest class needs, "
        "two console ports per running PC, 100 per lab kit server; 0: none)",
    )
    args = parse_args(parser, students="2", rounds=1)
    sizes = sorted({1, *(int(n) for n in args.students.split(","))})
    computes = computes_needed(max(sizes)) if args.computes is None else args.computes
    print(f"{max(sizes)} students at most: GNS3 with {computes} extra computes")
    work = Path(tempfile.mkdtemp(prefix="bench-classroom-"))
    turns, direct = markers(sizes, args.rounds)
    write_script(work / "script.json", turns, direct)
    with (
        gns3_lab(work / "gns3", computes) as lab,
        scripted_server(work / "script.json", quiet=True) as model_url,
        Classroom(lab, work / "srv", model_url, service_config(computes)) as room,
    ):
        try:
            asyncio.run(measure(room, model_url, sizes, args.rounds))
        except ConsolePortsExhausted as exc:
            raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()
