"""Conversations on disk: one append-only log file each under the data dir.

A saved history is always one Converse would accept: every toolUse is answered by a
toolResult in the next user message, and user/assistant turns alternate. A save appends
what changed since the last one (`agent.conversation_files` has the format and its crash
rules), so saving after every step costs what the step added.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent import paths
from agent.conversation_files import (
    LEGACY_SUFFIX,
    LOG_SUFFIX,
    SYNC,
    DamagedConversation,
    LogContents,
    LogState,
    append_line,
    encode_json,
    save_error,
    write_whole,
    written_since,
)
from agent.errors import TabletalkError
from agent.events import Usage
from agent.tool_results import compact_tool_results


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_conversation_id() -> str:
    """A sortable, readable id: date, time, and a random suffix."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class ConversationNotFound(TabletalkError):
    """A `--conversation ID` that does not exist."""

    title = "Unknown conversation"


ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A conversation id is its file's name in the conversations folder, never a path."""


def checked_id(conversation_id: str) -> str:
    """`conversation_id` when it can name a file in the folder, else ConversationNotFound."""
    if not ID_PATTERN.fullmatch(conversation_id):
        raise ConversationNotFound(
            f"No conversation {conversation_id!r}: an id is a name like 20260101-120000-a1b2c3, "
            "not a path.",
            fix="Run `tabletalk conversations` to list the saved ones.",
        )
    return conversation_id


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
    """Tools the model found, in discovery order, by what they are (`Toolset.identity`: a
    built-in tool's name, an external tool's server, own name and config digest), not by the
    name the model called them, which another server's tool may get once the config changes.
    An older file's plain names read the same way (an external one resolves to nothing)."""
    attachments: list[dict[str, Any]] = field(default_factory=list)
    attached: list[dict[str, Any]] = field(default_factory=list)
    """Files sent with a user text: `{"message": i, "block": j, "names": [...], "ids": [...]}`
    (ids: the attachments' ids, which tell apart two files of one name; older files have none)."""
    granted: list[dict[str, Any]] = field(default_factory=list)
    """"Allow for this conversation" grants: `{"tool", "identity", "message"}` (see
    `permissions.Grant`); a rewind drops those given in the messages it removes."""
    denied: list[dict[str, Any]] = field(default_factory=list)
    """Calls refused at the permission gate: `{"message": i, "id": toolUseId}` (i: the
    assistant message holding the call). The model got an "error" result (Converse has no
    other status); the chat shows these as denied. Older files have none."""
    failed: list[dict[str, Any]] = field(default_factory=list)
    """Turns that failed before any answer and were taken back (`unsend`), so `messages`
    stays what Converse accepts: `{"message": i, "block": j, "text", "error", "fix"}` (i, j:
    where the text would have gone, `next_user_block`; fix may be None). The chat shows each
    there, as the live chat did. Older files have none."""
    usage: Usage = field(default_factory=Usage)
    saved: LogState | None = field(default=None, init=False, compare=False, repr=False)
    """What its log file holds (None: the next save writes the file whole)."""

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

    def mark(self) -> tuple[int, int, str, int]:
        """Where the conversation stands before a turn (its records of attached files
        included), for `unsend`."""
        last = len(self.messages[-1]["content"]) if self.messages else 0
        return (len(self.messages), last, self.title, len(self.attached))

    def unsend(self, mark: tuple[int, int, str, int]) -> bool:
        """Take back the user content added since `mark`, and the record of the files sent
        with it, when the model never answered it (a turn that failed before any reply);
        False, changing nothing, if it did answer."""
        count, last, title, attached = mark
        if any(message["role"] == "assistant" for message in self.messages[count:]):
            return False
        del self.messages[count:]
        if count:
            del self.messages[count - 1]["content"][last:]
        del self.attached[attached:]  # else the next message's index would claim those files
        self.title = title
        self.saved = None
        return True

    def record_failure(self, text: str, error: str, fix: str | None) -> bool:
        """Remember a turn taken back by `unsend` (its typed text, error and fix) at the place
        it was sent, outside `messages`; nothing when the conversation is empty (its file goes,
        there is nothing to resume). True when recorded."""
        if not self.messages:
            return False
        message, block = self.next_user_block()
        self.failed.append(
            {"message": message, "block": block, "text": text, "error": error, "fix": fix}
        )
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
        text_block = next((i for i, b in enumerate(message["content"]) if "text" in b), 0)
        text = next((b["text"] for b in message["content"] if "text" in b), "")
        results = [block for block in message["content"] if "toolResult" in block]
        del self.messages[message_index:]
        self.attached = [a for a in self.attached if a["message"] < message_index]
        self.granted = [g for g in self.granted if g["message"] < message_index]
        self.denied = [d for d in self.denied if d["message"] < message_index]
        # A failed turn sent before the rewound text stays (it still came first).
        self.failed = [
            f for f in self.failed if (f["message"], f["block"]) <= (message_index, text_block)
        ]
        if results:
            self.messages.append({"role": "user", "content": results})
        self.saved = None
        return text

    def compact_tool_results(self) -> int:
        """Replace every large tool result by a short note (the pairing stays); return how
        many were replaced."""
        replaced = compact_tool_results(self.messages)
        if replaced:
            self.saved = None
        return replaced

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
            "denied": self.denied,
            "failed": self.failed,
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
            granted=saved_grants(data.get("granted", []), len(data.get("messages", []))),
            denied=list(data.get("denied", [])),
            failed=list(data.get("failed", [])),
            usage=Usage(
                usage.get("inputTokens", 0),
                usage.get("outputTokens", 0),
                usage.get("cacheReadInputTokens", 0),
                usage.get("cacheWriteInputTokens", 0),
                usage.get("estimatedOutputTokens", 0),
            ),
        )


