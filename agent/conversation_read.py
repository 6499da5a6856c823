"""Reading conversation files back (both formats of `agent.conversation_files`), checked
against the shape a conversation must have; anything else is reported as damaged.

Data already exactly in shape (what tabletalk writes) is read as it is; anything else (values
to coerce, or damage to name) goes to the pydantic models of `agent.conversation_models`,
which decide as before. So continuing a conversation does not cost pydantic's import.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent.conversation_files import (
    LOG_SUFFIX,
    LOG_VERSION,
    DamagedConversation,
    LogContents,
    Record,
)

ROLES = ("user", "assistant")
RECORD_KEYS = frozenset({"at", "extend", "messages", "set"})


def _plain_messages(value: Any) -> list[dict[str, Any]] | None:
    """Messages that already have exactly their checked shape, as the model gives them back
    (role and content only); None when any does not."""
    if type(value) is not list:
        return None
    plain = []
    for message in value:
        if type(message) is not dict:
            return None
        role, content = message.get("role"), message.get("content")
        if role not in ROLES or type(content) is not list:
            return None
        if any(type(block) is not dict for block in content):
            return None
        plain.append({"role": role, "content": [dict(block) for block in content]})
    return plain


def _texts(value: Any) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


ATTACHMENT_KINDS = ("text", "csv", "json", "pdf")


def _plain_attachment(value: Any) -> bool:
    """An attachment record exactly as `Attachment.to_dict` writes it."""
    return (
        type(value) is dict
        and all(type(value.get(name)) is str for name in ("id", "name", "path"))
        and type(value.get("size")) is int
        and value.get("kind") in ATTACHMENT_KINDS
    )


def _plain_attached(value: Any) -> bool:
    """A record of the files sent with one user text, exactly as tabletalk writes it."""
    return (
        type(value) is dict
        and type(value.get("message")) is int
        and type(value.get("block")) is int
        and _texts(value.get("names"))
        and ("ids" not in value or _texts(value["ids"]))
    )


def _plain_grant(value: Any) -> bool:
    """A grant as tabletalk writes it (`permissions.Grant.to_dict`), or an older file's name."""
    if type(value) is str:
        return True
    return (
        type(value) is dict
        and type(value.get("tool")) is str
        and type(value.get("identity")) is str
        and type(value.get("message")) is int
    )


def _plain_denial(value: Any) -> bool:
    """A call refused at the permission gate, as tabletalk writes it (`Conversation.denied`)."""
    return (
        type(value) is dict and type(value.get("message")) is int and type(value.get("id")) is str
    )


def _plain_failure(value: Any) -> bool:
    """A turn taken back after it failed, as tabletalk writes it (`Conversation.failed`)."""
    return (
        type(value) is dict
        and type(value.get("message")) is int
        and type(value.get("block")) is int
        and type(value.get("text")) is str
        and type(value.get("error")) is str
        and type(value.get("fix")) in (str, type(None))
    )


