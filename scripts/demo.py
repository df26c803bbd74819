"""`make demo`: a real GNS3 lab on this machine, built, shown, probed and stopped.

Starts the local lab (gns3-server 3.0.6 + VPCS + the project's stand-ins), builds three
VPCS behind an Ethernet switch with links made by port name, starts them and waits for
their consoles, prints the topology text, writes the SVG diagram to build/demo/, addresses
the PCs, runs `show ip` on all at once and a ping that works and one that cannot, then
stops everything. Later the demo runs the example notebook instead (see the issues).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget, DeviceResult
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer

OUT_DIR = Path("build/demo")
PCS = {"PC1": "10.0.0.1/24", "PC2": "10.0.0.2/24", "PC3": "10.0.0.3/24"}
UNUSED_ADDRESS = "10.0.0.99"


def step(message: str) -> None:
    print(f"\n== {message}", flush=True)


def show(results: list[DeviceResult]) -> None:
    for result in results:
        print(f"-- {result.device_name} [{result.status}]")
        print(result.output.rstrip() or result.error)


def write_output(name: str, text: str) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / name
    path.write_text(text, encoding="utf-8")
    return path


async def build(gns3: GNS3Client, project_id: str) -> None:
    await gns3.create_node_from_template(project_id, "Ethernet switch", "Switch1", x=0, y=0)
    for index, name in enumerate(PCS):
        await gns3.create_node_from_template(project_id, "VPCS", name, x=-250 + index * 250, y=-200)
        await gns3.create_link(project_id, name, "e0", "Switch1", f"e{index}")


async def demo(lab: LabServer) -> None:
    async with (
        GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3,
        ConsolePool() as consoles,
    ):
        project = await gns3.create_project(f"copilot-demo-{int(time.time())}")
        pid = project.project_id
        step(f"Building 3 VPCS + 1 switch in project {project.name!r}")
        await build(gns3, pid)

        step("Starting every node and waiting for the consoles' prompts")
        began = time.perf_counter()
        await gns3.start_all(pid)
        host = urlsplit(lab.url).hostname
        targets = [
            ConsoleTarget.from_node(node, server_host=host)
            for node in await gns3.list_nodes(pid)
            if node.node_type == "vpcs"
        ]
        targets.sort(key=lambda target: target.name)
        await asyncio.gather(*(consoles.wait_ready(target, timeout=60) for target in targets))
        print(f"all consoles ready {time.perf_counter() - began:.1f} s after the start request")

        topology = await gns3.get_topology(pid)
        step("Topology")
        print(topology.to_text())
        print(f"diagram written to {write_output('topology.svg', topology.to_svg())}")

        step("Addressing the PCs (VPCS `ip`)")
        show(await consoles.run_many([(t, [f"ip {PCS[t.name]}"]) for t in targets]))

        step("`show ip` on every PC at once")
        began = time.perf_counter()
        show(await consoles.run_many([(t, ["show ip"]) for t in targets]))
        print(f"({time.perf_counter() - began:.2f} s for {len(targets)} devices)")

        step(f"PC1 pings PC3, then the unused address {UNUSED_ADDRESS}")
        pc3 = PCS["PC3"].split("/")[0]
        show(
            await consoles.run_many(
                [(targets[0], [f"ping {pc3} -c 2", f"ping {UNUSED_ADDRESS} -c 1"])]
            )
        )

        await gns3.close_project(pid)
        await gns3.delete_project(pid)


def main() -> int:
    step("Starting the local GNS3 lab (first run installs gns3-server: about a minute)")
    began = time.perf_counter()
    with LabServer(instance_dir=Path(tempfile.mkdtemp(prefix="copilot-demo-lab-"))) as lab:
        print(f"GNS3 {lab.url} up in {time.perf_counter() - began:.1f} s (user {lab.username})")
        asyncio.run(demo(lab))
        step("Stopping the lab")
    print("Lab stopped; no process left behind.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