def saved_grants(saved: list[Any], message_count: int) -> list[dict[str, Any]]:
    """A file's grants in the current form. Files written before grants recorded what and when
    hold plain tool names: such a grant stands for the built-in tool of that name (an external
    tool's grant then named only a model-facing name that may now be another tool's, so it
    covers nothing and the user is asked again) and counts as given after the file's last
    message, since when is unknown: any rewind drops it."""
    return [
        {"tool": entry, "identity": entry, "message": message_count}
        if isinstance(entry, str)
        else dict(entry)
        for entry in saved
    ]


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
        """The conversation's log file."""
        return self.directory / f"{checked_id(conversation_id)}{LOG_SUFFIX}"

    def legacy_path(self, conversation_id: str) -> Path:
        """Where the older format kept it (one JSON object); read, then replaced by the log."""
        return self.directory / f"{checked_id(conversation_id)}{LEGACY_SUFFIX}"

    def save(self, conversation: Conversation) -> str | None:
        """Append what changed since the last save; write the file whole when the change is
        not an append (first save, rewind, compaction) or the file is gone.

        When another process wrote the same conversation since this one last saved or read it
        (the app and `ask --conversation` on one chat), writing it whole would drop that
        process's turns: this chat continues as a copy under a new id instead, and the
        sentence saying so is returned (None otherwise)."""
        conversation.updated_at = _now()
        state = conversation.saved
        notice = None
        if state is not None and state.path == self.path(conversation.id):
            appended = _append_record(conversation, state)
            if appended is not None and append_line(state, appended[0]):
                _advance(conversation, state, *appended)
                return None
            if written_since(state):
                was, conversation.id = conversation.id, new_conversation_id()
                notice = (
                    f"Another tabletalk saved conversation {was} meanwhile; this chat goes on "
                    f"as conversation {conversation.id}, so both are kept."
                )
        self._write_whole(conversation)
        return notice

    def flush(self) -> None:
        """Return once every save is on disk (a save returns once it survives a killed
        process; the flush to disk happens on a background thread)."""
        SYNC.wait()

    def _write_whole(self, conversation: Conversation) -> None:
        path = self.path(conversation.id)
        data = conversation.to_dict()
        size, inode = write_whole(path, data)
        conversation.saved = _state(conversation, path, size, inode)
        try:
            self.legacy_path(conversation.id).unlink(missing_ok=True)
        except OSError as exc:
            raise save_error(self.directory, exc) from exc

    def delete(self, conversation_id: str) -> None:
        """Remove a conversation's file (missing is fine)."""
        try:
            self.path(conversation_id).unlink(missing_ok=True)
            self.legacy_path(conversation_id).unlink(missing_ok=True)
        except OSError as exc:
            raise save_error(self.directory, exc) from exc

    def load(self, conversation_id: str) -> Conversation:
        path = self.path(conversation_id)
        if not path.exists():
            path = self.legacy_path(conversation_id)
        if not path.exists():
            raise ConversationNotFound(
                f"No conversation '{conversation_id}'.",
                fix="Run `tabletalk conversations` to list the saved ones.",
            )
        from agent.conversation_read import read_any  # pydantic loads only to read a file

        try:
            data, contents = read_any(path)
        except (OSError, DamagedConversation) as exc:
            raise ConversationNotFound(
                f"Conversation file {path} is damaged: {exc}",
                fix="Start a new conversation; move the damaged file away to hide it.",
            ) from exc
        conversation = Conversation.from_dict(data)
        if not ID_PATTERN.fullmatch(conversation.id):
            raise ConversationNotFound(
                f"Conversation file {path} is damaged: its id {conversation.id!r} is not a name "
                "like 20260101-120000-a1b2c3",
                fix="Run `tabletalk conversations` to list the saved ones; move the damaged "
                "file away to hide it.",
            )
        if contents is not None and conversation.id == conversation_id:
            conversation.saved = _loaded_state(conversation, path, contents)
        return conversation

    def list(self) -> list[ConversationSummary]:
        """Saved conversations, most recently updated first; damaged files are skipped."""
        return self.scan()[0]

    def scan(self) -> tuple[Summaries, DamagedFiles]:
        """Saved conversations (most recently updated first) and the files that are damaged;
        a large log is summarised from its head and tail (`conversation_summary`)."""
        summaries: Summaries = []
        broken: DamagedFiles = []
        if not self.directory.exists():
            return summaries, broken
        from agent.conversation_read import read_any  # pydantic loads only to read a file
        from agent.conversation_summary import quick_summary

        files = {p.stem: p for p in sorted(self.directory.glob(f"*{LEGACY_SUFFIX}"))}
        files.update({p.stem: p for p in sorted(self.directory.glob(f"*{LOG_SUFFIX}"))})
        for path in sorted(files.values()):
            if path.name.startswith("."):  # a save in progress (or one a crash left)
                continue
            data = quick_summary(path) if path.suffix == LOG_SUFFIX else None
            if data is not None:
                summaries.append(ConversationSummary(**data))
                continue
            try:
                data, _contents = read_any(path)
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


