"""What a console idle between tool calls costs: `show ip` through the pool after 0, 6 and
60 s of idle, on a real VPCS console (telnet through GNS3's proxy), interleaved.

Starts a local GNS3 lab (labkit) and one VPCS node, and keeps one `ConsolePool` session,
as the tools do. Each round times `pool.run(target, ["show ip"])` after each idle time in
turn (0 s = right after the previous call, the "busy" console). The idle times are
waited for with a sleep: what is measured is the call after it, not the wait. Medians per
idle time; the last line is the median extra cost of an idle console (the larger of 6 s
and 60 s, minus 0 s):

    idle console extra: 12 ms

    .venv/bin/python benchmarks/console_idle.py [--rounds 3] [--short 6] [--long 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer


async def timed_show_ip(pool: ConsolePool, target: ConsoleTarget) -> float:
    began = time.perf_counter()
    result = await pool.run(target, ["show ip"])
    elapsed = time.perf_counter() - began
    if result.status != "success" or "NAME        : PC1" not in result.output:
        raise RuntimeError(f"show ip failed: {result.error} {result.output!r}")
    return elapsed


async def measure(lab: LabServer, rounds: int, idles: list[float]) -> dict[float, list[float]]:
    samples: dict[float, list[float]] = {idle: [] for idle in idles}
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-console-idle-{int(time.time())}")
        try:
            node = await gns3.create_node_from_template(project.project_id, "VPCS", "PC1")
            await gns3.start_node(project.project_id, node.node_id)
            node = await gns3.get_node(project.project_id, node.node_id)
            target = ConsoleTarget.from_node(node)
            async with ConsolePool() as pool:
                await pool.wait_ready(target, timeout=30)
                await timed_show_ip(pool, target)  # warm
                for _ in range(rounds):
                    for idle in idles:
                        await asyncio.sleep(idle)
                        samples[idle].append(await timed_show_ip(pool, target))
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="calls per idle time (median)")
    parser.add_argument("--short", type=float, default=6.0, help="the short idle time, seconds")
    parser.add_argument("--long", type=float, default=60.0, help="the long idle time, seconds")
    args = parse_args(parser, rounds=1, short=0.1, long=0.2)
    idles = [0.0, args.short, args.long]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with gns3_lab() as lab:
        samples = asyncio.run(measure(lab, args.rounds, idles))
    medians = {idle: statistics.median(times) for idle, times in samples.items()}
    for idle, times in samples.items():
        shown = " ".join(f"{t * 1000:.1f}" for t in times)
        print(f"show ip after {idle:4g} s idle: median {medians[idle] * 1000:6.1f} ms  ({shown})")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    extra = max(medians[idles[1]], medians[idles[2]]) - medians[idles[0]]
    print(f"idle console extra: {extra * 1000:.0f} ms")


if __name__ == "__main__":
    main()
