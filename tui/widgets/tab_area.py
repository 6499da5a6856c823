"""The tab area: a strip of tab labels over the content of the active tab.

It looks and acts like Textual's TabbedContent (labels, the bar under the active label, a
click or left/right while the strip is focused switches tabs, a tab that gets focus becomes
active, closing the active tab activates its right neighbour, else its left one) but draws its
strip as one widget: TabbedContent builds five containers plus a widget per tab for it, which
the first frame had to style and lay out.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.content import Content, ContentType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class TabPane(Widget):
    """One tab's content; `title` is its label in the strip. (Textual's TabPane, without
    loading TabbedContent and Tabs with it.)"""

    DEFAULT_CSS = """
    TabPane {
        height: auto;
    }
    """

    class Focused(Message):
        """Something inside the pane got focus (its tab becomes the active one)."""

        def __init__(self, tab_pane: TabPane) -> None:
            super().__init__()
            self.tab_pane = tab_pane

    def __init__(self, title: ContentType, *children: Widget, id: str | None = None) -> None:
        super().__init__(*children, id=id)
        self.title = Content(title) if isinstance(title, str) else title

    def _on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        self.post_message(self.Focused(self))


class TabLabel:
    """The label of one tab (what `TabArea.get_tab` returns); setting it redraws the strip."""

    def __init__(self, strip: TabStrip, pane_id: str, label: Content) -> None:
        self._strip = strip
        self.id = pane_id
        self._label = label

    @property
    def label(self) -> Content:
        return self._label

    @label.setter
    def label(self, label: Content | str) -> None:
        self._label = Content(label) if isinstance(label, str) else label
        self._strip.refresh()

    @property
    def width(self) -> int:
        """Cells the tab takes in the strip: its label and a cell of padding each side."""
        return self._label.cell_length + 2


class TabStrip(Widget, can_focus=True):
    """The tabs' labels on one line and, under them, the bar that marks the active one."""

    DEFAULT_CSS = """
    TabStrip {
        width: 1fr;
        height: 2;
        pointer: pointer;
        & > .tab-strip--tab { color: $foreground 50%; }
        & > .tab-strip--hover { color: $foreground; }
        & > .tab-strip--active { color: $foreground; }
        & > .tab-strip--bar { color: $block-cursor-background; background: $foreground 10%; }
        &:focus {
            & > .tab-strip--bar { background: $foreground 30%; }
            & > .tab-strip--active {
                text-style: $block-cursor-text-style;
                color: $block-cursor-foreground;
                background: $block-cursor-background;
            }
        }
        &:ansi {
            & > .tab-strip--tab { text-style: dim; }
            & > .tab-strip--hover { text-style: dim; }
            & > .tab-strip--active { text-style: not dim bold; }
            & > .tab-strip--bar { background: $border-blurred; }
        }
    }
    """
    COMPONENT_CLASSES = {
        "tab-strip--tab",
        "tab-strip--hover",
        "tab-strip--active",
        "tab-strip--bar",
    }
    BINDINGS = [
        Binding("left", "previous_tab", "Previous tab", show=False),
        Binding("right", "next_tab", "Next tab", show=False),
    ]
    ALLOW_SELECT = False

    active: reactive[str] = reactive("", init=False)
    hovered: reactive[str] = reactive("", init=False)

    class Chosen(Message):
        """A tab was clicked or chosen with left/right."""

        def __init__(self, pane_id: str) -> None:
            super().__init__()
            self.pane_id = pane_id

    def __init__(self) -> None:
        super().__init__()
        self.tabs: list[TabLabel] = []

    def _spans(self) -> list[tuple[TabLabel, int]]:
        """Each tab with the cell its label starts at (before scrolling)."""
        spans, x = [], 0
        for tab in self.tabs:
            spans.append((tab, x))
            x += tab.width
        return spans

    def _scroll(self) -> int:
        """Cells scrolled off the left: the active tab is centred when the tabs overflow."""
        total = sum(tab.width for tab in self.tabs)
        width = self.size.width
        if total <= width:
            return 0
        for tab, x in self._spans():
            if tab.id == self.active:
                return max(0, min(x + tab.width // 2 - width // 2, total - width))
        return 0

    def render(self) -> Text:
        width = max(self.size.width, 1)
        total = max(sum(tab.width for tab in self.tabs), width)
        labels = Text(end="")
        start = end = 0
        for tab, x in self._spans():
            if tab.id == self.active:
                style = self.get_component_rich_style("tab-strip--active")
                start, end = x + 1, x + tab.width - 1
            elif tab.id == self.hovered:
                style = self.get_component_rich_style("tab-strip--hover")
            else:
                style = self.get_component_rich_style("tab-strip--tab")
            label = tab.label.plain.replace("\n", " ")  # one line, as Textual's tabs show it
            labels.append(Text.assemble(" ", label, " ", style=style))
        labels.append(" " * (total - labels.cell_len))
        bar = self._bar(total, start, end)
        offset = self._scroll()
        line = Text(end="")
        line.append_text(labels[offset : offset + width])
        line.append("\n")
        line.append_text(bar[offset : offset + width])
        return line

    def _bar(self, width: int, start: int, end: int) -> Text:
        """The line under the labels, highlighted from `start` to `end` (as Textual's Bar
        draws it at rest: half a bar either side of the highlight)."""
        colors = self.get_component_rich_style("tab-strip--bar")
        highlight = Style.from_color(colors.color)
        rest = Style.from_color(colors.bgcolor)
        bar = Text(end="")
        if start >= end:
            bar.append("━" * width, style=rest)
            return bar
        bar.append("━" * (start - 1) + "╸", style=rest)
        bar.append("━" * (end - start), style=highlight)
        if end < width:
            bar.append("╺" + "━" * (width - end - 1), style=rest)
        return bar

    def _tab_at(self, x: int) -> TabLabel | None:
        x += self._scroll()
        for tab, left in self._spans():
            if left <= x < left + tab.width:
                return tab
        return None

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.focus()
        tab = self._tab_at(event.x)
        if tab is not None:
            self.post_message(self.Chosen(tab.id))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        tab = self._tab_at(event.x) if event.y == 0 else None
        self.hovered = tab.id if tab is not None else ""

    def on_leave(self, _event: events.Leave) -> None:
        self.hovered = ""

    def action_next_tab(self) -> None:
        self._move(+1)

    def action_previous_tab(self) -> None:
        self._move(-1)

    def _move(self, step: int) -> None:
        """The next tab to the right (or left), wrapping around."""
        ids = [tab.id for tab in self.tabs]
        if not ids:
            return
        index = ids.index(self.active) + step if self.active in ids else (0 if step > 0 else -1)
        self.post_message(self.Chosen(ids[index % len(ids)]))


class TabArea(Widget):
    """Tab panes (TabPane) under the strip of their labels; `active` is the id of the one
    shown, the others are hidden. Panes given while composing are the first tabs; the first
    one is active."""

    DEFAULT_CSS = """
    TabArea {
        height: auto;
        & > TabStrip { dock: top; }
    }
    """

    active: reactive[str] = reactive("", init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._initial: list[TabPane] = []

    def compose_add_child(self, widget: Widget) -> None:
        assert isinstance(widget, TabPane), "a TabArea holds TabPanes"
        self._initial.append(widget)

    @property
    def _strip(self) -> TabStrip:
        return self.get_child_by_type(TabStrip)

    def compose(self) -> ComposeResult:
        strip = TabStrip()
        strip.tabs = [TabLabel(strip, pane.id or "", pane.title) for pane in self._initial]
        first = self._initial[0].id if self._initial else None
        if first:
            strip.set_reactive(TabStrip.active, first)
            self.set_reactive(TabArea.active, first)
        yield strip
        for pane in self._initial:
            pane.display = pane.id == first
        yield from self._initial

    @property
    def active_pane(self) -> TabPane | None:
        if not self.active:
            return None
        return self.get_pane(self.active)

    def get_pane(self, pane_id: str) -> TabPane:
        return self.get_child_by_id(pane_id, TabPane)

    def get_tab(self, pane_id: str) -> TabLabel:
        """The label of the pane's tab (set `.label` to rename it)."""
        for tab in self._strip.tabs:
            if tab.id == pane_id:
                return tab
        raise KeyError(pane_id)

    @property
    def tab_count(self) -> int:
        return len(self._strip.tabs)

    def add_pane(self, pane: TabPane) -> AwaitComplete:
        """Add a tab at the right end (not made active: set `active` for that)."""
        assert pane.id, "a pane needs an id"
        strip = self._strip
        strip.tabs.append(TabLabel(strip, pane.id, pane.title))
        strip.refresh()
        pane.display = False
        return AwaitComplete(self.mount(pane))

    def remove_pane(self, pane_id: str) -> AwaitComplete:
        """Close a tab; when it was the active one, its right neighbour (else its left one)
        becomes active."""
        strip = self._strip
        ids = [tab.id for tab in strip.tabs]
        if pane_id not in ids:
            return AwaitComplete()
        index = ids.index(pane_id)
        del strip.tabs[index]
        strip.refresh()
        removals: list[Awaitable[Any]] = []
        for pane in self.query_children(f"#{pane_id}"):
            removals.append(pane.remove())
        if self.active == pane_id:
            rest = [tab.id for tab in strip.tabs]
            self.active = rest[min(index, len(rest) - 1)] if rest else ""
        return AwaitComplete(*removals)

    def _watch_active(self, active: str) -> None:
        """Show the active pane only (the others keep their state, hidden)."""
        self._strip.active = active
        for pane in self.query_children(TabPane):
            pane.display = pane.id == active

    def on_tab_strip_chosen(self, message: TabStrip.Chosen) -> None:
        message.stop()
        self.active = message.pane_id

    def on_tab_pane_focused(self, message: TabPane.Focused) -> None:
        """Focus moved into a pane (Tab key, a click): its tab becomes the active one."""
        message.stop()
        if message.tab_pane.id:
            self.active = message.tab_pane.id
