"""Decode a pcap in Python (dpkt) where tshark is absent: the same columns as tshark for
Ethernet, ARP, IPv4, IPv6, ICMP, ICMPv6, UDP and TCP, and a small display-filter subset.

Every packet is parsed once; the text of a row (addresses, info) is only built for the
rows shown, and a packet's filter fields only when there is a filter.
"""

from __future__ import annotations

import io
import socket
from collections import Counter

import dpkt
from dpkt.ethernet import Ethernet

from .display_filter import Packet, compile_filter
from .models import CaptureAnalysis, CaptureError, PacketRow

_ICMP_TYPES = {
    0: "Echo (ping) reply",
    3: "Destination unreachable",
    5: "Redirect",
    8: "Echo (ping) request",
    11: "Time-to-live exceeded",
}
_ICMP6_TYPES = {
    1: "Destination Unreachable",
    3: "Time Exceeded",
    128: "Echo (ping) request",
    129: "Echo (ping) reply",
    133: "Router Solicitation",
    134: "Router Advertisement",
    135: "Neighbor Solicitation",
    136: "Neighbor Advertisement",
}
_TCP_FLAGS = ((0x02, "SYN"), (0x10, "ACK"), (0x01, "FIN"), (0x04, "RST"), (0x08, "PSH"))
_ETHERTYPES = {0x88CC: "LLDP", 0x9000: "LOOP", 0x8809: "Slow protocols"}
_TRANSPORTS = ((dpkt.udp.UDP, "UDP"), (dpkt.tcp.TCP, "TCP"))


def decode_with_python(data: bytes, display_filter: str | None, limit: int) -> CaptureAnalysis:
    """The packets of the pcap `data` matching `display_filter` (the subset of Wireshark's
    syntax that `display_filter.compile_filter` documents). Raises `CaptureError` for a
    filter outside that subset, a link type other than Ethernet, or a broken file."""
    matches = compile_filter(display_filter) if display_filter and display_filter.strip() else None
    try:
        reader = dpkt.pcap.Reader(io.BytesIO(data))
    except (ValueError, dpkt.Error) as exc:
        raise CaptureError(f"The capture cannot be read: {exc}") from None
    if reader.datalink() != dpkt.pcap.DLT_EN10MB:
        raise CaptureError(
            f"Only Ethernet captures can be decoded without tshark "
            f"(this one has link type {reader.datalink()})."
        )
    rows: list[PacketRow] = []
    protocols: Counter[str] = Counter()
    start: float | None = None
    for number, (timestamp, frame) in enumerate(reader, start=1):
        start = timestamp if start is None else start
        eth = _ethernet(frame)
        if matches is not None and not matches(Packet(_fields(eth))):
            continue
        protocol = _protocol(eth)
        protocols[protocol] += 1
        if len(rows) < limit:
            source, destination, info = _describe(eth, frame)
            rows.append(
                PacketRow.bounded(
                    number, float(timestamp - start), source, destination, protocol, info
                )
            )
    return CaptureAnalysis(
        decoder="python",
        packets=rows,
        matched=protocols.total(),
        protocols=dict(protocols.most_common()),
    )


def _ethernet(frame: bytes) -> Ethernet | None:
    try:
        return Ethernet(frame)
    except (dpkt.UnpackError, dpkt.NeedData):
        return None


def _protocol(eth: Ethernet | None) -> str:
    """The top protocol's name, as tshark's Protocol column names these."""
    if eth is None:
        return "Ethernet"
    payload = eth.data
    if isinstance(payload, dpkt.arp.ARP):
        return "ARP"
    if isinstance(payload, (dpkt.ip.IP, dpkt.ip6.IP6)):
        inner = payload.data
        if isinstance(inner, dpkt.icmp.ICMP) and isinstance(payload, dpkt.ip.IP):
            return "ICMP"
        if isinstance(inner, dpkt.icmp6.ICMP6):
            return "ICMPv6"
        for kind, name in _TRANSPORTS:
            if isinstance(inner, kind):
                return name
        return "IPv4" if isinstance(payload, dpkt.ip.IP) else "IPv6"
    return _ETHERTYPES.get(eth.type, "Ethernet")


