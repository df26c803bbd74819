"""Ports for one lab instance: the server's TCP port and disjoint console/UDP port ranges.

Console and UDP ranges come in numbered blocks below Linux's ephemeral range (where the
kernel picks ports for outgoing connections and ``bind(0)``). A block is claimed in a
per-user registry directory shared by every lab on this machine, so two labs never get
overlapping ranges; a claim whose owner process is gone is reclaimed.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from pydantic import BaseModel

from .locks import file_lock

AREA_START = 10000
AREA_END = 32000
CONSOLE_PORTS = 100
UDP_PORTS = 200
BLOCK_SIZE = CONSOLE_PORTS + UDP_PORTS


class PortBlock(BaseModel):
    """One claimed block: console ports ``[console_start, console_end]``, UDP likewise."""

    index: int
    console_start: int
    console_end: int
    udp_start: int
    udp_end: int

    @classmethod
    def numbered(cls, index: int) -> PortBlock:
        start = AREA_START + index * BLOCK_SIZE
        return cls(
            index=index,
            console_start=start,
            console_end=start + CONSOLE_PORTS - 1,
            udp_start=start + CONSOLE_PORTS,
            udp_end=start + BLOCK_SIZE - 1,
        )


class PortsUnavailable(RuntimeError):
    """No free port (block) could be found."""


def default_registry_dir() -> Path:
    """``$XDG_RUNTIME_DIR`` or the temp dir, ``jupyter_gns3_copilot-<uid>/port-blocks``."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / f"jupyter_gns3_copilot-{os.getuid()}" / "port-blocks"


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` (a local address) right now (chosen by the
    kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, kind: int = socket.SOCK_STREAM, *, listener: bool = False) -> bool:
    """True when ``port`` can be bound on 127.0.0.1 (TCP by default, or SOCK_DGRAM).

    ``listener=True`` asks as a TCP server setting ``SO_REUSEADDR`` does (gns3-server's
    does): connections of a stopped server left in TIME_WAIT for a minute do not count,
    a socket listening on the port still does.
    """
    with socket.socket(socket.AF_INET, kind) as sock:
        if listener:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _block_is_free(block: PortBlock) -> bool:
    return all(
        port_is_free(port) for port in range(block.console_start, block.console_end + 1)
    ) and all(
        port_is_free(port, socket.SOCK_DGRAM) for port in range(block.udp_start, block.udp_end + 1)
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _registry_lock(registry: Path) -> AbstractContextManager[None]:
    return file_lock(registry / ".lock", 30.0, "another lab is choosing its ports")


def _claim_path(registry: Path, index: int) -> Path:
    return registry / f"block-{index}.json"


def _claimed(path: Path) -> bool:
    try:
        owner = json.loads(path.read_text())
        return _pid_alive(int(owner["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def claim_port_block(lab_id: str, registry: Path | None = None) -> PortBlock:
    """Claim a free block for ``lab_id``, owned by this process until ``set_block_owner``."""
    registry = registry or default_registry_dir()
    count = (AREA_END - AREA_START) // BLOCK_SIZE
    start = int.from_bytes(os.urandom(2), "big") % count
    with _registry_lock(registry):
        for offset in range(count):
            block = PortBlock.numbered((start + offset) % count)
            path = _claim_path(registry, block.index)
            if _claimed(path) or not _block_is_free(block):
                continue
            path.write_text(json.dumps({"lab_id": lab_id, "pid": os.getpid()}))
            return block
    raise PortsUnavailable(
        f"no free block of {CONSOLE_PORTS} console + {UDP_PORTS} UDP ports between "
        f"{AREA_START} and {AREA_END}; stop other labs (gns3-copilot-lab stop) and retry"
    )


def set_block_owner(block: PortBlock, lab_id: str, pid: int, registry: Path | None = None) -> None:
    """Hand the claim to the lab's server process (the claim lives as long as it does)."""
    registry = registry or default_registry_dir()
    with _registry_lock(registry):
        _claim_path(registry, block.index).write_text(json.dumps({"lab_id": lab_id, "pid": pid}))


def release_port_block(block: PortBlock, lab_id: str, registry: Path | None = None) -> None:
    """Drop the claim if ``lab_id`` still holds it (idempotent)."""
    registry = registry or default_registry_dir()
    path = _claim_path(registry, block.index)
    with _registry_lock(registry):
        try:
            if json.loads(path.read_text()).get("lab_id") == lab_id:
                path.unlink()
        except (OSError, ValueError):
            pass
