"""Commit history (F9): the store's commits, newest first; Enter (or a click) shows one's
changes, Revert stages its inverse.

Reverting stages the inverse changes for review in the staging panel; nothing is written here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Static

from agent.staging.history import CommitEntry, revert_words
from agent.text_plural import counted

SHORT_ID = 8
"""Characters of a commit id in the undo column (a prefix `tabletalk commits` accepts)."""

CommitReader = Callable[[str, Callable[[Any], None]], None]
"""Reads a commit's `(entry, changes)` off the app thread and hands them to the callback."""


def share(room: int, columns: list[list[str]], headers: list[str]) -> list[int]:
    """Widths for columns of free text in `room` cells: each its longest value when they all
    fit, else the room split evenly, a column needing less giving the rest to the others
    (never under its header, or 6)."""
    pairs = zip(columns, headers, strict=True)
    natural = [max(map(len, [*values, header])) for values, header in pairs]
    if sum(natural) <= room:
        return natural
    widths = [max(6, len(header)) for header in headers]
    left = max(0, room - sum(widths))
    wanting = [i for i, n in enumerate(natural) if n > widths[i]]
    while left and wanting:
        each = max(1, left // len(wanting))
        for i in list(wanting):
            give = min(each, natural[i] - widths[i], left)
            widths[i] += give
            left -= give
            if widths[i] >= natural[i]:
                wanting.remove(i)
    return widths


class CommitTable(DataTable[Any]):
    """The commits; one click on a commit opens it, as Enter does (DataTable's own first click
    only moves the cursor there)."""

    async def _on_click(self, event: events.Click) -> None:
        """Runs before DataTable's handler: with the cursor already on the clicked row, that
        handler takes the click as a selection and posts RowSelected."""
        meta = event.style.meta
        row, column = meta.get("row", -1), meta.get("column", -1)
        if row >= 0 and column >= 0 and not meta.get("out_of_bounds", False):
            self.cursor_coordinate = Coordinate(row, column)


class HistoryScreen(ModalScreen[str | None]):
    """Dismisses with the id of the commit to revert (the app asks and stages), or None."""

    BINDINGS = [
        Binding("escape", "close", "Close", id="history.close"),
        Binding("r", "revert", "Revert", id="history.revert"),
    ]

    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > Vertical {
        width: 100; max-width: 98%; height: 80%; border: thick $primary; background: $surface;
        padding: 0 1;
    }
    HistoryScreen DataTable { height: 1fr; }
    HistoryScreen Horizontal { height: auto; margin-top: 1; }
    HistoryScreen Button { margin-right: 1; }
    """

    def __init__(self, entries: list[CommitEntry], read_commit: CommitReader | None = None) -> None:
        super().__init__()
        self.entries = entries
        self.read_commit = read_commit

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Commit history"
            yield Static(id="summary")
            yield CommitTable(id="commits", cursor_type="row", zebra_stripes=True)
            with Horizontal():
                yield Button("Changes (enter)", id="show")
                yield Button("Revert (r)", id="revert", variant="warning")
                yield Button("Close (esc)", id="close")

    def on_mount(self) -> None:
        self._fill()
        summary = (
            f"{counted(len(self.entries), 'commit')}. Enter shows a commit's changes; Revert "
            "stages the inverse changes for review; rows changed since show as conflicts."
            if self.entries
            else "No commits yet: commit staged changes and they appear here."
        )
        self.query_one("#summary", Static).update(summary)
        self.query_one("#revert", Button).disabled = not self.entries
        self.query_one("#show", Button).disabled = not self.entries or self.read_commit is None
        self.query_one("#commits", DataTable).focus()

    def on_resize(self) -> None:
        self._fill()

    def _fill(self) -> None:
        """The rows, with the tables and by columns cut (…) to what the box has room for, so
        a narrow terminal loses the ends of long names rather than whole columns."""
        table = self.query_one("#commits", DataTable)
        cursor = table.cursor_row
        table.clear(columns=True)
        marks = {e.id: revert_words(e, SHORT_ID, "undoes", "undone by") for e in self.entries}
        undo = any(marks.values())  # the column is there only when some commit has a mark
        names = [", ".join(e.tables) for e in self.entries]
        people = [e.committed_by for e in self.entries]
        fixed = ["commit", "when (UTC)", "changes", *["undo"] * undo]
        natural = [
            max(map(len, [e.id for e in self.entries] + ["commit"])),
            19,
            max(map(len, [f"{e.changes:,}" for e in self.entries] + ["changes"])),
            *[max(map(len, [*marks.values(), "undo"]))] * undo,
        ]
        # box: min(100, 98%) wide, less thick border, padding, scrollbar and cell padding
        inner = min(100, self.app.size.width * 98 // 100) - 4 - 2 - 2 * (len(fixed) + 2)
        tables_w, by_w = share(inner - sum(natural), [names, people], ["tables", "by"])
        for label, width in zip(fixed, natural, strict=True):
            table.add_column(label, width=width)
        table.add_column("tables", width=tables_w)
        table.add_column("by", width=by_w)
        for entry, name, person in zip(self.entries, names, people, strict=True):
            mark = [Text(marks[entry.id], style="yellow")] if undo else []
            table.add_row(
                entry.id,
                entry.committed_at.replace("T", " ")[:19],
                f"{entry.changes:,}",
                *mark,
                Text(name, overflow="ellipsis", no_wrap=True),
                Text(person, overflow="ellipsis", no_wrap=True),
                key=entry.id,
            )
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1))

    def selected(self) -> str | None:
        table = self.query_one("#commits", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    @on(Button.Pressed, "#revert")
    def action_revert(self) -> None:
        chosen = self.selected()
        if chosen is not None:
            self.dismiss(chosen)
        else:
            self.notify("No commit to revert yet.", severity="warning", timeout=3)

    @on(DataTable.RowSelected, "#commits")
    @on(Button.Pressed, "#show")
    def show_changes(self) -> None:
        """The selected commit's changes in a modal over this list (read on a worker)."""
        chosen = self.selected()
        if chosen is None or self.read_commit is None:
            return
        from tui.screens.commit_detail import CommitDetailScreen

        def show(found: Any) -> None:
            if self.is_attached:
                entry, changes = found
                self.app.push_screen(CommitDetailScreen(entry, changes))

        self.read_commit(chosen, show)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)

    def entry(self, commit_id: str) -> Any:
        return next((e for e in self.entries if e.id == commit_id), None)
