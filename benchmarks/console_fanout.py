"""`show ip` on N = 1, 5, 10, 20 real VPCS nodes: one device after another vs all at once.

Starts a local GNS3 lab (labkit), creates 20 VPCS nodes, starts them and waits for their
consoles, then times `show ip` over the console layer. Two pool settings are measured:
`warm` (one ConsolePool keeps its telnet sessions open, how the tools use it) and `cold`
(a fresh pool per run: connect + wake + command). Prints medians over REPS runs and the
ratio concurrent(20) / one device (goal: <= 1.5).

    .venv/bin/python benchmarks/console_fanout.py [--reps 7] [--nodes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer

SIZES = (1, 5, 10, 20)


async def median_seconds(reps: int, run: Callable[[], Awaitable[None]]) -> float:
    samples = []
    for _ in range(reps):
        began = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


async def show_ip(pool: ConsolePool, targets: list[ConsoleTarget], *, concurrent: bool) -> None:
    if concurrent:
        results = await pool.run_many([(target, ["show ip"]) for target in targets])
    else:
        results = [await pool.run(target, ["show ip"]) for target in targets]
    failed = [r.device_name for r in results if r.status != "success"]
    if failed:
        raise RuntimeError(f"show ip failed on {failed}")


async def build_lab(gns3: GNS3Client, project_id: str, url: str, nodes: int) -> list[ConsoleTarget]:
    for index in range(nodes):
        await gns3.create_node_from_template(
            project_id, "VPCS", f"PC{index + 1}", x=(index % 5) * 120, y=(index // 5) * 120
        )
    began = time.perf_counter()
    await gns3.start_all(project_id)
    host = urlsplit(url).hostname
    nodes = await gns3.list_nodes(project_id)
    targets = sorted(
        (ConsoleTarget.from_node(node, server_host=host) for node in nodes),
        key=lambda target: int(target.name[2:]),
    )
    async with ConsolePool() as pool:
        await asyncio.gather(*(pool.wait_ready(target, timeout=60) for target in targets))
    print(f"start_all + wait_ready for {len(targets)} VPCS: {time.perf_counter() - began:.2f} s")
    return targets


async def measure(lab: LabServer, reps: int, sizes: list[int]) -> None:
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-fanout-{int(time.time())}")
        try:
            targets = await build_lab(gns3, project.project_id, lab.url, max(sizes))
            async with ConsolePool() as warm_pool:
                await show_ip(warm_pool, targets, concurrent=True)  # open every session once
                print(f"\n{'pool':5} {'N':>3} {'sequential ms':>14} {'concurrent ms':>14}")
                for label in ("warm", "cold"):
                    figures: dict[int, tuple[float, float]] = {}
                    for size in sizes:
                        subset = targets[:size]

                        async def run(concurrent: bool, subset=subset, label=label) -> None:
                            if label == "warm":
                                await show_ip(warm_pool, subset, concurrent=concurrent)
                                return
                            async with ConsolePool() as cold_pool:
                                await show_ip(cold_pool, subset, concurrent=concurrent)

                        sequential = await median_seconds(reps, lambda run=run: run(False))
                        concurrent = await median_seconds(reps, lambda run=run: run(True))
                        figures[size] = (sequential, concurrent)
                        print(
                            f"{label:5} {size:3d} {sequential * 1000:14.1f} "
                            f"{concurrent * 1000:14.1f}"
                        )
                    ratio = figures[max(sizes)][1] / figures[1][1]
                    print(f"{label:5} ratio concurrent({max(sizes)}) / one device = {ratio:.2f}")
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="runs per figure (median)")
    parser.add_argument("--nodes", type=int, default=max(SIZES), help="the largest N")
    args = parse_args(parser, nodes=2, reps=1)
    sizes = sorted({size for size in SIZES if size < args.nodes} | {1, args.nodes})
    began = time.perf_counter()
    with gns3_lab() as lab:
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        asyncio.run(measure(lab, args.reps, sizes))


if __name__ == "__main__":
    main()
