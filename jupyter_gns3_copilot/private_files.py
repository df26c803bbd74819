"""Secrets kept in files of their own: created once, readable by this user only; and
private files written atomically (`write_private`)."""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path


def read_or_create_secret(path: Path) -> str:
    """The secret in `path`, or a new random one written there once (mode 0600, in a
    directory made 0700). Concurrent first calls agree: only one creates the file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    value = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as file:
        file.write(value)
    return value


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically, readable and writable by this user only."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
