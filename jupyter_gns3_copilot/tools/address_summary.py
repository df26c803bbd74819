"""What a call that only sets addresses set, in a person's words: "PC1 10.0.0.1/24".

`addresses_set(dialect_commands)` reads the commands one device was sent: VPCS
`ip ADDRESS[/PREFIX] [GATEWAY] [MASK]` (and `save`), or IOS configuration lines that put
addresses on interfaces (`interface g0/0`, `ip address 10.0.0.254 255.255.255.0`,
`no shutdown`, `exit`, `end`). It answers "10.0.0.1/24 gateway 10.0.0.254" (VPCS) or
"g0/0 10.0.0.254/24" (IOS), or None when the commands do anything else.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

VPCS_DEFAULT_PREFIX = 24
"""The prefix VPCS gives an address typed without one."""
_IOS_ALSO = (("no", "shutdown"), ("no", "shut"), ("exit",), ("end",))


def addresses_set(commands: Sequence[str], *, config: bool) -> str | None:
    """What `commands` set on one device (module docstring); `config`: they were typed in
    IOS configuration mode (`run_config_commands`), else they are VPCS commands."""
    words = [command.split() for command in commands if command.strip()]
    if not words:
        return None
    return _ios_interfaces(words) if config else _vpcs_address(words)


def saves(commands: Sequence[str]) -> bool:
    """Whether a VPCS command list saves the settings (`save`)."""
    return any(command.split()[:1] == ["save"] for command in commands)


def _vpcs_address(words: list[list[str]]) -> str | None:
    settings = [w for w in words if w[:1] != ["save"]]
    if len(settings) != 1 or settings[0][0] != "ip" or len(settings[0]) < 2:
        return None
    address, _, prefix = settings[0][1].partition("/")
    gateway = None
    if not _ipv4(address):
        return None
    for word in settings[0][2:]:
        if word.startswith("/") and word[1:].isdigit():
            prefix = word[1:]
        elif word.isdigit():
            prefix = word
        elif _mask_prefix(word) is not None and word.startswith("255."):
            prefix = str(_mask_prefix(word))
        elif _ipv4(word) and gateway is None:
            gateway = word
        else:
            return None
    if prefix and not (prefix.isdigit() and int(prefix) <= 32):
        return None
    text = f"{address}/{prefix or VPCS_DEFAULT_PREFIX}"
    return f"{text} gateway {gateway}" if gateway else text


def _ios_interfaces(words: list[list[str]]) -> str | None:
    interface = None
    set_here: list[str] = []
    for line in words:
        lowered = [word.lower() for word in line]
        if lowered[0] in ("interface", "int") and len(line) >= 2:
            interface = "".join(line[1:])
        elif lowered[:2] == ["ip", "address"] and len(line) == 4 and interface:
            prefix = _mask_prefix(line[3])
            if not _ipv4(line[2]) or prefix is None:
                return None
            set_here.append(f"{interface} {line[2]}/{prefix}")
        elif tuple(lowered) not in _IOS_ALSO:
            return None
    return ", ".join(set_here) or None


def _ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _mask_prefix(mask: str) -> int | None:
    try:
        return ipaddress.IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        return None
