"""uBridge stand-in: UDP-to-UDP bridges with packet capture, driven by gns3-server.

Usage: ``ubridge -v`` prints the version; ``ubridge -H [host:]port`` runs the hypervisor
on 127.0.0.1:port. A bridge joins two UDP NIOs: every frame received on one NIO's local
port is sent to the other NIO's remote address, and written to the capture file when a
capture runs. Packet filters are applied in the order added, as uBridge does:
``frequency_drop N`` (-1 drops everything: gns3-server's link suspend; N > 0 every Nth
frame; 0 nothing), ``packet_loss PERCENT``, ``delay LATENCY_MS [JITTER_MS]`` and
``corrupt PERCENT`` (one byte of the frame's payload flipped). ``bpf`` filters are accepted
and not applied (no BPF engine here). Host-interface NIOs (Cloud/NAT nodes) are refused.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from .pcap import PcapWriter, linktype
from .protocol import (
    ERR_NOT_FOUND,
    CommandError,
    Handler,
    HypervisorServer,
    Reply,
    UdpNio,
    expect_args,
    run,
)

VERSION = "0.9.18"
_NUMERIC_FILTERS = {
    "frequency_drop": (1, 1),
    "packet_loss": (1, 1),
    "delay": (1, 2),
    "corrupt": (1, 1),
}
"""Filter types applied here, with their (least, most) integer arguments."""
_ETHERNET_HEADER = 14


@dataclass
class PacketFilter:
    """One named packet filter of a bridge: its type, arguments and frames seen."""

    kind: str
    values: list[int] = field(default_factory=list)
    seen: int = 0

    @classmethod
    def parse(cls, kind: str, args: list[str]) -> PacketFilter:
        """A filter from ``add_packet_filter`` arguments; BPF and unknown types keep none."""
        if kind not in _NUMERIC_FILTERS:
            return cls(kind)
        least, most = _NUMERIC_FILTERS[kind]
        if not least <= len(args) <= most:
            raise CommandError(f"filter {kind} takes {least} to {most} integer arguments")
        try:
            return cls(kind, [int(value) for value in args])
        except ValueError:
            raise CommandError(f"filter {kind} takes integer arguments, not {args}") from None

    def drops(self) -> bool:
        """Whether this frame is dropped (frequency drop, packet loss)."""
        self.seen += 1
        if self.kind == "frequency_drop":
            every = self.values[0]
            return every == -1 or (every > 0 and self.seen % every == 0)
        if self.kind == "packet_loss":
            return random.uniform(0, 100) < self.values[0]
        return False

    def delay(self) -> float:
        """Seconds this filter holds the frame (latency +/- jitter, never negative)."""
        if self.kind != "delay":
            return 0.0
        latency, jitter = self.values[0], self.values[1] if len(self.values) > 1 else 0
        return max(0.0, latency + random.uniform(-jitter, jitter)) / 1000

    def corrupt(self, frame: bytes) -> bytes:
        """The frame, with one payload byte flipped at the filter's chance."""
        if self.kind != "corrupt" or len(frame) <= _ETHERNET_HEADER:
            return frame
        if random.uniform(0, 100) >= self.values[0]:
            return frame
        index = random.randrange(_ETHERNET_HEADER, len(frame))
        return frame[:index] + bytes([frame[index] ^ 0xFF]) + frame[index + 1 :]


