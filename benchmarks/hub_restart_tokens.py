"""What students' first turns after a restart of the hub service cost GNS3: with the
students' GNS3 tokens forgotten by the restart (as before the service kept them) against
kept (`hub/token_store.py`).

Runs the instructor guide's JupyterHub recipe as written on a GNS3 lab with the scripted
model server (TEST DOUBLE of the OpenAI API) as the gateway's upstream (`_classroom`):
STUDENTS students with their GNS3 accounts and a copy each of a one-PC template, made by
the service. Then, ROUNDS times each way, the service restarts in place (SIGHUP, the
page's command) and every student's server asks for its session anew and makes its first
turn, all at once (one device command, the model through the gateway; servers started
after the restart do this, e.g. after the hub and the servers were restarted). "Forgotten"
deletes the kept tokens' file before the restart: the service then logs every student in
again, as it did before it kept them.

For each restart: the turns' p50/p95/max, the wave's wall time, the CPU GNS3 and the
service spent during it, and the GNS3 logins (GNS3's own record: accounts whose last
login moved). The last line: `first turns of N students after a restart: GNS3 CPU X s ->
Y s, p95 turn A s -> B s, GNS3 logins L -> M` (forgotten -> kept, medians over rounds).

    .venv/bin/python benchmarks/hub_restart_tokens.py [--students 30] [--rounds 2]

Needs configurable-http-proxy (`make hub-proxy`; CONFIGURABLE_HTTP_PROXY or the cache's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
from pathlib import Path

from _classroom import (
    Classroom,
    CpuMeter,
    Wave,
    percentile,
    student_servers,
    wave,
    write_script,
)
from _common import gns3_lab, parse_args
from stream_overhead import scripted_server

from jupyter_gns3_copilot.hub.token_store import TOKENS_FILE

WAYS = ("forgotten", "kept")


def markers(students: int, rounds: int) -> list[str]:
    turns = ["warm-up s0"]
    for r in range(rounds):
        for how in WAYS:
            turns += [f"restart {how} r{r} s{i}" for i in range(students)]
    return turns


async def after_restart(room: Classroom, how: str, r: int, meter: CpuMeter) -> tuple[Wave, int]:
    """One restart (tokens `how`), then every student's first turn at once; the wave and
    the number of GNS3 logins it cost."""
    if how == "forgotten":
        (room.data_dir / TOKENS_FILE).unlink(missing_ok=True)
    room.restart()
    before = room.gns3_logins()
    await asyncio.sleep(1.1)  # GNS3 records a login to the second
    async with student_servers(room.service_url, room.students) as servers:
        done = await wave(servers, f"restart {how} r{r}", meter)
    after = room.gns3_logins()
    return done, sum(1 for user, at in after.items() if at != before.get(user))


async def measure(room: Classroom, students: int, rounds: int) -> None:
    await room.enrol(students)
    meter = CpuMeter({"gns3": room.pids()["gns3"]})
    async with student_servers(room.service_url, room.students[:1]) as servers:
        await wave(servers, "warm-up", meter)  # this process's imports, the first connections
    print(f"{os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}")
    figures: dict[str, list[tuple[float, float, int]]] = {how: [] for how in WAYS}
    for r in range(rounds):
        for how in WAYS:
            meter.pids["service"] = room.service_pid  # the same process (exec in place)
            done, logins = await after_restart(room, how, r, meter)
            ok = [t.total for t in done.turns if not t.error]
            p95 = percentile(ok, 0.95) if ok else float("nan")
            gns3 = done.cpu["gns3"]
            print(
                f"restart, tokens {how:9}: {students} first turns at once: p50 "
                f"{statistics.median(ok) if ok else float('nan'):.2f} s, p95 {p95:.2f} s, max "
                f"{max(ok, default=float('nan')):.2f} s (wave {done.wall:.2f} s); GNS3 CPU "
                f"{gns3:.2f} s ({1000 * gns3 / students:.0f} ms a turn), service CPU "
                f"{done.cpu['service']:.2f} s; GNS3 logins {logins}; errors {len(done.errors)}"
            )
            for error in sorted(set(done.errors))[:3]:
                print(f"        error: {error}")
            figures[how].append((gns3, p95, logins))
    print(f"load average after: {os.getloadavg()[0]:.2f}")

    def median(how: str, index: int) -> float:
        return statistics.median(f[index] for f in figures[how])

    print(
        f"first turns of {students} students after a restart: GNS3 CPU "
        f"{median('forgotten', 0):.2f} s -> {median('kept', 0):.2f} s, p95 turn "
        f"{median('forgotten', 1):.2f} s -> {median('kept', 1):.2f} s, GNS3 logins "
        f"{median('forgotten', 2):.0f} -> {median('kept', 2):.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30, help="students of the class")
    parser.add_argument("--rounds", type=int, default=2, help="restarts each way")
    args = parse_args(parser, students=2, rounds=1)
    work = Path(tempfile.mkdtemp(prefix="bench-restart-tokens-"))
    write_script(work / "script.json", markers(args.students, args.rounds))
    with (
        gns3_lab(work / "gns3") as lab,
        scripted_server(work / "script.json", quiet=True) as model_url,
        Classroom(lab, work / "srv", model_url) as room,
    ):
        asyncio.run(measure(room, args.students, args.rounds))


if __name__ == "__main__":
    main()