def _describe(eth: Ethernet | None, frame: bytes) -> tuple[str, str, str]:
    """Source, destination (IP addresses when there are some, else MACs) and info."""
    if eth is None:
        return "", "", f"malformed frame ({len(frame)} bytes)"
    payload = eth.data
    if isinstance(payload, dpkt.arp.ARP):
        spa, tpa = socket.inet_ntoa(payload.spa), socket.inet_ntoa(payload.tpa)
        if payload.op == dpkt.arp.ARP_OP_REQUEST:
            info = f"Who has {tpa}? Tell {spa}"
        elif payload.op == dpkt.arp.ARP_OP_REPLY:
            info = f"{spa} is at {payload.sha.hex(':')}"
        else:
            info = f"ARP opcode {payload.op}"
        return eth.src.hex(":"), eth.dst.hex(":"), info
    if isinstance(payload, (dpkt.ip.IP, dpkt.ip6.IP6)):
        family = socket.AF_INET if isinstance(payload, dpkt.ip.IP) else socket.AF_INET6
        source = socket.inet_ntop(family, payload.src)
        destination = socket.inet_ntop(family, payload.dst)
        return source, destination, _ip_info(payload)
    return eth.src.hex(":"), eth.dst.hex(":"), f"EtherType 0x{eth.type:04x}, {len(frame)} bytes"


def _ip_info(ip: dpkt.ip.IP | dpkt.ip6.IP6) -> str:
    inner = ip.data
    if isinstance(inner, (dpkt.icmp.ICMP, dpkt.icmp6.ICMP6)):
        names = _ICMP_TYPES if isinstance(inner, dpkt.icmp.ICMP) else _ICMP6_TYPES
        text = names.get(inner.type, f"Type {inner.type}")
        echo = inner.data
        if hasattr(echo, "id") and hasattr(echo, "seq"):
            text += f"  id=0x{echo.id:04x}, seq={echo.seq}"
        elif inner.code:
            text += f" (code {inner.code})"
        ttl = ip.ttl if isinstance(ip, dpkt.ip.IP) else ip.hlim
        return f"{text}, ttl={ttl}"
    if isinstance(inner, dpkt.udp.UDP):
        return f"{inner.sport} → {inner.dport} Len={max(inner.ulen - 8, 0)}"
    if isinstance(inner, dpkt.tcp.TCP):
        flags = ", ".join(label for bit, label in _TCP_FLAGS if inner.flags & bit)
        return (
            f"{inner.sport} → {inner.dport} [{flags}] Seq={inner.seq} Ack={inner.ack} "
            f"Win={inner.win} Len={len(inner.data)}"
        )
    number = ip.p if isinstance(ip, dpkt.ip.IP) else ip.nxt
    return f"IP protocol {number}"


def _fields(eth: Ethernet | None) -> dict[str, set[str]]:
    """The protocols and fields a display filter can test (values in lower case)."""
    if eth is None:
        return {}
    source, destination = eth.src.hex(":"), eth.dst.hex(":")
    fields = {
        "eth": {""},
        "eth.addr": {source, destination},
        "eth.src": {source},
        "eth.dst": {destination},
    }
    payload = eth.data
    if isinstance(payload, dpkt.arp.ARP):
        fields["arp"] = {""}
        fields["arp.src.proto_ipv4"] = {socket.inet_ntoa(payload.spa)}
        fields["arp.dst.proto_ipv4"] = {socket.inet_ntoa(payload.tpa)}
    elif isinstance(payload, (dpkt.ip.IP, dpkt.ip6.IP6)):
        name, family = (
            ("ip", socket.AF_INET) if isinstance(payload, dpkt.ip.IP) else ("ipv6", socket.AF_INET6)
        )
        src = socket.inet_ntop(family, payload.src)
        dst = socket.inet_ntop(family, payload.dst)
        fields.update({name: {""}, f"{name}.addr": {src, dst}, f"{name}.src": {src}})
        fields[f"{name}.dst"] = {dst}
        inner = payload.data
        if isinstance(inner, (dpkt.icmp.ICMP, dpkt.icmp6.ICMP6)):
            icmp = "icmp" if isinstance(inner, dpkt.icmp.ICMP) else "icmpv6"
            fields.update({icmp: {""}, f"{icmp}.type": {str(inner.type)}})
        elif isinstance(inner, (dpkt.udp.UDP, dpkt.tcp.TCP)):
            layer = "udp" if isinstance(inner, dpkt.udp.UDP) else "tcp"
            ports = {str(inner.sport), str(inner.dport)}
            fields.update({layer: {""}, f"{layer}.port": ports})
            fields[f"{layer}.srcport"] = {str(inner.sport)}
            fields[f"{layer}.dstport"] = {str(inner.dport)}
    return fields
