"""Per-student parameter values: the same student always gets the same values for a lab,
and two students get different ones (as far as the ranges allow), so answers cannot be
copied.

A value is drawn from HMAC-SHA256 keyed with the class's salt (a setting never shown to
students) over the lab's title, the parameter's name and the user name. Without the salt
a student cannot compute a classmate's values; with a new salt every value changes.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Mapping

from .model import LabFile, Parameter

ParameterValue = ipaddress.IPv4Network | int | float | str


def student_values(lab: LabFile, user: str, salt: str | bytes) -> dict[str, ParameterValue]:
    """The values of `lab`'s parameters for `user` under `salt`."""
    key = salt.encode() if isinstance(salt, str) else salt
    return {
        name: draw(parameter, student_number(key, lab.title, name, user))
        for name, parameter in lab.parameters.items()
    }


def draw(parameter: Parameter, number: int) -> ParameterValue:
    """The value `number` (any non-negative integer) picks in `parameter`'s range."""
    if parameter.subnet is not None:
        pool = ipaddress.IPv4Network(parameter.subnet.pool)
        count = 1 << (parameter.subnet.prefix - pool.prefixlen)
        size = 1 << (32 - parameter.subnet.prefix)
        start = int(pool.network_address) + (number % count) * size
        return ipaddress.IPv4Network((start, parameter.subnet.prefix))
    if parameter.integer is not None:
        low, high = parameter.integer
        return low + number % (high - low + 1)
    choices = parameter.choice or []
    return choices[number % len(choices)]


def shown_values(values: Mapping[str, ParameterValue]) -> dict[str, str | int | float]:
    """The values as JSON-friendly data (a subnet as `a.b.c.d/len`)."""
    return {
        name: str(value) if isinstance(value, ipaddress.IPv4Network) else value
        for name, value in values.items()
    }


def student_number(key: bytes, title: str, name: str, user: str) -> int:
    """A number only `key` can compute from (title, name, user): what a value is drawn
    with."""
    message = "\0".join((title, name, user)).encode()
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")
