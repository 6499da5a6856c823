"""Helpers for the app's Pilot tests: wait for workers and messages, send a chat message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.worker import WorkerFailed

from tui.app import TabletalkApp

SIZE = (120, 36)


QUIET_ROUNDS_MAX = 200
"""A bound, so a test whose app never goes quiet carries on to its assertions instead of hanging."""


async def settle(app: TabletalkApp, pilot: Any) -> None:
    """Wait for every worker to finish, any turn to end and every posted message (and streamed
    text) to be handled: until two rounds in a row find nothing running (a finished worker may post a
    message that starts another; on a loaded machine such chains take several rounds)."""
    quiet = 0
    for _ in range(QUIET_ROUNDS_MAX):
        try:
            await app.workers.wait_for_complete()
        except WorkerFailed:  # the app's handler reports it; tests assert on what it shows
            pass
        await pilot.pause()
        while app.chat.rendering:
            await pilot.pause()
        # A turn is running until the chat says it ended: its worker may not have started
        # yet (just after a click) or have ended with its end message still on its way.
        if any(w.is_running for w in app.workers) or app.chat.busy or _staging_reading(app):
            quiet = 0
        else:
            quiet += 1
            if quiet == 2:
                break


def _staging_reading(app: TabletalkApp) -> bool:
    """A staging panel painted its page and has yet to read its summaries (groups, orphans)."""
    return any(not panel.snapshot.complete for panel in app.query("StagingPanel"))  # type: ignore[attr-defined]


async def refreshed_until(
    app: TabletalkApp, condition: Callable[[], bool], refreshes: int = 20
) -> bool:
    """Let the screen refresh (re-compose and lay out) until `condition()` holds, at most
    `refreshes` times; waits on refresh events, never on the clock."""
    for _ in range(refreshes):
        if condition():
            return True
        await app.screen.wait_for_refresh()
    return condition()


async def press_ready(pilot: Any, button: Any) -> None:
    """Wait until `button` no longer shows its last press: a press inside that look (0.2 s, as
    Textual's Button) is ignored by design, and a fast run can get there inside it."""
    for _ in range(40):
        if not button.has_class("-active"):
            return
        await pilot.pause(0.05)
    raise AssertionError(f"{button!r} still shows its last press")


def typed(app: TabletalkApp, data: str) -> None:
    """Post the keys a terminal's bytes make, read as Textual's driver reads one read of them
    (tmux send-keys and a fast typist deliver a burst like this): `"\\x15x1"` is ctrl+u, x, 1."""
    from textual._xterm_parser import XTermParser

    for token in XTermParser().feed(data):
        app.post_message(token)


async def send(app: TabletalkApp, pilot: Any, text: str) -> None:
    """Type `text` into the composer and press Enter, then wait for the turn to end."""
    await settle(app, pilot)
    composer = app.chat.composer
    composer.focus()
    composer.text = text
    await pilot.press("enter")
    await settle(app, pilot)


async def start_long_answer(
    app: TabletalkApp, pilot: Any, scripted_bedrock: Any, text: str
) -> None:
    """Send a message answered with `text` until part of it is shown and the rest waits for a
    render step that, with the `one_step_at_a_time` fixture, never comes. The answer streams in
    40,000-character deltas: each is more than one render batch, so the wait holds whatever the
    machine's load (in 4-character deltas a fast app drew every piece as it came)."""
    from tests.support.scripted_bedrock import Reply
    from tui.widgets.chat_items import AssistantMessage

    scripted_bedrock.text_chunk_size = 40_000
    scripted_bedrock.add(Reply(text=text))
    await settle(app, pilot)
    app.chat.composer.text = "write me a report"
    await pilot.press("enter")
    while not (app.query(AssistantMessage) and app.chat.rendering):
        await pilot.pause()
