"""Commit staged changes to SQLite: one IMMEDIATE transaction, optimistic locking, batched writes.

The fast path (`sqlite_guarded`) runs self-checking statements and commits when every one hits
its row. When one misses, it rolls back and the checked path here runs: it reads the rows
inside the write transaction (so nobody can slip in between), requires every update/delete to
find its pre-image and every create a free key, names each conflict with the current value,
and otherwise writes `executemany` runs of identical statements. Any conflict or constraint
failure rolls everything back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agent.errors import StoreError, TabletalkError
from agent.stores.base import ApplyResult, ChangeToApply, Conflict, Item, Landed
from agent.stores.sqlite_guarded import guarded_plan, run_guarded
from agent.stores.sqlite_readonly import quote_ident
from agent.stores.sqlite_schema import SchemaSource, fetch_rows, normalize_with

if TYPE_CHECKING:
    from agent.stores.sqlite_schema import TableSchema

_BATCH = 1000


class _Absent:
    """A column one side of a comparison does not have, as a conflict reason names it."""

    def __repr__(self) -> str:
        return "(absent)"


_MISSING = _Absent()

Planned = tuple[str, tuple[Any, ...], str]  # (sql, params, change id)


def apply_changes(
    store: SchemaSource,
    conn: sqlite3.Connection,
    changes: list[ChangeToApply],
    progress: Callable[[int, int], Any] | None = None,
    landed: Landed | None = None,
) -> ApplyResult:
    """Check and apply `changes` in one transaction; on any conflict apply none and report all.

    The transaction is the commit's one atomic unit: `landed` hears all ids after COMMIT.
    """
    if not changes:
        return ApplyResult()
    try:
        plan = guarded_plan(store, changes)  # reads the schema: may meet a lock too
    except sqlite3.Error as exc:
        raise _failed(store, conn, exc) from exc
    if plan is not None:
        with write_transaction(store, conn):
            done = run_guarded(conn, plan, progress)
            conn.execute("COMMIT" if done else "ROLLBACK")
        if done:
            return _landed(changes, landed)
    return _apply_checked(store, conn, changes, progress, landed)


def _landed(changes: list[ChangeToApply], landed: Landed | None) -> ApplyResult:
    ids = [c.id for c in changes]
    if landed is not None:
        landed(ids)
    return ApplyResult(applied=ids)


@contextmanager
def write_transaction(store: SchemaSource, conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE around the body, which COMMITs or ROLLBACKs itself.

    On any exception the transaction is rolled back; database errors and values SQLite cannot
    bind (OverflowError, ValueError, TypeError) become a StoreError, so nothing was applied.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
    except sqlite3.Error as exc:
        raise _failed(store, conn, exc) from exc
    except (OverflowError, ValueError, TypeError) as exc:
        _rollback(conn)
        raise StoreError(
            f"a staged value cannot be written to {store.label} ({exc}), so nothing was committed",
            fix="The changes stay staged: discard the change with that value and stage it again "
            "with one SQLite can store (an integer within ±9223372036854775807, a finite number, "
            "text or null).",
        ) from exc
    except BaseException:
        _rollback(conn)
        raise


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _failed(store: SchemaSource, conn: sqlite3.Connection, exc: sqlite3.Error) -> StoreError:
    """Roll back and describe a database failure during a commit."""
    _rollback(conn)
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError(
            f"{store.label} is locked by another program ({text}), so nothing was committed",
            fix="Close the other program that has the database open for writing (or wait for "
            "it to finish), then commit again; the changes stay staged.",
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return StoreError(
            f"{store.path} cannot be written ({text}), so nothing was committed",
            fix="Make the file and its directory writable, or copy it somewhere writable; "
            "the changes stay staged.",
        )
    if "disk is full" in text or "I/O error" in text:
        return StoreError(
            f"{store.path} could not be written ({text}), so nothing was committed",
            fix="Free disk space where the database is, then commit again; the changes stay "
            "staged.",
        )
    return StoreError(
        f"the commit failed and was rolled back: {text}",
        fix="Nothing was changed and the changes stay staged; retry, or discard the "
        "change that causes it.",
    )


def _apply_checked(
    store: SchemaSource,
    conn: sqlite3.Connection,
    changes: list[ChangeToApply],
    progress: Callable[[int, int], Any] | None,
    landed: Landed | None,
) -> ApplyResult:
    """The slow path: read every row, check each change, name every conflict; then write."""
    with write_transaction(store, conn):
        plan, before, conflicts = _check(store, conn, changes)
        if conflicts:
            conn.execute("ROLLBACK")
            return ApplyResult(applied=[], conflicts=conflicts)
        failure = _execute(conn, plan, before, progress, len(changes))
        if failure is not None:
            conn.execute("ROLLBACK")
            return ApplyResult(applied=[], conflicts=[failure])
        if progress is not None:
            progress(len(changes), len(changes))
        conn.execute("COMMIT")
    return _landed(changes, landed)


def _check(
    store: SchemaSource, conn: sqlite3.Connection, changes: list[ChangeToApply]
) -> tuple[list[Planned], dict[str, Item | None], list[Conflict]]:
    """Compare every change with the current rows (and with earlier changes of this commit)."""
    by_table: dict[str, list[ChangeToApply]] = {}
    for change in changes:
        by_table.setdefault(change.table, []).append(change)
    schemas: dict[str, TableSchema] = {}
    keys: dict[str, tuple[Any, ...]] = {}
    current: dict[str, dict[tuple[Any, ...], Item]] = {}
    conflicts: list[Conflict] = []
    for table, group in by_table.items():
        try:
            schema = store.schema(table)
            normalized = [normalize_with(schema, c.key) for c in group]
        except TabletalkError as exc:
            conflicts.extend(Conflict(c.id, exc.message, None) for c in group)
            continue
        schemas[table] = schema
        for change, key in zip(group, normalized, strict=True):
            keys[change.id] = tuple(key.values())
        current[table] = fetch_rows(conn, store.select_sql(schema), schema, normalized)

    plan: list[Planned] = []
    before: dict[str, Item | None] = {}
    sql_cache: dict[tuple[str, str, tuple[str, ...]], tuple[str | None, str | None]] = {}
    for change in changes:
        known = schemas.get(change.table)
        if known is None:
            continue
        rows = current[change.table]
        row_key = keys[change.id]
        now = rows.get(row_key)
        before[change.id] = now
        reason = _conflict_reason(change, now)
        if reason is None:
            reason, statement = _statement(known, change, row_key, sql_cache)
            if statement is not None:
                plan.append((statement[0], statement[1], change.id))
        if reason is not None:
            conflicts.append(Conflict(change.id, reason, now))
            continue
        if change.op == "delete":
            rows.pop(row_key, None)
        elif change.op == "update" and now is not None:
            rows[row_key] = {**now, **change.values}
        else:
            rows[row_key] = {**change.values, **dict(zip(known.key_columns, row_key, strict=True))}
    return plan, before, conflicts


def _conflict_reason(change: ChangeToApply, now: Item | None) -> str | None:
    if change.op == "create":
        return "an item with this key already exists" if now is not None else None
    if now is None:
        return "the item no longer exists"
    if change.pre_image is not None and now != change.pre_image:
        changed = [
            f"{name}: {change.pre_image.get(name, _MISSING)!r} → now {now.get(name)!r}"
            for name in sorted(set(now) | set(change.pre_image))
            if now.get(name, _MISSING) != change.pre_image.get(name, _MISSING)
        ]
        return "the item changed since it was staged (" + "; ".join(changed) + ")"
    return None


def _statement(
    schema: TableSchema,
    change: ChangeToApply,
    key: tuple[Any, ...],
    cache: dict[tuple[str, str, tuple[str, ...]], tuple[str | None, str | None]],
) -> tuple[str | None, tuple[str, tuple[Any, ...]] | None]:
    """The SQL and parameters of one change, or a reason it cannot be written."""
    given = tuple(change.values)
    cache_key = (schema.name, change.op, given)
    if cache_key not in cache:
        cache[cache_key] = _sql(schema, change.op, given)
    reason, sql = cache[cache_key]
    if reason is not None or sql is None:
        return reason, None
    values = tuple(change.values.values())
    if change.op == "delete":
        return None, (sql, key)
    return None, (sql, (*values, *key))


def _sql(schema: TableSchema, op: str, given: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(reason it cannot be written, None) or (None, the statement) for one shape of change."""
    table = quote_ident(schema.name)
    where = " AND ".join(f"{quote_ident(k)} = ?" for k in schema.key_columns)
    names: list[str] = []
    for name in given:
        column = schema.column(name)
        if column is None:
            return f"table {schema.name!r} has no column {name!r} any more", None
        if column.name in schema.key_columns:
            return f"{column.name} is a key column; put it in the key, not in values", None
        names.append(column.name)
    if op == "delete":
        return None, f"DELETE FROM {table} WHERE {where}"
    if op == "update":
        if not names:
            return None, None
        sets = ", ".join(f"{quote_ident(n)} = ?" for n in names)
        return None, f"UPDATE {table} SET {sets} WHERE {where}"
    cols = ", ".join(quote_ident(n) for n in (*names, *schema.key_columns))
    marks = ", ".join("?" * (len(names) + len(schema.key_columns)))
    return None, f"INSERT INTO {table} ({cols}) VALUES ({marks})"


def _execute(
    conn: sqlite3.Connection,
    plan: list[Planned],
    before: dict[str, Item | None],
    progress: Callable[[int, int], Any] | None,
    total: int,
) -> Conflict | None:
    """Run the plan as executemany batches; on a constraint failure name the change that caused it."""
    done = 0
    start = 0
    while start < len(plan):
        sql = plan[start][0]
        end = start
        while end < len(plan) and end - start < _BATCH and plan[end][0] == sql:
            end += 1
        batch = plan[start:end]
        conn.execute("SAVEPOINT batch")
        try:
            conn.executemany(sql, [p[1] for p in batch])
            conn.execute("RELEASE batch")
        except sqlite3.IntegrityError:
            conn.execute("ROLLBACK TO batch")
            for one_sql, params, change_id in batch:
                try:
                    conn.execute(one_sql, params)
                except sqlite3.IntegrityError as exc:
                    return Conflict(
                        change_id, f"rejected by the database: {exc}", before.get(change_id)
                    )
            raise
        done += len(batch)
        start = end
        if progress is not None:
            progress(min(done, total), total)
    return None
