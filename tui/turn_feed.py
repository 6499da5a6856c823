"""The hand-off of a turn's events from its worker thread to the chat, coalesced.

A model can stream tens of thousands of text deltas in a second. Posting a Textual message for
each would queue them ahead of everything the chat does next (Stop included), so the worker
appends to this feed instead: adjacent text is merged into one string, and at most one wake-up
message is in flight. The chat drains the feed in order and renders text in bounded batches.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any


class TurnFeed:
    """A thread-safe, ordered queue of (turn, event); `wake` is called when it becomes non-empty.

    `wake` runs on the worker thread and must only post a message.
    """

    def __init__(self, wake: Callable[[], object]) -> None:
        self._wake = wake
        self._lock = threading.Lock()
        self._items: deque[tuple[int, Any]] = deque()  # merged text is kept as a list of parts
        self._woken = False

    def put(self, turn: int, event: Any) -> None:
        """Add one event (any thread); text right after text of the same turn is merged."""
        from agent.events import TextDelta  # loaded with the first turn, not the first screen

        with self._lock:
            last = self._items[-1] if self._items else None
            if isinstance(event, TextDelta):
                if last is not None and last[0] == turn and isinstance(last[1], list):
                    last[1].append(event.text)
                else:
                    self._items.append((turn, [event.text]))
            else:
                self._items.append((turn, event))
            wake, self._woken = not self._woken, True
        if wake:
            self._wake()

    def take(self) -> list[tuple[int, Any]]:
        """Everything queued so far, oldest first; the next put wakes the reader again."""
        from agent.events import TextDelta

        with self._lock:
            items = list(self._items)
            self._items.clear()
            self._woken = False
        return [(turn, TextDelta("".join(e)) if isinstance(e, list) else e) for turn, e in items]

    @property
    def pending(self) -> bool:
        """Events wait to be taken."""
        with self._lock:
            return bool(self._items)