def _plain_conversation(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The messages of a conversation whose every field already has its checked type (so
    the model would take it unchanged); None sends the data to the model."""
    if type(data.get("id")) is not str:
        return None
    if any(name in data and type(data[name]) is not str for name in ("store", "model", "title")):
        return None
    if any(type(data.get(name)) not in (str, type(None)) for name in ("created_at", "updated_at")):
        return None
    if "discovered" in data and not _texts(data["discovered"]):
        return None
    granted = data.get("granted", [])
    if type(granted) is not list or not all(map(_plain_grant, granted)):
        return None
    denied = data.get("denied", [])
    if type(denied) is not list or not all(map(_plain_denial, denied)):
        return None
    failed = data.get("failed", [])
    if type(failed) is not list or not all(map(_plain_failure, failed)):
        return None
    attachments = data.get("attachments", [])
    if type(attachments) is not list or not all(map(_plain_attachment, attachments)):
        return None
    attached = data.get("attached", [])
    if type(attached) is not list or not all(map(_plain_attached, attached)):
        return None
    usage = data.get("usage", {})
    if type(usage) is not dict or any(type(count) is not int for count in usage.values()):
        return None
    return _plain_messages(data.get("messages", []))


def _block_error(block: dict[str, Any]) -> str | None:
    """What is wrong with a content block the chat and Converse read (text, toolUse,
    toolResult: the parts tabletalk writes), as `name: problem`; None when in shape. Other
    kinds (a model's reasoning, say) go back to the model as it gave them."""
    if "text" in block and type(block["text"]) is not str:
        return "text: expected a string"
    if "toolUse" in block:
        use = block["toolUse"]
        if type(use) is not dict or not (
            type(use.get("toolUseId")) is type(use.get("name")) is str
        ):
            return "toolUse: expected an object with a toolUseId and a name (strings)"
    if "toolResult" in block:
        result = block["toolResult"]
        if type(result) is not dict or type(result.get("toolUseId")) is not str:
            return "toolResult: expected an object with a toolUseId (a string)"
        if type(result.get("status", "")) is not str:
            return "toolResult.status: expected a string"
        content = result.get("content") or []
        if type(content) is not list or not all(map(_result_part, content)):
            return (
                "toolResult.content: expected a list of {text: string} or {json: object} "
                "(a chip in it: {label: string, action: {kind: string, ...}})"
            )
    return None


def _result_part(part: Any) -> bool:
    if type(part) is not dict or type(part.get("text", "")) is not str:
        return False
    data = part.get("json", {})
    return type(data) is dict and ("chip" not in data or _plain_chip(data["chip"]))


def _plain_chip(chip: Any) -> bool:
    """A chip the chat can draw and run: a label, and an action naming its kind whose fields
    the app reads as text (table, query, name) are text."""
    if type(chip) is not dict or type(chip.get("label", "")) is not str:
        return False
    action = chip.get("action", {})
    return (
        type(action) is dict
        and type(action.get("kind")) is str
        and all(type(action.get(name) or "") is str for name in ("table", "query", "name"))
    )


def _check_blocks(messages: list[dict[str, Any]]) -> None:
    """Raise DamagedConversation naming the first content block not in shape."""
    for m, message in enumerate(messages):
        for b, block in enumerate(message["content"]):
            problem = _block_error(block)
            if problem is not None:
                name, _, text = problem.partition(": ")
                raise DamagedConversation(f"field 'messages.{m}.content.{b}.{name}': {text}")


def _checked(data: Any, *, blocks: bool = True) -> dict[str, Any]:
    """`data` as a conversation (raises DamagedConversation); `blocks=False` leaves the
    content blocks to a later check of the whole (a log's first line, before its saves)."""
    if not isinstance(data, dict):
        raise DamagedConversation(f"expected a JSON object, found {type(data).__name__}")
    messages = _plain_conversation(data)
    if messages is None:  # values to coerce, or damage to name: pydantic's models decide
        from agent.conversation_models import checked_fields

        checked = {**data, "messages": [], **checked_fields(data)}
    else:
        checked = dict(data, messages=messages)
    if blocks:
        _check_blocks(checked["messages"])
    return checked


def _plain_record(value: Any) -> Record | None:
    """An appended save already exactly in shape, as the model gives it back; else None."""
    if type(value) is not dict or not value.keys() <= RECORD_KEYS:
        return None
    at, extend = value.get("at"), value.get("extend", [])
    changed, messages = value.get("set", {}), _plain_messages(value.get("messages", []))
    if (
        type(at) is not list
        or len(at) != 2
        or any(type(n) is not int for n in at)
        or type(extend) is not list
        or any(type(block) is not dict for block in extend)
        or type(changed) is not dict
        or messages is None
    ):
        return None
    return Record((at[0], at[1]), [dict(block) for block in extend], messages, dict(changed))


def _record(value: Any) -> Record:
    """One appended save (raises DamagedConversation naming what is wrong)."""
    record = _plain_record(value)
    if record is None:  # values to coerce, or damage to name: pydantic's model decides
        from agent.conversation_models import checked_record

        record = checked_record(value)
    return record


def parse_record(raw: bytes) -> Record:
    """One appended save line of a log (raises DamagedConversation naming what is wrong)."""
    return _record(_parse(raw))


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedConversation(f"not valid JSON ({exc})") from exc
    except RecursionError as exc:  # json raises it, not ValueError, past the recursion limit
        raise DamagedConversation("not readable: its JSON is nested too deeply") from exc


def _apply(data: dict[str, Any], record: Record) -> bool:
    """Apply one record; False when it does not continue the history read so far."""
    messages: list[dict[str, Any]] = data["messages"]
    last = len(messages[-1]["content"]) if messages else 0
    if tuple(record.at) != (len(messages), last):
        return False
    if record.extend:
        if not messages:
            return False
        messages[-1]["content"].extend(record.extend)
    messages.extend(record.messages)
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
    data = _checked(head.get("snapshot"), blocks=False)
    size = len(lines[0]) + 1
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = _record(_parse(line))
        except DamagedConversation as exc:
            if number == len(lines):  # a crash can only leave the last line incomplete
                break
            raise DamagedConversation(f"line {number}: {exc}") from exc
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
