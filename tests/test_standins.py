"""The uBridge/Dynamips stand-ins: switch logic, pcap files, and the hypervisors driven
over TCP with frames on real UDP sockets on 127.0.0.1 (no gns3-server needed)."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from jupyter_gns3_copilot.labkit.ports import free_tcp_port
from jupyter_gns3_copilot.labkit.standins.dynamips import Dynamips
from jupyter_gns3_copilot.labkit.standins.pcap import PcapWriter, read_pcap
from jupyter_gns3_copilot.labkit.standins.protocol import (
    Handler,
    HypervisorServer,
    UdpNio,
    listen_address,
)
from jupyter_gns3_copilot.labkit.standins.switch import EthernetHub, EthernetSwitch, PortMode
from jupyter_gns3_copilot.labkit.standins.ubridge import UBridge

BROADCAST = bytes.fromhex("ffffffffffff")
MAC_A = bytes.fromhex("005079666801")
MAC_B = bytes.fromhex("005079666802")
MAC_C = bytes.fromhex("005079666803")
WAIT = 2.0


def frame(destination: bytes, source: bytes, payload: bytes = b"hello") -> bytes:
    return destination + source + b"\x08\x00" + payload


def tagged(destination: bytes, source: bytes, vlan: int, payload: bytes = b"hello") -> bytes:
    return destination + source + b"\x81\x00" + vlan.to_bytes(2, "big") + b"\x08\x00" + payload


# Switch and hub logic


def test_switch_floods_unknown_then_forwards_learned_unicast() -> None:
    switch = EthernetSwitch()
    for port in ("p1", "p2", "p3"):
        switch.add_port(port)

    assert sorted(p for p, _ in switch.forward("p1", frame(MAC_B, MAC_A))) == ["p2", "p3"]
    assert switch.forward("p2", frame(MAC_A, MAC_B)) == [("p1", frame(MAC_A, MAC_B))]
    assert switch.forward("p1", frame(MAC_B, MAC_A)) == [("p2", frame(MAC_B, MAC_A))]
    assert switch.mac_entries() == [("0050.7966.6801", 1, "p1"), ("0050.7966.6802", 1, "p2")]

    switch.clear_mac_table()
    assert len(switch.forward("p1", frame(MAC_B, MAC_A))) == 2


def test_switch_keeps_vlans_apart_and_tags_on_trunks() -> None:
    switch = EthernetSwitch()
    for port in ("a1", "a2", "b1", "trunk"):
        switch.add_port(port)
    switch.configure("b1", PortMode.ACCESS, 20)
    switch.configure("trunk", PortMode.DOT1Q, 1)

    out = dict(switch.forward("a1", frame(BROADCAST, MAC_A)))
    assert set(out) == {"a2", "trunk"}
    assert out["trunk"] == frame(BROADCAST, MAC_A), "native VLAN leaves untagged"

    assert switch.forward("b1", frame(BROADCAST, MAC_B)) == [
        ("trunk", tagged(BROADCAST, MAC_B, 20))
    ]
    assert switch.forward("trunk", tagged(MAC_B, MAC_C, 20)) == [("b1", frame(MAC_B, MAC_C))]
    assert ("0050.7966.6803", 20, "trunk") in switch.mac_entries()


def test_switch_qinq_carries_customer_tags_in_the_outer_vlan() -> None:
    switch = EthernetSwitch()
    for port in ("customer", "trunk"):
        switch.add_port(port)
    switch.configure("customer", PortMode.QINQ, 100, 0x88A8)
    switch.configure("trunk", PortMode.DOT1Q, 1)

    inner = tagged(BROADCAST, MAC_A, 7)
    [(port, out)] = switch.forward("customer", inner)
    assert port == "trunk"
    assert out == inner[:12] + b"\x88\xa8" + (100).to_bytes(2, "big") + inner[12:]

    assert switch.forward("trunk", out) == [("customer", inner)]


def test_switch_drops_runts_and_unknown_ports_and_forgets_removed_ports() -> None:
    switch = EthernetSwitch()
    switch.add_port("p1")
    switch.add_port("p2")
    assert switch.forward("p1", b"short") == []
    assert switch.forward("nowhere", frame(MAC_B, MAC_A)) == []
    switch.forward("p2", frame(MAC_A, MAC_B))
    switch.remove_port("p2")
    assert switch.mac_entries() == []
    with pytest.raises(ValueError, match="VLAN"):
        switch.configure("p1", PortMode.ACCESS, 5000)


def test_hub_floods_to_every_other_port() -> None:
    hub = EthernetHub()
    for port in ("h1", "h2", "h3"):
        hub.add_port(port)
    assert [p for p, _ in hub.forward("h2", frame(MAC_A, MAC_B))] == ["h1", "h3"]


# pcap files


def test_pcap_writer_writes_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "c.pcap"
    writer = PcapWriter(path)
    writer.write(frame(MAC_B, MAC_A, b"one"), timestamp=1_700_000_000.25)
    writer.write(frame(MAC_A, MAC_B, b"two" * 40000))
    writer.close()
    writer.write(frame(MAC_A, MAC_B))

    data = path.read_bytes()
    assert data[:4] == bytes.fromhex("d4c3b2a1")
    link_type, frames = read_pcap(path)
    assert link_type == 1
    assert frames[0] == frame(MAC_B, MAC_A, b"one")
    assert len(frames) == 2 and len(frames[1]) == 65535, "second frame cut at snaplen"
    assert int.from_bytes(data[24:28], "little") == 1_700_000_000
    assert int.from_bytes(data[28:32], "little") == 250_000


# Hypervisors over TCP, frames over UDP


class HypervisorClient:
    """Speaks the line protocol the way gns3-server does."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def connect(self) -> None:
        for _ in range(200):
            try:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
                return
            except OSError:
                await asyncio.sleep(0.01)
        raise AssertionError(f"hypervisor did not listen on port {self.port}")

    async def send(self, command: str) -> list[str]:
        self.writer.write(f"{command}\n".encode())
        lines = []
        while True:
            line = (await asyncio.wait_for(self.reader.readline(), WAIT)).decode()
            assert line.endswith("\r\n"), line
            lines.append(line[:-2])
            if re.match(r"^(100|2\d\d)-", line):
                return lines