class Bridge:
    """Two UDP NIOs joined back to back, with optional capture and packet filters."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.nios: list[UdpNio] = []
        self.running = False
        self.capture: PcapWriter | None = None
        self.filters: dict[str, PacketFilter] = {}

    def add_nio(self, nio: UdpNio) -> None:
        """Attach a NIO (at most two)."""
        if len(self.nios) == 2:
            nio.close()
            raise CommandError(f"bridge '{self.name}' already has two NIOs")
        nio.on_frame = self.forward
        self.nios.append(nio)

    def forward(self, source: UdpNio, frame: bytes) -> None:
        """Pass a frame from one NIO to the other through the filters, when started."""
        if not self.running or len(self.nios) != 2:
            return
        delay = 0.0
        for packet_filter in list(self.filters.values()):
            if packet_filter.drops():
                return
            delay += packet_filter.delay()
            frame = packet_filter.corrupt(frame)
        target = self.nios[1] if source is self.nios[0] else self.nios[0]
        if delay > 0:
            asyncio.get_running_loop().call_later(delay, self._send, target, frame)
        else:
            self._send(target, frame)

    def _send(self, target: UdpNio, frame: bytes) -> None:
        if self.capture is not None:
            self.capture.write(frame)
        target.send(frame)

    def stop_capture(self) -> None:
        if self.capture is not None:
            self.capture.close()
            self.capture = None

    def close(self) -> None:
        """Stop forwarding, end any capture and release the UDP ports."""
        self.running = False
        self.stop_capture()
        for nio in self.nios:
            nio.close()
        self.nios.clear()


class UBridge:
    """The ``bridge`` module: named bridges and their commands."""

    def __init__(self) -> None:
        self.bridges: dict[str, Bridge] = {}

    def handlers(self) -> dict[str, Handler]:
        return {
            "bridge create": self.create,
            "bridge delete": self.delete,
            "bridge start": self.start,
            "bridge stop": self.stop,
            "bridge rename": self.rename,
            "bridge list": self.list_bridges,
            "bridge get_stats": self.get_stats,
            "bridge add_nio_udp": self.add_nio_udp,
            "bridge start_capture": self.start_capture,
            "bridge stop_capture": self.stop_capture,
            "bridge add_packet_filter": self.add_packet_filter,
            "bridge delete_packet_filter": self.delete_packet_filter,
            "bridge reset_packet_filters": self.reset_packet_filters,
            "bridge set_pcap_filter": self.set_pcap_filter,
            "bridge add_nio_unix": self.unsupported,
            "bridge add_nio_tap": self.unsupported,
            "bridge add_nio_ethernet": self.unsupported,
            "bridge add_nio_linux_raw": self.unsupported,
            "bridge add_nio_fusion_vmnet": self.unsupported,
        }

    def reset(self) -> None:
        for bridge in self.bridges.values():
            bridge.close()
        self.bridges.clear()

    def _bridge(self, name: str) -> Bridge:
        try:
            return self.bridges[name]
        except KeyError:
            raise CommandError(f"bridge '{name}' doesn't exist", ERR_NOT_FOUND) from None

    async def create(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge create <name>")
        if args[0] in self.bridges:
            raise CommandError(f"bridge '{args[0]}' already exists")
        self.bridges[args[0]] = Bridge(args[0])
        return f"bridge '{args[0]}' created"

    async def delete(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge delete <name>")
        self._bridge(args[0]).close()
        del self.bridges[args[0]]
        return f"bridge '{args[0]}' deleted"

    async def start(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge start <name>")
        bridge = self._bridge(args[0])
        if len(bridge.nios) != 2:
            raise CommandError(f"bridge '{bridge.name}' must have 2 NIOs to be started")
        bridge.running = True
        return f"bridge '{bridge.name}' started"

    async def stop(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge stop <name>")
        self._bridge(args[0]).running = False
        return f"bridge '{args[0]}' stopped"

    async def rename(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "bridge rename <name> <new_name>")
        bridge = self._bridge(args[0])
        if args[1] in self.bridges:
            raise CommandError(f"bridge '{args[1]}' already exists")
        bridge.name = args[1]
        self.bridges[args[1]] = self.bridges.pop(args[0])
        return f"bridge '{args[0]}' renamed to '{args[1]}'"

    async def list_bridges(self, args: list[str]) -> Reply:
        expect_args(args, 0, 0, "bridge list")
        return [f"{b.name} (NIOs = {len(b.nios)})" for b in self.bridges.values()]

    async def get_stats(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge get_stats <name>")
        return [
            f"NIO {n.name}: IN: {n.packets_in} packets ({n.bytes_in} bytes) "
            f"OUT: {n.packets_out} packets ({n.bytes_out} bytes)"
            for n in self._bridge(args[0]).nios
        ]

    async def add_nio_udp(self, args: list[str]) -> Reply:
        expect_args(args, 4, 4, "bridge add_nio_udp <name> <lport> <rhost> <rport>")
        bridge = self._bridge(args[0])
        lport, rhost, rport = int(args[1]), args[2], int(args[3])
        nio = await UdpNio.open(f"{bridge.name}-udp-{lport}", lport, rhost, rport)
        bridge.add_nio(nio)
        return f"NIO UDP added to bridge '{bridge.name}'"

    async def start_capture(self, args: list[str]) -> Reply:
        expect_args(args, 2, 3, 'bridge start_capture <name> "<pcap_file>" [<link_type>]')
        bridge = self._bridge(args[0])
        if bridge.capture is not None:
            raise CommandError(f"packet capture is already active on bridge '{bridge.name}'")
        try:
            bridge.capture = PcapWriter(args[1], linktype(args[2] if len(args) > 2 else None))
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot start capture on bridge '{bridge.name}': {error}") from None
        return f"packet capture started on bridge '{bridge.name}'"

    async def stop_capture(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge stop_capture <name>")
        bridge = self._bridge(args[0])
        if bridge.capture is None:
            raise CommandError(f"no packet capture active on bridge '{bridge.name}'")
        bridge.stop_capture()
        return f"packet capture stopped on bridge '{bridge.name}'"

    async def add_packet_filter(self, args: list[str]) -> Reply:
        expect_args(args, 3, None, "bridge add_packet_filter <name> <filter_name> <type> [args]")
        bridge = self._bridge(args[0])
        bridge.filters[args[1]] = PacketFilter.parse(args[2], args[3:])
        return f"filter '{args[1]}' added to bridge '{bridge.name}'"

    async def delete_packet_filter(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "bridge delete_packet_filter <name> <filter_name>")
        bridge = self._bridge(args[0])
        if bridge.filters.pop(args[1], None) is None:
            raise CommandError(f"filter '{args[1]}' doesn't exist", ERR_NOT_FOUND)
        return f"filter '{args[1]}' deleted"

    async def reset_packet_filters(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "bridge reset_packet_filters <name>")
        self._bridge(args[0]).filters.clear()
        return f"packet filters reset on bridge '{args[0]}'"

    async def set_pcap_filter(self, args: list[str]) -> Reply:
        expect_args(args, 1, 2, 'bridge set_pcap_filter <name> ["<filter>"]')
        self._bridge(args[0])
        return None

    async def unsupported(self, args: list[str]) -> Reply:
        raise CommandError(
            "host network interfaces are not supported by the jupyter_gns3_copilot uBridge "
            "stand-in (only UDP NIOs: VPCS links); Cloud and NAT nodes cannot be used in this lab"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``-v`` prints the version, ``-H [host:]port`` serves the hypervisor."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "-v" in args or "--version" in args:
        print(f"ubridge version {VERSION} (jupyter_gns3_copilot stand-in)")
        return 0
    bridge = UBridge()
    server = HypervisorServer(VERSION, bridge.handlers(), bridge.reset)
    return run(server, args)


if __name__ == "__main__":
    sys.exit(main())
