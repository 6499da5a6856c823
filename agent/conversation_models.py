"""The pydantic models of a conversation file's shape: what `agent.conversation_read` falls
back to for data that is not already exactly in shape (values to coerce, or damage to report,
naming the first wrong field)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agent.conversation_files import DamagedConversation, Record


class _Message(BaseModel):
    role: Literal["user", "assistant"]
    content: list[dict[str, Any]]


class _Attachment(BaseModel):
    """A file attached to the conversation (`Attachment.to_dict`)."""

    id: str
    name: str
    path: str
    size: int
    kind: Literal["text", "csv", "json", "pdf"]


class _Attached(BaseModel):
    """The files sent with one user text (`Conversation.attached`)."""

    message: int
    block: int
    names: list[str]
    ids: list[str] = []


class _Grant(BaseModel):
    """An "allow for this conversation" (`permissions.Grant.to_dict`)."""

    tool: str
    identity: str
    message: int


class _Denied(BaseModel):
    """A call refused at the permission gate (`Conversation.denied`)."""

    message: int
    id: str


class _Failed(BaseModel):
    """A turn that failed before any answer and was taken back (`Conversation.failed`)."""

    message: int
    block: int
    text: str
    error: str
    fix: str | None = None


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
    attachments: list[_Attachment] = []
    attached: list[_Attached] = []
    granted: list[str | _Grant] = []
    """Grants; an older file's plain tool names (see `conversations.saved_grants`)."""
    denied: list[_Denied] = []
    failed: list[_Failed] = []
    usage: dict[str, int] = {}


class _Record(BaseModel):
    """One appended save."""

    model_config = ConfigDict(extra="forbid")

    at: tuple[int, int]
    extend: list[dict[str, Any]] = []
    messages: list[_Message] = []
    set: dict[str, Any] = {}


def checked_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of the conversation its model reads, as the model reads them (a count
    written "12" is 12), those the file has; DamagedConversation otherwise."""
    try:
        checked = _ConversationFile.model_validate(data)
    except ValidationError as exc:
        raise DamagedConversation(_first_error(exc)) from exc
    return checked.model_dump(exclude_unset=True)


def checked_record(value: Any) -> Record:
    """One appended save as its model reads it; DamagedConversation otherwise."""
    try:
        record = _Record.model_validate(value)
    except ValidationError as exc:
        raise DamagedConversation(_first_error(exc)) from exc
    return Record(record.at, record.extend, [m.model_dump() for m in record.messages], record.set)


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(file)"
    return f"field '{where}': {first.get('msg', 'invalid')}"
