"""Whether many rows still hold given values, judged as `SQLiteStore.holds` judges one row
(`column IS ?`, the column's affinity applying), in a few compound statements instead of one
statement per row."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from agent.stores.base import Item, Key
from agent.stores.sqlite_readonly import json_value, quote_ident
from agent.stores.sqlite_schema import TableSchema, normalize_with


def holds_many(
    conn: sqlite3.Connection,
    schema: TableSchema,
    checks: Sequence[tuple[Key, Item]],
    *,
    whole: bool = False,
) -> list[bool]:
    """For each (key, values): True when the row with `key` exists and each of `values`
    equals its column as `column IS ?` judges (a blob matches its marker); `whole` also
    requires `values` to name every column.

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
    for columns, indexes in groups.items():
        picked = [quote_ident(n) for n in columns]
        listed = ", ".join(["?", *picked, *(f"{c} IS ?" for c in picked)])
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
                    equal or (isinstance(raw, bytes) and json_value(raw) == value)
                    for raw, equal, value in zip(found, same, expected, strict=True)
                )
    return result
