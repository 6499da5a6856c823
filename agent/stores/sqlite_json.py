"""A SQLite row as the JSON text Python writes for it, computed by SQLite (no per-row Python).

`row_json_sql` renders `{"column":value,...}` in column order with compact separators, exactly
as staging's `dumps` of the row read in Python: integers, strings and NULL as SQLite's JSON
writes them, each REAL through Python's own float repr (SQLite's JSON prints 15 digits and would
lose precision), each blob as the marker the store reads it as; a REAL whose 15-digit text
SQLite writes is that repr already (`_short_real`) is written by SQLite itself. A non-finite REAL has no JSON
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
    real = f"json(tt_real({expr}))"
    if reals_written_as_cast():
        real = f"CASE WHEN {_short_real(expr)} THEN CAST({expr} AS TEXT) ELSE {real} END"
    return (
        f"CASE typeof({expr}) WHEN 'real' THEN {real} "
        f"WHEN 'blob' THEN tt_blob({expr}) ELSE json_quote({expr}) END"
    )


def _short_real(expr: str) -> str:
    """True where SQLite's own text of a REAL is Python's repr: in fixed notation for both
    (1e-4 ≤ |x| < 1e15) and read back as the same REAL. That text has 15 significant digits
    rounded, and a 15-digit decimal within half an ulp of x is the only one there is, so it is
    the shortest that reads back, which repr writes; anything else takes `tt_real`."""
    return (
        f"abs({expr}) >= 1e-4 AND abs({expr}) < 1e15 "
        f"AND CAST(CAST({expr} AS TEXT) AS REAL) = {expr}"
    )


_PROBE_REALS = (
    478.88,
    1 / 3,
    0.1 + 0.2,
    5.0,
    -7.25,
    1e-4,
    0.00012345,
    2.5e-3,
    1e14,
    123456789012345.0,
    99999999999999.98,
    6.02214076e13,
    -0.5,
)


@functools.cache
def reals_written_as_cast() -> bool:
    """Whether this SQLite writes a REAL, in CAST(x AS TEXT) and in json_object alike, with 15
    significant digits in C's %g style plus `.0` (as SQLite 3.40 does); asked once per process,
    so a build that writes them otherwise keeps Python's repr for every REAL."""
    conn = sqlite3.connect(":memory:")
    try:
        for x in _PROBE_REALS:
            text = f"{x:.15g}"
            if "." not in text and "e" not in text:
                text += ".0"
            row = conn.execute("SELECT CAST(? AS TEXT), json_object('a', ?)", (x, x)).fetchone()
            if row != (text, f'{{"a":{text}}}'):
                return False
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


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
            real = f"json(tt_real({expr}))"
            if reals_written_as_cast():  # json_object writes the REAL itself, as CAST does
                real = f"CASE WHEN {_short_real(expr)} THEN {expr} ELSE {real} END"
            value = (
                f"CASE typeof({expr}) WHEN 'real' THEN {real} "
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
