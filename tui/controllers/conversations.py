"""Resume a saved conversation (or start a new one) from a list."""

from __future__ import annotations

from tui.controllers.host import AppHost
from tui.screens.picker import PickerScreen

NEW = "__new__"
LINE_WIDTH = 64
"""Characters of a line in the list: mark, date, title and count fit the picker (at most 80
columns, its scrollbar included) on one line; the title is cut to what the rest leaves."""
CURRENT = "● "
"""The mark of the chat open now (as the model picker marks the model in use)."""


def pick_conversation(app: AppHost) -> None:
    """Show saved conversations, newest first; the choice re-opens the session on it."""
    from agent.session import list_conversations
    from agent.text_plural import counted

    if app.chat.busy:
        app.notify("Stop the running answer first (Esc).", severity="warning")
        return
    current = app.session.conversation_id if app.session is not None else None
    options = [(NEW, "  ＋ New chat")]
    summaries = list_conversations()
    own = [s for s in summaries if about_this_store(s.store, app.store.identity)]
    elsewhere = len(summaries) - len(own)
    for summary in own:
        when = str(summary.updated_at)[:16].replace("T", " ")
        title = " ".join((summary.title or "(untitled)").split())
        count = f"  · {counted(summary.message_count, 'message')}"
        room = LINE_WIDTH - len(CURRENT) - len(when) - 2 - len(count)
        if len(title) > room:
            title = title[: room - 1] + "…"
        mark = CURRENT if summary.id == current else " " * len(CURRENT)
        options.append((summary.id, f"{mark}{when}  {title}{count}"))

    def chosen(conversation_id: str | None) -> None:
        if conversation_id is None or conversation_id == current:
            return  # the chat already open: the list just closes
        if conversation_id == NEW:
            app.action_new_chat()
            return
        app.session = None
        app.open_session(conversation_id)

    notes = []
    if current in {summary.id for summary in own}:
        notes.append(f"{CURRENT.strip()} marks the chat you are in.")
    if elsewhere:
        notes.append(
            f"Not listed: {counted(elsewhere, 'conversation')} about other databases "
            "(`tabletalk conversations` lists them, `tabletalk --conversation ID` opens one)."
        )
    help_text = " ".join(notes)
    app.push_screen(PickerScreen("Conversations", options, help_text=help_text), chosen)


def about_this_store(conversation_store: str, identity: str) -> bool:
    """A conversation is listed in the store's app when it was held about this store, or its
    store is not known (files from earlier versions); one about another database would run
    its history against this one (and stage its edits here)."""
    from agent.stores.open import identity_db

    return conversation_store == identity or identity_db(conversation_store) is None
