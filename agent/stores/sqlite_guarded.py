"""The fast path of a SQLite commit: statements that carry their own optimistic check.

Each update/delete gets `AND <column> IS ?` for every pre-image column, and each create is a
plain INSERT (a taken key fails the PRIMARY KEY). Run as `executemany` batches, the commit
has no conflict exactly when every statement changed one row; otherwise the caller rolls back
and runs the row-by-row check (`sqlite_apply`) to say which changes conflict and why.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.errors import TabletalkError
from agent.stores.base import ChangeToApply
from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import TableSchema, normalize_with

if TYPE_CHECKING:
    from agent.stores.sqlite import SQLiteStore

_BATCH = 2000
Statement = tuple[str, tuple[Any, ...]]


def guarded_plan(store: SQLiteStore, changes: list[ChangeToApply]) -> list[Statement] | None:
    """One self-checking statement per change, or None when some change needs the slow path."""
    schemas: dict[str, TableSchema] = {}
    shapes: dict[tuple[str, str, tuple[str, ...]], str | None] = {}
    plan: list[Statement] = []
    for change in changes:
        try:
            schema = schemas.get(change.table) or schemas.setdefault(
                change.table, store.schema(change.table)
            )
            given_key = change.key
            if len(given_key) == 1 == len(schema.key_columns):
                value = given_key.get(schema.key_columns[0])
                if type(value) is not schema.key_types[0]:
                    value = normalize_with(schema, given_key)[schema.key_columns[0]]
                key: tuple[Any, ...] = (value,)
            else:
                key = tuple(normalize_with(schema, given_key).values())
        except TabletalkError:
            return None
        given = tuple(change.values)
        shape = (schema.name, change.op, given)
        if shape not in shapes:
            shapes[shape] = _shape_sql(schema, change.op, given)
        sql = shapes[shape]
        if sql is None:
            return None
        values = tuple(change.values.values())
        if change.op == "create":
            plan.append((sql, (*values, *key)))
            continue
        pre = change.pre_image
        if pre is None or len(pre) != len(schema.column_names):
            return None
        try:
            expected = schema.pick_guarded(pre)
        except KeyError:
            return None
        # A blob's pre-image is a marker string: its guard misses, and the checked path decides.
        params = key if change.op == "delete" else (*values, *key)
        plan.append((sql, (*params, *expected)))
    return plan


def _shape_sql(schema: TableSchema, op: str, given: tuple[str, ...]) -> str | None:
    """The statement for one shape of change, or None if it must take the slow path."""
    table = quote_ident(schema.name)
    names = []
    for name in given:
        column = schema.column(name)
        if column is None or column.name in schema.key_columns:
            return None
        names.append(column.name)
    where = " AND ".join(f"{quote_ident(k)} = ?" for k in schema.key_columns)
    guard = "".join(f" AND {quote_ident(c)} IS ?" for c in schema.guarded_columns)
    if op == "create":
        cols = ", ".join(quote_ident(n) for n in (*names, *schema.key_columns))
        marks = ", ".join("?" * (len(names) + len(schema.key_columns)))
        return f"INSERT INTO {table} ({cols}) VALUES ({marks})"
    if op == "delete":
        return f"DELETE FROM {table} WHERE {where}{guard}"
    if not names:
        return None
    sets = ", ".join(f"{quote_ident(n)} = ?" for n in names)
    return f"UPDATE {table} SET {sets} WHERE {where}{guard}"


def run_guarded(
    conn: sqlite3.Connection,
    plan: list[Statement],
    progress: Callable[[int, int], Any] | None,
) -> bool:
    """Run the plan inside the caller's transaction; False as soon as a statement misses its row."""
    total = len(plan)
    start = 0
    while start < total:
        sql = plan[start][0]
        end = start
        while end < total and end - start < _BATCH and plan[end][0] == sql:
            end += 1
        try:
            cursor = conn.executemany(sql, [p[1] for p in plan[start:end]])
        except sqlite3.IntegrityError:
            return False
        if cursor.rowcount != end - start:
            return False
        start = end
        if progress is not None:
            progress(start, total)
    return True
