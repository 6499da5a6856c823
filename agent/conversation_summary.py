"""A conversation log's list line (id, title, when, message count, store) read from the head
and tail of the file, so listing conversations costs what the list shows, not every
conversation whole.

The head is the snapshot line's fields before its messages (the writer puts them first);
the last save gives the message count (`at` + new messages), and the saves are read back from
the end only until the newest `updated_at` (a save sets it when the second changed) and, when
the snapshot has none, `title`. Anything else (a small file, an older writer's field order, a
log with no save after its snapshot, a line that does not parse) returns None and the caller
reads the file whole as before, so a file is never listed with a guess. Damage in the middle
of a large log shows when it is opened, not in the list.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from agent.conversation_files import LOG_VERSION, DamagedConversation

WHOLE_BELOW = 256 * 1024
"""Files smaller than this are read whole (as fast, and every line is checked)."""

HEAD = 64 * 1024
"""Bytes read from the start for the snapshot's fields."""

TAIL = 64 * 1024
"""Bytes read from the end for the last saves."""

PREFIX = json.dumps({"log": LOG_VERSION, "snapshot": {}})[:-2]
"""How a log's first line starts (`{"log": 1, "snapshot": {`)."""

_DECODER = json.JSONDecoder()
_FIELDS = ("id", "title", "updated_at", "store")


def quick_summary(path: Path) -> dict[str, Any] | None:
    """`id`, `title`, `updated_at`, `store` and `message_count` of a large log from its head
    and its last saves; None when the file must be read whole to know them."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < WHOLE_BELOW:
                return None
            fields = snapshot_fields(handle.read(HEAD).decode("utf-8", "replace"))
            if fields is None:
                return None
            latest = last_saves(handle, size, need_title=not fields.get("title"))
    except OSError:
        return None  # the whole read names the error
    if latest is None:
        return None
    count, changed = latest
    summary = {**fields, **changed, "message_count": count}
    if any(type(summary.get(name)) is not str for name in _FIELDS):
        return None
    return {name: summary[name] for name in (*_FIELDS, "message_count")}


def snapshot_fields(text: str) -> dict[str, Any] | None:
    """The snapshot's fields before `messages` at the start of a log, or None."""
    if not text.startswith(PREFIX):
        return None
    fields: dict[str, Any] = {}
    at = len(PREFIX)
    try:
        while True:
            key, at = _DECODER.raw_decode(text, at)
            if type(key) is not str or text[at : at + 2] != ": ":
                return None
            if key == "messages":
                return fields
            fields[key], at = _DECODER.raw_decode(text, at + 2)
            if text[at : at + 2] != ", ":
                return None
            at += 2
    except (ValueError, RecursionError):
        return None


def lines_backwards(handle: BinaryIO, size: int) -> Iterator[bytes]:
    """The log's complete lines after its first (the snapshot), last first, read TAIL bytes
    at a time from the end; what follows the last newline was never saved and is left out."""
    at, rest, ended = size, b"", False
    while at > 0:
        start = max(at - TAIL, 0)
        handle.seek(start)
        block = handle.read(at - start) + rest
        at = start
        if not ended:
            end = block.rfind(b"\n")
            if end == -1:
                rest = b""
                continue
            block, ended = block[:end], True
        parts = block.split(b"\n")
        rest = parts[0]  # cut by the read (the snapshot line, once at the start)
        yield from reversed(parts[1:])


def last_saves(
    handle: BinaryIO, size: int, *, need_title: bool
) -> tuple[int, dict[str, Any]] | None:
    """The message count after the last save, and the newest `updated_at` (and `title` when
    `need_title`) the saves set, read from the end back as far as needed; None when the log
    has no save after its snapshot or a line that does not parse."""
    from agent.conversation_read import parse_record

    count: int | None = None
    changed: dict[str, Any] = {}
    for number, line in enumerate(lines_backwards(handle, size)):
        try:
            record = parse_record(line)
        except DamagedConversation:
            if number == 0:
                continue  # a damaged last line is skipped, as the whole read does
            return None
        if count is None:
            count = record.at[0] + len(record.messages)
        for name in ("updated_at", "title"):
            if name in record.set and name not in changed:
                changed[name] = record.set[name]
        if "updated_at" in changed and (not need_title or "title" in changed):
            break
    return None if count is None else (count, changed)
