"""How long a toast stays (long enough to read, longer for errors and warnings), how long it
is when the same words are in the chat, and when a dialog clears it."""

from __future__ import annotations

import time
from typing import Any

from textual.app import App
from textual.screen import ModalScreen, Screen

BASE_SECONDS = {"information": 5.0, "warning": 8.0, "error": 12.0}
"""The least time a toast of each severity stays (Textual's default is 5 s for all)."""
WORDS_PER_SECOND = 3.0
"""A slow reading pace (about 180 words a minute), so a long error is not gone mid-sentence."""
MOST_SECONDS = 30.0


def notice_seconds(text: str, severity: str) -> float:
    """Seconds a toast with `text` stays: its severity's base, or its reading time if longer."""
    reading = len(text.split()) / WORDS_PER_SECOND
    return min(max(BASE_SECONDS.get(severity, BASE_SECONDS["information"]), reading), MOST_SECONDS)


BRIEF_CHARACTERS = 120
"""The most of a chat note a toast repeats: a toast as long as the note covered it at 80x24."""


def brief(text: str, limit: int = BRIEF_CHARACTERS) -> str:
    """`text`'s first sentence (or line), cut to `limit` characters with `…`."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    end = first.find(". ")
    if end != -1:
        first = first[: end + 1]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


SEEN_SECONDS = 1.0
"""A toast up this long before a dialog opens has been seen; one raised with the dialog
(e.g. what the dialog is about) has not."""


def clear_for_dialog(app: App[Any], screen: Screen[Any]) -> None:
    """A dialog opening clears the toasts shown before it: they covered its rows (the commit
    toast over F9's columns, an attach error over F5's model ids) after the person moved on."""
    if not isinstance(screen, ModalScreen):
        return
    now = time.time()
    for shown in list(app._notifications):
        if now - shown.raised_at >= SEEN_SECONDS:
            app._unnotify(shown, refresh=False)
    app._refresh_notifications()
