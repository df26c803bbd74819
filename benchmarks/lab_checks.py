"""Checking a lab's objectives on real devices: 20 objectives over 10 VPCS.

Starts a local GNS3 lab (labkit), builds 10 addressed VPCS behind two switches and a lab file
of 20 objectives (each PC's address, and each PC reaching the next one with one ping),
then times `objectives.runner.report` over it: `warm` (the console pool already holds the
sessions, as in a running server) and `cold` (a new pool per run: connect and wake every
console). Prints the median over REPS runs of each; the last line is
`lab checks: 20 objectives in X s` (warm; goal: at most 1.0 s).

    .venv/bin/python benchmarks/lab_checks.py [--reps 7] [--pcs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from _common import gns3_lab, parse_args
from console_fanout import median_seconds

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.runner import report
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, TEACHING, ToolContext, execute_tool

PCS = 10
"""VPCS by default; at most 14: the two builtin switches have 8 ports, one joining them."""


def lab_file(pcs: int) -> LabFile:
    objectives = []
    for n in range(1, pcs + 1):
        objectives.append(
            f"      - {{id: pc{n}-address, text: PC{n} is addressed, "
            f"check: {{kind: address, node: PC{n}, address: 10.0.0.{n}/24}}}}"
        )
        objectives.append(
            f"      - {{id: pc{n}-reach, text: PC{n} reaches the next PC, "
            f"check: {{kind: reachable, from: PC{n}, to: PC{n % pcs + 1}, count: 1}}}}"
        )
    text = "title: Bench\nstages:\n  - id: s\n    title: S\n    objectives:\n" + "\n".join(
        objectives
    )
    return load_lab(text).lab


async def build(ctx: ToolContext, pcs: int) -> None:
    gns3, project_id = ctx.gns3, ctx.project_id
    for n in range(1, pcs + 1):
        await gns3.create_node_from_template(project_id, "VPCS", f"PC{n}")
    # The builtin switch has 8 ports: the first half of the PCs on SW1, the rest on SW2, the
    # switches joined by their last ports.
    half = (pcs + 1) // 2
    for switch in ("SW1", "SW2"):
        await gns3.create_node_from_template(project_id, "ethernet_switch", switch)
    await gns3.create_link(project_id, "SW1", "e7", "SW2", "e7")
    for n in range(1, pcs + 1):
        switch, port = ("SW1", n - 1) if n <= half else ("SW2", n - 1 - half)
        await gns3.create_link(project_id, f"PC{n}", "e0", switch, f"e{port}")
    await gns3.start_all(project_id)
    ctx.mode = LAB_AUTOMATION
    devices = [{"device": f"PC{n}", "commands": [f"ip 10.0.0.{n}/24"]} for n in range(1, pcs + 1)]
    outcome = await execute_tool(ctx, "run_vpcs_commands", {"devices": devices})
    if not outcome.ok:
        raise RuntimeError(f"addressing failed: {outcome.result}")
    ctx.mode = TEACHING


async def measure(lab: LabServer, reps: int, pcs: int) -> None:
    objectives = lab_file(pcs)
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-checks-{int(time.time())}")
        try:
            async with ConsolePool() as pool:
                ctx = ToolContext(gns3=gns3, project_id=project.project_id, consoles=pool)
                await build(ctx, pcs)

                async def checked(context: ToolContext) -> None:
                    result = await report(context.devices, context.project_id, objectives)
                    if not result.passed:
                        failed = [
                            (r.id, r.explanation) for r in result.results if r.status != "pass"
                        ]
                        raise RuntimeError(f"objectives failed: {failed}")

                await checked(ctx)  # every console session open: warm
                warm = await median_seconds(reps, lambda: checked(ctx))

                async def cold() -> None:
                    async with ConsolePool() as fresh:
                        await checked(
                            ToolContext(gns3=gns3, project_id=project.project_id, consoles=fresh)
                        )

                cold_seconds = await median_seconds(reps, cold)
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)
    count = len([o for s in objectives.stages for o in s.objectives])
    print(f"cold (consoles closed): {count} objectives in {cold_seconds:.2f} s (median of {reps})")
    print(f"lab checks: {count} objectives in {warm:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="runs per figure (median)")
    parser.add_argument("--pcs", type=int, default=PCS, choices=range(2, 15), metavar="2-14")
    args = parse_args(parser, pcs=2, reps=1)
    began = time.perf_counter()
    with gns3_lab(Path(tempfile.mkdtemp(prefix="bench-lab-"))) as lab:
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        asyncio.run(measure(lab, args.reps, args.pcs))


if __name__ == "__main__":
    main()
