"""Resume a saved conversation (or start a new one) from a list."""

from __future__ import annotations

from tui.controllers.host import AppHost
from tui.screens.picker import PickerScreen

NEW = "__new__"
LINE_WIDTH = 64
"""Characters of a line in the list: date, title and count fit the picker (at most 80 columns,
its scrollbar included) on one line; the title is cut to what its date and count leave."""


def pick_conversation(app: AppHost) -> None:
    """Show saved conversations, newest first; the choice re-opens the session on it."""
    from agent.session import list_conversations
    from agent.text_plural import counted

    if app.chat.busy:
        app.notify("Stop the running answer first (Esc).", severity="warning")
        return
    options = [(NEW, "＋ New chat")]
    for summary in list_conversations():
        when = str(summary.updated_at)[:16].replace("T", " ")
        title = " ".join((summary.title or "(untitled)").split())
        count = f"  · {counted(summary.message_count, 'message')}"
        room = LINE_WIDTH - len(when) - 2 - len(count)
        if len(title) > room:
            title = title[: room - 1] + "…"
        label = f"{when}  {title}{count}"
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
