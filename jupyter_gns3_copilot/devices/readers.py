"""Reading facts out of device output, per console dialect: the addresses a device has,
and the rows of a parsed `show` command.

Addresses: VPCS `show ip`, Linux `ip -4 addr show` (iproute2 and BusyBox), IOS
`show ip interface` (through the maintained TextFSM templates, as `parsed` checks are),
FRR `show interface json` (every interface with all its addresses, secondaries too, which
`show interface brief` does not list).
Parsed rows: ntc-templates' `parse_output` for the platform and command; VPCS and Linux
have no templates there, which the check reports as undecidable, not as a failure.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from typing import Any

from ..gns3.models import canonical_port_name

ADDRESS_COMMANDS = {
    "vpcs": "show ip",
    "cisco_ios": "show ip interface",
    "frr": "show interface json",
    "linux": "ip -4 addr show",
}
"""The command each dialect's addresses are read with."""


class ReadError(ValueError):
    """Output that cannot be read as expected (said for a student: what, where)."""


@dataclass(frozen=True)
class Address:
    """One configured IPv4 address, with the interface it is on and the output line (FRR:
    a line written from its JSON, `eth0 up 10.0.12.1/24`)."""

    interface: str
    address: ipaddress.IPv4Interface
    line: str


def addresses(output: str, dialect: str) -> list[Address]:
    """The IPv4 addresses in `output` of the dialect's `ADDRESS_COMMANDS` command, in the
    device's order; an unconfigured VPCS (`0.0.0.0/0`) has none."""
    if dialect == "vpcs":
        return _vpcs_addresses(output)
    if dialect == "linux":
        return _linux_addresses(output)
    if dialect == "cisco_ios":
        return _ios_addresses(output)
    if dialect == "frr":
        return _frr_interface_addresses(output)
    raise ReadError(f"no address reader for {dialect} devices")


def interface_lines(output: str, dialect: str) -> list[tuple[str, str]]:
    """Each interface of `output` (the dialect's `ADDRESS_COMMANDS` command) with the line
    that names it, configured or not (VPCS: its `IP/MASK` line, `0.0.0.0/0` when it has
    no address; FRR: `eth3 down, no IPv4 address`); what shows a student that an interface
    has no address."""
    if dialect == "frr":
        try:
            return [(name, _frr_line(name, shown)) for name, shown in _frr_interfaces(output)]
        except ReadError:
            return []
    pattern = _INTERFACE_LINES.get(dialect)
    if pattern is None:
        return []
    return [
        (match.group(1) if match.groups() else "e0", match.group(0).strip())
        for match in pattern.finditer(output)
    ]


_INTERFACE_LINES = {
    "vpcs": re.compile(r"^\s*IP/MASK\s*:.*$", re.MULTILINE),
    "linux": re.compile(r"^\d+:\s+([^\s:@]+).*$", re.MULTILINE),
    "cisco_ios": re.compile(r"^(\S+) is .*$", re.MULTILINE),
}


def same_interface(wanted: str, actual: str) -> bool:
    """Whether `wanted` (as a lab file names it: `e0`, `Gi0/0`, `eth0`) names `actual`."""
    return canonical_port_name(wanted) == canonical_port_name(actual)


def parsed_rows(output: str, platform: str, command: str) -> list[dict[str, Any]]:
    """The rows ntc-templates parses out of `command`'s `output` on `platform`."""
    from ntc_templates.parse import parse_output  # loads TextFSM: only when a check needs it

    try:
        rows = parse_output(platform=platform, command=command, data=output)
    except Exception as exc:  # ntc raises its own exception types for a missing template
        if "No template found" in str(exc):
            raise ReadError(
                f"there is no parser for `{command}` on {platform} devices; a command check "
                "(contains or regex) can read it"
            ) from None
        raise ReadError(f"cannot parse `{command}` for {platform}: {_first_line(exc)}") from None
    return [dict(row) for row in rows]


_VPCS_ADDRESS = re.compile(r"^\s*IP/MASK\s*:\s*(\d+\.\d+\.\d+\.\d+/\d+)", re.MULTILINE)


def _vpcs_addresses(output: str) -> list[Address]:
    found = []
    for match in _VPCS_ADDRESS.finditer(output):
        address = ipaddress.IPv4Interface(match.group(1))
        if int(address.ip) == 0:
            continue
        found.append(Address("e0", address, line_at(output, match.start())))
    return found


_LINUX_INTERFACE = re.compile(r"^\d+:\s+([^\s:@]+)")
_LINUX_INET = re.compile(r"\binet\s+(\d+\.\d+\.\d+\.\d+/\d+)")


def _linux_addresses(output: str) -> list[Address]:
    found = []
    interface = ""
    for line in output.splitlines():
        heading = _LINUX_INTERFACE.match(line)
        if heading:
            interface = heading.group(1)
        inet = _LINUX_INET.search(line)
        if inet:
            found.append(Address(interface, ipaddress.IPv4Interface(inet.group(1)), line.strip()))
    return found


def _ios_addresses(output: str) -> list[Address]:
    found = []
    for row in parsed_rows(output, "cisco_ios", "show ip interface"):
        interface = str(row.get("interface", ""))
        for ip, length in zip(
            row.get("ip_address") or [], row.get("prefix_length") or [], strict=False
        ):
            line = next(
                (ln.strip() for ln in output.splitlines() if f"{ip}/{length}" in ln),
                f"{interface} {ip}/{length}",
            )
            found.append(Address(interface, ipaddress.IPv4Interface(f"{ip}/{length}"), line))
    return found


def _frr_interface_addresses(output: str) -> list[Address]:
    """The IPv4 addresses of FRR's `show interface json` (IPv6 ones left out)."""
    return [
        Address(name, address, _frr_line(name, shown, address))
        for name, shown in _frr_interfaces(output)
        for address in _frr_ipv4(shown)
    ]


def _frr_interfaces(output: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        shown = json.loads(output)
    except ValueError:
        raise ReadError("`show interface json` did not print its interfaces as JSON") from None
    if not isinstance(shown, dict):
        raise ReadError("`show interface json` did not print its interfaces as JSON")
    return [(str(name), value) for name, value in shown.items() if isinstance(value, dict)]


def _frr_ipv4(interface: dict[str, Any]) -> list[ipaddress.IPv4Interface]:
    found = []
    for entry in interface.get("ipAddresses") or []:
        try:
            found.append(ipaddress.IPv4Interface(str(entry.get("address", ""))))
        except ValueError:  # an IPv6 address
            continue
    return found


def _frr_line(
    name: str, interface: dict[str, Any], address: ipaddress.IPv4Interface | None = None
) -> str:
    """An interface as `show interface brief` says it: `eth0 up 10.0.12.1/24`, `eth3
    down, no IPv4 address` (one address, or every one when `address` is None)."""
    status = str(interface.get("operationalStatus", "")).strip()
    head = f"{name} {status}".strip()
    shown = [address] if address is not None else _frr_ipv4(interface)
    if not shown:
        return f"{head}, no IPv4 address"
    return f"{head} {', '.join(str(a) for a in shown)}"


def line_at(text: str, position: int) -> str:
    """The line of `text` holding `position`, stripped."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : end if end >= 0 else len(text)].strip()


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
