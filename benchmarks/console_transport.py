"""`show ip` on a real VPCS console: GNS3's console websocket vs telnet to the console port.

Starts a local GNS3 lab (labkit), one VPCS node, and opens a warm `ConsoleSession` per
transport in turn (the pool keeps sessions open, so this is what a tool call pays per
command). Then `show ip` is sent REPS times on each, in two rounds of REPS/2 per transport
so that both see the same load, and the medians (and 90th percentiles: VPCS and GNS3's
telnet proxy sometimes meet TCP's delayed acknowledgement, about 40 ms, on either
transport) are printed with the ratio websocket / telnet. The time to open a session
(connect, telnet negotiation, wake the prompt) is measured as well, OPENS times per
transport.

    .venv/bin/python benchmarks/console_transport.py [--reps 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.console import ConsoleSession, ConsoleTarget, ConsoleTransport
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer

TRANSPORTS: tuple[ConsoleTransport, ...] = ("telnet", "websocket")
OPENS = 5


def milliseconds(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"median {statistics.median(samples) * 1000:7.2f} ms   p90 {p90 * 1000:7.2f} ms"


async def measure(lab: LabServer, reps: int) -> None:
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-console-transport-{int(time.time())}")
        try:
            node = await gns3.create_node_from_template(project.project_id, "VPCS", "PC1")
            await gns3.start_node(project.project_id, node.node_id)
            node = await gns3.get_node(project.project_id, node.node_id)
            targets = {
                transport: ConsoleTarget.from_node(
                    node,
                    transport=transport,
                    gns3_url=lab.url,
                    token_provider=gns3.access_token,
                )
                for transport in TRANSPORTS
            }
            opens: dict[str, list[float]] = {transport: [] for transport in TRANSPORTS}
            # One transport after the other: a telnet console opened right after a websocket
            # one closed loses its first Enter (one more second), which no real use sees.
            for transport, target in targets.items():
                for _ in range(OPENS):
                    began = time.perf_counter()
                    async with ConsoleSession(target):
                        opens[transport].append(time.perf_counter() - began)
            # One session open at a time: GNS3's telnet proxy sends a console's output to
            # every client, so a second open session would read the other one's answers.
            samples: dict[str, list[float]] = {transport: [] for transport in TRANSPORTS}
            for _ in range(2):
                for transport, target in targets.items():
                    async with ConsoleSession(target) as session:
                        await session.send("show ip")  # warm
                        for _ in range(reps // 2):
                            began = time.perf_counter()
                            result = await session.send("show ip")
                            samples[transport].append(time.perf_counter() - began)
                            if "NAME        : PC1" not in result.output:
                                raise RuntimeError(f"{transport}: output {result.output!r}")
            print(f"\nopen a session ({OPENS} times):")
            for transport in TRANSPORTS:
                print(f"  {transport:9} {milliseconds(opens[transport])}")
            print(f"show ip on a warm session ({reps // 2 * 2} times each):")
            for transport in TRANSPORTS:
                print(f"  {transport:9} {milliseconds(samples[transport])}")
            ratio = statistics.median(samples["websocket"]) / statistics.median(samples["telnet"])
            print(f"websocket / telnet median show ip latency: {ratio:.2f}")
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="show ip per transport (median)")
    args = parse_args(parser, reps=2)
    began = time.perf_counter()
    with gns3_lab() as lab:
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        asyncio.run(measure(lab, args.reps))


if __name__ == "__main__":
    main()
