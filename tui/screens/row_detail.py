"""A modal with every column of one row, and the staged new values beside the old ones."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from agent.stores.paging import blob_label

DETAIL_CHARS = 100_000
"""Characters of one value the detail draws (a longer one ends with how much more it holds)."""


NAME_WIDTH = 40
"""Columns of the name column at most (a longer name ends with …)."""


def detail_text(value: Any) -> str:
    """A value in full up to DETAIL_CHARS: ∅ for null, a blob as its size and first bytes,
    nested values (maps, lists, sets) as indented JSON."""
    if value is None:
        return "∅"
    if isinstance(value, bytes):
        head = value[:32].hex(" ")
        return f"{blob_label(len(value))} {head}{' …' if len(value) > 32 else ''}"
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    else:
        text = str(value)
    if len(text) > DETAIL_CHARS:
        more = len(text) - DETAIL_CHARS
        return f"{text[:DETAIL_CHARS]}… ({more:,} more characters: export the row to read it all)"
    return text


class RowDetailScreen(ModalScreen[None]):
    """Shows one row, column by column; Esc or q closes it."""

    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close", id="row_detail.close")]

    DEFAULT_CSS = """
    RowDetailScreen { align: center middle; }
    RowDetailScreen > VerticalScroll {
        width: 80%; max-width: 110; height: auto; max-height: 85%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, title: str, values: dict[str, Any], staged: Any | None) -> None:
        super().__init__()
        self.row_title = title
        self.values = values
        self.staged = staged

    def compose(self) -> ComposeResult:
        grid = Table.grid(padding=(0, 2))
        # A name cut at NAME_WIDTH: one very long column name must not push every value out.
        grid.add_column(style="bold", no_wrap=True, max_width=NAME_WIDTH, overflow="ellipsis")
        grid.add_column(overflow="fold")
        staged = self.staged
        new_values = dict(staged.values) if staged is not None else {}
        for name, value in self.values.items():
            cell = Text(detail_text(value))
            if staged is not None and name in new_values and staged.op == "update":
                new = detail_text(new_values[name])
                cell = Text.assemble(cell, (" → ", "dim"), (new, "bold yellow"))
            grid.add_row(Text(name), cell)
        if staged is not None and staged.op == "update":  # attributes the update adds
            for name in sorted(new_values.keys() - self.values.keys()):
                grid.add_row(
                    Text(name),
                    Text.assemble(("∅ → ", "dim"), (detail_text(new_values[name]), "bold yellow")),
                )
        with VerticalScroll() as scroll:
            scroll.border_title = escape(self.row_title)
            if self.staged is not None:
                op = self.staged.op
                colour = {"create": "green", "update": "yellow", "delete": "red"}.get(op, "")
                yield Static(Text(f"staged {op} (review it in the staging panel)", style=colour))
            yield Static(grid)
            yield Static(Text("esc to close", style="dim"))
