"""What the chat says around turns: the intro of an empty chat, and the notes under a turn
that did not simply answer (stopped, cut off, failed, with what to do)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.key_hints import app_key
from tui.widgets.chat_lines import NoteLine
from tui.widgets.status_bar import short_model

if TYPE_CHECKING:
    from agent.events import TurnEnded

END_NOTES = {
    "stopped": ("Stopped. The conversation is intact; send a new message to continue.", "warning"),
    "step_limit": (
        "The turn reached the step limit; ask again or raise step_limit in the config.",
        "warning",
    ),
    "max_tokens": (
        "The answer was cut off at the model's output limit; ask for a shorter answer.",
        "warning",
    ),
}


def intro(app: Any) -> str:
    """The first line of an empty chat: what to ask, what it runs on, that edits wait."""
    app_store = getattr(app, "store", None)  # a bare App in widget tests has none
    store = app_store.label if app_store is not None else "your database"
    session = getattr(app, "session", None)  # the model of the chat, else the app's
    chosen = session.model_id if session is not None else None
    model = short_model(chosen or getattr(getattr(app, "settings", None), "model", "") or "")
    staging = app_key(app, "staging", "ctrl+s")
    earlier = ""
    if session is not None:  # once it opened: conversation files are loaded, not at start-up
        from agent.conversation_files import any_saved

        if any_saved():
            earlier = f" Earlier chats: {app_key(app, 'conversations', 'ctrl+l')}."
    return (
        f"Ask about the tables in {store}. Runs on Amazon Bedrock ({model}) with your AWS "
        f"credentials. Edits wait in staging for your review ({staging}).{earlier}"
    )


def failure(event: TurnEnded | None) -> tuple[str, str | None]:
    """A failed turn's message and its fix (None: no fix known)."""
    text = (event.error if event and event.error else "The turn failed.") or ""
    fix = getattr(event, "fix", None) if event is not None else None
    return text, fix


def failure_notes(text: str, fix: str | None) -> list[NoteLine]:
    """The notes under a failed turn: the error, then what to do (when a fix is known); live,
    and under a resumed chat's failed turn."""
    notes = [NoteLine(text, level="error")]
    if fix:
        notes.append(NoteLine(f"What to do: {fix}", level="fix"))
    return notes


def end_notes(reason: str, event: TurnEnded | None) -> list[NoteLine]:
    """The notes under a turn that ended for `reason` (none after a plain answer)."""
    if reason == "error":
        return failure_notes(*failure(event))
    if reason == "other" and event is not None:
        return [NoteLine(f"The model stopped ({event.detail}).", level="warning")]
    note = END_NOTES.get(reason)
    return [NoteLine(note[0], level=note[1])] if note is not None else []
