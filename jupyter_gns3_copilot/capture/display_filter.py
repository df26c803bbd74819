"""The subset of Wireshark's display-filter syntax the Python decoder understands.

Protocol names (`eth`, `arp`, `ip`, `ipv6`, `icmp`, `icmpv6`, `udp`, `tcp`), comparisons
`FIELD == VALUE` / `FIELD != VALUE` (also `eq` / `ne`) on `eth.addr|src|dst`,
`ip.addr|src|dst`, `ipv6.addr|src|dst`, `arp.src.proto_ipv4`, `arp.dst.proto_ipv4`,
`tcp.port|srcport|dstport`, `udp.port|srcport|dstport`, `icmp.type`, `icmpv6.type`,
combined with `and` / `&&`, `or` / `||`, `not` / `!` and parentheses. Anything else is a
`CaptureError` that says what works (tshark, where installed, takes the full syntax).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .models import CaptureError

PROTOCOLS = frozenset({"eth", "arp", "ip", "ipv6", "icmp", "icmpv6", "udp", "tcp"})
FIELDS = frozenset(
    {
        *(f"{layer}.{part}" for layer in ("eth", "ip", "ipv6") for part in ("addr", "src", "dst")),
        "arp.src.proto_ipv4",
        "arp.dst.proto_ipv4",
        *(f"{layer}.{part}" for layer in ("tcp", "udp") for part in ("port", "srcport", "dstport")),
        "icmp.type",
        "icmpv6.type",
    }
)
_TOKEN = re.compile(r"\s*(\(|\)|&&|\|\||==|!=|!|[^\s()!=&|]+)")
_HELP = (
    "Without tshark, display filters may use protocol names ("
    + ", ".join(sorted(PROTOCOLS))
    + "), FIELD == VALUE or != with the fields "
    + ", ".join(sorted(FIELDS))
    + ", and and/or/not with parentheses."
)


@dataclass(frozen=True)
class Packet:
    """What a filter sees of a packet: each present protocol and field, with its values
    (lower case; a protocol's own entry holds the empty string)."""

    fields: dict[str, set[str]]


Matcher = Callable[[Packet], bool]


def compile_filter(text: str | None) -> Matcher:
    """A predicate for the filter `text`; None or blank matches every packet."""
    if text is None or not text.strip():
        return lambda _packet: True
    tokens = _tokens(text)
    parser = _Parser(tokens, text)
    matcher = parser.either()
    if parser.position != len(tokens):
        parser.fail(f"unexpected {tokens[parser.position]!r}")
    return matcher


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            if text[position:].strip():
                raise CaptureError(f"Cannot read the display filter {text!r}. {_HELP}")
            break
        tokens.append(match.group(1))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[str], text: str) -> None:
        self.tokens, self.text, self.position = tokens, text, 0

    def fail(self, problem: str) -> None:
        raise CaptureError(f"Cannot use the display filter {self.text!r} ({problem}). {_HELP}")

    def peek(self) -> str | None:
        return self.tokens[self.position].lower() if self.position < len(self.tokens) else None

    def take(self) -> str:
        if self.position >= len(self.tokens):
            self.fail("it ends too early")
        self.position += 1
        return self.tokens[self.position - 1]

    def either(self) -> Matcher:
        parts = [self.both()]
        while self.peek() in ("or", "||"):
            self.take()
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else lambda p: any(m(p) for m in parts)

    def both(self) -> Matcher:
        parts = [self.negation()]
        while self.peek() in ("and", "&&"):
            self.take()
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else lambda p: all(m(p) for m in parts)

    def negation(self) -> Matcher:
        if self.peek() in ("not", "!"):
            self.take()
            inner = self.negation()
            return lambda p: not inner(p)
        if self.peek() == "(":
            self.take()
            inner = self.either()
            if self.take() != ")":
                self.fail("a parenthesis is not closed")
            return inner
        return self.term()

    def term(self) -> Matcher:
        name = self.take().lower()
        if self.peek() in ("==", "eq", "!=", "ne"):
            equal = self.take().lower() in ("==", "eq")
            if name not in FIELDS:
                self.fail(f"unknown field {name!r}")
            value = self.take().strip("\"'").lower()
            if equal:
                return lambda p: value in p.fields.get(name, ())
            return lambda p: name in p.fields and value not in p.fields[name]
        if name not in PROTOCOLS:
            self.fail(f"unknown protocol or a field without a comparison: {name!r}")
        return lambda p: name in p.fields
