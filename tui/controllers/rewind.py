"""Rewind: pick one of your earlier messages; the chat rolls back to just before it for editing."""

from __future__ import annotations

from tui.controllers.host import AppHost
from tui.key_hints import app_key
from tui.screens.confirm import ConfirmScreen
from tui.screens.picker import PickerScreen


def pick_rewind(app: AppHost) -> None:
    """List the user's messages (newest last); the choice truncates the conversation there."""
    session = app.session
    if session is None:
        app.notify("The chat is still starting.", severity="warning")
        return
    if app.chat.busy:
        stop = app_key(app, "stop", "Esc")
        app.notify(f"Stop the running answer first ({stop}).", severity="warning", markup=False)
        return
    messages = session.user_messages()
    options = [(str(index), " ".join(text.split())[:90]) for index, text in messages]

    async def rewind(index: int) -> None:
        files = session.files_sent_with(index)
        text = session.rewind(index)
        await app.chat.show_items(session.display_items())
        app.show_usage(session.usage)
        for path in files:  # the files go back beside the text, to be sent with it again
            app.chat.attachments.add(path)
        composer = app.chat.composer
        composer.text = text
        composer.move_cursor(composer.document.end)
        composer.focus()
        app.notify(
            "Rolled back. Edit the message and press Enter to send it again. "
            f"Changes staged by the removed turns stay staged ({app_key(app, 'staging', 'ctrl+s')}).",
            markup=False,
        )

    async def chosen(index: str | None) -> None:
        if index is None:
            return
        dropped = sum(1 for position, _ in messages if position >= int(index))
        if dropped <= 1:
            await rewind(int(index))
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await rewind(int(index))

        app.push_screen(
            ConfirmScreen(
                "Rewind",
                f"Rewinding here drops {dropped} exchanges: your last {dropped} messages and "
                "their answers. This cannot be undone; changes they staged stay staged.",
                yes=f"Drop {dropped}",
            ),
            answered,
        )

    app.push_screen(
        PickerScreen(
            "Rewind to…",
            options,
            help_text="The chosen message and everything after it are removed; its text (and the files "
            "sent with it) return to the composer. Staged changes stay staged.",
            empty="You have not sent a message yet.",
            highlighted=len(options) - 1 if options else None,
        ),
        chosen,
    )
