"""A virtual table: draws only the visible rows of a RowSource and fetches pages in a worker.

DataTable keeps every added row in memory and lays them all out; this widget keeps a few pages,
so a table of a million rows opens at once and the scrollbar spans the whole table.
"""

from __future__ import annotations

import json
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from agent.stores.paging import PAGE_SIZE, ColumnSpec, Page, RowSource, blob_label
from tui.terminal_text import grid_text
from tui.workers import run_in_thread

MAX_COLUMN_WIDTH = 40
HEADER_LINES = 2
"""Column names on the first line, their types (dimmed) on the second."""


def key_signature(key: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A key as a comparable value, tolerant of int/str differences between sources."""
    return tuple(sorted((str(k), str(v)) for k, v in key.items()))


def cell_text(value: Any) -> str:
    """One line of plain text for a cell (newlines, tabs and control codes made visible, emoji
    joiners dropped as `grid_text` says, None as ∅): the view draws it as raw Segments, which
    nothing else sanitises."""
    if value is None:
        return "∅"
    if isinstance(value, bytes):
        return blob_label(len(value))
    if isinstance(value, dict | list):  # nested (DynamoDB maps, lists, sets): compact JSON
        return grid_text(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    text = str(value)
    if "\n" in text or "\t" in text or "\r" in text:
        text = text.replace("\r", "").replace("\n", "⏎").replace("\t", " ")
    return grid_text(text)


class TableView(ScrollView, can_focus=True):
    """Rows of one RowSource with a fixed header, a cursor row and staged-change tints."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False, id="table.up"),
        Binding("down", "cursor(1)", "Down", show=False, id="table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table.page_down"),
        Binding("home", "jump(0)", "First row", show=False, id="table.first"),
        Binding("end", "jump(-1)", "Last row", show=False, id="table.last"),
        Binding("left", "scroll_left", "Left", show=False, id="table.left"),
        Binding("right", "scroll_right", "Right", show=False, id="table.right"),
        Binding("enter", "open_row", "Row detail", id="table.row_detail", show=False),
    ]

    COMPONENT_CLASSES = {
        "table-view--header",
        "table-view--cursor",
        "table-view--create",
        "table-view--update",
        "table-view--changed-cell",
        "table-view--delete",
        "table-view--loading",
    }

    DEFAULT_CSS = """
    TableView { height: 1fr; background: $surface; }
    TableView > .table-view--header { text-style: bold; background: $panel; color: $text; }
    TableView > .table-view--cursor { background: $accent 40%; }
    TableView:focus > .table-view--cursor { background: $primary; color: $text; text-style: bold; }
    TableView > .table-view--create { background: $success 25%; }
    TableView > .table-view--update { background: $warning 15%; }
    TableView > .table-view--changed-cell { background: $warning 45%; text-style: bold; }
    TableView > .table-view--delete { background: $error 25%; text-style: strike; }
    TableView > .table-view--loading { color: $text-muted; }
    """

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class RowChosen(Message):
        """The user pressed Enter (or double-clicked) on a row."""

        def __init__(self, view: TableView, values: dict[str, Any], staged: Any | None) -> None:
            super().__init__()
            self.view = view
            self.values = values
            self.staged = staged

    class PageLoaded(Message):
        """A page arrived from the worker thread."""

        def __init__(self, page: Page) -> None:
            super().__init__()
            self.page = page

    class CountLoaded(Message):
        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    def __init__(self, source: RowSource, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.columns: list[ColumnSpec] = list(source.columns)
        self.widths = [
            min(MAX_COLUMN_WIDTH, max(cell_len(self._header(c)), 4)) for c in self.columns
        ]
        self.total_rows: int | None = None
        self._pages: dict[int, Page] = {}
        self._pending: set[int] = set()
        self._counting = False
        self._creates: list[Any] = []
        self._staged: dict[tuple[tuple[str, str], ...], Any] = {}
        self._update_virtual_size()

    @staticmethod
    def _header(column: ColumnSpec) -> str:
        name = cell_text(column.name)
        return f"{name} 🔑" if column.key else name

    # ----- data -------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.request_page(0)

    def _load_count(self) -> None:
        self.post_message(self.CountLoaded(self.source.count()))

    def request_page(self, number: int) -> None:
        """Fetch page `number` in a worker unless it is cached or on its way."""
        if number < 0 or number in self._pages or number in self._pending:
            return
        if self.total_rows is not None and number * PAGE_SIZE >= max(self.total_rows, 1):
            return
        self._pending.add(number)
        run_in_thread(
            self,
            lambda: self.post_message(self.PageLoaded(self.source.page(number))),
            group="pages",
            name=f"page {number}",
        )

    def on_table_view_page_loaded(self, message: TableView.PageLoaded) -> None:
        message.stop()
        page = message.page
        self._pending.discard(page.number)
        self._pages[page.number] = page
        self._adopt_columns(page.columns)
        if len(self._pages) > 40:
            far = max(self._pages, key=lambda n: abs(n - self._cursor_page()))
            self._pages.pop(far, None)
        self._fit_widths(page)
        if self.total_rows is None:  # counting starts once the first rows are on screen
            self._start_count()
        if page.number == 0:
            if self.total_rows is None and len(page.rows) < PAGE_SIZE:
                self.total_rows = len(page.rows)
                self._update_virtual_size()
        self.refresh()

    def on_table_view_count_loaded(self, message: TableView.CountLoaded) -> None:
        self._counting = False
        self.total_rows = message.count
        self._update_virtual_size()
        self.refresh()

    def _adopt_columns(self, columns: list[ColumnSpec] | None) -> None:
        """A source that found more attributes sends its longer column list: add the new
        columns at the right (rows read before it lack them)."""
        if columns is None or len(columns) <= len(self.columns):
            return
        added = columns[len(self.columns) :]
        self.columns = list(columns)
        self.widths += [min(MAX_COLUMN_WIDTH, max(cell_len(self._header(c)), 4)) for c in added]
        self._update_virtual_size()

    def _fit_widths(self, page: Page) -> None:
        """Grow columns to fit this page's values (never shrink: no jitter while scrolling)."""
        for i, column in enumerate(self.columns):
            longest = max(
                (cell_len(cell_text(row[i])) for row in page.rows[:100] if i < len(row)),
                default=0,
            )
            header = max(cell_len(self._header(column)), len(column.type))
            self.widths[i] = min(MAX_COLUMN_WIDTH, max(self.widths[i], header, longest, 4))
        self._update_virtual_size()

    def reload(self) -> None:
        """Re-read the rows (the table changed): drop pages, recount, fetch what is in view."""
        self.source.invalidate()
        self._pages.clear()
        self._pending.clear()
        self._counting = False
        self._start_count()  # the old total stays until the new one arrives (no scroll jump)
        self.request_page(max(0, round(self.scroll_y) - len(self._creates)) // PAGE_SIZE)
        self.refresh()

    def _start_count(self) -> None:
        if not self._counting:
            self._counting = True
            run_in_thread(self, self._load_count, group="count")

    def set_staged(self, changes: list[Any]) -> None:
        """Tint rows with these staged changes (of this table); creates are pinned on top."""
        self._creates = [c for c in changes if c.op == "create"]
        self._staged = {key_signature(c.key): c for c in changes if c.op != "create"}
        self._fit_staged_widths(changes)
        self._update_virtual_size()
        self.refresh()

    def _fit_staged_widths(self, changes: list[Any]) -> None:
        """Grow columns to fit the values staged into them (a staged value wider than every
        stored one was cut with nothing to say so: `archiv` for `archived`)."""
        positions = {column.name: i for i, column in enumerate(self.columns)}
        for change in changes:
            for name, value in (change.values or {}).items():
                i = positions.get(name)
                if i is None or i >= len(self.widths) or self.widths[i] >= MAX_COLUMN_WIDTH:
                    continue
                text = cell_text(value)
                if 2 * len(text) > self.widths[i]:  # else it fits even in double-width cells
                    self.widths[i] = max(self.widths[i], min(MAX_COLUMN_WIDTH, cell_len(text)))

    @property
    def row_count(self) -> int:
        """Rows shown: pinned creates plus the source's rows (known or loaded so far)."""
        loaded = (
            self.total_rows
            if self.total_rows is not None
            else len(self._pages.get(0, Page(0, [], [], [])).rows)
        )
        return len(self._creates) + loaded

    def _update_virtual_size(self) -> None:
        width = sum(self.widths) + 3 * len(self.widths) + 1
        self.virtual_size = Size(width, self.row_count + HEADER_LINES)

    def _cursor_page(self) -> int:
        return max(0, self.cursor_row - len(self._creates)) // PAGE_SIZE

    def row_at(self, index: int) -> tuple[tuple[Any, ...] | None, Any | None]:
        """Values and staged change of display row `index`; values None while loading."""
        if index < len(self._creates):
            change = self._creates[index]
            values = {**change.key, **change.values}
            return tuple(values.get(c.name) for c in self.columns), change
        data_index = index - len(self._creates)
        page = self._pages.get(data_index // PAGE_SIZE)
        if page is None:
            self.request_page(data_index // PAGE_SIZE)
            return None, None
        offset = data_index % PAGE_SIZE
        if offset >= len(page.rows):
            return None, None
        staged = self._staged.get(key_signature(page.keys[offset])) if self._staged else None
        row = page.rows[offset]
        if len(row) < len(self.columns):  # read before later pages added columns
            row = row + (None,) * (len(self.columns) - len(row))
        return row, staged

    def record_at(self, index: int) -> dict[str, Any] | None:
        """The whole row as its source read it (every attribute), when the source sends it."""
        data_index = index - len(self._creates)
        page = self._pages.get(data_index // PAGE_SIZE) if data_index >= 0 else None
        if page is None or page.records is None or data_index % PAGE_SIZE >= len(page.records):
            return None
        return page.records[data_index % PAGE_SIZE]

    # ----- drawing ----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y < HEADER_LINES:
            header = self.get_component_rich_style("table-view--header")
            if y == 0:
                cells = [self._header(c) for c in self.columns]
            else:
                cells = [cell_text(c.type.lower()) for c in self.columns]
                header = header + Style(bold=False, dim=True)
            strip = self._strip(cells, header, [None] * len(cells))
            return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width, header)
        index = scroll_y + y - HEADER_LINES
        base = self.rich_style
        if index >= self.row_count:
            return Strip.blank(width, base)
        values, staged = self.row_at(index)
        if values is None:
            loading = self.get_component_rich_style("table-view--loading")
            return Strip([Segment(set_cell_size(" …", width), loading)])
        style = base
        cell_styles: list[Style | None] = [None] * len(values)
        texts = [cell_text(v) for v in values]
        if staged is not None:
            style = self.get_component_rich_style(f"table-view--{staged.op}")
            if staged.op == "update":
                changed = self.get_component_rich_style("table-view--changed-cell")
                for i, column in enumerate(self.columns):
                    if column.name in staged.values:
                        texts[i] = cell_text(staged.values[column.name])
                        cell_styles[i] = style + changed
        if index == self.cursor_row:
            style = style + self.get_component_rich_style("table-view--cursor")
            cell_styles = [s + style if s else None for s in cell_styles]
        strip = self._strip(texts, style, cell_styles)
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width, style)

    def _strip(self, texts: list[str], style: Style, cell_styles: list[Style | None]) -> Strip:
        segments = [Segment(" ", style)]
        for text, cell_width, cell_style in zip(texts, self.widths, cell_styles, strict=False):
            segments.append(Segment(set_cell_size(text, cell_width), cell_style or style))
            segments.append(Segment(" │ ", style))
        return Strip(segments)

    def watch_cursor_row(self, old: int, new: int) -> None:
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling by wheel or scrollbar takes the cursor along: it stays on a visible row."""
        super().watch_scroll_y(old_value, new_value)
        self._keep_cursor_visible()

    def on_resize(self) -> None:
        self._keep_cursor_visible()

    @property
    def _body_height(self) -> int:
        """Rows that fit under the header, above the horizontal scrollbar when there is one."""
        return max(1, self.scrollable_content_region.height - HEADER_LINES)

    def _visible_rows(self) -> range:
        top = round(self.scroll_y)
        return range(top, top + self._body_height)

    def _keep_cursor_visible(self) -> None:
        visible = self._visible_rows()
        if self.cursor_row in visible or not self.row_count:
            return
        row = visible.start if self.cursor_row < visible.start else visible.stop - 1
        self.cursor_row = max(0, min(self.row_count - 1, row))

    # ----- movement ---------------------------------------------------------------------

    def _move_to(self, row: int) -> None:
        last = max(0, self.row_count - 1)
        row = max(0, min(last, row))
        self.cursor_row = row
        visible = self._body_height
        top = round(self.scroll_y)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + visible:
            self.scroll_to(y=row - visible + 1, animate=False, immediate=True)
        ahead = (row - len(self._creates) + PAGE_SIZE // 2) // PAGE_SIZE
        self.request_page(max(0, ahead))

    def action_cursor(self, delta: int) -> None:
        self._move_to(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor_row + direction * max(1, self._body_height - 1))

    def action_jump(self, where: int) -> None:
        self._move_to(0 if where == 0 else self.row_count - 1)

    def action_open_row(self) -> None:
        """Show the row at the cursor; its values are read whole first when pages cut them."""
        self._keep_cursor_visible()
        values, staged = self.row_at(self.cursor_row)
        if values is None:
            return
        mapping = dict(
            self.record_at(self.cursor_row)
            or {c.name: v for c, v in zip(self.columns, values, strict=False)}
        )
        key = self._key_at(self.cursor_row)
        if key is None:
            self.post_message(self.RowChosen(self, mapping, staged))
            return

        def read_whole() -> None:
            whole = self.source.whole_row(key)
            self.post_message(self.RowChosen(self, whole or mapping, staged))

        run_in_thread(self, read_whole, group="row-detail")

    def _key_at(self, index: int) -> dict[str, Any] | None:
        """The stored row's key at display row `index` (None for a staged create)."""
        data_index = index - len(self._creates)
        page = self._pages.get(data_index // PAGE_SIZE) if data_index >= 0 else None
        if page is None or data_index % PAGE_SIZE >= len(page.keys):
            return None
        return page.keys[data_index % PAGE_SIZE]

    def on_click(self, event: events.Click) -> None:
        if event.y >= HEADER_LINES:
            row = round(self.scroll_y) + event.y - HEADER_LINES
            if row < self.row_count:
                self.cursor_row = row
                if event.chain >= 2:
                    self.action_open_row()
