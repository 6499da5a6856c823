"""One commit at a time per staging area: an `fcntl.flock` on a file beside the staging DB.

The kernel drops the lock when its holder dies (even by SIGKILL), so a held lock always means
a live committing process, and a free lock with a commit record left behind means that commit
was interrupted. The holder writes its pid into the file so others can name it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from agent.errors import StagingError

WAIT_S = 5.0
"""How long a second commit waits for the first before reporting it plainly."""


class CommitLock:
    """The commit lock of the staging database at `db_path` (re-entrant per instance)."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".commit-lock")
        self._fd: int | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        """True while this instance holds the lock."""
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; True when this instance holds it now."""
        if self._fd is not None:
            self._depth += 1
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StagingError(
                f"cannot open the commit lock {self.path}: {exc.strerror}",
                fix="Make the staging folder writable (or free disk space there), then try "
                "again; every change already staged is kept.",
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        with contextlib.suppress(OSError):  # only names the holder (a full disk may refuse)
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        self._fd, self._depth = fd, 1
        return True

    def acquire(self, wait_s: float | None = None) -> None:
        """Take the lock, waiting up to `wait_s` (default WAIT_S); else StagingError naming
        the holder."""
        deadline = time.monotonic() + (WAIT_S if wait_s is None else wait_s)
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise self.busy_error()
            time.sleep(0.05)

    def release(self) -> None:
        """Give the lock back (the outermost release of this instance frees it)."""
        if self._fd is None:
            return
        self._depth -= 1
        if self._depth == 0:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor drops the flock

    def holder(self) -> int | None:
        """The pid written by the process holding the lock, when one holds it and said so."""
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return int(text) if text.isdigit() else None

    def busy_error(self) -> StagingError:
        """The plain report for a commit that found another one running."""
        pid = self.holder()
        who = f" (pid {pid})" if pid else ""
        return StagingError(
            f"another commit is running on this staging area{who}",
            fix="Wait for it to finish, then look again (`tabletalk staged list`); "
            "nothing was changed and the changes stay staged.",
        )

    def __enter__(self) -> CommitLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
