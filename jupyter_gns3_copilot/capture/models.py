"""What decoding a capture gives: a short packet table and counts per protocol."""

from __future__ import annotations

from pydantic import BaseModel, Field

MAX_FIELD_CHARS = 64
"""Longest source / destination / protocol kept."""
MAX_INFO_CHARS = 160
"""Longest info text kept; longer ones end with an ellipsis."""


class CaptureError(Exception):
    """A capture that cannot be decoded (not pcap, a bad display filter, a decoder failure);
    `str()` says why in words a student can act on."""


class PacketRow(BaseModel):
    """One packet: its number in the capture, seconds since the first packet, addresses
    (IP when it has them, else MAC), the top protocol and a one-line description."""

    no: int
    time: float
    source: str
    destination: str
    protocol: str
    info: str

    @classmethod
    def bounded(
        cls, no: int, time: float, source: str, destination: str, protocol: str, info: str
    ) -> PacketRow:
        """A row with every text cut to its bound (never raw bytes, never unbounded)."""
        return cls(
            no=no,
            time=round(time, 6),
            source=_cut(source, MAX_FIELD_CHARS),
            destination=_cut(destination, MAX_FIELD_CHARS),
            protocol=_cut(protocol, MAX_FIELD_CHARS),
            info=_cut(" ".join(info.split()), MAX_INFO_CHARS),
        )


class CaptureAnalysis(BaseModel):
    """The packets matching the display filter: the first `limit` of them as rows, how
    many matched in all, and how many of each protocol matched."""

    decoder: str = Field(description="tshark or python")
    packets: list[PacketRow]
    matched: int
    protocols: dict[str, int]

    @property
    def shown(self) -> int:
        return len(self.packets)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
