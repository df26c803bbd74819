"""Frame forwarding for the Dynamips stand-in: a VLAN-aware learning switch and a hub.

Pure logic with no I/O: ``forward(in_port, frame)`` returns ``[(out_port, frame), ...]``.
Ports are named by the NIO attached to them.

Switch port modes (as Dynamips' ``ethsw`` offers them):
- access VLAN v: frames enter and leave untagged, in VLAN v;
- dot1q, native VLAN n: tagged frames enter in their tag's VLAN (untagged or
  priority-tagged ones in n); frames leave tagged, except in VLAN n;
- qinq, outer VLAN v: whatever enters (customer tags included) is carried in VLAN v;
  on a dot1q port it leaves with an outer tag using the qinq port's EtherType.
MAC addresses are learned per VLAN; unknown unicast, broadcast and multicast flood the
VLAN; a frame is never sent back to its ingress port.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

TPID_8021Q = 0x8100
_TAG_TPIDS = {0x8100, 0x88A8, 0x9100}
_MIN_FRAME = 14


class PortMode(str, Enum):
    ACCESS = "access"
    DOT1Q = "dot1q"
    QINQ = "qinq"


@dataclass
class SwitchPort:
    mode: PortMode = PortMode.ACCESS
    vlan: int = 1
    ethertype: int = TPID_8021Q


def format_mac(mac: bytes) -> str:
    """Dynamips/Cisco style ``0050.7966.6800``."""
    text = mac.hex()
    return f"{text[0:4]}.{text[4:8]}.{text[8:12]}"


def _tag(frame: bytes, vlan: int, tpid: int) -> bytes:
    return frame[:12] + tpid.to_bytes(2, "big") + vlan.to_bytes(2, "big") + frame[12:]


@dataclass
class EthernetSwitch:
    """A learning switch; ports default to access VLAN 1 when added."""

    ports: dict[str, SwitchPort] = field(default_factory=dict)
    mac_table: dict[tuple[int, bytes], str] = field(default_factory=dict)

    def add_port(self, port: str) -> None:
        self.ports[port] = SwitchPort()

    def remove_port(self, port: str) -> None:
        self.ports.pop(port, None)
        self.mac_table = {key: p for key, p in self.mac_table.items() if p != port}

    def rename_port(self, old: str, new: str) -> None:
        self.ports[new] = self.ports.pop(old)
        self.mac_table = {key: new if p == old else p for key, p in self.mac_table.items()}

    def configure(self, port: str, mode: PortMode, vlan: int, ethertype: int = TPID_8021Q) -> None:
        """Set a port's mode and VLAN (access VLAN, native VLAN or outer VLAN)."""
        if not 1 <= vlan <= 4095:
            raise ValueError(f"VLAN {vlan} out of range 1-4095")
        self.ports[port] = SwitchPort(mode, vlan, ethertype)
        self.mac_table = {key: p for key, p in self.mac_table.items() if p != port}

    def clear_mac_table(self) -> None:
        self.mac_table.clear()

    def mac_entries(self) -> list[tuple[str, int, str]]:
        """``(mac, vlan, port)`` rows, sorted by VLAN then MAC."""
        return [
            (format_mac(mac), vlan, port) for (vlan, mac), port in sorted(self.mac_table.items())
        ]

    def forward(self, in_port: str, frame: bytes) -> list[tuple[str, bytes]]:
        """Learn the source address and return the frames to send, per egress port."""
        ingress = self.ports.get(in_port)
        if ingress is None or len(frame) < _MIN_FRAME:
            return []
        vlan, inner = self._classify(ingress, frame)
        source, destination = inner[6:12], inner[0:6]
        if not source[0] & 1:
            self.mac_table[(vlan, source)] = in_port
        known = self.mac_table.get((vlan, destination)) if not destination[0] & 1 else None
        if known == in_port:
            return []
        members = [
            name
            for name, port in self.ports.items()
            if name != in_port and (port.mode is PortMode.DOT1Q or port.vlan == vlan)
        ]
        if known is not None and known in members:
            members = [known]
        tpid = ingress.ethertype if ingress.mode is PortMode.QINQ else TPID_8021Q
        return [(name, self._encode(self.ports[name], vlan, inner, tpid)) for name in members]

    @staticmethod
    def _classify(port: SwitchPort, frame: bytes) -> tuple[int, bytes]:
        if port.mode is PortMode.DOT1Q and int.from_bytes(frame[12:14], "big") in _TAG_TPIDS:
            vid = int.from_bytes(frame[14:16], "big") & 0x0FFF
            return (vid or port.vlan), frame[:12] + frame[16:]
        return port.vlan, frame

    @staticmethod
    def _encode(port: SwitchPort, vlan: int, inner: bytes, tpid: int) -> bytes:
        if port.mode is PortMode.DOT1Q and vlan != port.vlan:
            return _tag(inner, vlan, tpid)
        return inner


@dataclass
class EthernetHub:
    """Every frame goes to every other port."""

    ports: list[str] = field(default_factory=list)

    def add_port(self, port: str) -> None:
        self.ports.append(port)

    def remove_port(self, port: str) -> None:
        if port in self.ports:
            self.ports.remove(port)

    def rename_port(self, old: str, new: str) -> None:
        self.ports[self.ports.index(old)] = new

    def forward(self, in_port: str, frame: bytes) -> list[tuple[str, bytes]]:
        return [(port, frame) for port in self.ports if port != in_port]
