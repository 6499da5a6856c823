"""Counting the rows of a SQLite table that reference given items (for orphan checks)."""

from __future__ import annotations

import sqlite3

from agent.stores.base import Item
from agent.stores.references import Reference, ReferencingRows
from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import TableSchema

CHUNK = 300


def referencing(
    conn: sqlite3.Connection,
    schema: TableSchema,
    reference: Reference,
    items: list[Item],
    examples: int,
) -> ReferencingRows | None:
    """How many rows of `reference.table` hold the target values of `items` (None: none do)."""
    targets = {
        tuple(item.get(c) for c in reference.target_columns) for item in items
    }  # NULL never matches a reference
    values = sorted((t for t in targets if None not in t), key=repr)
    if not values:
        return None
    columns = "(" + ", ".join(quote_ident(c) for c in reference.columns) + ")"
    key_cols = ", ".join(quote_ident(k) for k in schema.key_columns)
    width = len(reference.columns)
    count = 0
    pointed = 0
    found: list[Item] = []
    for start in range(0, len(values), CHUNK):
        chunk = values[start : start + CHUNK]
        row_values = ", ".join(["(" + ", ".join("?" * width) + ")"] * len(chunk))
        where = f"{columns} IN (VALUES {row_values})"
        params = [v for t in chunk for v in t]
        table = quote_ident(schema.name)
        counts = conn.execute(
            f"SELECT count(*) FROM {table} WHERE {where} GROUP BY {columns}", params
        ).fetchall()
        count += sum(r[0] for r in counts)
        pointed += len(counts)
        if len(found) < examples and counts:
            rows = conn.execute(
                f"SELECT {key_cols} FROM {table} WHERE {where} LIMIT ?",
                [*params, examples - len(found)],
            ).fetchall()
            found += [dict(zip(schema.key_columns, r, strict=True)) for r in rows]
    if not count:
        return None
    return ReferencingRows(reference, count, pointed, found)
