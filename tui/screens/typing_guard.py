"""Keys typed for something else do not answer a question that has just opened.

A question that opens while the user types (a permission prompt over the composer) or that one
key of a typed word opened (`c` in the staging panel asks to commit) would otherwise take the
next letters as answers: `a` of "and" allowed a tool for the whole chat, `y` of "city"
committed 40 changes. Browsers guard their install and permission prompts the same way.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events
from textual.widgets import Static

GUARD_SECONDS = 0.6
"""A key answers only after this long without a key since the question opened: each key typed
sooner is set aside and starts the wait again, so a question takes no key of a burst."""

GUARDED_NOTE = "Keys typed just as this opened were not taken as an answer."


class TypingGuard:
    """A mixin for a ModalScreen: printable keys, Enter and Space reach its bindings and buttons
    only after `GUARD_SECONDS` without a key, and only those `answers` accepts; Esc, Tab and
    the arrows always do. A screen that yields a `Static(id="guard-note")` says there that
    keys were set aside."""

    _last_key_at = 0.0
    guard_note = GUARDED_NOTE

    def guard_started(self) -> None:
        """Start the wait (call from `on_mount`)."""
        self._last_key_at = time.monotonic()

    def on_key(self, event: events.Key) -> None:
        if not (event.is_printable or event.key == "enter"):  # Space is printable
            return
        now = time.monotonic()
        early = now - self._last_key_at < GUARD_SECONDS
        self._last_key_at = now
        if not early and self.answers(event):
            return
        event.stop()  # neither this screen's bindings nor the focused button see it
        event.prevent_default()
        self.set_aside(event)
        if early:
            for note in self.query("#guard-note"):  # type: ignore[attr-defined]
                if isinstance(note, Static):
                    note.update(Text(self.guard_note, style="italic"))
                    note.display = True

    def answers(self, event: events.Key) -> bool:
        """Whether this key may answer once the wait is over (every key, here)."""
        return True

    def set_aside(self, event: events.Key) -> None:
        """What to do with a key that answered nothing (nothing; the permission prompt passes
        letters on to the message box)."""
