"""Where an export may write, and how it writes without following a planted link.

An export writes one data file (.csv, .json or .txt) inside the working directory; a bare
file name goes to its `exports/` folder (created on demand). It never writes into
tabletalk's own directories, onto the open database or its -wal/-shm/-journal, the staging
area, any SQLite file, a hidden file or folder, or anywhere a symlink leads out of the
working directory. Replacing an existing file is decided by the person (see file_tools).
The rows go to a temp file created exclusively, without following symlinks, in the target
folder (opened from the root one folder at a time, following no link, so a folder swapped
for a symlink after the check cannot move the write), then renamed into place.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from agent import paths
from agent.text_safety import has_unsafe_characters, printable_line
from agent.tools.base import ToolContext, ToolFailure

DEFAULT_FOLDER = "exports"
SUFFIXES = {"csv": (".csv", ".txt"), "json": (".json", ".txt")}
SQLITE_HEADER = b"SQLite format 3\x00"
SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")
MAX_NAME_BYTES = 200
BUILD_INPUTS = re.compile(r"cmakelists\.txt|(.*[-_.])?(requirements|constraints)([-_.].*)?\.txt")
"""Text files that build and install tools read as instructions: a CMakeLists.txt runs
`execute_process(COMMAND ...)` at the next build, a requirements file's `--index-url` or
`-e git+URL` installs and runs someone's code at the next `pip install -r`. A CSV export of
one column writes each value as a line of its own, so its rows could be any such file."""

T = TypeVar("T")


@dataclass(frozen=True)
class ExportTarget:
    """A checked export destination: its resolved path, how to show it, whether it exists."""

    path: Path
    shown: str
    exists: bool


def _with_suffix(name: str, allowed: tuple[str, ...]) -> str:
    """The name given, ending in an allowed suffix: `x.csv.` → x.csv, `x.xlsx` → x.csv."""
    name = Path(name.rstrip(". ")).name or "result"
    path = Path(name)
    return name if path.suffix.lower() in allowed else f"{path.stem or 'result'}{allowed[0]}"


def _fail(message: str, fix: str) -> ToolFailure:
    return ToolFailure(message, fix)


def protected_files(ctx: ToolContext) -> dict[Path, str]:
    """The open database and the staging area, each with its SQLite side files: what it is."""
    bases: list[tuple[Path, str]] = []
    if ctx.store.identity.startswith("sqlite:"):
        bases.append((Path(ctx.store.identity.removeprefix("sqlite:")), "the open database"))
    staging_path = getattr(ctx.staging, "path", None)
    if staging_path is not None:
        bases.append((Path(staging_path), "the staging area"))
    return {
        Path(str(base.resolve()) + side): what for base, what in bases for side in SQLITE_SIDE_FILES
    }


def export_target(ctx: ToolContext, raw: str, fmt: str) -> ExportTarget:
    """Check `raw` (relative to the working directory) as a place this export may write."""
    text = raw.strip()
    allowed = SUFFIXES[fmt]
    example = f"{DEFAULT_FOLDER}/result{allowed[0]}"
    if not text or "\x00" in text:
        raise _fail("the export path is empty or contains a NUL character", f"use e.g. {example}")
    if has_unsafe_characters(text):
        # A name a terminal would act on (ESC, OSC 52), that forges lines in a listing or
        # hides its real suffix (U+202E shows invoice\u202evsc.txt as "invoicetxt.csv").
        raise _fail(
            f"the export path {printable_line(text)} contains a control, line break or "
            "invisible (bidi, zero-width) character; exports use plain, visible names",
            f"use letters, digits, spaces, '-', '_' and '.', e.g. {example}",
        )
    relative = Path(text).expanduser()
    base = ctx.export_dir.resolve()
    if relative.is_absolute():
        raise _fail(
            f"path must be relative to the working directory ({base}), not absolute",
            f"use a relative path, e.g. {DEFAULT_FOLDER}/{relative.name or 'result' + allowed[0]}",
        )
    if relative.parent == Path("."):
        relative = Path(DEFAULT_FOLDER) / relative
    target = (base / relative).resolve()
    shown = str(relative)
    if not target.is_relative_to(base):
        raise _fail(
            f"{shown} leaves the working directory (directly or through a symlink)",
            f"use a path inside {base}, e.g. {DEFAULT_FOLDER}/{relative.name}",
        )
    for own in paths.own_dirs():
        if target.is_relative_to(own.resolve()):
            raise _fail(
                f"{shown} is inside tabletalk's own folder {own}; exports never write there",
                f"write to the working directory instead, e.g. {DEFAULT_FOLDER}/{relative.name}",
            )
    protected = protected_files(ctx)
    if target in protected:
        raise _fail(
            f"{shown} is {protected[target]}; exports never write there",
            f"write to a new file, e.g. {DEFAULT_FOLDER}/{relative.stem}{allowed[0]}",
        )
    if _is_hidden(relative):
        raise _fail(
            f"{text} names a hidden file or folder; exports never write there",
            f"use a visible name, e.g. {example}",
        )
    if relative.suffix.lower() not in allowed:
        raise _fail(
            f"{relative.name} does not end in {' or '.join(allowed)}; this export writes "
            f"{fmt.upper()} files only",
            f"name the file e.g. {_with_suffix(relative.name, allowed)}",
        )
    written = target.relative_to(base)
    if any(BUILD_INPUTS.fullmatch(name.lower()) for name in (relative.name, written.name)):
        raise _fail(
            f"{shown} is a file build or install tools read as instructions (CMake, pip); "
            "exports never write one",
            f"use a name that says what the rows are, e.g. {DEFAULT_FOLDER}/result{allowed[0]}",
        )
    if _is_hidden(written) or written.suffix.lower() not in allowed:
        raise _fail(
            f"{shown} is a link to {written}, which is hidden or not a {fmt.upper()} file; "
            "exports never write through such a link",
            f"use another name, e.g. {DEFAULT_FOLDER}/result{allowed[0]}",
        )
    if len(relative.name.encode("utf-8", "replace")) > MAX_NAME_BYTES:
        raise _fail(
            f"the file name is longer than {MAX_NAME_BYTES} bytes",
            f"use a shorter name, e.g. {example}",
        )
    if target.parent == base / DEFAULT_FOLDER and not target.parent.exists():
        target.parent.mkdir()
    if not target.parent.is_dir():
        raise _fail(
            f"folder {target.parent.relative_to(base)} does not exist",
            f"write to an existing folder, or to {DEFAULT_FOLDER}/ (created on demand), "
            f"e.g. {DEFAULT_FOLDER}/{target.name}",
        )
    return ExportTarget(target, shown, _check_existing(target, shown))


def _is_hidden(relative: Path) -> bool:
    """Whether a path inside the working directory names a hidden file or folder."""
    return any(part.startswith(".") and part not in (".", "..") for part in relative.parts)


def _check_existing(target: Path, shown: str) -> bool:
    """Whether `target` exists; refuse what no export may replace (folders, devices, SQLite)."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode):
        raise _fail(f"{shown} is a folder", "give a file name, e.g. exports/result.csv")
    if not stat.S_ISREG(info.st_mode):
        raise _fail(f"{shown} is not a regular file", "write to a new file name instead")
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise _fail(
            f"cannot read {shown}: {exc.strerror or exc}", "write to a new file name instead"
        ) from exc
    if header == SQLITE_HEADER:
        raise _fail(
            f"{shown} is a SQLite database; exports never replace a database",
            "write to a new file name instead",
        )
    return True


