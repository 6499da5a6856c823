"""A SQLite row as the JSON text Python writes for it, computed by SQLite (no per-row Python).

`row_json_sql` renders `{"column":value,...}` in column order with compact separators, exactly
as staging's `dumps` of the row read in Python: integers and strings through `json_quote`, each
REAL through Python's own float repr (SQLite's JSON prints 15 digits and would lose precision),
each blob as the marker the store reads it as. A non-finite REAL has no JSON number, so the SQL
function raises and the statement fails: callers fall back to their row-by-row path.
"""

from __future__ import annotations

import json
import math
import sqlite3

from agent.stores.sqlite_readonly import json_value, quote_ident


def _real_json(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return float.__repr__(value)


def _blob_json(value: bytes) -> str:
    return json.dumps(json_value(value), ensure_ascii=False)


def register(conn: sqlite3.Connection) -> None:
    """Define the SQL functions `row_json_sql` uses on this connection."""
    conn.create_function("tt_real", 1, _real_json, deterministic=True)
    conn.create_function("tt_blob", 1, _blob_json, deterministic=True)


def literal(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def value_json_sql(expr: str) -> str:
    """The JSON text of one SQL value."""
    return (
        f"CASE typeof({expr}) WHEN 'real' THEN tt_real({expr}) "
        f"WHEN 'blob' THEN tt_blob({expr}) ELSE json_quote({expr}) END"
    )


def row_json_sql(alias: str, columns: list[str]) -> str:
    """The JSON object text of row `alias` over `columns` (in that order)."""
    parts = [literal("{")]
    for i, name in enumerate(columns):
        name_json = json.dumps(name, ensure_ascii=False)
        parts.append(literal(("," if i else "") + name_json + ":"))
        parts.append(value_json_sql(f"{alias}.{quote_ident(name)}"))
    parts.append(literal("}"))
    return " || ".join(parts)
