"""The local lab's FRR router: Debian's FRRouting in a QEMU node, on the real local GNS3
lab, driven through its real telnet console."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from support.consoles import router_console
from support.initramfs import cpio_entries

from jupyter_gns3_copilot.console import ConsoleSession
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit.frr import (
    FRR_TEMPLATE,
    TCG_OPTIONS,
    VTYSH_CONF,
    build_frr_images,
)
from jupyter_gns3_copilot.labkit.provision import resolve_cache_dir
from jupyter_gns3_copilot.labkit.router import hostname_command_line

OSPF_TIMEOUT = 120.0


def test_the_frr_router_carries_the_daemons_their_libraries_users_and_a_blank_disk() -> None:
    """The FRR initramfs has the four daemons, watchfrr and vtysh with the libraries they
    link (libfrr from Debian's package), the frr user and groups, the virtio disk driver,
    and an /init that keeps /etc/frr on the disk and vtysh on the console; the node's
    disk is a qcow2 image."""
    images = build_frr_images(resolve_cache_dir())
    entries = cpio_entries(images.files[images.initrd])
    for program in ("zebra", "staticd", "ospfd", "bgpd", "watchfrr"):
        assert entries[f"usr/lib/frr/{program}"][2][:4] == b"\x7fELF"
    assert entries["usr/bin/vtysh"][2][:4] == b"\x7fELF"
    assert any(path.startswith("usr/lib/x86_64-linux-gnu/frr/libfrr.so") for path in entries)
    assert any("libyang.so" in path for path in entries)
    assert b"\nfrr:x:" in b"\n" + entries["etc/passwd"][2]
    assert b"frrvty:x:" in entries["etc/group"][2]
    assert "virtio_blk.ko" in entries["etc/modules"][2].decode().split()
    init = entries["init"][2].decode()
    assert "ln -s /disk/frr /etc/frr" in init and "watchfrr" in init
    assert "username root nopassword" in VTYSH_CONF and "cttyhack vtysh" in init
    assert b"ping -c 5 " in entries["usr/local/bin/ping"][2]
    assert "export PATH=/usr/local/bin:" in init
    assert images.disk is not None and images.files[images.disk][:4] == b"QFI\xfb"


@pytest.mark.lab
def test_the_lab_has_the_frr_router_template(gns3_lab: Any, gns3_http: httpx.Client) -> None:
    """Provisioning the lab adds the "FRR router" template beside the Linux router, a
    QEMU node with its own disk and a bounded translation cache."""
    assert not getattr(gns3_lab, "router_problems", {}).get(FRR_TEMPLATE)
    templates = {t["name"]: t for t in gns3_http.get("/v3/templates").json()}
    assert "Linux router" in templates
    frr = templates[FRR_TEMPLATE]
    assert frr["template_type"] == "qemu" and frr["hda_disk_image"].endswith(".qcow2")
    assert frr["options"] == TCG_OPTIONS


async def _until_full(session: ConsoleSession, deadline: float) -> dict[str, Any]:
    while True:
        shown = await session.send("show ip ospf neighbor json")
        neighbors = json.loads(shown.output)["neighbors"]
        states = [n["nbrState"] for found in neighbors.values() for n in found]
        if states and all(state.startswith("Full") for state in states):
            return dict(neighbors)
        assert time.monotonic() < deadline, f"no OSPF Full: {shown.output}"
        await asyncio.sleep(1)


@pytest.mark.lab
@pytest.mark.slow
async def test_two_frr_routers_reach_ospf_full_and_keep_a_saved_configuration(
    gns3_project: Any,
) -> None:
    """Given R1 and R2 from the FRR template, cabled e0 to e0 and started; their consoles
    answer at `R1#`/`R2#` in vtysh and `show version` is FRRouting's; configured by
    console they reach OSPF Full (read from `show ip ospf neighbor json`); R1's
    configuration saved with `write memory` is there again after R1 is stopped and
    started."""
    pid = gns3_project.project_id
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        for index, name in enumerate(("R1", "R2")):
            node = await gns3.create_node_from_template(pid, FRR_TEMPLATE, name, x=200 * index)
            line = hostname_command_line(name)
            await gns3.update_node(pid, node.node_id, properties={"kernel_command_line": line})
        await gns3.create_link(pid, "R1", "e0", "R2", "e0")
        began = time.monotonic()
        await gns3.start_all(pid)
        url = gns3_project.url
        sessions = [await router_console(gns3, pid, name, url) for name in ("R1", "R2")]
        booted = time.monotonic() - began
        try:
            for number, session in enumerate(sessions, start=1):
                assert session.prompt == f"R{number}#"
                version = await session.send("show version")
                assert version.ok and "FRRouting 8.4" in version.output, version
                configured = await session.configure(
                    [
                        "interface eth0",
                        f"ip address 10.0.12.{number}/24",
                        "ip ospf network point-to-point",
                        "ip ospf hello-interval 1",
                        "ip ospf dead-interval 4",
                        "exit",
                        "router ospf",
                        f"ospf router-id {number}.{number}.{number}.{number}",
                        "network 10.0.12.0/24 area 0",
                    ]
                )
                assert all(line.ok for line in configured), configured
            configured = time.monotonic()
            neighbors = await _until_full(sessions[0], configured + OSPF_TIMEOUT)
            full = time.monotonic() - configured
            assert list(neighbors) == ["2.2.2.2"]
            saved = await sessions[0].send("write memory")
            assert "[OK]" in saved.output, saved
        finally:
            for session in sessions:
                await session.close()
        print(f"FRR routers: consoles ready {booted:.1f} s after start, OSPF Full {full:.1f} s")

        [r1] = [n for n in await gns3.list_nodes(pid) if n.name == "R1"]
        await gns3.stop_node(pid, r1.node_id)
        await gns3.start_node(pid, r1.node_id)
        session = await router_console(gns3, pid, "R1", gns3_project.url)
        try:
            shown = await session.send("show running-config")
            assert "ospf router-id 1.1.1.1" in shown.output, shown.output
            assert "ip address 10.0.12.1/24" in shown.output, shown.output
            await _until_full(session, time.monotonic() + OSPF_TIMEOUT)
        finally:
            await session.close()


async def _saved_routes(gns3: GNS3Client, pid: str, url: str, add: str | None = None) -> str:
    """Start R1, add the static route `add` (saved with `write memory`) when given, and
    return its running configuration; R1 is stopped again."""
    [r1] = [n for n in await gns3.list_nodes(pid) if n.name == "R1"]
    await gns3.start_node(pid, r1.node_id)
    session = await router_console(gns3, pid, "R1", url)
    try:
        if add:
            [line] = await session.configure([f"ip route {add} Null0"])
            assert line.ok, line
            saved = await session.send("write memory")
            assert "[OK]" in saved.output, saved
        shown = await session.send("show running-config")
    finally:
        await session.close()
    await gns3.stop_node(pid, r1.node_id)
    return shown.output


@pytest.mark.lab
@pytest.mark.slow
async def test_a_snapshot_and_a_duplicate_carry_the_frr_routers_saved_configuration(
    gns3_project: Any,
) -> None:
    """Given R1 with a saved route, snapshotted, then duplicated; when R1 saves another
    route and the snapshot is restored, R1 has the first route only; the duplicate's R1
    has it too."""
    pid = gns3_project.project_id
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        node = await gns3.create_node_from_template(pid, FRR_TEMPLATE, "R1")
        line = hostname_command_line("R1")
        await gns3.update_node(pid, node.node_id, properties={"kernel_command_line": line})
        await _saved_routes(gns3, pid, gns3_project.url, add="10.9.9.0/24")
        snapshot = await gns3.create_snapshot(pid, "first route")
        copy = await gns3.duplicate_project(pid, f"{gns3_project.name}-copy")
        try:
            later = await _saved_routes(gns3, pid, gns3_project.url, add="10.8.8.0/24")
            assert "ip route 10.8.8.0/24 Null0" in later
            await gns3.restore_snapshot(pid, snapshot.snapshot_id)
            restored = await _saved_routes(gns3, pid, gns3_project.url)
            assert "ip route 10.9.9.0/24 Null0" in restored, restored
            assert "10.8.8.0" not in restored, restored
            await gns3.open_project(copy.project_id)
            copied = await _saved_routes(gns3, copy.project_id, gns3_project.url)
            assert "ip route 10.9.9.0/24 Null0" in copied and "10.8.8.0" not in copied
        finally:
            await gns3.close_project(copy.project_id)
            await gns3.delete_project(copy.project_id)