def free_name(target: ExportTarget) -> str:
    """A sibling name that does not exist yet (orders-2.csv), for a fix."""
    path = target.path
    for n in range(2, 1000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists():
            return str(Path(target.shown).with_name(candidate.name))
    return str(Path(target.shown).with_name(f"{path.stem}-{secrets.token_hex(3)}{path.suffix}"))


def write_file(target: ExportTarget, replace: bool, write: Callable[[BinaryIO], T]) -> T:
    """Write through `write` to a fresh temp file in the target's folder, then move it in.

    The temp file has a random name and is created with O_EXCL and O_NOFOLLOW, so nothing
    planted there can redirect the write; the folder is held open, so the rename lands in
    the folder that was checked. Without `replace` a file that appeared meanwhile is kept.
    On any failure the temp file is removed.
    """
    name = target.path.name
    file_flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    dir_fd = _open_folder(target)
    tmp = f".tabletalk-export-{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(tmp, file_flags | getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                if replace:  # keep the replaced file's permissions (a private file stays so)
                    with suppress(OSError):
                        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
                        os.fchmod(handle.fileno(), stat.S_IMODE(mode))
                result = write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            if replace:
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            else:
                _link_new(tmp, name, dir_fd, target.shown)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    except OSError as exc:
        raise _fail(
            f"cannot write {target.shown}: {exc.strerror or exc}",
            "check free space and the folder's permissions, or write to another folder",
        ) from exc
    finally:
        os.close(dir_fd)
    return result


def _open_folder(target: ExportTarget) -> int:
    """The checked folder, opened one component at a time from the root without following
    any link: a folder on the way swapped for a symlink after the check cannot move the write.

    `target.path` is resolved, so none of its folders is a link unless one was swapped in.
    """
    flags = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    passing = flags | getattr(os, "O_PATH", os.O_RDONLY)  # a folder on the way may be x-only
    folder = target.path.parent
    last = len(folder.parts) - 1
    try:
        fd = os.open(folder.anchor or "/", passing if last else flags | os.O_RDONLY)
    except OSError as exc:
        raise _fail(
            f"cannot open the folder of {target.shown}: {exc.strerror or exc}",
            "write to another folder, e.g. exports/",
        ) from exc
    for index, part in enumerate(folder.parts[1:], start=1):
        try:
            mode = flags | os.O_RDONLY if index == last else passing
            next_fd = os.open(part, mode, dir_fd=fd)
        except OSError as exc:
            linked = exc.errno in (errno.ELOOP, errno.ENOTDIR)
            raise _fail(
                f"the folder of {target.shown} changed while exporting (a folder on its way "
                "was replaced by a link); nothing was written"
                if linked
                else f"cannot open the folder of {target.shown}: {exc.strerror or exc}",
                "check the folder, then export again, e.g. to exports/",
            ) from exc
        finally:
            os.close(fd)
        fd = next_fd
    return fd


def _link_new(tmp: str, name: str, dir_fd: int, shown: str) -> None:
    """Give the temp file its name only if that name is still free (never replaces)."""
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        os.unlink(tmp, dir_fd=dir_fd)
    except FileExistsError as exc:
        raise _fail(
            f"{shown} was created by something else while exporting; it was left as it is",
            "write to a new file name",
        ) from exc
    except OSError as exc:  # a file system without hard links: check, then rename
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        with suppress(FileNotFoundError):
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            raise _fail(
                f"{shown} was created by something else while exporting; it was left as it is",
                "write to a new file name",
            ) from exc
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
