"""The fast path of a SQLite commit: statements that carry their own optimistic check.

Each update/delete gets `AND <column> IS ? COLLATE BINARY` for every pre-image column, and each create is a
plain INSERT (a taken key fails the PRIMARY KEY). Run as `executemany` batches, the commit
has no conflict exactly when every statement changed one row; otherwise the caller rolls back
and runs the row-by-row check (`sqlite_apply`) to say which changes conflict and why.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from agent.errors import TabletalkError
from agent.stores.base import ChangeToApply, Item
from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import SchemaSource, TableSchema, normalize_with

_BATCH = 2000
MAX_TERMS = 900
"""A WHERE of more terms takes the checked path: SQLite refuses an expression deeper than 1,000
(its AND chain nests one level a term), which failed every commit to a table that wide."""
Statement = tuple[str, tuple[Any, ...]]


def guarded_plan(store: SchemaSource, changes: list[ChangeToApply]) -> list[Statement] | None:
    """One self-checking statement per change, or None when some change needs the slow path.

    A bulk edit is a run of changes of one table and op sharing one `values` object; the
    schema, statement and bound values are worked out once per run, not once per change.
    """
    schemas: dict[str, TableSchema] = {}
    shapes: dict[tuple[str, str, tuple[str, ...]], str | None] = {}
    plan: list[Statement] = []
    append = plan.append
    run: tuple[str, str, Item] | None = None
    for _id, table, given_key, op, values, pre in changes:
        if run is None or values is not run[2] or table != run[0] or op != run[1]:
            run = (table, op, values)
            try:
                schema = schemas.get(table) or schemas.setdefault(table, store.schema(table))
            except TabletalkError:
                return None
            given = tuple(values)
            shape = (schema.name, op, given)
            if shape not in shapes:
                shapes[shape] = _shape_sql(schema, op, given)
            found = shapes[shape]
            if found is None:
                return None
            sql = found
            bound = tuple(values.values())
            single = len(schema.key_columns) == 1
            key_column, key_type = schema.key_columns[0], schema.key_types[0]
            width = len(schema.column_names)
            pick = schema.pick_guarded
        value = given_key.get(key_column) if single and len(given_key) == 1 else None
        # A staged key was checked when staged; a value SQLite cannot bind fails the apply.
        if value is not None and type(value) is key_type:
            key: tuple[Any, ...] = (value,)
        else:
            try:
                key = tuple(normalize_with(schema, given_key).values())
            except TabletalkError:
                return None
        if op == "create":
            append((sql, (*bound, *key)))
            continue
        if pre is None or len(pre) != width:
            return None
        try:
            expected = pick(pre)
        except KeyError:
            return None
        # A blob's pre-image is a marker string: its guard misses, and the checked path decides.
        if op == "delete":
            append((sql, (*key, *expected)))
        else:
            append((sql, (*bound, *key, *expected)))
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
    if len(schema.key_columns) + len(schema.guarded_columns) > MAX_TERMS:
        return None
    where = " AND ".join(f"{quote_ident(k)} = ?" for k in schema.key_columns)
    # BINARY: a column's own collation (NOCASE, RTRIM) would take another program's 'Ada'
    # for the staged pre-image 'ada' and write over it without a conflict.
    guard = "".join(f" AND {quote_ident(c)} IS ? COLLATE BINARY" for c in schema.guarded_columns)
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
