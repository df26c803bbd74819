"""Dynamips stand-in: the Ethernet switch (``ethsw``) and hub (``nio_bridge``) only.

Usage: ``dynamips -P none`` or ``--version`` prints the version banner gns3-server parses;
``dynamips [-N1 -l log] -H [host:]port [--console-binding-addr A]`` runs the hypervisor on
127.0.0.1:port. Modules: ``nio`` (UDP NIOs, stats, the ``capture`` filter writing pcap
files), ``ethsw`` (a VLAN-aware learning switch, see ``switch.py``) and ``nio_bridge``
(a hub). Routers (``vm``, ``c7200``...) are not emulated.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

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
from .switch import TPID_8021Q, EthernetHub, EthernetSwitch, PortMode

VERSION = "0.2.23"
BANNER = f"Cisco Router Simulation Platform (version {VERSION}-amd64/Linux stable)"
_DIRECTIONS = {"0": {"in"}, "1": {"out"}, "2": {"in", "out"}}


class Capture:
    """A ``capture`` filter on a NIO: which directions, and the pcap file once set up."""

    def __init__(self, directions: set[str]) -> None:
        self.directions = directions
        self.writer: PcapWriter | None = None

    def write(self, direction: str, frame: bytes) -> None:
        if self.writer is not None and direction in self.directions:
            self.writer.write(frame)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class Dynamips:
    """NIOs, switches and hubs of one hypervisor, and the frame path between them."""

    def __init__(self) -> None:
        self.nios: dict[str, UdpNio] = {}
        self.switches: dict[str, EthernetSwitch] = {}
        self.hubs: dict[str, EthernetHub] = {}
        self.owners: dict[str, EthernetSwitch | EthernetHub] = {}
        self.captures: dict[str, Capture] = {}

    def handlers(self) -> dict[str, Handler]:
        return {
            "nio create_udp": self.nio_create_udp,
            "nio delete": self.nio_delete,
            "nio rename": self.nio_rename,
            "nio list": self.nio_list,
            "nio get_stats": self.nio_get_stats,
            "nio reset_stats": self.nio_reset_stats,
            "nio set_debug": self.accept,
            "nio set_bandwidth": self.accept,
            "nio bind_filter": self.nio_bind_filter,
            "nio unbind_filter": self.nio_unbind_filter,
            "nio setup_filter": self.nio_setup_filter,
            "ethsw create": self.ethsw_create,
            "ethsw delete": self.ethsw_delete,
            "ethsw rename": self.ethsw_rename,
            "ethsw list": self.ethsw_list,
            "ethsw add_nio": self.ethsw_add_nio,
            "ethsw remove_nio": self.ethsw_remove_nio,
            "ethsw set_access_port": self.ethsw_set_access_port,
            "ethsw set_dot1q_port": self.ethsw_set_dot1q_port,
            "ethsw set_qinq_port": self.ethsw_set_qinq_port,
            "ethsw clear_mac_addr_table": self.ethsw_clear_mac_addr_table,
            "ethsw show_mac_addr_table": self.ethsw_show_mac_addr_table,
            "nio_bridge create": self.hub_create,
            "nio_bridge delete": self.hub_delete,
            "nio_bridge rename": self.hub_rename,
            "nio_bridge list": self.hub_list,
            "nio_bridge add_nio": self.hub_add_nio,
            "nio_bridge remove_nio": self.hub_remove_nio,
        }

    def reset(self) -> None:
        for capture in self.captures.values():
            capture.close()
        for nio in self.nios.values():
            nio.close()
        for registry in (self.nios, self.switches, self.hubs, self.owners, self.captures):
            registry.clear()

    def receive(self, nio: UdpNio, frame: bytes) -> None:
        """A frame arrived on a NIO: capture it and let its device forward it."""
        self._capture(nio.name, "in", frame)
        device = self.owners.get(nio.name)
        if device is None:
            return
        for port, out_frame in device.forward(nio.name, frame):
            target = self.nios.get(port)
            if target is not None:
                self._capture(port, "out", out_frame)
                target.send(out_frame)

    def _capture(self, nio_name: str, direction: str, frame: bytes) -> None:
        capture = self.captures.get(nio_name)
        if capture is not None:
            capture.write(direction, frame)

    def _nio(self, name: str) -> UdpNio:
        if name not in self.nios:
            raise CommandError(f"unable to find NIO '{name}'", ERR_NOT_FOUND)
        return self.nios[name]

    def _switch(self, name: str) -> EthernetSwitch:
        if name not in self.switches:
            raise CommandError(f"unable to find Ethernet switch '{name}'", ERR_NOT_FOUND)
        return self.switches[name]

    def _hub(self, name: str) -> EthernetHub:
        if name not in self.hubs:
            raise CommandError(f"unable to find NIO bridge '{name}'", ERR_NOT_FOUND)
        return self.hubs[name]

    def _attach(self, device: EthernetSwitch | EthernetHub, nio_name: str) -> None:
        self._nio(nio_name)
        if nio_name in self.owners:
            raise CommandError(f"NIO '{nio_name}' is already attached to a device")
        device.add_port(nio_name)
        self.owners[nio_name] = device

    def _detach(self, device: EthernetSwitch | EthernetHub, nio_name: str) -> None:
        if self.owners.get(nio_name) is not device:
            raise CommandError(f"NIO '{nio_name}' is not attached to this device", ERR_NOT_FOUND)
        device.remove_port(nio_name)
        del self.owners[nio_name]

    def _detach_all(self, device: EthernetSwitch | EthernetHub) -> None:
        for nio_name in [name for name, owner in self.owners.items() if owner is device]:
            self._detach(device, nio_name)

    async def accept(self, args: list[str]) -> Reply:
        return None

    # nio module

    async def nio_create_udp(self, args: list[str]) -> Reply:
        expect_args(args, 4, 4, "nio create_udp <name> <lport> <rhost> <rport>")
        name = args[0]
        if name in self.nios:
            raise CommandError(f"NIO '{name}' already exists")
        nio = await UdpNio.open(name, int(args[1]), args[2], int(args[3]))
        nio.on_frame = self.receive
        self.nios[name] = nio
        return f"NIO '{name}' created"

    async def nio_delete(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "nio delete <name>")
        nio = self._nio(args[0])
        if nio.name in self.owners:
            self._detach(self.owners[nio.name], nio.name)
        capture = self.captures.pop(nio.name, None)
        if capture is not None:
            capture.close()
        nio.close()
        del self.nios[nio.name]
        return f"NIO '{nio.name}' deleted"

    async def nio_rename(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "nio rename <name> <new_name>")
        old, new = args
        nio = self._nio(old)
        if new in self.nios:
            raise CommandError(f"NIO '{new}' already exists")
        nio.name = new
        self.nios[new] = self.nios.pop(old)
        if old in self.owners:
            self.owners[new] = self.owners.pop(old)
            self.owners[new].rename_port(old, new)
        if old in self.captures:
            self.captures[new] = self.captures.pop(old)
        return f"NIO '{old}' renamed to '{new}'"

    async def nio_list(self, args: list[str]) -> Reply:
        expect_args(args, 0, 0, "nio list")
        return sorted(self.nios)

    async def nio_get_stats(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "nio get_stats <name>")
        nio = self._nio(args[0])
        return f"{nio.packets_in} {nio.packets_out} {nio.bytes_in} {nio.bytes_out}"

    async def nio_reset_stats(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "nio reset_stats <name>")
        nio = self._nio(args[0])
        nio.packets_in = nio.packets_out = nio.bytes_in = nio.bytes_out = 0
        return None

    async def nio_bind_filter(self, args: list[str]) -> Reply:
        expect_args(args, 3, 3, "nio bind_filter <name> <direction 0|1|2> <filter>")
        nio = self._nio(args[0])
        if args[1] not in _DIRECTIONS:
            raise CommandError(f"unknown filter direction '{args[1]}' (0=in, 1=out, 2=both)")
        if args[2] == "capture":
            previous = self.captures.pop(nio.name, None)
            if previous is not None:
                previous.close()
            self.captures[nio.name] = Capture(set(_DIRECTIONS[args[1]]))
        return None

    async def nio_unbind_filter(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "nio unbind_filter <name> <direction 0|1|2>")
        nio = self._nio(args[0])
        capture = self.captures.get(nio.name)
        if capture is not None:
            capture.directions -= _DIRECTIONS.get(args[1], set())
            if not capture.directions:
                capture.close()
                del self.captures[nio.name]
        return None

    async def nio_setup_filter(self, args: list[str]) -> Reply:
        expect_args(args, 3, None, "nio setup_filter <name> <direction> <options...>")
        nio = self._nio(args[0])
        capture = self.captures.get(nio.name)
        if capture is None:
            return None  # options of a filter this stand-in does not emulate (freq_drop)
        expect_args(args, 4, 4, 'nio setup_filter <name> <direction> <link_type> "<file>"')
        capture.close()
        try:
            capture.writer = PcapWriter(args[3], linktype(args[2]))
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot start capture on NIO '{nio.name}': {error}") from None
        return None

    # ethsw module

    async def ethsw_create(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "ethsw create <name>")
        if args[0] in self.switches:
            raise CommandError(f"Ethernet switch '{args[0]}' already exists")
        self.switches[args[0]] = EthernetSwitch()
        return f"ETHSW '{args[0]}' created"

    async def ethsw_delete(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "ethsw delete <name>")
        self._detach_all(self._switch(args[0]))
        del self.switches[args[0]]
        return f"ETHSW '{args[0]}' deleted"

    async def ethsw_rename(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "ethsw rename <name> <new_name>")
        switch = self._switch(args[0])
        if args[1] in self.switches:
            raise CommandError(f"Ethernet switch '{args[1]}' already exists")
        del self.switches[args[0]]
        self.switches[args[1]] = switch
        return f"ETHSW '{args[0]}' renamed to '{args[1]}'"

    async def ethsw_list(self, args: list[str]) -> Reply:
        expect_args(args, 0, 0, "ethsw list")
        return sorted(self.switches)

    async def ethsw_add_nio(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "ethsw add_nio <name> <nio>")
        self._attach(self._switch(args[0]), args[1])
        return f"NIO '{args[1]}' bound"

    async def ethsw_remove_nio(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "ethsw remove_nio <name> <nio>")
        self._detach(self._switch(args[0]), args[1])
        return f"NIO '{args[1]}' unbound"

    def _configure(self, args: list[str], mode: PortMode, ethertype: int = TPID_8021Q) -> None:
        switch = self._switch(args[0])
        if self.owners.get(args[1]) is not switch:
            raise CommandError(f"NIO '{args[1]}' is not a port of '{args[0]}'", ERR_NOT_FOUND)
        switch.configure(args[1], mode, int(args[2]), ethertype)

    async def ethsw_set_access_port(self, args: list[str]) -> Reply:
        expect_args(args, 3, 3, "ethsw set_access_port <name> <nio> <vlan>")
        self._configure(args, PortMode.ACCESS)
        return None

    async def ethsw_set_dot1q_port(self, args: list[str]) -> Reply:
        expect_args(args, 3, 3, "ethsw set_dot1q_port <name> <nio> <native_vlan>")
        self._configure(args, PortMode.DOT1Q)
        return None

    async def ethsw_set_qinq_port(self, args: list[str]) -> Reply:
        expect_args(args, 3, 4, "ethsw set_qinq_port <name> <nio> <outer_vlan> [<ethertype>]")
        self._configure(args, PortMode.QINQ, int(args[3], 0) if len(args) == 4 else TPID_8021Q)
        return None

    async def ethsw_clear_mac_addr_table(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "ethsw clear_mac_addr_table <name>")
        self._switch(args[0]).clear_mac_table()
        return None

    async def ethsw_show_mac_addr_table(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "ethsw show_mac_addr_table <name>")
        return [f"{mac} {vlan} {nio}" for mac, vlan, nio in self._switch(args[0]).mac_entries()]

    # nio_bridge module (Ethernet hub)

    async def hub_create(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "nio_bridge create <name>")
        if args[0] in self.hubs:
            raise CommandError(f"NIO bridge '{args[0]}' already exists")
        self.hubs[args[0]] = EthernetHub()
        return f"NIO bridge '{args[0]}' created"

    async def hub_delete(self, args: list[str]) -> Reply:
        expect_args(args, 1, 1, "nio_bridge delete <name>")
        self._detach_all(self._hub(args[0]))
        del self.hubs[args[0]]
        return f"NIO bridge '{args[0]}' deleted"

    async def hub_rename(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "nio_bridge rename <name> <new_name>")
        hub = self._hub(args[0])
        if args[1] in self.hubs:
            raise CommandError(f"NIO bridge '{args[1]}' already exists")
        del self.hubs[args[0]]
        self.hubs[args[1]] = hub
        return f"NIO bridge '{args[0]}' renamed to '{args[1]}'"

    async def hub_list(self, args: list[str]) -> Reply:
        expect_args(args, 0, 0, "nio_bridge list")
        return sorted(self.hubs)

    async def hub_add_nio(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "nio_bridge add_nio <name> <nio>")
        self._attach(self._hub(args[0]), args[1])
        return f"NIO '{args[1]}' bound"

    async def hub_remove_nio(self, args: list[str]) -> Reply:
        expect_args(args, 2, 2, "nio_bridge remove_nio <name> <nio>")
        self._detach(self._hub(args[0]), args[1])
        return f"NIO '{args[1]}' unbound"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: version banner for ``-P none``/``--version``, else the hypervisor."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args or "-P" in args:
        print(BANNER)
        print("jupyter_gns3_copilot stand-in: Ethernet switch and hub only")
        return 0
    print(BANNER, flush=True)
    dynamips = Dynamips()
    server = HypervisorServer(VERSION, dynamips.handlers(), dynamips.reset)
    return run(server, args)


if __name__ == "__main__":
    sys.exit(main())
