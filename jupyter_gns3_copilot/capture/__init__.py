"""Packet capture analysis: a pcap (as GNS3 writes them) -> a short packet table (time,
source, destination, protocol, info) and counts per protocol; never raw bytes.

`analyze_pcap` decodes with Wireshark's `tshark` when it is installed, else in Python
(dpkt) with the same columns and a display-filter subset (`display_filter.py`).
"""

from __future__ import annotations

from typing import Literal

from .models import CaptureAnalysis, CaptureError, PacketRow
from .pcap_file import whole_records
from .tshark import decode_with_tshark, tshark_path

MAX_CAPTURE_BYTES = 32 * 1024 * 1024
"""The most of a capture file that is decoded; a larger one is decoded up to this size."""

Decoder = Literal["auto", "tshark", "python"]


async def analyze_pcap(
    data: bytes,
    *,
    display_filter: str | None = None,
    limit: int = 50,
    decoder: Decoder = "auto",
    max_bytes: int = MAX_CAPTURE_BYTES,
) -> tuple[CaptureAnalysis, bool]:
    """Decode the pcap `data`: the first `limit` packets matching `display_filter`, how
    many matched, counts per protocol; and whether the capture was cut (larger than
    `max_bytes`, or its last packet still being written).

    `decoder` "auto" uses tshark when on PATH, else Python. Raises `CaptureError` for a
    file that is not pcap, a filter the decoder refuses, or a decoder failure.
    """
    whole, cut = whole_records(data, max_bytes)
    executable = tshark_path() if decoder in ("auto", "tshark") else None
    if decoder == "tshark" and executable is None:
        raise CaptureError("tshark is not installed (Debian package 'tshark').")
    if executable is not None:
        return await decode_with_tshark(whole, display_filter, limit, executable=executable), cut
    from .python_decoder import decode_with_python

    return decode_with_python(whole, display_filter, limit), cut


__all__ = [
    "MAX_CAPTURE_BYTES",
    "CaptureAnalysis",
    "CaptureError",
    "Decoder",
    "PacketRow",
    "analyze_pcap",
]
