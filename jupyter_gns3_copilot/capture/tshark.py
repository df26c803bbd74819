"""Decode a pcap with Wireshark's `tshark` (a subprocess: no shell, bounded time)."""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter

from .models import CaptureAnalysis, CaptureError, PacketRow

TSHARK_TIMEOUT = 30.0
"""Seconds tshark may take for one capture before it is killed."""
_FIELDS = (
    "frame.number",
    "frame.time_relative",
    "_ws.col.Source",
    "_ws.col.Destination",
    "_ws.col.Protocol",
    "_ws.col.Info",
)
_NOISE = ("Running as user",)
"""tshark's stderr lines that are not errors (its warning when run as root)."""


def tshark_path() -> str | None:
    """The `tshark` executable on PATH, or None."""
    return shutil.which("tshark")


async def decode_with_tshark(
    data: bytes,
    display_filter: str | None,
    limit: int,
    *,
    executable: str = "tshark",
    timeout: float = TSHARK_TIMEOUT,
) -> CaptureAnalysis:
    """The packets of the pcap `data` matching the Wireshark `display_filter`.

    Name resolution is off (`-n`: addresses as numbers, no DNS lookups). Raises
    `CaptureError` with tshark's own message for a bad filter or file, and when tshark
    runs longer than `timeout` seconds (it is killed).
    """
    args = [executable, "-n", "-r", "-", "-T", "fields"]
    for name in _FIELDS:
        args += ["-e", name]
    args += ["-E", "separator=/t", "-E", "occurrence=f", "-E", "quote=n"]
    if display_filter:
        args += ["-Y", display_filter]
    try:
        process = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise CaptureError(f"tshark could not be started ({exc}).") from exc
    try:
        out, err = await asyncio.wait_for(process.communicate(data), timeout)
    except BaseException as exc:
        process.kill()
        await process.wait()
        if isinstance(exc, asyncio.TimeoutError):
            raise CaptureError(
                f"tshark took longer than {timeout:g} s for this capture; use a display "
                "filter or a shorter capture."
            ) from None
        raise
    if process.returncode != 0:
        problem = _message(err) or f"exit status {process.returncode}"
        what = f"the display filter {display_filter!r}" if display_filter else "the capture"
        raise CaptureError(f"tshark could not use {what}: {problem}")
    return _analysis(out.decode("utf-8", errors="replace"), limit)


def _message(err: bytes) -> str:
    lines = err.decode("utf-8", errors="replace").splitlines()
    kept = [line.strip() for line in lines if line.strip() and not line.startswith(_NOISE)]
    return " ".join(kept)[:300]


def _analysis(text: str, limit: int) -> CaptureAnalysis:
    rows: list[PacketRow] = []
    protocols: Counter[str] = Counter()
    matched = 0
    for line in text.splitlines():
        fields = line.split("\t", len(_FIELDS) - 1)
        if len(fields) != len(_FIELDS) or not fields[0].isdigit():
            continue
        number, time, source, destination, protocol, info = fields
        matched += 1
        protocols[protocol] += 1
        if len(rows) < limit:
            rows.append(
                PacketRow.bounded(
                    int(number), float(time or 0), source, destination, protocol, info
                )
            )
    return CaptureAnalysis(
        decoder="tshark", packets=rows, matched=matched, protocols=dict(protocols.most_common())
    )
