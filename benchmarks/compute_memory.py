"""The memory each kind of node takes on a GNS3 compute, for sizing computes for a class.

On a new local lab with one extra compute (it starts its own: the test run's has none), a
project places NODES VPCS, one Ethernet switch and (unless `--no-router`) one Linux
router on the compute `compute-1` and starts them. A node's memory is the RSS
(`/proc/PID/status` VmRSS) of the processes working in its directory on the compute
(`project-files/<type>/<node id>`: VPCS with its uBridge, QEMU for the router; the
switch's Dynamips hypervisor works in the project's `project-files/dynamips`); the
compute's own is its gns3-server's, found through `/proc`.

The last line: `memory per node on a compute: VPCS X MB, Ethernet switch Y MB, Linux
router Z MB; the compute itself W MB`.

    .venv/bin/python benchmarks/compute_memory.py [--nodes 4] [--no-router]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import uuid
from collections.abc import Iterator
from pathlib import Path

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.gns3.computes import find_compute
from jupyter_gns3_copilot.labkit.router import ROUTER_TEMPLATE

COMPUTE = "compute-1"


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def processes() -> Iterator[tuple[int, str, str]]:
    """(pid, working directory, command line) of every process of this user."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        yield int(entry.name), cwd, cmdline


def memory_in(marker: str) -> float:
    """The RSS of the processes whose working directory contains `marker`, in MB."""
    return sum(rss_mb(pid) for pid, cwd, _ in processes() if marker in cwd)


def compute_server_mb(host: str, port: int) -> float:
    """The RSS of the gns3-server listening on host:port (found by its command line)."""
    for pid, _, cmdline in processes():
        if "gns3server" in cmdline and f"--host {host} --port {port} " in f"{cmdline} ":
            return rss_mb(pid)
    raise RuntimeError(f"no gns3-server process for {host}:{port} on this machine")


async def measure(lab: object, nodes: int, router: bool) -> dict[str, float]:
    url, user, password = (getattr(lab, k) for k in ("url", "username", "password"))
    async with GNS3Client(url, username=user, password=password, timeout=120) as gns3:
        compute = find_compute(await gns3.list_computes(), COMPUTE)
        project = await gns3.create_project(f"bench-compute-memory-{uuid.uuid4().hex[:6]}")
        try:
            kinds = [("VPCS", "VPCS")] * nodes + [("Ethernet switch", "Ethernet switch")]
            if router:
                kinds.append((ROUTER_TEMPLATE, ROUTER_TEMPLATE))
            made = []
            for index, (kind, template) in enumerate(kinds):
                node = await gns3.create_node_from_template(
                    project.project_id, template, x=index * 100, compute_id=compute.compute_id
                )
                made.append((kind, node))
            for _, node in made:
                await gns3.start_node(project.project_id, node.node_id)
            await asyncio.sleep(3.0)  # let each process reach its steady size
            per_kind: dict[str, list[float]] = {}
            for kind, node in made:
                marker = (
                    f"{project.project_id}/project-files/dynamips"
                    if kind == ("Ethernet switch")
                    else node.node_id
                )
                per_kind.setdefault(kind, []).append(memory_in(marker))
            figures = {kind: statistics.median(values) for kind, values in per_kind.items()}
            assert compute.host is not None and compute.port is not None
            figures["compute"] = compute_server_mb(compute.host, compute.port)
            return figures
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=4, help="VPCS nodes (median)")
    parser.add_argument("--no-router", action="store_true", help="leave the Linux router out")
    args = parse_args(parser, nodes=1, no_router=True)
    with gns3_lab(computes=1) as lab:
        figures = asyncio.run(measure(lab, args.nodes, not args.no_router))
    parts = [
        f"VPCS {figures['VPCS']:.0f} MB",
        f"Ethernet switch {figures['Ethernet switch']:.0f} MB",
    ]
    if ROUTER_TEMPLATE in figures:
        parts.append(f"Linux router {figures[ROUTER_TEMPLATE]:.0f} MB")
    print(
        f"memory per node on a compute: {', '.join(parts)}; the compute itself "
        f"{figures['compute']:.0f} MB"
    )


if __name__ == "__main__":
    main()
