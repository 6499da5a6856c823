"""What kind of file a path is, so special files are refused before anything opens them."""

from __future__ import annotations

import errno
import os
import stat
from io import FileIO
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


def open_regular(path: Path, *, follow_links: bool = True) -> FileIO:
    """`path` opened for reading, unbuffered, only if what opened is a regular file.

    The open does not wait (O_NONBLOCK) and the check is made on the opened file, so a FIFO
    or device swapped in after an earlier check is refused (an OSError naming what it is)
    instead of blocking the read forever. Without `follow_links` a symlink at `path` (one
    swapped in for a file resolved earlier) is refused rather than read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise OSError(errno.ELOOP, "it is now a symbolic link", str(path)) from exc
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((kind for test, kind in _SPECIAL_KINDS if test(mode)), "not a file")
            raise OSError(errno.EINVAL, f"it is {kind}, not a regular file", str(path))
        os.set_blocking(fd, True)
        return FileIO(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
