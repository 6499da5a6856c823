"""The chat's scrolling message list, and the keyboard's way to its newest chip or tool row."""

from __future__ import annotations

from textual.containers import VerticalScroll


class ChatLog(VerticalScroll):
    """The scrolling message list; anchored to the bottom unless the user scrolls up."""

    DEFAULT_CSS = "ChatLog { height: 1fr; padding: 0 1 0 0; scrollbar-size-vertical: 1; }"

    def on_mount(self) -> None:
        self.anchor()

    def focus_latest(self, kind: str) -> None:
        """Focus the newest chip or answer choice (`chip`) or tool row (`tool`) in the log;
        when one already has focus, the one before it."""
        selector = "ToolLine CollapsibleTitle" if kind == "tool" else "ChipButton, AnswerChip"
        items = [w for w in self.query(selector) if w.focusable]
        if not items:
            what = "tool row" if kind == "tool" else "chip or choice"
            self.app.notify(f"No {what} in this chat yet.", timeout=2)
            return
        focused = self.app.focused
        if focused in items:
            target = items[max(items.index(focused) - 1, 0)]
        else:  # the first of the newest row of chips (an ask's first choice)
            target = next(w for w in items if w.parent is items[-1].parent)
        target.focus()
        self.scroll_to_widget(target, animate=False)
