"""File tools: the conversation's attachments, and exports of query results to CSV or JSON."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from pydantic import Field

from agent.tools.base import ToolContext, ToolFailure, ToolImpl, ToolInput, json_value
from agent.tools.read_tools import NoInput

MAX_EXPORT_ROWS = 100_000


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
        description="file path relative to the working directory, e.g. exports/orders.csv"
    )
    overwrite: bool = Field(False, description="true to replace an existing file")


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


def export_target(ctx: ToolContext, raw: str, overwrite: bool) -> Path:
    """The resolved export path: inside export_dir, parent existing, not clobbering a file."""
    relative = Path(raw.strip()).expanduser()
    base = ctx.export_dir.resolve()
    if relative.is_absolute():
        raise ToolFailure(
            f"path must be relative to the working directory ({base}), not absolute",
            f"use a relative path, e.g. {relative.name or 'export.csv'}",
        )
    target = (base / relative).resolve()
    if not target.is_relative_to(base):
        raise ToolFailure(
            "path leaves the working directory",
            f"use a path inside {base}, e.g. {relative.name or 'export.csv'}",
        )
    if not target.parent.is_dir():
        raise ToolFailure(
            f"folder {target.parent.relative_to(base) or '.'} does not exist",
            f"write to an existing folder (or to the working directory itself), e.g. {target.name}",
        )
    if target.is_dir():
        raise ToolFailure(f"{raw} is a folder", "give a file name, e.g. export.csv")
    if target.exists() and not overwrite:
        raise ToolFailure(
            f"{relative} already exists",
            "choose another file name, or pass overwrite=true if the user wants it replaced",
        )
    return target


def _export(ctx: ToolContext, args: ExportInput, fmt: str) -> dict[str, Any]:
    target = export_target(ctx, args.path, args.overwrite)
    result = ctx.store.query(args.query, limit=MAX_EXPORT_ROWS)
    rows = [{k: _plain(v) for k, v in row.items()} for row in result.rows]
    tmp = target.with_name(f".{target.name}.tmp")
    if fmt == "csv":
        with tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=result.columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    else:
        tmp.write_text(
            json.dumps(rows, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
        )
    tmp.replace(target)
    out: dict[str, Any] = {
        "path": str(target),
        "rows": len(rows),
        "columns": result.columns,
        "bytes": target.stat().st_size,
    }
    if result.truncated:
        why = " (the 8 MB limit of one read)" if result.over_budget else ""
        out["truncated"] = f"only the first {len(rows)} rows were written{why}"
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return json_value(value)[0]
    return value


def export_csv(ctx: ToolContext, args: ExportInput) -> dict[str, Any]:
    """exportCsv: write a read-only query's rows to a CSV file."""
    return _export(ctx, args, "csv")


def export_json(ctx: ToolContext, args: ExportInput) -> dict[str, Any]:
    """exportJson: write a read-only query's rows to a JSON file (a list of objects)."""
    return _export(ctx, args, "json")


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
        ExportInput,
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
