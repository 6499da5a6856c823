"""What kind of file a path is, so special files are refused before anything opens them."""

from __future__ import annotations

import stat
from pathlib import Path

_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_file_kind(path: Path) -> str | None:
    """What `path` is when it exists but is neither a regular file nor a folder
    ("a FIFO (named pipe)", ...); None otherwise. Opening a FIFO would block forever."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), None)
