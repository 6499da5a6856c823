"""Resume a saved conversation (or start a new one) from a list."""

from __future__ import annotations

from tui.controllers.host import AppHost
from tui.screens.picker import PickerScreen

NEW = "__new__"
TITLE_WIDTH = 36
"""Characters of a title in the list: with its date and count it fits the picker (at most 80
columns wide) on one line."""


def pick_conversation(app: AppHost) -> None:
    """Show saved conversations, newest first; the choice re-opens the session on it."""
    from agent.session import list_conversations

    if app.chat.busy:
        app.notify("Stop the running answer first (Esc).", severity="warning")
        return
    options = [(NEW, "＋ New chat")]
    for summary in list_conversations():
        when = str(summary.updated_at)[:16].replace("T", " ")
        title = " ".join((summary.title or "(untitled)").split())
        if len(title) > TITLE_WIDTH:
            title = title[: TITLE_WIDTH - 1] + "…"
        count = summary.message_count
        label = f"{when}  {title}  · {count} message{'' if count == 1 else 's'}"
        options.append((summary.id, label))

    def chosen(conversation_id: str | None) -> None:
        if conversation_id is None:
            return
        if conversation_id == NEW:
            app.action_new_chat()
            return
        app.session = None
        app.open_session(conversation_id)

    app.push_screen(PickerScreen("Conversations", options), chosen)