def _fields(conversation: Conversation) -> dict[str, bytes]:
    """Every saved field but the messages, encoded (small: compared at each save)."""
    data = conversation.to_dict()
    del data["messages"]
    return {name: encode_json(value) for name, value in data.items()}


def _state(conversation: Conversation, path: Path, size: int, inode: tuple[int, int]) -> LogState:
    messages = conversation.messages
    last = messages[-1] if messages else None
    return LogState(
        path=path,
        inode=inode,
        size=size,
        messages=messages,
        message_count=len(messages),
        last_message=last,
        last_blocks=len(last["content"]) if last else 0,
        fields=_fields(conversation),
    )


def _loaded_state(conversation: Conversation, path: Path, contents: LogContents) -> LogState:
    return _state(conversation, path, contents.size, contents.inode)


def _append_record(
    conversation: Conversation, state: LogState
) -> tuple[bytes, dict[str, bytes]] | None:
    """The log line for what changed since `state` (and the fields it brings the file to);
    None when the change is not an append (the message list replaced, or messages saved
    before removed or rewritten)."""
    messages = conversation.messages
    count = state.message_count
    if messages is not state.messages or len(messages) < count:
        return None
    if count and (
        messages[count - 1] is not state.last_message
        or len(messages[count - 1]["content"]) < state.last_blocks
    ):
        return None
    fields = _fields(conversation)
    record: dict[str, Any] = {"at": [count, state.last_blocks]}
    if count:
        extend = messages[count - 1]["content"][state.last_blocks :]
        if extend:
            record["extend"] = extend
    if len(messages) > count:
        record["messages"] = messages[count:]
    changed = {name: value for name, value in fields.items() if state.fields.get(name) != value}
    if changed:
        record["set"] = {name: conversation_field(conversation, name) for name in changed}
    return encode_json(record) + b"\n", fields


def conversation_field(conversation: Conversation, name: str) -> Any:
    """One saved field's value, as `to_dict` gives it."""
    return conversation.usage.to_dict() if name == "usage" else getattr(conversation, name)


def _advance(
    conversation: Conversation, state: LogState, line: bytes, fields: dict[str, bytes]
) -> None:
    """After an append: the state describes the file and conversation as they are now."""
    messages = conversation.messages
    state.size += len(line)
    state.fields = fields
    state.message_count = len(messages)
    state.last_message = messages[-1] if messages else None
    state.last_blocks = len(messages[-1]["content"]) if messages else 0
