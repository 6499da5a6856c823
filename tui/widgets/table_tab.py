"""A tab showing one table, query or joined view: a filter line, the virtual table, a status line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Input, Static

from agent.errors import TabletalkError
from agent.stores.filters import example_condition
from agent.stores.paging import RowSource
from agent.text_plural import counted
from tui.widgets.filter_box import FilterBox
from tui.widgets.tab_area import TabArea, TabPane
from tui.widgets.table_view import TableView

SourceFactory = Callable[[str | None], RowSource]
"""Builds the tab's row source for a filter (None: unfiltered)."""


TITLE_WIDTH = 40
"""Characters of a tab's label; a longer title ends in `…` (the tab keeps the whole one)."""


def elide(text: str, width: int = TITLE_WIDTH) -> str:
    """`text` cut to `width` characters, ending in `…` when cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


class TableTab(TabPane):
    """One tab of the tab area. `table` is set when the tab shows a whole (filterable) table."""

    BINDINGS = [Binding("slash", "focus_filter", "Filter", id="table.filter", show=False)]

    DEFAULT_CSS = """
    TableTab { padding: 0; }
    TableTab > #filter { height: 1; border: none; padding: 0 1; background: $boost; }
    TableTab > #filter:focus { background: $primary 20%; }
    TableTab > #filter.-pending { background: $warning 15%; }
    TableTab > #filter.-pending:focus { background: $warning 25%; }
    TableTab > .tab-info { height: 1; color: $text-muted; padding: 0 1; }
    TableTab > .tab-info.-pending { color: $warning; }
    """

    def __init__(
        self,
        title: str,
        source: RowSource,
        *,
        id: str,
        kind: str,
        table: str | None = None,
        make_source: SourceFactory | None = None,
        note: str = "",
        language: str = "SQL",
        condition: str | None = None,
    ) -> None:
        super().__init__(Content(elide(title)), id=id)
        self.language = language
        self.kind = kind
        self.table = table
        self.tab_title = title
        self.make_source = make_source
        self.note = note
        self.condition = condition or ""
        """The filter the rows show ("" for none); the box may hold other text until Enter."""
        self._source = source
        self._staged: list[Any] = []

    def compose(self) -> ComposeResult:
        if self.make_source is not None:
            yield FilterBox(
                self.condition,
                example=example_condition(self._source.columns, self.language),
                language=self.language,
                id="filter",
                compact=True,
            )
        yield TableView(self._source, id="table-view")
        yield Static("", classes="tab-info", markup=False)

    def on_mount(self) -> None:
        self.view.set_staged(self._staged)
        self._update_info()

    @property
    def view(self) -> TableView:
        return self.query_one(TableView)

    def focus_table(self) -> None:
        """Put the keyboard on the rows."""
        self.view.focus()

    def action_focus_filter(self) -> None:
        """`/`: the keyboard to the filter box (a tab without one says so)."""
        boxes = self.query("#filter")
        if boxes:
            boxes.first().focus()
        else:
            self.app.notify("This view has no filter box.", severity="warning", timeout=2)

    @on(Input.Submitted, "#filter")
    async def apply_filter(self, event: Input.Submitted) -> None:
        """Rebuild the view with the typed condition; a bad condition reports and keeps the old rows."""
        event.stop()
        if self.make_source is None:
            return
        condition = event.value.strip() or None
        try:
            source = self.make_source(condition)
            source.page(0)
        except TabletalkError as exc:
            self.app.notify(exc.render(), title=exc.title, severity="error", markup=False)
            self._filter_box.mark_rejected(event.value)
            self._update_info()  # the box keeps the text; the info line says it is not applied
            return
        self.condition = condition or ""
        self._filter_box.mark_applied(condition)
        old = self.view
        self._source.close()
        self._source = source
        new = TableView(source, id="table-view")
        await old.remove()
        await self.mount(new, after=self.query_one("#filter"))
        new.set_staged(self._staged)
        self.query_one("#filter").focus()  # refine the condition again; F3 or Tab to the rows
        self._update_info()
        self._retitle(condition)

    @on(Input.Changed, "#filter")
    def _filter_edited(self, event: Input.Changed) -> None:
        """Typing in the box: the info line says whether the rows show what it says."""
        event.stop()
        if self.query(TableView):  # else on_mount shows it
            self._update_info()

    def on_resize(self, event: events.Resize) -> None:
        self._update_info()  # the not-applied note picks the form that fits

    @property
    def _filter_box(self) -> FilterBox:
        return self.query_one("#filter", FilterBox)

    def _pending_note(self, room: int, rest: str) -> str:
        """The not-applied note ("" while the box shows the applied filter): the longest form
        naming the keys that fits `room` cells with `rest` after it, else the longest that
        fits alone (the keys matter more than the row count)."""
        boxes = self.query("#filter")
        box = boxes.first(FilterBox) if boxes else None
        if box is None or not box.pending:
            return ""
        forms = box.notes()
        if room <= 0:
            return forms[0]
        fits = [f for f in forms[:-1] if len(f) + len(rest) <= room] or [
            f for f in forms if len(f) <= room
        ]
        return fits[0] if fits else forms[-1]

    def _retitle(self, condition: str | None) -> None:
        """The tab's label follows the filter: `orders (total > 1000)`."""
        if self.kind != "table" or not self.table:
            return
        title = self.table if not condition else f"{self.table} ({condition})"
        self.tab_title = title
        tabs = next((a for a in self.ancestors if isinstance(a, TabArea)), None)
        if tabs is not None and self.id:
            tabs.get_tab(self.id).label = Content(elide(title))

    def set_staged(self, changes: list[Any]) -> None:
        """Tint the rows that have staged changes (only changes of this tab's table)."""
        self._staged = [c for c in changes if self.table and c.table == self.table]
        if self.query(TableView):  # else on_mount applies them
            self.view.set_staged(self._staged)
            self._update_info()

    def reload(self) -> None:
        """Show the table as it is now (after a commit)."""
        self.view.reload()
        self._update_info()

    def on_table_view_count_loaded(self, message: TableView.CountLoaded) -> None:
        self.call_after_refresh(self._update_info)

    def _update_info(self) -> None:
        view = self.view
        rows = view.total_rows
        total = "counting…" if rows is None else counted(rows, "row")
        parts = [total]
        if self._staged:  # counted over the table: a filter may hide some of them
            where = "here" if self.tab_title == self.table else f"in {self.table}"
            parts.append(f"{len(self._staged):,} staged {where}")
        if self._source.truncated:
            parts.append("first rows only")
        if self.note:
            parts.append(self.note)
        parts.append("enter: row detail")
        info = self.query_one(".tab-info", Static)
        note = self._pending_note(info.content_region.width, f" · {total}")
        if note:
            parts.insert(0, note)
        info.set_class(bool(note), "-pending")
        if self.make_source is not None:
            self._filter_box.set_class(bool(note), "-pending")
        info.update(Text(" · ".join(_fitting(parts, info.content_region.width))))

    def on_unmount(self) -> None:
        self._source.close()


def _fitting(parts: list[str], room: int) -> list[str]:
    """The first of `parts` and those after it that fit `room` cells whole, joined by ` · `
    (none is cut mid-word at the edge); all of them before the line is laid out."""
    if room <= 0:
        return parts
    kept = parts[:1]
    used = len(kept[0]) if kept else 0
    for part in parts[1:]:
        if used + 3 + len(part) > room:
            break
        kept.append(part)
        used += 3 + len(part)
    return kept
