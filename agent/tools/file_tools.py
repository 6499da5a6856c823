"""File tools: the conversation's attachments, and exports of query results to CSV or JSON."""

from __future__ import annotations

import csv
import json
from contextlib import closing
from typing import Any, BinaryIO

from pydantic import Field

from agent.text_plural import counted, noun
from agent.tools.base import ToolContext, ToolFailure, ToolImpl, ToolInput, json_value
from agent.tools.export_files import ExportTarget, export_target, free_name, write_file
from agent.tools.read_tools import NoInput

MAX_EXPORT_ROWS = 100_000
MAX_EXPORT_BYTES = 1024 * 2**20
"""An export stops after about this many bytes (and says so)."""
EXPORT_BATCH_ROWS = 200
EXPORT_TIMEOUT_S = 300.0


class ReadAttachmentInput(ToolInput):
    """A page of one attachment."""

    attachment: str = Field(
        description="attachment id (e.g. att1) or file name, see listAttachments"
    )
    offset: int = Field(0, ge=0, description="first line/row/page to return, 0-based")
    limit: int | None = Field(
        None, ge=1, le=1000, description="how many lines (text), rows (CSV/JSON) or pages (PDF)"
    )
    as_text: bool = Field(False, description="true to read a CSV/JSON file as plain lines")


class ExportInput(ToolInput):
    """Query results to a file."""

    query: str = Field(description="one read-only SELECT whose rows are written", min_length=1)
    path: str = Field(
        description="file path relative to the working directory; a bare name goes to its "
        "exports/ folder, e.g. orders.csv"
    )
    overwrite: bool = Field(
        False, description="true to replace an existing file; the user is asked to confirm"
    )


