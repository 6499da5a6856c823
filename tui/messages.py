"""Messages that cross from worker threads to the app (posted, never handled on the worker)."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class TurnEventsReady(Message):
    """The chat's TurnFeed has events to take (at most one such message is in flight)."""


class SessionReady(Message):
    """The chat session opened (or re-opened for another conversation)."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session


def signature(changes: list[Any]) -> list[tuple[str, str, Any]]:
    """What identifies a staged set as the user saw it: ids, ops and staged values (compared
    with ==, which is C-speed even for 10,000 changes)."""
    return [(c.id, c.op, c.values) for c in changes]


class StagingChanged(Message):
    """The staged changes differ from what the app last showed (any process staged/committed)."""

    def __init__(self, changes: list[Any], conflicts: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.changes = changes
        self.conflicts = conflicts
        """The conflicts commits recorded among them (`StagingArea.conflicts`), by change id;
        None: not read (what is known of them stays)."""
        self.signature = signature(changes)
        """Ids, ops and staged values: what tells one staged set from another. Computed where
        the message is made (the staging worker), not on the app's thread."""


class ChipClicked(Message):
    """A chip was pressed; `action` is the chip's action dict."""

    def __init__(self, label: str, action: dict[str, Any]) -> None:
        super().__init__()
        self.label = label
        self.action = action
