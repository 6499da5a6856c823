"""Set-based commit of staged changes on SQLite: a few statements per shape of change, no Python
per row.

The staging database is attached read-only to the store's write connection. Inside one
IMMEDIATE transaction, the changes are taken in groups of one table, op and `values`
(a bulk edit is one group). For each group, one UPDATE (or DELETE) writes the rows whose
current JSON text (`sqlite_json`) equals their staged pre-image text (equal texts mean equal
values and types), with `values` bound from Python (exact); it wrote one row per change
exactly when nothing changed since staging. The commit stays one transaction, all or
nothing. Whenever this cannot decide alone (a difference, a create, a constraint failure, a key
or column this path does not handle), it rolls back and returns None: the row-by-row path
(`sqlite_apply`) then checks each change, names every conflict with its current value, or writes.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.errors import TabletalkError
from agent.stores.base import ApplyResult, Landed, StagedSource
from agent.stores.sqlite_apply import _failed, _rollback
from agent.stores.sqlite_json import register, row_json_sql
from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import SchemaSource
from agent.stores.sqlite_snapshot import file_stamp

ALIAS = "tt_staged"
MAX_GROUPS = 20
"""More shapes than this (many single edits) go row by row: executemany runs suit them better."""
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Undecided(Exception):
    """This path cannot decide: roll back and let the row-by-row path run."""


def apply_staged(
    store: SchemaSource,
    conn: sqlite3.Connection,
    source: StagedSource,
    progress: Callable[[int, int], Any] | None,
    landed: Landed | None,
) -> ApplyResult | None:
    """Apply every change `source` selects in one transaction, set-based; None: undecided."""
    try:
        conn.execute(f"ATTACH ? AS {ALIAS}", (f"{source.path.resolve().as_uri()}?mode=ro",))
    except sqlite3.Error:
        return None
    try:
        register(conn)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _failed(store, conn, exc) from exc
        try:
            ids = _apply(store, conn, source, progress)
            conn.execute("COMMIT")
        except (
            _Undecided,
            sqlite3.Error,
            TabletalkError,
            ValueError,
            TypeError,
            OverflowError,
        ) as exc:
            _rollback(conn)
            if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                raise _failed(store, conn, exc) from exc
            return None
        except BaseException:
            _rollback(conn)
            raise
    finally:
        try:
            conn.execute(f"DETACH {ALIAS}")
        except sqlite3.Error:
            pass
    if landed is not None:
        landed(ids)
    return ApplyResult(applied=ids)


def _main_file(conn: sqlite3.Connection) -> Path:
    """The file of the connection's main database."""
    rows = conn.execute("PRAGMA database_list").fetchall()
    return Path(next(r[2] for r in rows if r[1] == "main"))


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _apply(
    store: SchemaSource,
    conn: sqlite3.Connection,
    source: StagedSource,
    progress: Callable[[int, int], Any] | None,
) -> list[str]:
    staged = f"({source.select.format(db=ALIAS)})"
    ids = source.ids
    # Taken inside this IMMEDIATE transaction: no other writer can commit until it ends.
    stamp = file_stamp(_main_file(conn))
    groups = _groups(conn, staged, source.params)
    if not groups or len(groups) > MAX_GROUPS or sum(g[3] for g in groups) != len(ids):
        raise _Undecided
    done = 0
    for table, op, values_json, count, stamped, oldest, newest in groups:
        unchanged = stamp is not None and stamped == count and oldest == newest == stamp
        group = (table, op, values_json)
        _apply_group(store, conn, staged, source.params, group, count, unchanged)
        done += count
        if progress is not None:
            progress(done, len(ids))
    return list(ids)


