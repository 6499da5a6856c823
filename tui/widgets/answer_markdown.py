"""How an answer's Markdown is drawn: Rich Markdown with tables in a grid.

Its own module because Rich's Markdown loads markdown-it (a large import): the app imports it
with the first answer shown, not before its first screen.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown as RichMarkdown
from rich.markdown import TableElement
from rich.table import Table


class BoxedTable(TableElement):
    """A Markdown table drawn in a grid (Rich's default draws it almost without lines)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for table in super().__rich_console__(console, options):
            if isinstance(table, Table):
                table.box = box.SQUARE
                table.show_lines = True
                table.expand = True
                table.pad_edge = True
                table.collapse_padding = False
            yield table


class AnswerMarkdown(RichMarkdown):
    """Rich Markdown with tables in a grid, for live and saved answers alike."""

    elements = {**RichMarkdown.elements, "table_open": BoxedTable}
