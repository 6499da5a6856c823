"""Indexes of a SQLite table and what they hold (`index_stats`): from `PRAGMA index_list`,
and `sqlite_stat1` where ANALYZE has filled it (counted otherwise)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import TableSchema

IndexRow = tuple[str, list[str], bool, str, bool]
"""(name, columns, unique, origin, partial) of one index."""


def index_list(conn: sqlite3.Connection, table: str) -> list[IndexRow]:
    """The indexes of `table`, sorted by name; the caller holds the connection's lock."""
    found = []
    for _seq, name, unique, origin, partial in conn.execute(
        f"PRAGMA index_list({quote_ident(table)})"
    ).fetchall():
        cols = [
            r[2]
            for r in conn.execute(f"PRAGMA index_info({quote_ident(name)})")
            if r[2] is not None
        ]
        found.append((name, cols, bool(unique), origin, bool(partial)))
    return sorted(found)


def stat1(conn: sqlite3.Connection, table: str) -> dict[str, tuple[int, int]]:
    """Per index of `table`: (entries, distinct keys) as ANALYZE recorded them, if it ran."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone()
    if not exists:
        return {}
    found = {}
    for idx, stat in conn.execute(
        "SELECT idx, stat FROM sqlite_stat1 WHERE tbl = ? AND idx IS NOT NULL", (table,)
    ):
        parts = [int(p) for p in str(stat).split() if p.isdigit()]
        if len(parts) >= 2:
            entries, per_key = parts[0], parts[-1]
            found[idx] = (entries, max(1, entries // max(1, per_key)))
    return found


def index_stats(
    schema: TableSchema,
    rows: int,
    indexes: list[IndexRow],
    counted: dict[str, tuple[int, int]],
    distinct: Callable[[list[str]], int],
) -> list[dict[str, Any]]:
    """Per index: columns, uniqueness, entries, distinct keys (from `counted`, else `distinct`)
    and whether it covers the key; the table's own b-tree first when no index covers it."""
    stats: list[dict[str, Any]] = []
    covered = False
    for name, cols, unique, origin, partial in indexes:
        covers_key = origin == "pk" or (unique and tuple(cols) == schema.key_columns)
        covered = covered or covers_key
        entry: dict[str, Any] = {
            "name": name,
            "columns": cols,
            "unique": unique,
            "partial": partial,
            "coversKey": covers_key,
        }
        if name in counted and not partial:
            entries, keys = counted[name]
            entry.update(entries=entries, distinctKeys=keys, source="sqlite_stat1")
        else:
            keys = rows if unique and not partial else distinct(cols)
            entry.update(entries=rows, distinctKeys=keys, source="counted")
            if partial:
                entry.pop("entries")
        stats.append(entry)
    if not covered:
        stats.insert(
            0,
            {
                "name": "(primary key)",
                "columns": list(schema.key_columns),
                "unique": True,
                "partial": False,
                "coversKey": True,
                "entries": rows,
                "distinctKeys": rows,
                "source": "table b-tree",
            },
        )
    return stats
