"""The first tab: the store's tables (Enter opens one) and a few words on how to start."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.key_hints import bound_key
from tui.widgets.tab_area import TabPane
from tui.workers import run_in_thread

COUNT_WIDTH = 17
"""Columns the row counts are right-aligned in when the list is wide enough."""
OPTION_PADDING = 2
"""An option's padding (one column each side)."""
MIN_NAME_WIDTH = 8


def fitted_widths(longest_name: int, longest_count: int, room: int) -> tuple[int, int]:
    """(name column, count column) for a list `room` columns wide: the names' longest and
    COUNT_WIDTH when they fit; else the counts take only their own width, then the names are
    cut to what is left (never under MIN_NAME_WIDTH; a list narrower than that wraps)."""
    if longest_name + 2 + COUNT_WIDTH <= room or room <= 0:
        return longest_name, max(COUNT_WIDTH, longest_count)
    count_width = longest_count
    return max(MIN_NAME_WIDTH, min(longest_name, room - 2 - count_width)), count_width


class HomeTab(TabPane):
    """Lists the tables; choosing one posts OpenTable."""

    class OpenTable(Message):
        def __init__(self, table: str) -> None:
            super().__init__()
            self.table = table

    class CountsLoaded(Message):
        def __init__(self, counts: dict[str, str]) -> None:
            super().__init__()
            self.counts = counts

    def __init__(self, store: Any, keymap: dict[str, str] | None = None) -> None:
        super().__init__("Tables", id="home")
        self.store = store
        self.keymap = keymap or {}
        self.tables: list[str] = []
        self.counts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Tables in {self.store.label}"), classes="home-title")
        try:
            self.tables = list(self.store.list_tables())
        except Exception as exc:  # a broken store still shows the app
            yield Static(Text(f"Could not list tables: {exc}"))
            self.tables = []
        else:
            if not self.tables:
                yield Static(Text(self.store.no_tables_hint), classes="home-empty")
        options = OptionList(*(Option(Text(t), id=t) for t in self.tables), id="table-list")
        options.display = bool(self.tables)
        yield options
        example = " e.g. “which customers ordered most last month?”" if self._example_fits() else ""
        opens = "Enter opens a table. " if self.tables else ""
        yield Static(
            Text(
                f"{opens}Ask the chat on the right,{example or ' in your words.'}\n"
                f"{self._key('help', 'F1')} keys · ctrl+p commands · "
                f"{self._key('staging', 'ctrl+s')} staged changes · "
                f"{self._key('toggle_chat', 'f2')} full-width chat"
            ),
            classes="home-help",
        )

    def _key(self, binding_id: str, default: str) -> str:
        """The key the binding has after `[keys]` (ctrl+p, Textual's palette key, has no id)."""
        return bound_key(self.keymap, binding_id, default)

    def _example_fits(self) -> bool:
        """The store has the demo's customers and orders (the example question fits there)."""
        return {"customers", "orders"} <= set(self.tables)

    def on_mount(self) -> None:
        if self.tables:
            self.query_one(OptionList).highlighted = 0
        run_in_thread(self, self._count_rows, group="home-counts")

    def _count_rows(self) -> None:
        counts = {}
        for table in self.tables:
            try:
                counts[table] = self.store.size_label(table)
            except Exception:
                continue
        self.post_message(self.CountsLoaded(counts))

    def on_home_tab_counts_loaded(self, message: HomeTab.CountsLoaded) -> None:
        """Each table's row count to the right of its name. The prompts are replaced in place:
        the list keeps its lines, highlight and scroll, so it is repainted without a new
        layout of the screen (clearing and re-adding the options laid it out again)."""
        message.stop()
        self.counts = message.counts
        self._show_counts()

    def on_resize(self) -> None:
        if self.counts:
            self._show_counts()

    def _show_counts(self) -> None:
        """Names in a column, counts right-aligned after them, each table on one line: when
        the list is too narrow for the longest name, names are cut (`…`) rather than wrapping
        every count onto a line of its own."""
        options = self.query_one(OptionList)
        room = options.scrollable_content_region.width - OPTION_PADDING
        name_width, count_width = fitted_widths(
            max((len(t) for t in self.tables), default=0),
            max((len(c) for c in self.counts.values()), default=0),
            room,
        )
        for table, count in self.counts.items():
            name = table if len(table) <= name_width else table[: name_width - 1] + "…"
            label = Text(name.ljust(name_width + 2))
            label.append(count.rjust(count_width), style="dim")
            options.replace_option_prompt(table, label)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.OpenTable(event.option.id))