@asynccontextmanager
async def hypervisor(
    handlers: dict[str, Handler], reset: object
) -> AsyncIterator[HypervisorClient]:
    port = free_tcp_port()
    server = HypervisorServer("9.9.9", handlers, reset)  # type: ignore[arg-type]
    task = asyncio.create_task(server.run(port))
    client = HypervisorClient(port)
    await client.connect()
    try:
        yield client
    finally:
        await client.send("hypervisor stop")
        client.writer.close()
        await asyncio.wait_for(task, WAIT)


class Node:
    """A UDP endpoint on 127.0.0.1 standing for a node's side of a link."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def send(self, port: int, data: bytes) -> None:
        self.sock.sendto(data, ("127.0.0.1", port))

    async def receive(self, timeout: float = WAIT) -> bytes:
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(loop.sock_recv(self.sock, 65535), timeout)

    async def receives_nothing(self) -> bool:
        try:
            await self.receive(0.2)
        except asyncio.TimeoutError:
            return True
        return False

    def close(self) -> None:
        self.sock.close()


def udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_ubridge_bridges_udp_and_captures(tmp_path: Path) -> None:
    bridge = UBridge()
    left, right = Node(), Node()
    lport1, lport2 = udp_port(), udp_port()
    pcap = tmp_path / "link.pcap"
    try:
        async with hypervisor(bridge.handlers(), bridge.reset) as hv:
            assert await hv.send("hypervisor version") == ["100-9.9.9"]
            assert (await hv.send("bridge create br0"))[-1].startswith("100-")
            await hv.send(f"bridge add_nio_udp br0 {lport1} 127.0.0.1 {left.port}")
            await hv.send(f"bridge add_nio_udp br0 {lport2} 127.0.0.1 {right.port}")
            assert (await hv.send(f'bridge start_capture br0 "{pcap}" EN10MB'))[-1][:4] == "100-"
            assert (await hv.send("bridge start br0"))[-1][:4] == "100-"
            await hv.send("bridge reset_packet_filters br0")

            left.send(lport1, frame(MAC_B, MAC_A, b"ping"))
            assert await right.receive() == frame(MAC_B, MAC_A, b"ping")
            right.send(lport2, frame(MAC_A, MAC_B, b"pong"))
            assert await left.receive() == frame(MAC_A, MAC_B, b"pong")

            await hv.send("bridge add_packet_filter br0 filter0 frequency_drop -1")
            left.send(lport1, frame(MAC_B, MAC_A, b"suspended"))
            assert await right.receives_nothing()
            await hv.send("bridge reset_packet_filters br0")

            assert (await hv.send("bridge stop_capture br0"))[-1][:4] == "100-"
            assert (await hv.send("bridge add_nio_udp br0 1 127.0.0.1 2"))[-1][:4] == "209-"
            assert (await hv.send("bridge start nope"))[-1][:4] == "206-"
            assert (await hv.send("bridge add_nio_linux_raw br0 eth0"))[-1][:4] == "209-"
            assert (await hv.send("bridge add_nio_udp br0 x"))[-1][:4] == "203-"
            assert (await hv.send("bridge delete br0"))[-1][:4] == "100-"
    finally:
        left.close()
        right.close()

    assert read_pcap(pcap) == (1, [frame(MAC_B, MAC_A, b"ping"), frame(MAC_A, MAC_B, b"pong")])


async def test_ubridge_applies_loss_delay_and_corruption_filters() -> None:
    bridge = UBridge()
    left, right = Node(), Node()
    lport1, lport2 = udp_port(), udp_port()
    try:
        async with hypervisor(bridge.handlers(), bridge.reset) as hv:
            await hv.send("bridge create br0")
            await hv.send(f"bridge add_nio_udp br0 {lport1} 127.0.0.1 {left.port}")
            await hv.send(f"bridge add_nio_udp br0 {lport2} 127.0.0.1 {right.port}")
            await hv.send("bridge start br0")

            added = await hv.send("bridge add_packet_filter br0 f0 packet_loss 100")
            assert added[-1][:4] == "100-"
            left.send(lport1, frame(MAC_B, MAC_A, b"lost"))
            assert await right.receives_nothing()
            await hv.send("bridge reset_packet_filters br0")
            # gns3-server sends string values quoted; 0 drops nothing
            await hv.send('bridge add_packet_filter br0 f0 frequency_drop "0"')
            left.send(lport1, frame(MAC_B, MAC_A, b"kept"))
            assert await right.receive() == frame(MAC_B, MAC_A, b"kept")

            await hv.send("bridge add_packet_filter br0 f1 delay 60000 0")
            left.send(lport1, frame(MAC_B, MAC_A, b"held for a minute"))
            assert await right.receives_nothing()
            assert (await hv.send("bridge delete_packet_filter br0 f1"))[-1][:4] == "100-"
            assert (await hv.send("bridge delete_packet_filter br0 f1"))[-1][:4] == "206-"

            await hv.send("bridge add_packet_filter br0 f2 corrupt 100")
            sent = frame(MAC_B, MAC_A, b"intact?")
            left.send(lport1, sent)
            received = await right.receive()
            assert len(received) == len(sent)
            changed = [i for i, (a, b) in enumerate(zip(sent, received, strict=True)) if a != b]
            assert len(changed) == 1 and changed[0] >= 14

            assert (await hv.send("bridge add_packet_filter br0 f3 delay soon"))[-1][:4] == "209-"
            await hv.send('bridge add_packet_filter br0 f4 bpf "icmp"')
    finally:
        left.close()
        right.close()


async def test_dynamips_switch_forwards_by_vlan_over_udp(tmp_path: Path) -> None:
    dynamips = Dynamips()
    nodes = {name: Node() for name in ("pc1", "pc2", "pc3", "trunk")}
    lports = {name: udp_port() for name in nodes}
    pcap = tmp_path / "pc1.pcap"
    try:
        async with hypervisor(dynamips.handlers(), dynamips.reset) as hv:
            await hv.send('hypervisor working_dir "/tmp"')
            assert (await hv.send('ethsw create "Switch 1"'))[-1][:4] == "100-"
            for name, node in nodes.items():
                await hv.send(f"nio create_udp nio-{name} {lports[name]} 127.0.0.1 {node.port}")
                await hv.send(f'ethsw add_nio "Switch 1" nio-{name}')
            await hv.send('ethsw set_access_port "Switch 1" nio-pc1 1')
            await hv.send('ethsw set_access_port "Switch 1" nio-pc2 1')
            await hv.send('ethsw set_access_port "Switch 1" nio-pc3 20')
            await hv.send('ethsw set_dot1q_port "Switch 1" nio-trunk 1')
            await hv.send("nio bind_filter nio-pc1 2 capture")
            await hv.send(f'nio setup_filter nio-pc1 2 en10mb "{pcap}"')

            nodes["pc1"].send(lports["pc1"], frame(BROADCAST, MAC_A))
            assert await nodes["pc2"].receive() == frame(BROADCAST, MAC_A)
            assert await nodes["trunk"].receive() == frame(BROADCAST, MAC_A)
            assert await nodes["pc3"].receives_nothing()

            nodes["pc2"].send(lports["pc2"], frame(MAC_A, MAC_B))
            assert await nodes["pc1"].receive() == frame(MAC_A, MAC_B)
            assert await nodes["trunk"].receives_nothing()

            nodes["trunk"].send(lports["trunk"], tagged(BROADCAST, MAC_C, 20))
            assert await nodes["pc3"].receive() == frame(BROADCAST, MAC_C)

            table = await hv.send('ethsw show_mac_addr_table "Switch 1"')
            assert "101 0050.7966.6801 1 nio-pc1" in table
            assert "101 0050.7966.6803 20 nio-trunk" in table
            stats = await hv.send("nio get_stats nio-pc1")
            assert stats[0].startswith("100-1 1 ")

            await hv.send("nio unbind_filter nio-pc1 2")
            assert (await hv.send('ethsw add_nio "Switch 1" nio-pc1'))[-1][:4] == "209-"
            assert (await hv.send("ethsw show_mac_addr_table nope"))[-1][:4] == "206-"
            await hv.send('ethsw remove_nio "Switch 1" nio-pc1')
            await hv.send("nio delete nio-pc1")
            assert (await hv.send("nio list"))[:-1] == [
                "101 nio-pc2",
                "101 nio-pc3",
                "101 nio-trunk",
            ]
            assert (await hv.send('ethsw delete "Switch 1"'))[-1][:4] == "100-"
    finally:
        for node in nodes.values():
            node.close()

    assert read_pcap(pcap)[1] == [frame(BROADCAST, MAC_A), frame(MAC_A, MAC_B)]


async def test_dynamips_hub_floods_over_udp() -> None:
    dynamips = Dynamips()
    nodes = [Node(), Node(), Node()]
    lports = [udp_port() for _ in nodes]
    try:
        async with hypervisor(dynamips.handlers(), dynamips.reset) as hv:
            await hv.send('nio_bridge create "Hub 1"')
            for index, node in enumerate(nodes):
                await hv.send(f"nio create_udp n{index} {lports[index]} 127.0.0.1 {node.port}")
                await hv.send(f'nio_bridge add_nio "Hub 1" n{index}')
            nodes[0].send(lports[0], frame(MAC_B, MAC_A))
            assert await nodes[1].receive() == frame(MAC_B, MAC_A)
            assert await nodes[2].receive() == frame(MAC_B, MAC_A)
            assert await nodes[0].receives_nothing()
            await hv.send("hypervisor reset")
            assert await hv.send("nio list") == ["100-OK"]
    finally:
        for node in nodes:
            node.close()


async def test_protocol_errors_and_close() -> None:
    bridge = UBridge()
    async with hypervisor(bridge.handlers(), bridge.reset) as hv:
        assert (await hv.send("nonsense"))[-1][:4] == "200-"
        assert (await hv.send('bridge create "unterminated'))[-1][:4] == "200-"
        assert (await hv.send("router create r1"))[-1][:4] == "201-"
        assert (await hv.send("bridge fly br0"))[-1][:4] == "202-"
        assert await hv.send("hypervisor module_list") == ["101 bridge", "101 hypervisor", "100-OK"]
        assert await hv.send("hypervisor close") == ["100-OK"]
        assert await asyncio.wait_for(hv.reader.read(), WAIT) == b""
        await hv.connect()
        assert await hv.send("hypervisor version") == ["100-9.9.9"]


@pytest.mark.parametrize(
    ("module", "args", "pattern", "minimum"),
    [
        ("ubridge", ["-v"], r"ubridge version ([0-9a-z\.]+)", (0, 9, 14)),
        (
            "dynamips",
            ["-P", "none"],
            r"Cisco Router Simulation Platform \(version\s+([\d.]+)",
            (0, 2, 23),
        ),
    ],
)
def test_version_output_matches_what_gns3_server_parses(
    module: str, args: list[str], pattern: str, minimum: tuple[int, ...]
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", f"jupyter_gns3_copilot.labkit.standins.{module}", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    match = re.search(pattern, result.stdout)
    assert match is not None, result.stdout
    assert tuple(int(x) for x in match.group(1).split(".")) >= minimum


def test_a_hypervisor_listens_on_its_computes_loopback_address_only() -> None:
    assert listen_address(["-H", "127.0.0.3:4000"]) == ("127.0.0.3", 4000)
    assert listen_address(["-H", "4001"]) == ("127.0.0.1", 4001)
    for beyond in ("0.0.0.0", "10.1.2.3", "gns3.example"):
        assert listen_address(["-H", f"{beyond}:4002"]) == ("127.0.0.1", 4002)
    with pytest.raises(SystemExit, match="usage"):
        listen_address(["-v"])


async def test_a_nio_of_a_compute_receives_on_both_of_its_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A compute's NIO gets frames from its own node (127.0.0.1) and from the UDP tunnel
    of another compute (sent to this compute's address)."""
    monkeypatch.setattr(UdpNio, "BIND_HOSTS", ("127.0.0.1", "127.0.0.3"))
    peer = Node()
    lport = free_tcp_port()
    nio = await UdpNio.open("tunnel", lport, "127.0.0.1", peer.port)
    got: list[bytes] = []
    nio.on_frame = lambda _nio, data: got.append(data)
    try:
        for host, data in (("127.0.0.1", b"from-node"), ("127.0.0.3", b"from-tunnel")):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
                sender.sendto(data, (host, lport))
        for _ in range(50):
            if len(got) == 2:
                break
            await asyncio.sleep(0.02)
        assert sorted(got) == [b"from-node", b"from-tunnel"]
        nio.send(b"back")
        assert await peer.receive() == b"back"
    finally:
        nio.close()
        peer.close()
