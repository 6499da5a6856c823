"""The chat's scrolling message list: a saved conversation's items (the newest at once, the
earlier ones on demand), and the keyboard's way to its newest chip or tool row."""

from __future__ import annotations

from typing import Any

from textual import events, on
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, TextArea

RECENT_ITEMS = 60
"""Items of a resumed conversation built at once; older ones wait behind a button."""


def newest_start(units: list[Any], budget: int = RECENT_ITEMS) -> int:
    """Where the newest units begin that build at most `budget` items (a group line builds
    a line per call, so it counts its calls); at least one unit."""
    at, built = len(units), 0
    while at > 0:
        size = len(units[at - 1]) if isinstance(units[at - 1], list) else 1
        if built and built + size > budget:
            break
        built += size
        at -= 1
    return at


class ChatLog(VerticalScroll):
    """The scrolling message list; anchored to the bottom unless the user scrolls up.

    Anchored, new text keeps the end in view; scrolled up (keys, wheel, scrollbar), the view
    stays where it is while an answer streams, and follows again once back at the end
    (Textual's anchor: released by a scroll, restored at the bottom).
    """

    DEFAULT_CSS = """
    ChatLog { height: 1fr; padding: 0 1 0 0; scrollbar-size-vertical: 1; }
    ChatLog:focus { background: $boost; }
    """

    _hidden_items: list[Any] = []
    """A resumed conversation's items (or runs of one tool's calls) not built yet, the oldest
    first."""

    class Scrolled(Message):
        """The view moved off its end (`up`: new text no longer shows) or back to it."""

        def __init__(self, up: bool) -> None:
            super().__init__()
            self.up = up

    _was_up = False

    def on_mount(self) -> None:
        self.anchor()

    @property
    def scrolled_up(self) -> bool:
        """Scrolled away from the end by the person: new text arrives out of view."""
        return self._anchored and self._anchor_released

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        up = self.scrolled_up
        if up != self._was_up:
            self._was_up = up
            self.post_message(self.Scrolled(up))

    def on_key(self, event: events.Key) -> None:
        """A character typed on the log or a line in it (Tab from a table lands on the log)
        goes to the message box, focused at once for the keys queued behind it: it was
        dropped (chips and lines answer Enter, not characters)."""
        if not (event.is_printable and event.character):
            return
        if "alt+" in event.key or "ctrl+" in event.key:  # ESC t reads as alt+t, "t"
            return
        composer = self.screen.query_one("#composer", TextArea)
        event.stop()
        event.prevent_default()
        self.app.set_focus(composer)
        composer.insert(event.character)

    async def show_items(self, items: list[dict[str, Any]], empty: Widget) -> None:
        """Replace the log with a saved conversation's items, or `empty` when it has none.

        Only the newest RECENT_ITEMS are built; a button above them builds earlier ones on
        demand, so a long conversation opens fast and stays light.
        """
        from tui.widgets.tool_group import group_items, unit_widget  # with the first item shown

        await self.remove_children()
        units = group_items(items)  # a run of one tool's calls is one group line
        at = newest_start(units)
        self._hidden_items = list(units[:at])
        widgets: list[Widget] = [unit_widget(unit) for unit in units[at:]]
        if self._hidden_items:
            widgets.insert(0, self._earlier_button())
        if not items:
            widgets.append(empty)
        if widgets:
            await self.mount_all(widgets)
        self.scroll_end(animate=False)
        self.anchor()

    def _earlier_button(self) -> Button:
        hidden = len(self._hidden_items)
        batch = hidden - newest_start(self._hidden_items)
        return Button(
            Content(f"Show {batch} earlier of {hidden}"),
            id="show-earlier",
            compact=True,
        )

    @on(Button.Pressed, "#show-earlier")
    async def _show_earlier(self, event: Button.Pressed) -> None:
        from tui.widgets.tool_group import unit_widget

        event.stop()
        at = newest_start(self._hidden_items)
        batch = self._hidden_items[at:]
        self._hidden_items = self._hidden_items[:at]
        await event.button.remove()
        widgets: list[Widget] = [unit_widget(unit) for unit in batch]
        if self._hidden_items:
            widgets.insert(0, self._earlier_button())
        await self.mount_all(widgets, before=0 if self.children else None)

    def scroll_by_key(self, where: str) -> None:
        """`page_up` / `page_down` one page, `top`, or `end` (which follows new text again),
        at once: a key pressed again pages on from where this one left the view."""
        page = self.scrollable_content_region.height
        target = {"page_up": self.scroll_y - page, "page_down": self.scroll_y + page}.get(where, 0)
        if where == "end" or target >= self.max_scroll_y:
            # Not scroll_to: at the end already it would release the anchor without moving,
            # and the view would stop following the answer while showing its end.
            self.scroll_end(animate=False, immediate=True)
            return
        if where == "page_down" or self.scroll_y > 0:  # up at the top: nothing moves
            self.scroll_to(y=max(target, 0), animate=False, immediate=True)

    def focus_latest(self, kind: str) -> None:
        """Focus the newest chip or answer choice (`chip`) or tool row (`tool`) in the log;
        when one already has focus, the one before it. A tool row is a call's line or a group
        line; the lines inside a folded group are skipped."""
        tools = "ToolLine > CollapsibleTitle, ToolGroup > CollapsibleTitle"
        selector = tools if kind == "tool" else "ChipButton, AnswerChip"
        items = [w for w in self.query(selector) if w.focusable and self._shown(w)]
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

    def _shown(self, widget: Widget) -> bool:
        """Whether `widget` is on show: itself displayed, and not inside a folded Collapsible
        (a collapsible's own title shows when it is folded)."""
        if not widget.display:
            return False
        node = widget.parent
        while node is not None and node is not self:
            if not node.display:  # a folded Collapsible hides its Contents
                return False
            node = node.parent
        return True