class CsvExportInput(ExportInput):
    """Query results to a CSV file."""

    keep_formulas: bool = Field(
        False,
        description="true to write text cells starting with = + - @ exactly; by default they "
        "get a leading ' so a spreadsheet shows them instead of running them as formulas",
    )


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a CSV cell as a formula (OWASP's CSV injection list): a
hostile cell such as `=HYPERLINK(...)` would run when the file is opened."""


def defused(value: Any) -> tuple[Any, bool]:
    """A CSV cell a spreadsheet shows as text (`'=1+1`), and whether it had to change;
    numbers stay numbers (-5 is not text)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value, True
    return value, False


def list_attachments(ctx: ToolContext, _: NoInput) -> dict[str, Any]:
    """listAttachments: the conversation's files."""
    items = [{"id": a.id, "name": a.name, "kind": a.kind, "size": a.size} for a in ctx.attachments]
    out: dict[str, Any] = {"attachments": items}
    if not items:
        out["message"] = "No files are attached to this conversation."
    return out


def read_attachment(ctx: ToolContext, args: ReadAttachmentInput) -> dict[str, Any]:
    """readAttachment: one page of lines, rows or PDF pages of an attachment."""
    return ctx.attachments.read(args.attachment, args.offset, args.limit, args.as_text)


def _replace_allowed(ctx: ToolContext, tool: str, args: ExportInput, target: ExportTarget) -> bool:
    """Whether the existing target may be replaced: the model asked, and the person said yes."""
    if not target.exists:
        return False
    other = free_name(target)
    if not args.overwrite:
        raise ToolFailure(
            f"{target.shown} already exists",
            f"write to a new name (e.g. {other}), or pass overwrite=true if the user wants it "
            "replaced; they will be asked to confirm",
        )
    if ctx.origin.startswith("mcp:"):
        raise ToolFailure(
            f"{target.shown} already exists, and an MCP client cannot replace files",
            f"write to a new file name, e.g. {other}",
        )
    answer = ctx.confirm(
        tool,
        args.model_dump(),
        f"Replace the existing file {target.path}? Its contents will be lost.",
        "export",
    )
    if answer == "nobody":
        raise ToolFailure(
            f"{target.shown} already exists, and replacing a file needs the user's yes in a "
            "prompt; there is no terminal to ask",
            f"write to a new file name, e.g. {other}",
        )
    if answer == "no":
        raise ToolFailure(
            f"the user chose not to replace {target.shown}; it was left as it is",
            f"write to a new file name (e.g. {other}), or ask the user what they want",
        )
    return True


class _Sink:
    """A text stream onto the export's binary temp file that counts the bytes written."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.bytes = 0

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "replace")
        self.raw.write(data)
        self.bytes += len(data)
        return len(text)


def _export(ctx: ToolContext, tool: str, args: ExportInput, fmt: str) -> dict[str, Any]:
    target = export_target(ctx, args.path, fmt)
    replace = _replace_allowed(ctx, tool, args, target)

    def write(raw: BinaryIO) -> dict[str, Any]:
        sink = _Sink(raw)
        writer: Any = None
        columns: list[str] = []
        written, cut, defused_cells = 0, "", 0
        guard = fmt == "csv" and not getattr(args, "keep_formulas", False)
        batches = ctx.store.query_batches(
            args.query, batch_size=EXPORT_BATCH_ROWS, timeout_s=EXPORT_TIMEOUT_S
        )
        with closing(batches):
            for batch in batches:
                if writer is None:
                    columns = batch.columns
                    writer = _CsvRows(sink, columns) if fmt == "csv" else _JsonRows(sink)
                for row in batch.rows:
                    if written >= MAX_EXPORT_ROWS:
                        cut = f"only the first {MAX_EXPORT_ROWS} rows were written (the limit)"
                    elif sink.bytes >= MAX_EXPORT_BYTES:
                        cut = (
                            f"only the first {counted(written, 'row')} {noun(written, 'was', 'were')} written: the export stops at "
                            f"{MAX_EXPORT_BYTES // 2**20} MB; narrow the query (fewer columns "
                            "or a WHERE condition) or split it into several files"
                        )
                    if cut:
                        break
                    cells = {k: _plain(v, fmt) for k, v in row.items()}
                    if guard:
                        for k, v in cells.items():
                            cells[k], changed = defused(v)
                            defused_cells += changed
                    writer.row(cells)
                    written += 1
                if cut:
                    break
        writer.end()
        return {
            "rows": written,
            "columns": columns,
            "bytes": sink.bytes,
            "cut": cut,
            "defused": defused_cells,
        }

    done = write_file(target, replace, write)
    out: dict[str, Any] = {
        "path": str(target.path),
        "rows": done["rows"],
        "columns": done["columns"],
        "bytes": done["bytes"],
    }
    if replace:
        out["replaced"] = "the user confirmed replacing the existing file"
    if done["cut"]:
        out["truncated"] = done["cut"]
    if done["defused"]:
        n = done["defused"]
        out["formulas"] = (
            f"{counted(n, 'text cell')} starting with = + - or @ {noun(n, 'was', 'were')} "
            "written with a leading ' so a spreadsheet shows them instead of running them as "
            "formulas; tell the user, and export again with keep_formulas true only if they "
            "want the cells exactly as stored (and trust them)"
        )
    return out


class _CsvRows:
    """Writes a header, then one CSV line per row."""

    def __init__(self, sink: _Sink, columns: list[str]) -> None:
        self.writer = csv.DictWriter(sink, fieldnames=columns, extrasaction="ignore")
        self.writer.writeheader()

    def row(self, row: dict[str, Any]) -> None:
        self.writer.writerow(row)

    def end(self) -> None:
        pass


class _JsonRows:
    """Writes a JSON list of objects, one object per line."""

    def __init__(self, sink: _Sink) -> None:
        self.sink = sink
        self.first = True
        sink.write("[")

    def row(self, row: dict[str, Any]) -> None:
        self.sink.write("\n  " if self.first else ",\n  ")
        self.sink.write(json.dumps(row, ensure_ascii=False, default=str))
        self.first = False

    def end(self) -> None:
        self.sink.write("]\n" if self.first else "\n]\n")


def _plain(value: Any, fmt: str) -> Any:
    """A value as the file format takes it: bytes as base64 text; in CSV, nested values (a
    DynamoDB map, list or set) as JSON rather than Python's repr."""
    if isinstance(value, bytes | bytearray | memoryview):
        return json_value(value)[0]
    if fmt == "csv" and isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


def export_csv(ctx: ToolContext, args: CsvExportInput) -> dict[str, Any]:
    """exportCsv: write a read-only query's rows to a CSV file."""
    return _export(ctx, "exportCsv", args, "csv")


def export_json(ctx: ToolContext, args: ExportInput) -> dict[str, Any]:
    """exportJson: write a read-only query's rows to a JSON file (a list of objects)."""
    return _export(ctx, "exportJson", args, "json")


TOOLS = [
    ToolImpl("listAttachments", NoInput, list_attachments, {}),
    ToolImpl(
        "readAttachment",
        ReadAttachmentInput,
        read_attachment,
        {"attachment": "att1", "offset": 0, "limit": 50},
    ),
    ToolImpl(
        "exportCsv",
        CsvExportInput,
        export_csv,
        {"query": "SELECT * FROM orders WHERE status = 'pending'", "path": "pending_orders.csv"},
    ),
    ToolImpl(
        "exportJson",
        ExportInput,
        export_json,
        {"query": "SELECT * FROM orders WHERE status = 'pending'", "path": "pending_orders.json"},
    ),
]
