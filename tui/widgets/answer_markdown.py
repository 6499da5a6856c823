"""How an answer's Markdown is drawn: Rich Markdown with tables in a grid.

Its own module because Rich's Markdown loads markdown-it (a large import): the app imports it
with the first answer shown, not before its first screen.
"""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import Markdown as RichMarkdown
from rich.markdown import TableElement
from rich.table import Table
from rich.text import Text


class BoxedTable(TableElement):
    """A Markdown table drawn in a grid (Rich's default draws it almost without lines); one
    too wide for the chat is drawn as records, one field per line, so no value is cut."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for table in super().__rich_console__(console, options):
            if isinstance(table, Table):
                if table.row_count and not fits(table, options.max_width):
                    yield as_records(table)
                    continue
                table.box = box.SQUARE
                table.show_lines = True
                table.expand = True
                table.pad_edge = True
                table.collapse_padding = False
            yield table


def fits(table: Table, width: int) -> bool:
    """True when every column gets its longest word whole: a grid narrower than that cuts
    values (`3…` for a revenue figure), which a reader cannot tell from the data."""
    need = 1  # the left border; each column adds its padding (2) and its right border (1)
    for column in table.columns:
        need += 3 + max(_longest_word(cell) for cell in [column.header, *column.cells])
    return need <= width


def _longest_word(cell: RenderableType) -> int:
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return max((cell_len(word) for word in text.split()), default=0)


def as_records(table: Table) -> Table:
    """The table's rows one after another, each field a line `name │ value` (as psql's
    expanded display), records apart by a line; long values wrap."""
    records = Table(box=box.SQUARE, show_header=False, expand=True, collapse_padding=False)
    records.add_column(style="bold", overflow="fold")
    records.add_column(ratio=1, overflow="fold")
    names = [_left(column.header) for column in table.columns]
    rows = list(zip(*(list(column.cells) for column in table.columns), strict=True))
    for number, row in enumerate(rows):
        for field, (name, value) in enumerate(zip(names, row, strict=True)):
            last = field == len(row) - 1 and number < len(rows) - 1
            records.add_row(name, _left(value), end_section=last)
    return records


def _left(cell: RenderableType) -> RenderableType:
    """A cell aligned left: a right-aligned number column reads oddly as `name │ value`."""
    if isinstance(cell, Text):
        cell = cell.copy()
        cell.justify = "left"
    return cell


class AnswerMarkdown(RichMarkdown):
    """Rich Markdown with tables in a grid, for live and saved answers alike."""

    elements = {**RichMarkdown.elements, "table_open": BoxedTable}
