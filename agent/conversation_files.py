"""Conversation files: an append-only log of saves (`ID.jsonl`), and the older whole-file JSON.

A log's first line is a snapshot, `{"log": 1, "snapshot": {...}}` (the conversation as
`Conversation.to_dict` gives it); each later line is what one save added, `{"at": [message
count, blocks of the last message], "extend": [blocks added to that last message], "messages":
[new messages], "set": {changed fields}}`. So a step costs what it adds, not the history.

Each line is written with one `write` (it then survives a killed process) and flushed to the
disk on a background thread (`SYNC`; a turn waits for it before it ends, and a power cut
loses at most the lines not yet flushed). So only the last line can be incomplete; reading
leaves such a line out (it was never saved), so a save is all or nothing and every history
read back is one that was saved. A file
is created or replaced whole (temp file, fsync, rename) when a save is not an append (the
first save, rewind, compaction, a file another process saved meanwhile).
Older conversations are one JSON object in `ID.json`; they load as they are and become a log
at their next save. Reading (and checking) a file is `agent.conversation_read`'s, which loads
pydantic: a turn that starts a conversation only writes.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agent import paths
from agent.errors import TabletalkError

LOG_SUFFIX = ".jsonl"
LEGACY_SUFFIX = ".json"
LOG_VERSION = 1


def any_saved(directory: Path | None = None) -> bool:
    """Whether a conversation file is there to resume (a look at names only, cheap enough
    for the first screen)."""
    try:
        with os.scandir(directory or paths.conversations_dir()) as entries:
            return any(e.name.endswith((LOG_SUFFIX, LEGACY_SUFFIX)) for e in entries)
    except OSError:  # no directory yet, or one that cannot be read
        return False


class DamagedConversation(ValueError):
    """A conversation file that is not valid JSON of the expected shape."""


def encode_json(data: Any) -> bytes:
    """UTF-8 JSON on one line; text that is not valid Unicode (a lone surrogate a model sent)
    is kept as a `\\udXXX` escape instead of failing the save."""
    try:
        return json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, default=str).encode("ascii")


_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def save_error(directory: Path, exc: OSError) -> TabletalkError:
    """The one-line error of a save that could not be written (what was saved before stays)."""
    if exc.errno in _DISK_FULL:
        fix = f"Free disk space where {directory} is (staged changes are safe either way)."
    else:
        fix = f"Make {directory} a writable directory (staged changes are safe either way)."
    return TabletalkError(
        f"Cannot save the conversation in {directory}: {exc.strerror or exc}", fix=fix
    )


@dataclass
class LogState:
    """What a log file holds, as this process last wrote or read it: the next save appends
    only when the file and the conversation are still exactly that."""

    path: Path
    inode: tuple[int, int]
    size: int
    messages: list[dict[str, Any]]
    """The conversation's message list (identity: a replaced list means a rewrite)."""
    message_count: int
    last_message: dict[str, Any] | None
    last_blocks: int
    fields: dict[str, bytes] = field(default_factory=dict)
    """Every other field, encoded, as saved (a save appends the ones that changed)."""


class Record(NamedTuple):
    """One appended save, as read back: where it continues the history (message count,
    blocks of the last message), blocks added to the last message, new messages, changed
    fields."""

    at: tuple[int, int]
    extend: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    set: dict[str, Any]


@dataclass(frozen=True)
class LogContents:
    """A log file read back: the conversation's data, the bytes that hold it, the file's id."""

    data: dict[str, Any]
    size: int
    inode: tuple[int, int]


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_whole(path: Path, snapshot: dict[str, Any]) -> tuple[int, tuple[int, int]]:
    """Replace `path` with a log of one snapshot line (temp file, fsync, rename): the old file
    or the new one, never a mix. Returns the new file's size and identity."""
    directory = path.parent
    line = encode_json({"log": LOG_VERSION, "snapshot": snapshot}) + b"\n"
    try:
        paths.ensure_dir(directory)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=LOG_SUFFIX)
    except OSError as exc:
        raise save_error(directory, exc) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
            stat = os.fstat(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise save_error(directory, exc) from exc
        raise
    _fsync_dir(directory)
    return len(line), (stat.st_dev, stat.st_ino)


def written_since(state: LogState) -> bool:
    """Whether another writer changed the file `state` describes: replaced, cut short, or grown
    by a whole line. A file that is gone, or that only has a torn line after what `state`
    holds (a process killed mid-save), was not written since."""
    try:
        handle = open(state.path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise save_error(state.path.parent, exc) from exc
    with handle:
        stat = os.fstat(handle.fileno())
        if (stat.st_dev, stat.st_ino) != state.inode or stat.st_size < state.size:
            return True
        handle.seek(state.size)
        while chunk := handle.read(1 << 16):
            if b"\n" in chunk:
                return True
    return False


def append_line(state: LogState, line: bytes) -> bool:
    """Append one record line; False (nothing written) when the file is not the one `state`
    describes any more (replaced, grown by another writer, gone).

    Once written, the line survives the process being killed; `SYNC` then flushes it to the
    disk off this thread (a power cut loses at most the lines not yet flushed, never a part
    of one), and `SYNC.wait()` returns when all are.
    """
    try:
        fd = os.open(state.path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise save_error(state.path.parent, exc) from exc
    try:
        stat = os.fstat(fd)
        if (stat.st_dev, stat.st_ino) != state.inode or stat.st_size != state.size:
            os.close(fd)
            return False
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        os.close(fd)
        raise save_error(state.path.parent, exc) from exc
    SYNC.submit(fd, state.path.parent)
    return True


class BackgroundSync:
    """Flushes appended files to the disk on one daemon thread (fdatasync), so a step does not
    wait for the disk; takes ownership of the descriptors it is given and closes them."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._pending: list[tuple[int, Path]] = []
        self._busy = False
        self._error: TabletalkError | None = None
        self._thread: threading.Thread | None = None

    def submit(self, fd: int, directory: Path) -> None:
        """Flush and close `fd` soon."""
        with self._changed:
            self._pending.append((fd, directory))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="tabletalk-conversation-sync", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def wait(self) -> None:
        """Return once everything submitted is on disk; a failed flush raises its save error."""
        with self._changed:
            while self._pending or self._busy:
                self._changed.wait()
            error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._pending:
                    self._changed.wait()
                batch, self._pending = self._pending, []
                self._busy = True
            error = None
            for fd, directory in batch:
                try:
                    getattr(os, "fdatasync", os.fsync)(fd)
                except OSError as exc:
                    error = save_error(directory, exc)
                finally:
                    os.close(fd)
            with self._changed:
                self._busy = False
                self._error = self._error or error
                self._changed.notify_all()


SYNC = BackgroundSync()
"""The process's one flusher of conversation logs."""
