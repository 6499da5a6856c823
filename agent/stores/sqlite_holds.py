"""Whether rows hold given values, as they would be stored: `column IS ? COLLATE BINARY` (the
column's affinity applies to the value, as when it is written, but not the column's collation:
under NOCASE 'abc' IS 'ABC', yet writing 'ABC' changes the row), and in a column without
affinity the storage class too (1 IS 1.0 there, yet writing 1.0 stores a REAL). A few compound
statements answer many rows; `holds_sql` is the same judgement as an SQL condition, for the
set-based bulk path (tests check the two agree)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from agent.stores.base import Column, Item, Key
from agent.stores.sqlite_readonly import json_value, quote_ident
from agent.stores.sqlite_schema import TableSchema, column_affinity, normalize_with

_STORAGE_CLASSES: dict[type, str] = {bool: "integer", int: "integer", float: "real", str: "text"}


def holds_many(
    conn: sqlite3.Connection,
    schema: TableSchema,
    checks: Sequence[tuple[Key, Item]],
    *,
    whole: bool = False,
) -> list[bool]:
    """For each (key, values): True when the row with `key` exists and each of `values` is
    what its column stores (module docstring; a blob matches its marker); `whole` also
    requires `values` to name every column. False means writing them would change the row.

    Checks naming the same columns share statements: one `SELECT … WHERE key = ?` per check,
    joined by UNION ALL up to SQLite's compound and variable limits.
    """
    result = [False] * len(checks)
    groups: dict[tuple[str, ...], list[int]] = {}
    keys: list[Key] = []
    for index, (key, values) in enumerate(checks):
        keys.append(normalize_with(schema, key))
        names = []
        for name in values:
            column = schema.column(name)
            if column is None:
                break
            names.append(column.name)
        else:
            if not whole or set(names) == set(schema.column_names):
                groups.setdefault(tuple(names), []).append(index)
    most_selects = conn.getlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT)
    most_variables = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    where = " AND ".join(f"{quote_ident(k)} = ?" for k in schema.key_columns)
    kinds = {column.name: column_affinity(column) for column in schema.columns}
    for columns, indexes in groups.items():
        picked = [quote_ident(n) for n in columns]
        listed = ", ".join(["?", *picked, *(f"{c} IS ? COLLATE BINARY" for c in picked)])
        untyped = [kinds[n] == "BLOB" for n in columns]
        width = 1 + len(columns) + len(schema.key_columns)
        per_statement = max(1, min(most_selects, most_variables // width))
        for start in range(0, len(indexes), per_statement):
            chunk = indexes[start : start + per_statement]
            one = f"SELECT {listed} FROM {quote_ident(schema.name)} WHERE {where}"
            params: list[Any] = []
            for index in chunk:
                params += [index, *checks[index][1].values(), *keys[index].values()]
            for row in conn.execute(" UNION ALL ".join([one] * len(chunk)), params):
                found, same = row[1 : len(columns) + 1], row[len(columns) + 1 :]
                index = row[0]
                expected = checks[index][1].values()
                result[index] = all(
                    _stored_as(raw, bool(equal), value, bare)
                    for raw, equal, value, bare in zip(found, same, expected, untyped, strict=True)
                )
    return result


def holds_sql(row: str, columns: Sequence[Column], values: Item) -> tuple[str, list[Any]] | None:
    """An SQL condition, and its parameters, true where row `row` (a table alias) holds
    `values` as `holds_many` judges it: `column IS ? COLLATE BINARY`, in a column without
    affinity the storage class too, a blob its marker (`sqlite_json.register`'s `tt_blob`).
    None when no row can hold them (a name that is no column). Never NULL."""
    by_name = {c.name.lower(): c for c in columns}
    tests: list[str] = []
    params: list[Any] = []
    for name, value in values.items():
        column = by_name.get(name.lower())
        if column is None:
            return None
        ref = f"{row}.{quote_ident(column.name)}"
        if value is None:
            tests.append(f"{ref} IS NULL")
            continue
        test = f"{ref} IS ? COLLATE BINARY"
        params.append(value)
        if column_affinity(column) == "BLOB":  # no affinity: the value is stored as it is
            kind = _STORAGE_CLASSES.get(type(value))
            test = f"({test} AND typeof({ref}) = '{kind}')" if kind else "0"
        if isinstance(value, str) and value.startswith("<blob "):  # a blob's marker
            test = f"({test} OR (typeof({ref}) = 'blob' AND tt_blob({ref}) = ?))"
            params.append(json.dumps(value, ensure_ascii=False))
        tests.append(test)
    return " AND ".join(tests) or "1", params


def _stored_as(raw: Any, equal: bool, value: Any, untyped: bool) -> bool:
    """Whether a column holding `raw` already holds `value` (`equal`: `raw IS value`, the
    affinity applied); `untyped`: the column has none, so the value is stored as it is."""
    if isinstance(raw, bytes):
        return equal or json_value(raw) == value
    if not equal:
        return False
    return (
        not untyped
        or raw is None
        or _STORAGE_CLASSES.get(type(raw)) == _STORAGE_CLASSES.get(type(value))
    )