def _groups(
    conn: sqlite3.Connection, staged: str, params: tuple[Any, ...]
) -> list[tuple[Any, ...]]:
    """(tbl, op, values_json, count, stamped count, least stamp, greatest stamp) per group;
    one bulk edit (the usual commit) is found by one scan, without sorting the changes."""
    first = conn.execute(f"SELECT tbl, op, values_json, snapshot FROM {staged} LIMIT 1", params)
    row = first.fetchone()
    if row is None:
        return []
    total, others = conn.execute(
        f"SELECT count(*), total(NOT (tbl = ? AND op = ? AND values_json = ? "
        f"AND snapshot IS ?)) FROM {staged}",
        (*row, *params),
    ).fetchone()
    if not others:
        stamped = total if row[3] is not None else 0
        return [(row[0], row[1], row[2], total, stamped, row[3], row[3])]
    return conn.execute(
        f"SELECT tbl, op, values_json, count(*), count(snapshot), min(snapshot), max(snapshot) "
        f"FROM {staged} GROUP BY tbl, op, values_json",
        params,
    ).fetchall()


def _apply_group(
    store: SchemaSource,
    conn: sqlite3.Connection,
    staged: str,
    params: tuple[Any, ...],
    group: tuple[str, str, str],
    count: int,
    unchanged: bool,
) -> None:
    """Check and write one group (table, op, values_json) of `count` changes, or raise.

    `unchanged`: every pre-image of the group was read when the file had the stamp it has now,
    so no row can differ from its pre-image and the rows are not rendered to be compared.
    """
    table, op, values_json = group
    if op not in ("update", "delete"):
        raise _Undecided
    schema = store.schema(table)
    keys = schema.key_columns
    if not all(_PLAIN_NAME.match(k) for k in keys):
        raise _Undecided
    values = json.loads(values_json)
    names = []
    for name in values if op == "update" else ():
        column = schema.column(name)
        if column is None or column.name in keys:
            raise _Undecided
        names.append(column.name)
    if op == "update" and not names:
        raise _Undecided
    mine = "c.tbl = ? AND c.op = ? AND c.values_json = ?"
    join = " AND ".join(f"t.{quote_ident(k)} = json_extract(c.key_json, '$.{k}')" for k in keys)
    target = quote_ident(schema.name)
    if unchanged:
        # Every row is its pre-image (the file is as it was when they were read), so only
        # the keys are needed: integer and text keys, which JSON gives back exactly (a change
        # with any other key is left out, so the count differs and the row-by-row path runs).
        extract = [f"json_extract(c.key_json, '$.{k}')" for k in keys]
        exact = " AND ".join(f"json_type(c.key_json, '$.{k}') IN ('integer', 'text')" for k in keys)
        matching = f"SELECT {', '.join(extract)} FROM {staged} c WHERE {mine} AND {exact}"
    else:
        # The keys of the rows whose JSON text is their staged pre-image, read (and
        # materialised) before the write: one per change exactly when nothing changed since
        # staging. The text holds the key too, so a key JSON parsed inexactly cannot pick
        # another row.
        matching = (
            f"SELECT {', '.join(f't.{quote_ident(k)}' for k in keys)} FROM {staged} c "
            f"JOIN main.{target} t ON {join} WHERE {mine} "
            f"AND c.pre_image_json = {row_json_sql('t', schema.column_names)}"
        )
    lhs = quote_ident(keys[0]) if len(keys) == 1 else f"({', '.join(map(quote_ident, keys))})"
    if op == "delete":
        sql = f"DELETE FROM main.{target} WHERE {lhs} IN ({matching})"
        bound: tuple[Any, ...] = (*params, *group)
    else:
        sets = ", ".join(f"{quote_ident(n)} = ?" for n in names)
        sql = f"UPDATE main.{target} SET {sets} WHERE {lhs} IN ({matching})"
        bound = (*values.values(), *params, *group)
    try:
        written = conn.execute(sql, bound).rowcount
    except sqlite3.IntegrityError as exc:
        raise _Undecided from exc  # the row-by-row path names the change
    if written != count:
        raise _Undecided  # a conflict (or a pre-image written another way): row by row
