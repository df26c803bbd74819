"""`analyze_capture` on a 10,000-packet capture, tshark vs the Python decoder (goal: < 2 s).

The capture is generated with dpkt: 2,500 pings between 20 VPCS-like hosts (ARP request
and reply, ICMP echo request and reply each), 2 ms apart. Two figures per decoder:

- decode: `analyze_pcap` on the bytes (default limit 50; limit 1,000; display filter
  `icmp`), no GNS3;
- tool: the whole `analyze_capture` tool call through a real local lab (find the link,
  read the capture file through GNS3's API, decode, build the result), after the file
  was put in place of a real capture of a PC1 - PC2 link (skip with `--decode-only`).

Prints medians over `--reps` runs, the machine's load average and tshark's CPU time per
run (its wall time is mostly dissecting every packet and grows with the load of a shared
machine; the CPU time is what it takes on an idle core). The Python runs hide tshark
from the decoder.

Run: `.venv/bin/python benchmarks/capture_analyze.py [--packets 10000] [--reps 5]`
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import resource
import socket
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import dpkt
from _common import gns3_lab, parse_args

import jupyter_gns3_copilot.capture as capture
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, ToolContext, execute_tool

GOAL_S = 2.0
LINK = {"a": "PC1", "a_port": "e0", "b": "PC2", "b_port": "e0"}


def generate(packets: int) -> bytes:
    """A pcap of `packets` frames: ARP + ICMP echo exchanges between 20 hosts."""
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out)
    macs = [bytes.fromhex(f"0050796668{n:02x}") for n in range(20)]
    ips = [socket.inet_aton(f"10.0.0.{n + 1}") for n in range(20)]
    when = 1_700_000_000.0
    for index in range(packets):
        a, b = (index // 4) % 20, (index // 4 + 7) % 20
        step = index % 4
        if step < 2:
            src, dst = (a, b) if step == 0 else (b, a)
            arp = dpkt.arp.ARP(
                op=1 + step, sha=macs[src], spa=ips[src], tha=macs[dst], tpa=ips[dst]
            )
            frame = dpkt.ethernet.Ethernet(
                dst=b"\xff" * 6 if step == 0 else macs[dst], src=macs[src], type=0x0806, data=arp
            )
        else:
            src, dst = (a, b) if step == 2 else (b, a)
            echo = dpkt.icmp.ICMP.Echo(id=index & 0xFFFF, seq=index // 4, data=b"x" * 56)
            icmp = dpkt.icmp.ICMP(type=8 if step == 2 else 0, data=echo)
            ip = dpkt.ip.IP(src=ips[src], dst=ips[dst], p=1, ttl=64, data=icmp)
            ip.len = len(bytes(ip))
            frame = dpkt.ethernet.Ethernet(dst=macs[dst], src=macs[src], type=0x0800, data=ip)
        writer.writepkt(bytes(frame), when + index * 0.002)
    return out.getvalue()


async def median(run: Callable[[], Awaitable[Any]], reps: int) -> float:
    await run()  # warm-up (imports, tshark's first start, connections)
    times = []
    for _ in range(reps):
        began = time.perf_counter()
        await run()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def decoder(name: str) -> None:
    """Make `analyze_pcap`'s "auto" pick `name` (tshark hidden for "python")."""
    capture.tshark_path = _tshark if name == "tshark" else (lambda: None)  # type: ignore[attr-defined]


_tshark = capture.tshark_path


async def decode_figures(data: bytes, reps: int) -> None:
    cases = {
        "limit 50": {"limit": 50},
        "limit 1000": {"limit": 1000},
        "filter icmp": {"display_filter": "icmp"},
    }
    for name in ("tshark", "python"):
        decoder(name)
        for label, options in cases.items():
            before = _children_cpu()
            seconds = await median(lambda o=options: capture.analyze_pcap(data, **o), reps)
            tshark_cpu = (_children_cpu() - before) / (reps + 1)
            cpu = f"  (tshark CPU {tshark_cpu * 1000:.0f} ms a run)" if name == "tshark" else ""
            print(f"decode  {name:6} {label:12} {seconds * 1000:8.0f} ms{cpu}")


def _children_cpu() -> float:
    """CPU seconds (user + system) used by ended child processes (tshark) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def tool_figures(lab: LabServer, data: bytes, reps: int) -> None:
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"bench-capture-{time.time_ns()}")
        try:
            async with ConsolePool() as pool:
                ctx = ToolContext(
                    gns3=gns3, project_id=project.project_id, consoles=pool, mode=LAB_AUTOMATION
                )
                await _capture_link(ctx)
                link = await gns3.find_link(project.project_id, "PC1", "e0", "PC2", "e0")
                link = await gns3.get_link(project.project_id, link.link_id)
                path = f"project-files/captures/{link.capture_file_name}"
                token = await gns3.access_token()
                await gns3._http.post(  # no client method writes project files
                    f"/projects/{project.project_id}/files/{quote(path)}",
                    content=data,
                    headers={"Authorization": f"Bearer {token}"},
                )
                assert len(await gns3.read_capture(project.project_id, link.link_id)) == len(data)
                for name in ("tshark", "python"):
                    decoder(name)

                    async def run() -> None:
                        outcome = await execute_tool(ctx, "analyze_capture", {"link": LINK})
                        assert outcome.ok and outcome.result["matched"] > 0, outcome.result

                    seconds = await median(run, reps)
                    verdict = "ok" if seconds < GOAL_S else "OVER GOAL"
                    print(f"tool    {name:6} {'limit 50':12} {seconds * 1000:8.0f} ms  {verdict}")
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)


async def _capture_link(ctx: ToolContext) -> None:
    """PC1 - PC2, started, with a capture taken and stopped (so the link has a file)."""
    nodes = [{"template": "VPCS", "name": name} for name in ("PC1", "PC2")]
    for name, args in (
        ("create_nodes", {"nodes": nodes}),
        ("create_links", {"links": [LINK]}),
        ("start_nodes", {"nodes": ["PC1"]}),
        ("start_capture", {"link": LINK}),
        ("stop_capture", {"link": LINK}),
    ):
        outcome = await execute_tool(ctx, name, args)
        assert outcome.ok, outcome.result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--decode-only", action="store_true", help="no lab, no tool runs")
    args = parse_args(parser, packets=200, reps=1)
    data = generate(args.packets)
    print(f"capture: {args.packets} packets, {len(data) / 1e6:.2f} MB; goal < {GOAL_S:g} s")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    asyncio.run(decode_figures(data, args.reps))
    if args.decode_only:
        return
    began = time.perf_counter()
    with gns3_lab() as lab:
        print(f"lab up in {time.perf_counter() - began:.1f} s at {lab.url}")
        asyncio.run(tool_figures(lab, data, args.reps))


if __name__ == "__main__":
    main()
