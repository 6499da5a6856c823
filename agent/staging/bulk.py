"""Set-based staging of a bulk edit on a SQLite store: one INSERT … SELECT, no per-row Python.

The store's file is attached read-only to a short-lived connection of the staging database, and
the staged rows (key text, pre-image, id) are built by SQLite from the table itself in one
statement, in one read snapshot. The texts are the ones the row-by-row path writes: the
pre-image through `stores.sqlite_json` (exact, see there), an integer key inline, every other
key through `encoding.key_json`. Whenever this path cannot decide alone (an item already staged, a
key with no item, a value JSON cannot hold, an unreadable file) it writes nothing and returns
None, and the caller stages row by row, which folds, refuses and explains as always.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from itertools import repeat
from pathlib import Path
from typing import Any

from agent.staging.db import BUSY_TIMEOUT_S, busy, busy_error
from agent.staging.encoding import dumps, key_json, loads_many, take_ids
from agent.staging.model import StagedChange
from agent.stores.base import Item, Key, Op, Store, TableShape
from agent.stores.sqlite_json import literal, register, row_json_sql
from agent.stores.sqlite_readonly import json_value, quote_ident


def _key_json(names: tuple[str, ...]) -> Callable[..., str]:
    """The SQL function that renders a key exactly as `encoding.key_json` does."""

    def render(*values: Any) -> str:
        return key_json({n: json_value(v) for n, v in zip(names, values, strict=True)})

    return render


def _key_sql(keys: tuple[str, ...]) -> str:
    """`encoding.key_json` of row `t`'s key: inline for one integer, else through tt_key."""
    args = ", ".join(f"t.{quote_ident(k)}" for k in keys)
    if len(keys) == 1 and keys[0].isidentifier():
        c = f"t.{quote_ident(keys[0])}"
        prefix = literal(f'{{"{keys[0]}":')
        return (
            f"CASE typeof({c}) WHEN 'integer' THEN {prefix} || {c} || '}}' ELSE tt_key({args}) END"
        )
    return f"tt_key({args})"


def _connect(staging: Path, store_file: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        staging.resolve().as_uri(), uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_S
    )
    try:
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("ATTACH ? AS tt_src", (f"{store_file.resolve().as_uri()}?mode=ro",))
    except BaseException:
        conn.close()
        raise
    return conn


def stage_set_based(
    store: Store,
    staging: Path,
    shape: TableShape,
    op: Op,
    raw_keys: list[Key],
    values: Item,
    origin: str,
    now: str,
    taken: Callable[[list[str]], set[str]],
) -> list[StagedChange] | None:
    """Stage `op` with `values` on the items of `raw_keys` in one statement; None when the
    row-by-row path must decide (nothing was written then)."""
    store_file = store.sqlite_file
    if store_file is None or not raw_keys:
        return None
    keys = shape.key_columns
    unique = list(
        dict.fromkeys(tuple(k.values()) for k in store.normalize_keys(shape.name, raw_keys))
    )
    ids = take_ids(len(unique), taken)
    columns = [c.name for c in shape.columns]
    width = len(keys)
    key_cols = ", ".join(f"k{i}" for i in range(width))
    join = " AND ".join(f"t.{quote_ident(k)} = b.k{i}" for i, k in enumerate(keys))
    insert = (
        "INSERT INTO main.staged_changes (id, store, tbl, key_json, op, values_json, "
        "pre_image_json, origin, created_at) "
        f"SELECT b.id, ?, ?, {_key_sql(keys)}, ?, ?, "
        f"{'NULL' if op == 'create' else row_json_sql('t', columns)}, ?, ? "
        f"FROM temp.tt_bulk b JOIN tt_src.{quote_ident(shape.name)} t ON {join} ORDER BY b.seq"
    )
    try:
        conn = _connect(staging, store_file)
    except sqlite3.Error:
        return None
    try:
        register(conn)
        conn.create_function("tt_key", width, _key_json(keys), deterministic=True)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if busy(exc):  # another process writes staging: the row-by-row path would wait again
                raise busy_error(staging) from exc
            raise
        conn.execute(f"CREATE TEMP TABLE tt_bulk (seq INTEGER PRIMARY KEY, id, {key_cols})")
        conn.executemany(
            f"INSERT INTO temp.tt_bulk (id, {key_cols}) VALUES (?{', ?' * width})",
            [(i, *k) for i, k in zip(ids, unique, strict=True)],
        )
        (before,) = conn.execute("SELECT coalesce(max(seq), 0) FROM main.staged_changes").fetchone()
        values_json = dumps(values)
        params = (store.identity, shape.name, op, values_json, origin, now)
        if conn.execute(insert, params).rowcount != len(unique):
            conn.execute("ROLLBACK")  # a key without an item: the row-by-row path says which
            return None
        rows = conn.execute(
            "SELECT id, key_json, pre_image_json FROM main.staged_changes "
            "WHERE seq > ? ORDER BY seq",
            (before,),
        ).fetchall()
        conn.execute("COMMIT")
    except (sqlite3.Error, ValueError, TypeError, OverflowError):
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return None  # e.g. an item already staged (the unique index): fold row by row
    finally:
        conn.close()
    count = len(rows)
    found_ids = [r[0] for r in rows]
    found_keys = loads_many([r[1] for r in rows])
    pre_images = loads_many([r[2] for r in rows])
    return list(
        map(
            StagedChange, found_ids, repeat(store.identity), repeat(shape.name), found_keys,
            repeat(op), map(dict, repeat(values, count)), pre_images, repeat(origin), repeat(now),
        )
    )  # fmt: skip
