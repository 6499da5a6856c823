"""Conversations on disk: one JSON file each under the data dir, written atomically.

A saved history is always one Converse would accept: every toolUse is answered by a
toolResult in the next user message, and user/assistant turns alternate.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agent import paths
from agent.errors import TabletalkError
from agent.events import Usage


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_conversation_id() -> str:
    """A sortable, readable id: date, time, and a random suffix."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class ConversationNotFound(TabletalkError):
    """A `--conversation ID` that does not exist."""

    title = "Unknown conversation"


def encode_json(data: Any) -> bytes:
    """UTF-8 JSON; text that is not valid Unicode (a lone surrogate a model sent) is kept as a
    `\\udXXX` escape instead of failing the save."""
    try:
        return json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, default=str).encode("ascii")


def _save_error(directory: Path, exc: OSError) -> TabletalkError:
    return TabletalkError(
        f"Cannot save the conversation in {directory}: {exc.strerror or exc}",
        fix=f"Make {directory} a writable directory (staged changes are safe either way).",
    )


class _Message(BaseModel):
    role: Literal["user", "assistant"]
    content: list[dict[str, Any]]


class _ConversationFile(BaseModel):
    """The shape a conversation file must have; anything else is reported as damaged."""

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


class DamagedConversation(ValueError):
    """A conversation file that is not valid JSON of the expected shape."""


