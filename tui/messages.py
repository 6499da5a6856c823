"""Messages that cross from worker threads to the app (posted, never handled on the worker)."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class TurnEventPosted(Message):
    """One TurnEvent of turn number `turn` (events of a stopped turn are dropped by number)."""

    def __init__(self, turn: int, event: Any) -> None:
        super().__init__()
        self.turn = turn
        self.event = event


class SessionReady(Message):
    """The chat session opened (or re-opened for another conversation)."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session


class StagingChanged(Message):
    """The staged changes differ from what the app last showed (any process staged/committed)."""

    def __init__(self, changes: list[Any]) -> None:
        super().__init__()
        self.changes = changes


class ChipClicked(Message):
    """A chip was pressed; `action` is the chip's action dict."""

    def __init__(self, label: str, action: dict[str, Any]) -> None:
        super().__init__()
        self.label = label
        self.action = action
