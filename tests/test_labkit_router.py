"""The local lab's Linux router: Debian's kernel and a BusyBox initramfs under QEMU,
driven by the copilot's own tools on the real local GNS3 lab."""

from __future__ import annotations

import gzip
from typing import Any

import pytest
from support.initramfs import cpio_entries

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit.router import ROUTER_TEMPLATE, build_images
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, ToolContext, execute_tool


def test_the_router_boots_busybox_with_its_libraries_and_the_network_modules_in_order() -> None:
    """The initramfs has what the kernel needs to reach a shell, its virtio NICs and its
    disk: a console device, BusyBox with its applets and the libraries it links, each
    module after those it needs, `save-config`, and an /init that leaves forwarding off
    unless the disk says otherwise; the blank disk comes along."""
    images = build_images()
    entries = cpio_entries(gzip.decompress(images.files[images.initrd]))
    mode, major, _ = entries["dev/console"]
    assert mode & 0o170000 == 0o020000 and major == 5
    assert entries["bin/busybox"][2][:4] == b"\x7fELF"
    assert entries["bin/ip"][2] == b"busybox" and entries["bin/cttyhack"][2] == b"busybox"
    loader = [path for path in entries if "/ld-linux" in path]
    static = not loader
    assert static or any(path.endswith("/libc.so.6") for path in entries)
    order = entries["etc/modules"][2].decode().split()
    assert order.index("virtio.ko") < order.index("virtio_pci.ko") < order.index("virtio_net.ko")
    assert order.index("failover.ko") < order.index("net_failover.ko")
    assert all(f"lib/modules/{module}" in entries for module in order)
    assert order.index("virtio_pci.ko") < order.index("virtio_blk.ko")
    assert b"ip_forward" in entries["bin/save-config"][2]
    init = entries["init"][2].decode()
    assert "ip_forward" not in init and "hostname=" in init and "/disk/startup.sh" in init
    assert images.disk is not None and images.files[images.disk][:4] == b"QFI\xfb"
    assert images.kernel in images.files and images.kernel.startswith("linux-router-vmlinuz-")


@pytest.mark.lab
async def test_the_linux_router_forwards_between_two_subnets_once_told_to(
    gns3_project: Any,
) -> None:
    """Given PC1 and PC2 in two subnets, each cabled to a port of a router made by the
    copilot from the "Linux router" template; when the copilot (automation mode) addresses them
    and R1, PC1's ping to PC2 gets no answer while R1 does not forward, and answers
    (one hop fewer TTL) once `sysctl -w net.ipv4.ip_forward=1` ran on R1."""
    async with (
        GNS3Client(gns3_project.url, token=gns3_project.token) as gns3,
        ConsolePool() as pool,
    ):
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            outcome = await execute_tool(ctx, name, arguments)
            assert outcome.ok, outcome.result
            return outcome.result

        made = await call(
            "create_nodes",
            {
                "nodes": [
                    {"template": ROUTER_TEMPLATE, "name": "R1"},
                    {"template": "VPCS", "name": "PC1"},
                    {"template": "VPCS", "name": "PC2"},
                ]
            },
        )
        assert {n["name"]: n["dialect"] for n in made["nodes"]}["R1"] == "linux"
        links = [
            {"a": "PC1", "a_port": "e0", "b": "R1", "b_port": "e0"},
            {"a": "PC2", "a_port": "e0", "b": "R1", "b_port": "e1"},
        ]
        await call("create_links", {"links": links})
        await call("start_nodes", {"nodes": ["R1", "PC1", "PC2"]})
        addresses = [
            {"device": "PC1", "commands": ["ip 10.1.0.1/24 10.1.0.254"]},
            {"device": "PC2", "commands": ["ip 10.2.0.1/24 10.2.0.254"]},
        ]
        await call("run_vpcs_commands", {"devices": addresses})
        r1 = ["ip addr add 10.1.0.254/24 dev eth0", "ip addr add 10.2.0.254/24 dev eth1"]
        shown = await call("run_show_commands", {"devices": [{"device": "R1", "commands": r1}]})
        assert "R1# ip addr add 10.1.0.254/24 dev eth0" in shown[0]["output"]
        ping = {"devices": [{"device": "PC1", "commands": ["ping 10.2.0.1 -c 2"]}]}

        not_forwarded = await execute_tool(ctx, "run_vpcs_commands", ping)
        [entry] = not_forwarded.result
        assert entry["outcome"] == "failed" and "ttl=" not in entry["output"], entry

        forward = [{"device": "R1", "commands": ["sysctl -w net.ipv4.ip_forward=1"]}]
        await call("run_show_commands", {"devices": forward})
        [entry] = await call("run_vpcs_commands", ping)
        assert "10.2.0.1 icmp_seq=1 ttl=63" in entry["output"], entry

        # save-config keeps addresses, routes and forwarding across a restart
        saving = ["ip route add 10.9.0.0/24 via 10.2.0.1", "save-config"]
        [saved] = await call(
            "run_show_commands", {"devices": [{"device": "R1", "commands": saving}]}
        )
        assert "Configuration saved." in saved["output"], saved
        await call("stop_nodes", {"nodes": ["R1"]})
        started = await call("start_nodes", {"nodes": ["R1"]})
        assert started["nodes"][0]["console_ready"], started
        [entry] = await call("run_vpcs_commands", ping)
        assert "10.2.0.1 icmp_seq=1 ttl=63" in entry["output"], entry
        routes = [{"device": "R1", "commands": ["ip route"]}]
        [shown] = await call("run_show_commands", {"devices": routes})
        assert "10.9.0.0/24 via 10.2.0.1 dev eth1" in shown["output"], shown