def read_conversation_file(path: Path) -> dict[str, Any]:
    """The checked contents of one conversation file; DamagedConversation says what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedConversation(f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise DamagedConversation(f"expected a JSON object, found {type(data).__name__}")
    try:
        checked = _ConversationFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(file)"
        raise DamagedConversation(f"field '{where}': {first.get('msg', 'invalid')}") from exc
    return dict(data, messages=[m.model_dump() for m in checked.messages])


@dataclass(frozen=True)
class BrokenConversationFile:
    """A file in the conversations folder that could not be read, and why."""

    path: Path
    reason: str


@dataclass
class Conversation:
    """Messages (Converse format), discovered tools, attachments and usage of one chat."""

    id: str
    store: str
    model: str
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    title: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    discovered: list[str] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    attached: list[dict[str, Any]] = field(default_factory=list)
    """Files sent with a user text: `{"message": i, "block": j, "names": [...]}`."""
    granted: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def next_user_block(self) -> tuple[int, int]:
        """(message, block) index the next `append_user` content will start at."""
        if self.messages and self.messages[-1]["role"] == "user":
            return len(self.messages) - 1, len(self.messages[-1]["content"])
        return len(self.messages), 0

    def append_user(self, content: list[dict[str, Any]]) -> None:
        """Add user content; merges into a trailing user message so turns keep alternating."""
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(content)
        else:
            self.messages.append({"role": "user", "content": list(content)})
        if not self.title:
            text = next((block["text"] for block in content if "text" in block), "")
            self.title = " ".join(text.split())[:80]

    def append_assistant(self, message: dict[str, Any]) -> None:
        """Add one assistant message (text and/or toolUse blocks)."""
        self.messages.append({"role": "assistant", "content": list(message["content"])})

    def mark(self) -> tuple[int, int, str]:
        """Where the conversation stands before a turn, for `unsend`."""
        last = len(self.messages[-1]["content"]) if self.messages else 0
        return (len(self.messages), last, self.title)

    def unsend(self, mark: tuple[int, int, str]) -> bool:
        """Take back the user content added since `mark` when the model never answered it
        (a turn that failed before any reply); False, changing nothing, if it did answer."""
        count, last, title = mark
        if any(message["role"] == "assistant" for message in self.messages[count:]):
            return False
        del self.messages[count:]
        if count:
            del self.messages[count - 1]["content"][last:]
        self.title = title
        return True

    def user_text_indexes(self) -> list[tuple[int, str]]:
        """(message index, text) of every user message that carries typed text.

        Typed text may share a message with tool results (a prompt sent after `ask`, Stop or
        the step limit is merged there so roles alternate); those count too.
        """
        found = []
        for index, message in enumerate(self.messages):
            if message["role"] != "user":
                continue
            texts = [block["text"] for block in message["content"] if "text" in block]
            if texts:
                found.append((index, texts[0]))
        return found

    def truncate(self, message_index: int) -> str:
        """Roll back to before the typed text of that user message; return the text.

        Tool results in the same message stay, so the toolUse before them stays answered.
        """
        message = self.messages[message_index]
        text = next((b["text"] for b in message["content"] if "text" in b), "")
        results = [block for block in message["content"] if "toolResult" in block]
        del self.messages[message_index:]
        self.attached = [a for a in self.attached if a["message"] < message_index]
        if results:
            self.messages.append({"role": "user", "content": results})
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "store": self.store,
            "model": self.model,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "title": self.title,
            "messages": self.messages,
            "discovered": self.discovered,
            "attachments": self.attachments,
            "attached": self.attached,
            "granted": self.granted,
            "usage": self.usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Conversation:
        usage = data.get("usage") or {}
        return cls(
            id=data["id"],
            store=data.get("store", ""),
            model=data.get("model", ""),
            created_at=data.get("created_at", _now()),
            updated_at=data.get("updated_at", _now()),
            title=data.get("title", ""),
            messages=data.get("messages", []),
            discovered=list(data.get("discovered", [])),
            attachments=list(data.get("attachments", [])),
            attached=list(data.get("attached", [])),
            granted=list(data.get("granted", [])),
            usage=Usage(
                usage.get("inputTokens", 0),
                usage.get("outputTokens", 0),
                usage.get("cacheReadInputTokens", 0),
                usage.get("cacheWriteInputTokens", 0),
            ),
        )


@dataclass(frozen=True)
class ConversationSummary:
    """A line of `tabletalk conversations`."""

    id: str
    title: str
    updated_at: str
    message_count: int
    store: str


Summaries = list[ConversationSummary]
DamagedFiles = list[BrokenConversationFile]


class ConversationStore:
    """Reads and writes conversation files in one directory."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or paths.conversations_dir()

    def path(self, conversation_id: str) -> Path:
        return self.directory / f"{conversation_id}.json"

    def save(self, conversation: Conversation) -> None:
        """Write atomically (temp file, fsync, rename) so a crash leaves the old or the new."""
        conversation.updated_at = _now()
        data = encode_json(conversation.to_dict())
        try:
            paths.ensure_dir(self.directory)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        except OSError as exc:
            raise _save_error(self.directory, exc) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path(conversation.id))
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise _save_error(self.directory, exc) from exc
            raise

    def delete(self, conversation_id: str) -> None:
        """Remove a conversation's file (missing is fine)."""
        try:
            self.path(conversation_id).unlink(missing_ok=True)
        except OSError as exc:
            raise _save_error(self.directory, exc) from exc

    def load(self, conversation_id: str) -> Conversation:
        path = self.path(conversation_id)
        if not path.exists():
            raise ConversationNotFound(
                f"No conversation '{conversation_id}'.",
                fix="Run `tabletalk conversations` to list the saved ones.",
            )
        try:
            return Conversation.from_dict(read_conversation_file(path))
        except (OSError, DamagedConversation) as exc:
            raise ConversationNotFound(
                f"Conversation file {path} is damaged: {exc}",
                fix="Start a new conversation; move the damaged file away to hide it.",
            ) from exc

    def list(self) -> list[ConversationSummary]:
        """Saved conversations, most recently updated first; damaged files are skipped."""
        return self.scan()[0]

    def scan(self) -> tuple[Summaries, DamagedFiles]:
        """Saved conversations (most recently updated first) and the files that are damaged."""
        summaries: Summaries = []
        broken: DamagedFiles = []
        if not self.directory.exists():
            return summaries, broken
        for path in sorted(self.directory.glob("*.json")):
            if path.name.startswith("."):  # a save in progress (or one a crash left)
                continue
            try:
                data = read_conversation_file(path)
            except OSError as exc:
                broken.append(BrokenConversationFile(path, exc.strerror or str(exc)))
                continue
            except DamagedConversation as exc:
                broken.append(BrokenConversationFile(path, str(exc)))
                continue
            summaries.append(
                ConversationSummary(
                    data["id"],
                    data.get("title") or "",
                    data.get("updated_at") or "",
                    len(data["messages"]),
                    data.get("store") or "",
                )
            )
        return sorted(summaries, key=lambda s: (s.updated_at, s.id), reverse=True), broken
