"""A SQLite row as the JSON text Python writes for it, computed by SQLite (no per-row Python).

`row_json_sql` renders `{"column":value,...}` in column order with compact separators, exactly
as staging's `dumps` of the row read in Python: integers, strings and NULL as SQLite's JSON
writes them, each REAL through Python's own float repr (SQLite's JSON prints 15 digits and would
lose precision), each blob as the marker the store reads it as. A non-finite REAL has no JSON
number, so `json()` refuses Python's `inf` and the statement fails: callers fall back to their
row-by-row path. Up to `JSON_OBJECT_COLUMNS` columns one `json_object` call builds the text
(about half the cost of concatenating quoted parts); wider rows are concatenated part by part.
"""

from __future__ import annotations

import functools
import json
import sqlite3

from agent.stores.sqlite_readonly import json_value, quote_ident


def _blob_json(value: bytes) -> str:
    return json.dumps(json_value(value), ensure_ascii=False)


def register(conn: sqlite3.Connection) -> None:
    """Define the SQL functions `row_json_sql` uses on this connection. `tt_real` is Python's
    float repr itself (a builtin: the cheapest callback there is); `json()` around it refuses
    the `inf` it writes for a non-finite REAL."""
    conn.create_function("tt_real", 1, float.__repr__, deterministic=True)
    conn.create_function("tt_blob", 1, _blob_json, deterministic=True)


def literal(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def value_json_sql(expr: str) -> str:
    """The JSON text of one SQL value."""
    return (
        f"CASE typeof({expr}) WHEN 'real' THEN json(tt_real({expr})) "
        f"WHEN 'blob' THEN tt_blob({expr}) ELSE json_quote({expr}) END"
    )


JSON_OBJECT_COLUMNS = 63
"""SQLite calls take at most 127 arguments (SQLITE_MAX_FUNCTION_ARG's default), two per column."""


@functools.cache
def json_object_embeds_json() -> bool:
    """Whether this SQLite's json_object embeds a CASE's json() result as JSON (the subtype
    survives the CASE) rather than quoting it as a string; asked once per process, so a build
    that differs gets the part-by-part text instead of numbers turned into strings."""
    conn = sqlite3.connect(":memory:")
    try:
        sql = "SELECT json_object('a', CASE typeof(?) WHEN 'real' THEN json('1.5') ELSE 0 END)"
        return bool(conn.execute(sql, (1.5,)).fetchone()[0] == '{"a":1.5}')
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def row_json_sql(alias: str, columns: list[str]) -> str:
    """The JSON object text of row `alias` over `columns` (in that order)."""
    if len(columns) <= JSON_OBJECT_COLUMNS and json_object_embeds_json():
        pairs = []
        for name in columns:
            expr = f"{alias}.{quote_ident(name)}"
            # A REAL or blob becomes JSON text that json() marks as JSON, so json_object
            # embeds it as it is; anything else json_object writes as json_quote would.
            value = (
                f"CASE typeof({expr}) WHEN 'real' THEN json(tt_real({expr})) "
                f"WHEN 'blob' THEN json(tt_blob({expr})) ELSE {expr} END"
            )
            pairs.append(f"{literal(name)}, {value}")
        return f"json_object({', '.join(pairs)})"
    parts = [literal("{")]
    for i, name in enumerate(columns):
        name_json = json.dumps(name, ensure_ascii=False)
        parts.append(literal(("," if i else "") + name_json + ":"))
        parts.append(value_json_sql(f"{alias}.{quote_ident(name)}"))
    parts.append(literal("}"))
    return " || ".join(parts)
