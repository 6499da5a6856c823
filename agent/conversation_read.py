"""Reading conversation files back (both formats of `agent.conversation_files`), checked
against the shape a conversation must have; anything else is reported as damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agent.conversation_files import LOG_SUFFIX, LOG_VERSION, DamagedConversation, LogContents


class _Message(BaseModel):
    role: Literal["user", "assistant"]
    content: list[dict[str, Any]]


class _ConversationFile(BaseModel):
    """The shape a conversation must have; anything else is reported as damaged."""

    model_config = ConfigDict(extra="ignore")

    id: str
    store: str = ""
    model: str = ""
    created_at: str | None = None
    updated_at: str | None = None
    title: str = ""
    messages: list[_Message] = []
    discovered: list[str] = []
    attachments: list[dict[str, Any]] = []
    granted: list[str] = []
    usage: dict[str, int] = {}


class _Record(BaseModel):
    """One appended save."""

    model_config = ConfigDict(extra="forbid")

    at: tuple[int, int]
    extend: list[dict[str, Any]] = []
    messages: list[_Message] = []
    set: dict[str, Any] = {}


def _checked(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise DamagedConversation(f"expected a JSON object, found {type(data).__name__}")
    try:
        checked = _ConversationFile.model_validate(data)
    except ValidationError as exc:
        raise DamagedConversation(_first_error(exc)) from exc
    return dict(data, messages=[m.model_dump() for m in checked.messages])


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(file)"
    return f"field '{where}': {first.get('msg', 'invalid')}"


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedConversation(f"not valid JSON ({exc})") from exc


def _apply(data: dict[str, Any], record: _Record) -> bool:
    """Apply one record; False when it does not continue the history read so far."""
    messages: list[dict[str, Any]] = data["messages"]
    last = len(messages[-1]["content"]) if messages else 0
    if tuple(record.at) != (len(messages), last):
        return False
    if record.extend:
        if not messages:
            return False
        messages[-1]["content"].extend(record.extend)
    messages.extend(m.model_dump() for m in record.messages)
    data.update({k: v for k, v in record.set.items() if k not in ("messages", "id")})
    return True


def read_log(path: Path) -> LogContents:
    """Replay a log file; an incomplete or unreadable last line is left out (never saved)."""
    with path.open("rb") as handle:
        stat = os.fstat(handle.fileno())
        raw = handle.read()
    lines = raw.split(b"\n")[:-1]  # what follows the last newline was never fully written
    if not lines:
        raise DamagedConversation("no complete first line")
    head = _parse(lines[0])
    if not isinstance(head, dict) or head.get("log") != LOG_VERSION:
        raise DamagedConversation("not a tabletalk conversation log (version 1)")
    data = _checked(head.get("snapshot"))
    size = len(lines[0]) + 1
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = _Record.model_validate(_parse(line))
        except (DamagedConversation, ValidationError) as exc:
            if number == len(lines):  # a crash can only leave the last line incomplete
                break
            detail = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)
            raise DamagedConversation(f"line {number}: {detail}") from exc
        if not _apply(data, record):
            break  # a save that does not follow this history (two writers): keep what does
        size += len(line) + 1
    return LogContents(_checked(data), size, (stat.st_dev, stat.st_ino))


def read_legacy(path: Path) -> dict[str, Any]:
    """The checked contents of a whole-file JSON conversation (the older format)."""
    return _checked(_parse(path.read_bytes()))


def read_any(path: Path) -> tuple[dict[str, Any], LogContents | None]:
    """A conversation file of either format: its data, and the log's read state if a log."""
    if path.suffix == LOG_SUFFIX:
        contents = read_log(path)
        return contents.data, contents
    return read_legacy(path), None
