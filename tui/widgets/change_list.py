"""The staging panel's list of changes: one page of them, where moving past either end of the
page asks for the next or previous page, so the keyboard reaches every staged change; the
keyboard arriving puts the cursor on the first change.

A page turn is read on a worker. Keys that arrive meanwhile (a held PageDown) wait in a queue
and are applied, in order, once the page is drawn: each press counts once, against the page it
would have met had it been pressed slowly (not the old page's edge, which would turn again)."""

from __future__ import annotations

from collections import deque

from textual.message import Message
from textual.widgets import OptionList


class ChangeList(OptionList):
    """An OptionList that posts `PageTurn` when the cursor would leave the page, and holds the
    keys that come before that page arrives (`resume` applies them)."""

    class PageTurn(Message):
        """Down past the last change (`step` 1) or up past the first (`step` -1)."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def __init__(self, *, id: str | None = None, compact: bool = False) -> None:
        super().__init__(id=id, compact=compact)
        self.turning = False
        """A PageTurn was posted and its page is not drawn yet: keys wait in `_held`."""
        self._held: deque[str] = deque()
        self._posted = False
        """The PageTurn is on its way to the panel, which has yet to ask for its page."""

    def on_focus(self) -> None:
        """The cursor on the first change when the keyboard arrives without one, so Enter
        opens it (an OptionList starts with no option highlighted)."""
        self.highlight_first()

    def highlight_first(self) -> None:
        """Highlight the first option when none is and it can be chosen (not the empty line)."""
        if self.highlighted is None and self.option_count:
            if not self.get_option_at_index(0).disabled:
                self.highlighted = 0

    def _held_back(self, action: str) -> bool:
        """While a page is being turned to, `action` waits for it (True: it was held)."""
        if self.turning:
            self._held.append(action)
        return self.turning

    def taken(self) -> None:
        """The panel has the PageTurn: the next page it draws is the one turned to."""
        self._posted = False

    def resume(self) -> None:
        """The page asked for is drawn (or none is coming): apply the held keys in order,
        until one turns the page again (the rest wait for that page). A page drawn before
        the panel took the PageTurn is not the one turned to: the keys wait on."""
        if self._posted:
            return
        self.turning = False
        while self._held and not self.turning:
            getattr(self, f"action_{self._held.popleft()}")()

    def _turn(self, step: int) -> None:
        self.turning = self._posted = True
        self.post_message(self.PageTurn(step))

    def _at(self, edge: int) -> bool:
        last = self.option_count - 1
        return self.highlighted is not None and self.highlighted == (last if edge > 0 else 0)

    def action_cursor_down(self) -> None:
        if self._held_back("cursor_down"):
            return
        if self._at(1):
            self._turn(1)
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if self._held_back("cursor_up"):
            return
        if self._at(-1):
            self._turn(-1)
        else:
            super().action_cursor_up()

    def action_page_down(self) -> None:
        if self._held_back("page_down"):
            return
        if self._at(1):
            self._turn(1)
        else:
            super().action_page_down()  # type: ignore[no-untyped-call]

    def action_page_up(self) -> None:
        if self._held_back("page_up"):
            return
        if self._at(-1):
            self._turn(-1)
        else:
            super().action_page_up()  # type: ignore[no-untyped-call]

    def action_first(self) -> None:
        if not self._held_back("first"):
            super().action_first()

    def action_last(self) -> None:
        if not self._held_back("last"):
            super().action_last()

    def action_select(self) -> None:
        """Enter opens the highlighted change: after a page being turned to, one on it."""
        if not self._held_back("select"):
            super().action_select()
