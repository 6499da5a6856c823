"""A stamp of a SQLite file's committed state, to tell that nothing changed between two reads.

In rollback-journal mode SQLite increments the file change counter (header offset 24) on every
write transaction it commits (sqlite.org/fileformat2.html, "File change counter"); SQLite's own
connections rely on it to know that their page cache still holds the file. So two equal stamps
taken of the same file mean no transaction committed in between: every row read after the
first stamp is still the row the file holds at the second. The stamp also holds the file's
device, inode, size and modification time, so a file replaced by another stamps differently.
The stamp is a 64-bit digest of those fields (only ever compared for equality): each staged row
of a bulk edit carries it, so its length is written ten thousand times.
A file in WAL mode (header bytes 18-19 are 2) has no stamp: its commits go to the -wal file
and need not touch the counter.
"""

from __future__ import annotations

import os
from pathlib import Path

_MAGIC = b"SQLite format 3\x00"


def file_id(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at `path`, None when there is none: a file another
    program moved, deleted or replaced while it was open has another (or none)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def file_stamp(path: Path) -> str | None:
    """The stamp of the SQLite file at `path`, or None (WAL mode, unreadable, not SQLite)."""
    try:
        with open(path, "rb") as file:
            header = file.read(100)
            info = os.fstat(file.fileno())
    except OSError:
        return None
    if len(header) < 100 or not header.startswith(_MAGIC) or header[18:20] != b"\x01\x01":
        return None
    counter = int.from_bytes(header[24:28], "big")
    valid_for = int.from_bytes(header[92:96], "big")
    import hashlib  # not at import: the app's first screen needs no stamp

    fields = f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{counter}:{valid_for}"
    return hashlib.blake2b(fields.encode(), digest_size=8).hexdigest()
