"""Reading the lab kit's router initramfs images back."""

from __future__ import annotations


def cpio_entries(archive: bytes) -> dict[str, tuple[int, int, bytes]]:
    """A newc cpio archive's entries: path -> (mode, rdev major, data)."""
    entries = {}
    offset = 0
    while True:
        header = archive[offset : offset + 110]
        assert header[:6] == b"070701", f"no newc header at {offset}"
        fields = [int(header[6 + 8 * i : 14 + 8 * i], 16) for i in range(13)]
        mode, size, rdev_major, name_size = fields[1], fields[6], fields[9], fields[11]
        name_start = offset + 110
        name = archive[name_start : name_start + name_size - 1].decode()
        data_start = name_start + name_size + (-(110 + name_size) % 4)
        if name == "TRAILER!!!":
            return entries
        entries[name] = (mode, rdev_major, archive[data_start : data_start + size])
        offset = data_start + size + (-size % 4)
