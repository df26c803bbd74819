"""Classic pcap framing: check a capture's header and cut it at a record boundary."""

from __future__ import annotations

import struct

from .models import CaptureError

_MAGICS = {
    b"\xd4\xc3\xb2\xa1": "<",  # microseconds, little-endian
    b"\xa1\xb2\xc3\xd4": ">",
    b"\x4d\x3c\xb2\xa1": "<",  # nanoseconds
    b"\xa1\xb2\x3c\x4d": ">",
}
GLOBAL_HEADER = 24
RECORD_HEADER = 16


def whole_records(data: bytes, max_bytes: int) -> tuple[bytes, bool]:
    """`data` cut after its last complete packet record within `max_bytes`, and whether
    anything was cut (a capture still being written, or one larger than the bound).

    Raises `CaptureError` when `data` is not a classic pcap file (GNS3 writes those).
    """
    order = _MAGICS.get(data[:4])
    if order is None or len(data) < GLOBAL_HEADER:
        kind = "a pcapng file" if data[:4] == b"\x0a\x0d\x0d\x0a" else "not a pcap file"
        raise CaptureError(f"The capture cannot be read: {kind} ({len(data)} bytes).")
    record = struct.Struct(f"{order}IIII")
    end = offset = GLOBAL_HEADER
    limit = min(len(data), max_bytes)
    while offset + RECORD_HEADER <= limit:
        captured = record.unpack_from(data, offset)[2]
        if offset + RECORD_HEADER + captured > limit:
            break
        offset += RECORD_HEADER + captured
        end = offset
    return data[:end], end < len(data)
