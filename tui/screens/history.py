"""Commit history (F9): the store's commits, newest first, each with a Revert action.

Reverting stages the inverse changes for review in the staging panel; nothing is written here.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Static

from agent.staging.history import CommitEntry
from agent.text_plural import counted


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

    def __init__(self, entries: list[CommitEntry]) -> None:
        super().__init__()
        self.entries = entries

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Commit history"
            yield Static(id="summary")
            yield DataTable(id="commits", cursor_type="row", zebra_stripes=True)
            with Horizontal():
                yield Button("Revert (r)", id="revert", variant="warning")
                yield Button("Close (esc)", id="close")

    def on_mount(self) -> None:
        table = self.query_one("#commits", DataTable)
        table.add_columns("commit", "when (UTC)", "changes", "tables", "by")
        for entry in self.entries:
            table.add_row(
                entry.id, entry.committed_at.replace("T", " ")[:19], f"{entry.changes:,}",
                Text(", ".join(entry.tables)), Text(entry.committed_by), key=entry.id,
            )
        summary = (
            f"{counted(len(self.entries), 'commit')}. Revert stages the inverse changes for review; "
            "rows changed since show as conflicts."
            if self.entries else "No commits yet: commit staged changes and they appear here."
        )
        self.query_one("#summary", Static).update(summary)
        self.query_one("#revert", Button).disabled = not self.entries
        table.focus()

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

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)

    def entry(self, commit_id: str) -> Any:
        return next((e for e in self.entries if e.id == commit_id), None)
