"""FRR interface addresses read from `show interface json` (`devices/readers`).

The output is an FRR 8.4 router's of the routed lab (its fields trimmed to those read,
plus a secondary address as `ip address` adds one); the same readings on the live
routers are in tests/triangle/test_objectives_frr.py.
"""

from __future__ import annotations

import ipaddress
import json

import pytest

from jupyter_gns3_copilot.devices.readers import (
    ADDRESS_COMMANDS,
    ReadError,
    addresses,
    interface_lines,
)


def _interface(status: str, *shown: tuple[str, bool]) -> dict[str, object]:
    return {
        "administrativeStatus": "up",
        "operationalStatus": status,
        "type": "Ethernet",
        "ipAddresses": [
            {"address": address, "secondary": secondary, "unnumbered": False}
            for address, secondary in shown
        ],
    }


SHOW_INTERFACE_JSON = json.dumps(
    {
        "eth0": _interface(
            "up",
            ("10.0.12.1/24", False),
            ("172.16.5.1/24", True),
            ("fe80::e79:50ff:fe8b:0/64", False),
        ),
        "eth1": _interface("up", ("10.0.13.1/24", False), ("fe80::e79:50ff:fe8b:1/64", False)),
        "eth3": _interface("down"),
        "lo": _interface("up"),
    },
    indent=2,
)


def test_frr_addresses_are_every_ipv4_address_of_every_interface() -> None:
    assert ADDRESS_COMMANDS["frr"] == "show interface json"
    found = addresses(SHOW_INTERFACE_JSON, "frr")
    assert [(a.interface, a.address) for a in found] == [
        ("eth0", ipaddress.IPv4Interface("10.0.12.1/24")),
        ("eth0", ipaddress.IPv4Interface("172.16.5.1/24")),
        ("eth1", ipaddress.IPv4Interface("10.0.13.1/24")),
    ]
    # lines a student reads, as `show interface brief` puts them, never the JSON
    assert [a.line for a in found] == [
        "eth0 up 10.0.12.1/24",
        "eth0 up 172.16.5.1/24",
        "eth1 up 10.0.13.1/24",
    ]


def test_frr_interfaces_without_an_address_have_a_line_saying_so() -> None:
    assert interface_lines(SHOW_INTERFACE_JSON, "frr") == [
        ("eth0", "eth0 up 10.0.12.1/24, 172.16.5.1/24"),
        ("eth1", "eth1 up 10.0.13.1/24"),
        ("eth3", "eth3 down, no IPv4 address"),
        ("lo", "lo up, no IPv4 address"),
    ]


@pytest.mark.parametrize("output", ["", "% Unknown command: show interface json", "[1, 2]"])
def test_frr_output_that_is_no_interface_json_cannot_be_read(output: str) -> None:
    with pytest.raises(ReadError, match="did not print its interfaces as JSON"):
        addresses(output, "frr")
    assert interface_lines(output, "frr") == []
