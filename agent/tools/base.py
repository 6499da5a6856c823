"""What every tool implementation shares: its context, its failure type and result helpers."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, model_validator

from agent.errors import UnknownTableError

# Re-exported: the tools import their context from here.
from agent.tools.context import SearchPort as SearchPort
from agent.tools.context import ToolContext as ToolContext
from agent.tools.context import local_now as local_now

if TYPE_CHECKING:
    from agent.stores.base import TableInfo

MAX_CELL_CHARS = 500
"""Longer cell text is cut in tool results (and the result says so)."""


class ToolFailure(Exception):
    """A call the tool refuses; becomes the error result `{"error": message, "fix": fix}`,
    with a `chip` for the person when the fix is one they can click (see `Effect`)."""

    def __init__(self, message: str, fix: str, chip: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.chip = chip


@dataclass(frozen=True)
class ToolImpl:
    """One tool: its catalog name, its input model (schema + validation) and its behaviour.

    `example` is a valid input, shown to the model whenever its call fails validation.
    """

    name: str
    input_model: type[BaseModel]
    run: Callable[[ToolContext, Any], dict[str, Any]]
    example: dict[str, Any] = field(default_factory=dict)


def require_table(ctx: ToolContext, table: str) -> TableInfo:
    """Describe `table`, accepting a unique case-insensitive match; fail with the table list."""
    tables = ctx.store.list_tables()
    name = table if table in tables else None
    if name is None:
        folded = [t for t in tables if t.lower() == table.strip().lower()]
        name = folded[0] if len(folded) == 1 else None
    if name is None:
        raise ToolFailure(
            f"unknown table '{table}'",
            f"use one of the tables of this store: {', '.join(tables) or '(none)'}",
        )
    try:
        return ctx.store.describe_table(name)
    except UnknownTableError as exc:  # vanished between the two calls
        raise ToolFailure(exc.message, "call listTables to see the tables") from exc


def column_names(info: TableInfo) -> list[str]:
    """The column names of a table, in table order."""
    return [c.name for c in info.columns]


def require_columns(info: TableInfo, columns: list[str] | tuple[str, ...], what: str) -> list[str]:
    """The columns' real names (matched case-insensitively, as SQL does); fail naming unknown
    ones and listing the real ones (saves a describeTable call)."""
    known = column_names(info) + (
        ["rowid"] if info.rowid_key and "rowid" not in column_names(info) else []
    )
    by_lower = {c.lower(): c for c in reversed(known)}
    found = [c if c in known else by_lower.get(c.lower()) for c in columns]
    unknown = [c for c, real in zip(columns, found, strict=True) if real is None]
    if unknown:
        names = ", ".join(f"'{c}'" for c in unknown)
        raise ToolFailure(
            f"unknown column{'s' if len(unknown) > 1 else ''} {names} in {what} for table '{info.name}'",
            f"columns of {info.name}: {', '.join(column_names(info))}",
        )
    return [c for c in found if c is not None]


def require_attributes(
    ctx: ToolContext, info: TableInfo, columns: list[str], what: str
) -> list[str]:
    """`require_columns`, except on a store whose items take any attribute (DynamoDB: the
    columns are only those seen in a sample), where a name not seen is taken as given."""
    if ctx.store.value_checker is None:
        return require_columns(info, columns, what)
    by_lower = {c.lower(): c for c in reversed(column_names(info))}
    known = column_names(info)
    return [c if c in known else by_lower.get(c.lower(), c) for c in columns]


def json_value(value: Any) -> tuple[Any, bool]:
    """A cell as JSON-ready data, cut to MAX_CELL_CHARS; the flag says whether it was cut."""
    if value is None or isinstance(value, bool | int | float):
        return value, False
    if isinstance(value, Decimal):
        return (int(value) if value == value.to_integral_value() else float(value)), False
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        return f"<{len(raw)} bytes: {base64.b64encode(raw[:48]).decode()}…>", len(raw) > 48
    if isinstance(value, datetime | date | time):
        return value.isoformat(), False
    if isinstance(value, dict):
        cut = False
        out = {}
        for k, v in value.items():
            out[str(k)], c = json_value(v)
            cut = cut or c
        return out, cut
    if isinstance(value, list | tuple | set):
        cut = False
        items = []
        for v in value:
            item, c = json_value(v)
            items.append(item)
            cut = cut or c
        return items, cut
    text = value if isinstance(value, str) else str(value)
    if len(text) > MAX_CELL_CHARS:
        return text[:MAX_CELL_CHARS] + "…", True
    return text, False


def compact_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Rows as JSON-ready dicts with long cells cut; the flag says whether any cell was cut."""
    out: list[dict[str, Any]] = []
    cut_any = False
    for row in rows:
        clean: dict[str, Any] = {}
        for key, value in row.items():
            clean[str(key)], cut = json_value(value)
            cut_any = cut_any or cut
        out.append(clean)
    return out, cut_any


CUT_NOTE = f"Cells longer than {MAX_CELL_CHARS} characters were cut (ending in …)."


def strip_where(condition: str | None) -> str | None:
    """A filter condition without a leading WHERE keyword; None when blank."""
    if condition is None:
        return None
    text = condition.strip().rstrip(";").strip()
    if text[:6].lower() == "where ":
        text = text[6:].strip()
    return text or None


def is_select(text: str) -> bool:
    """Whether `text` reads like a full SELECT/WITH statement rather than a condition."""
    head = text.lstrip("( \n\t").split(None, 1)
    return bool(head) and head[0].lower() in {"select", "with"}


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(data: Any, path: str = "") -> str | None:
    """Where in a JSON-like value a string (or a key) holds a lone surrogate, else None.

    Such text is not valid Unicode: it cannot be written to a file, SQLite or a log as UTF-8.
    """
    if isinstance(data, str):
        return path or "(input)" if _LONE_SURROGATE.search(data) else None
    if isinstance(data, dict):
        for key, value in data.items():
            name = str(key)
            where = f"{path}.{name}" if path else name
            if _LONE_SURROGATE.search(name):
                return where.encode("utf-8", "backslashreplace").decode("ascii")
            found = lone_surrogate_path(value, where)
            if found:
                return found
    if isinstance(data, list | tuple):
        for index, value in enumerate(data):
            found = lone_surrogate_path(value, f"{path}[{index}]")
            if found:
                return found
    return None


class ToolInput(BaseModel):
    """Base of every input model: unknown fields are rejected (they are usually misnamed ones).

    Models sometimes send an object or list field as JSON text ('{"id": 7}'); that is decoded.
    Text with a lone surrogate (invalid Unicode) is refused in any field, however nested.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _refuse_lone_surrogates(cls, data: Any) -> Any:
        where = lone_surrogate_path(data)
        if where is not None:
            raise ValueError(
                f"field '{where}' holds text that is not valid Unicode (a lone surrogate such "
                "as \\ud800); send plain text without it"
            )
        return data

    @model_validator(mode="before")
    @classmethod
    def _decode_json_text(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        decoded = dict(data)
        for name, value in data.items():
            field_info = cls.model_fields.get(name)
            if field_info is None or not isinstance(value, str) or value.strip()[:1] not in "{[":
                continue
            if not re.search(r"\b(dict|list)\b", str(field_info.annotation)):
                continue
            try:
                decoded[name] = json.loads(value)
            except ValueError:
                pass
        return decoded


TABLE_FIELD = "table name (see listTables)"
