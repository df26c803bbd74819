"""Checking a lab's objectives on real devices: 20 objectives over 10 VPCS, or over 3 FRR
routers and 2 VPCS.

Starts a local GNS3 lab (labkit) and builds one of two labs (`--profile`):

- `pcs` (the default): 10 addressed VPCS behind two switches and 20 objectives (each PC's
  address, and each PC reaching the next one with one ping); the last line is
  `lab checks: 20 objectives in X s` (warm; goal: at most 1.0 s).
- `routing`: the routed triangle of `testing.routed_lab` (3 FRR routers, 2 VPCS, OSPF
  configured by console and Full) and 20 objectives: the 6 OSPF adjacencies
  (`ospf_neighbor`), 6 routes learned by OSPF (`route`, with the next hop where there is
  one), 4 addresses (`address`, routers' and PCs') and 4 pings across the routers
  (`reachable`, from PCs and from routers); the last line is
  `lab checks (routing): 20 objectives in X s` (warm; goal: at most 1.5 s).

Then times `objectives.runner.report` over it: `warm` (the console pool already holds the
sessions, as in a running server) and `cold` (a new pool per run: connect and wake every
console). Prints the median over REPS runs of each. An objective that does not pass
stops the benchmark (its figure would time a wrong answer), unless `--keep-going`: then
what did not pass is listed and the figures are printed anyway.

    .venv/bin/python benchmarks/lab_checks.py [--reps 7] [--pcs 10]
    .venv/bin/python benchmarks/lab_checks.py --profile routing [--reps 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from _common import gns3_lab, parse_args
from console_fanout import median_seconds

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.runner import report
from jupyter_gns3_copilot.testing.routed_lab import (
    build_triangle,
    configure_triangle,
    start_triangle,
    until_full,
)
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


def _ospf(node: str, neighbor: str | None, interface: str | None = None) -> dict[str, str]:
    check = {"kind": "ospf_neighbor", "node": node}
    return (
        check
        | ({"neighbor": neighbor} if neighbor else {})
        | ({"interface": interface} if interface else {})
    )


def _route(node: str, prefix: str, via: str | None = None) -> dict[str, str]:
    check = {"kind": "route", "node": node, "prefix": prefix, "protocol": "ospf"}
    return check | ({"via": via} if via else {})


ROUTING_OBJECTIVES: list[tuple[str, str, dict[str, object]]] = [
    ("r1-r2", "R1 and R2 are adjacent", _ospf("R1", "2.2.2.2", "eth0")),
    ("r1-r3", "R1 and R3 are adjacent", _ospf("R1", "3.3.3.3")),
    ("r2-r1", "R2 and R1 are adjacent", _ospf("R2", "1.1.1.1")),
    ("r2-r3", "R2 and R3 are adjacent", _ospf("R2", None, "eth1")),
    ("r3-r1", "R3 and R1 are adjacent", _ospf("R3", "1.1.1.1", "eth1")),
    ("r3-r2", "R3 and R2 are adjacent", _ospf("R3", "2.2.2.2")),
    ("r1-lan3", "R1 learns LAN 3", _route("R1", "192.168.3.0/24", "10.0.13.3")),
    ("r1-r2r3", "R1 learns the R2-R3 link", _route("R1", "10.0.23.0/24")),
    ("r2-lan1", "R2 learns LAN 1", _route("R2", "192.168.1.0/24", "10.0.12.1")),
    ("r2-lan3", "R2 learns LAN 3", _route("R2", "192.168.3.0/24", "10.0.23.3")),
    ("r3-lan1", "R3 learns LAN 1", _route("R3", "192.168.1.0/24", "10.0.13.1")),
    ("r3-r1r2", "R3 learns the R1-R2 link", _route("R3", "10.0.12.0/24")),
    (
        "r1-address",
        "R1 is addressed on LAN 1",
        {"kind": "address", "node": "R1", "interface": "eth2", "address": "192.168.1.1/24"},
    ),
    (
        "r3-address",
        "R3 is addressed on LAN 3",
        {"kind": "address", "node": "R3", "interface": "eth2", "address": "192.168.3.3/24"},
    ),
    (
        "pc1-address",
        "PC1 is addressed",
        {"kind": "address", "node": "PC1", "address": "192.168.1.10/24"},
    ),
    (
        "pc2-address",
        "PC2 is addressed",
        {"kind": "address", "node": "PC2", "address": "192.168.3.10/24"},
    ),
    ("pc1-pc2", "PC1 reaches PC2", {"kind": "reachable", "from": "PC1", "to": "PC2", "count": 1}),
    ("pc2-pc1", "PC2 reaches PC1", {"kind": "reachable", "from": "PC2", "to": "PC1", "count": 1}),
    (
        "r1-pc2",
        "R1 reaches PC2",
        {"kind": "reachable", "from": "R1", "to": "PC2", "address": "192.168.3.10", "count": 1},
    ),
    ("r2-pc1", "R2 reaches PC1", {"kind": "reachable", "from": "R2", "to": "PC1", "count": 1}),
]
"""The routing profile's objectives (id, text, check), on the addresses and router ids of
`testing.routed_lab.TRIANGLE`: adjacencies, routes (next hop where only one path is
shortest), addresses, pings."""


def routing_lab() -> LabFile:
    objectives = [{"id": i, "text": text, "check": check} for i, text, check in ROUTING_OBJECTIVES]
    lab = {
        "title": "Bench routing",
        "stages": [{"id": "s", "title": "S", "objectives": objectives}],
    }
    return load_lab(json.dumps(lab)).lab


SETTLE = 60.0
"""Seconds the lab may take to pass every objective before the measuring starts."""


async def build_routing(ctx: ToolContext) -> None:
    """The routed triangle, started, configured and converged (every adjacency Full)."""
    await build_triangle(ctx.gns3, ctx.project_id)
    ready = await start_triangle(ctx.gns3, ctx.project_id)
    await configure_triangle(ctx.gns3, ctx.project_id)
    full = await until_full(ctx.gns3, ctx.project_id)
    print(f"routers: consoles ready in {ready:.1f} s, OSPF Full {full:.1f} s after configuring")


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


async def measure(lab: LabServer, reps: int, pcs: int, routing: bool, keep_going: bool) -> None:
    objectives = routing_lab() if routing else lab_file(pcs)
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-checks-{int(time.time())}")
        try:
            async with ConsolePool() as pool:
                ctx = ToolContext(gns3=gns3, project_id=project.project_id, consoles=pool)
                await (build_routing(ctx) if routing else build(ctx, pcs))

                async def checked(context: ToolContext, first: bool = False) -> None:
                    result = await report(context.devices, context.project_id, objectives)
                    failed = [(r.id, r.status, r.explanation) for r in result.results]
                    failed = [f for f in failed if f[1] != "pass"]
                    if failed and not keep_going:
                        raise RuntimeError(f"objectives did not pass: {failed}")
                    for objective, status, explanation in failed if first else []:
                        print(f"did not pass: {objective} ({status}): {explanation}")

                # Every console session open (warm), and the routes settled: OSPF's SPF
                # runs a little after the adjacencies are Full.
                settled = time.monotonic() + SETTLE
                while True:
                    try:
                        await checked(ctx, first=True)
                        break
                    except RuntimeError:
                        if time.monotonic() > settled:
                            raise
                        await asyncio.sleep(2)
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
    print(f"lab checks{' (routing)' if routing else ''}: {count} objectives in {warm:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7, help="runs per figure (median)")
    parser.add_argument("--pcs", type=int, default=PCS, choices=range(2, 15), metavar="2-14")
    parser.add_argument(
        "--profile",
        choices=("pcs", "routing"),
        default="pcs",
        help="10 VPCS (pcs), or 3 FRR routers and 2 VPCS (routing; --pcs does not apply)",
    )
    parser.add_argument(
        "--keep-going", action="store_true", help="list objectives that do not pass, time anyway"
    )
    args = parse_args(parser, pcs=2, reps=1)
    began = time.perf_counter()
    with gns3_lab() as lab:
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        routing = args.profile == "routing"
        asyncio.run(measure(lab, args.reps, args.pcs, routing, args.keep_going))


if __name__ == "__main__":
    main()
