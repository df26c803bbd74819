"""A minimal pcap (libpcap classic format) file writer for packet captures."""

from __future__ import annotations

import struct
import time
from pathlib import Path

PCAP_MAGIC = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
_LINKTYPES = {"EN10MB": LINKTYPE_ETHERNET, "ETHERNET": LINKTYPE_ETHERNET, "RAW": 101}
_GLOBAL_HEADER = struct.Struct("<IHHiIII")
_RECORD_HEADER = struct.Struct("<IIII")


def linktype(name: str | None) -> int:
    """Map a DLT name (``DLT_EN10MB``, ``EN10MB``, ``en10mb``) or number to a link type."""
    if not name:
        return LINKTYPE_ETHERNET
    key = name.upper().removeprefix("DLT_")
    if key.isdigit():
        return int(key)
    if key not in _LINKTYPES:
        raise ValueError(f"unsupported pcap link type '{name}' (supported: {sorted(_LINKTYPES)})")
    return _LINKTYPES[key]


class PcapWriter:
    """Write frames to a pcap file: a global header, then one record per frame.

    Every record is flushed at once so readers following the file (gns3-server streams
    captures while they grow) see each frame as it is written.
    """

    def __init__(self, path: str | Path, link_type: int = LINKTYPE_ETHERNET, snaplen: int = 65535):
        self.path = Path(path)
        self.snaplen = snaplen
        self.frames = 0
        self._file = self.path.open("wb")
        self._file.write(_GLOBAL_HEADER.pack(PCAP_MAGIC, 2, 4, 0, 0, snaplen, link_type))
        self._file.flush()

    def write(self, frame: bytes, timestamp: float | None = None) -> None:
        """Append one frame (truncated to snaplen); no-op once closed."""
        if self._file.closed:
            return
        when = time.time() if timestamp is None else timestamp
        seconds = int(when)
        captured = frame[: self.snaplen]
        micros = min(int((when - seconds) * 1_000_000), 999_999)
        self._file.write(_RECORD_HEADER.pack(seconds, micros, len(captured), len(frame)))
        self._file.write(captured)
        self._file.flush()
        self.frames += 1

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._file.close()


def read_pcap(path: str | Path) -> tuple[int, list[bytes]]:
    """Parse a pcap file written by PcapWriter: ``(link_type, frames)``; ValueError if invalid."""
    data = Path(path).read_bytes()
    if len(data) < _GLOBAL_HEADER.size:
        raise ValueError(f"{path}: too short for a pcap global header ({len(data)} bytes)")
    magic, major, minor, _zone, _sigfigs, _snaplen, link_type = _GLOBAL_HEADER.unpack_from(data)
    if magic != PCAP_MAGIC or (major, minor) != (2, 4):
        raise ValueError(f"{path}: not a little-endian pcap 2.4 file")
    frames = []
    offset = _GLOBAL_HEADER.size
    while offset < len(data):
        if offset + _RECORD_HEADER.size > len(data):
            raise ValueError(f"{path}: truncated record header at byte {offset}")
        _sec, _usec, captured, _original = _RECORD_HEADER.unpack_from(data, offset)
        offset += _RECORD_HEADER.size
        if offset + captured > len(data):
            raise ValueError(f"{path}: truncated frame at byte {offset}")
        frames.append(data[offset : offset + captured])
        offset += captured
    return link_type, frames
