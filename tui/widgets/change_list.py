"""The staging panel's list of changes: one page of them, where moving past either end of the
page asks for the next or previous page, so the keyboard reaches every staged change; the
keyboard arriving puts the cursor on the first change."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import OptionList


class ChangeList(OptionList):
    """An OptionList that posts `PageTurn` when the cursor would leave the page."""

    class PageTurn(Message):
        """Down past the last change (`step` 1) or up past the first (`step` -1)."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def on_focus(self) -> None:
        """The cursor on the first change when the keyboard arrives without one, so Enter
        opens it (an OptionList starts with no option highlighted)."""
        self.highlight_first()

    def highlight_first(self) -> None:
        """Highlight the first option when none is and it can be chosen (not the empty line)."""
        if self.highlighted is None and self.option_count:
            if not self.get_option_at_index(0).disabled:
                self.highlighted = 0

    def _at(self, edge: int) -> bool:
        last = self.option_count - 1
        return self.highlighted is not None and self.highlighted == (last if edge > 0 else 0)

    def action_cursor_down(self) -> None:
        if self._at(1):
            self.post_message(self.PageTurn(1))
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if self._at(-1):
            self.post_message(self.PageTurn(-1))
        else:
            super().action_cursor_up()

    def action_page_down(self) -> None:
        if self._at(1):
            self.post_message(self.PageTurn(1))
        else:
            super().action_page_down()  # type: ignore[no-untyped-call]

    def action_page_up(self) -> None:
        if self._at(-1):
            self.post_message(self.PageTurn(-1))
        else:
            super().action_page_up()  # type: ignore[no-untyped-call]
