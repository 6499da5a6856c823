"""Counting the rows of a SQLite table that reference given items (for orphan checks)."""

from __future__ import annotations

import sqlite3

from agent.stores.base import Item
from agent.stores.references import Reference, ReferencingRows
from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import TableSchema

CHUNK = 300
EXAMPLES = 3
"""Example keys collected per chunk when some rows are left out (the caller keeps its own
number of them)."""


def referencing(
    conn: sqlite3.Connection,
    schema: TableSchema,
    reference: Reference,
    items: list[Item],
    examples: int,
    excluded: set[tuple[object, ...]] | None = None,
) -> ReferencingRows | None:
    """How many rows of `reference.table` hold the target values of `items` (None: none do),
    not counting the rows whose key is in `excluded` (they are being deleted too)."""
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
        if excluded:
            kept, held = _count_kept(conn, schema, reference, where, params, excluded, found)
            count, pointed = count + kept, pointed + held
            continue
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
    return ReferencingRows(reference, count, pointed, found[:examples])


def _count_kept(
    conn: sqlite3.Connection,
    schema: TableSchema,
    reference: Reference,
    where: str,
    params: list[object],
    excluded: set[tuple[object, ...]],
    found: list[Item],
) -> tuple[int, int]:
    """Rows matching `where` whose key is not in `excluded`, and how many distinct targets they
    point at; appends example keys to `found`. (Per chunk; the caller sums.)"""
    keys = len(schema.key_columns)
    cols = ", ".join(quote_ident(c) for c in (*schema.key_columns, *reference.columns))
    rows = conn.execute(f"SELECT {cols} FROM {quote_ident(schema.name)} WHERE {where}", params)
    kept = [r for r in rows if tuple(r[:keys]) not in excluded]
    found += [dict(zip(schema.key_columns, r[:keys], strict=True)) for r in kept[:EXAMPLES]]
    return len(kept), len({tuple(r[keys:]) for r in kept})
