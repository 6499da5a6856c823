"""Set-based staging of a bulk edit on a SQLite store: one INSERT … SELECT, no per-row Python.

The staging database and the store's file share one short-lived connection, and the staged
items (key text, pre-image values) are copied by SQLite from the table itself in one statement,
in one read snapshot, into the edit's compact form (`staging.batches`: a header row and an item
table; the JSON texts of its changes are built only when read). A bulk edit selected by a query
never brings its keys into Python: the store first runs the query as it runs any read, up to
its first row (read-only, its columns), then a statement runs it as a subquery into a scratch
table, in its own order, seeing only what the store's read connection shows
(`_only_the_store`); the INSERT joins that table to the store's. The query runs before staging
is attached and outside the caller's lock (it may run up to its time limit), so meanwhile
others read and stage as usual. The key text is the one the row-by-row path writes: an integer
key inline, every other key through `encoding.key_json`. Whenever this path cannot decide alone
(an item already staged or selected twice, a key with no item, more rows than one call stages,
a value JSON cannot hold, an unreadable file) it writes nothing and returns None, and the
caller stages row by row, which folds, refuses and explains as always. What it staged comes
back as a `StagedBatch`, built only where it is read.

The header also records the store file's stamp (`stores.sqlite_snapshot`), taken before and
after the read (NULL when they differ): a commit that finds the file with the same stamp knows
no row changed since and need not compare them one by one."""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.staging import batches
from agent.staging.bulk_sql import (
    STAGING,
    finite_sql,
    insert_sql,
    key_json_function,
    left_out_sql,
    left_out_staged_sql,
)
from agent.staging.checks import MAX_ITEMS_PER_CALL, check_pre_image_names
from agent.staging.db import (
    BUSY_TIMEOUT_S,
    SECURE_DELETE,
    WAL_CHECKPOINT_PAGES,
    busy,
    busy_error,
)
from agent.staging.encoding import dumps
from agent.staging.model import BulkStaged
from agent.staging.staged_batch import StagedBatch
from agent.stop import reads_should_stop
from agent.stores.base import Item, Key, Op, Store, TableShape, stopped_error
from agent.stores.sqlite_holds import holds_sql
from agent.stores.sqlite_json import register
from agent.stores.sqlite_readonly import QUERY_TIMEOUT_S, timeout_error
from agent.stores.sqlite_snapshot import file_stamp

SCRATCH = "tt_scratch"
"""The in-memory database on the shared connection that holds the selected keys."""
BULK = f"{SCRATCH}.tt_bulk"
"""The selected keys (k0…kn) in staging order (n)."""
"""A new change id is 8 hex digits, like `encoding.take_ids`; one bulk edit's ids are a run
from a random start (`_free_start`): the n-th item's id is start + n."""
PREFIX = 100
"""Changes a set-based stage reads back at once (a summary shows the first few)."""
COMPACT_MIN = 500
"""Edits of fewer items become ordinary rows in the same transaction: every compact edit keeps
a table (its items, kept as history once committed), and thousands of small tables would make
every staging connection parse them all (5,000: ~35 ms an open, 42 MB). With this floor the
history's `keep_changes` bounds them (200,000 changes: at most 400 tables)."""
ID_SPACE = 16**8
ID_ATTEMPTS = 5
"""Random starts drawn when their run holds a staged id (about 2% of 10,000-row edits next to
10,000 staged changes draw twice)."""


def _connect(store_file: Path, keys: tuple[str, ...]) -> sqlite3.Connection:
    """The store's file read-only as `main` (so a query's table names are the store's), an
    in-memory scratch database for the selected keys, and the SQL functions the statement
    uses; staging is attached once the selection is made (`_attach_staging`)."""
    conn = sqlite3.connect(
        f"{store_file.resolve().as_uri()}?mode=ro",
        uri=True,
        isolation_level=None,
        timeout=BUSY_TIMEOUT_S,
    )
    try:
        conn.execute(f"ATTACH ':memory:' AS {SCRATCH}")
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        register(conn)
        conn.create_function("tt_key", len(keys), key_json_function(keys), deterministic=True)
    except BaseException:
        conn.close()
        raise
    return conn


def _attach_staging(conn: sqlite3.Connection, staging: Path) -> None:
    """Attach the staging database writable, as durable as its own connections write."""
    conn.execute(f"ATTACH ? AS {STAGING}", (staging.resolve().as_uri(),))
    conn.execute(f"PRAGMA {STAGING}.synchronous=FULL")
    conn.execute(f"PRAGMA {STAGING}.secure_delete={SECURE_DELETE}")


def stage_set_based(
    store: Store,
    staging: Path,
    shape: TableShape,
    op: Op,
    raw_keys: list[Key],
    values: Item,
    origin: str,
    now: str,
    guard: AbstractContextManager[object],
    *,
    skip_unchanged: bool = False,
) -> BulkStaged | None:
    """Stage `op` with `values` on the items of `raw_keys` in one statement (with
    `skip_unchanged`, not on those already holding them); None when the row-by-row path must
    decide (nothing was written then)."""
    if store.sqlite_file is None or not raw_keys or not shape.key_columns:
        return None
    unique = list(
        dict.fromkeys(tuple(k.values()) for k in store.normalize_keys(shape.name, raw_keys))
    )
    width = len(shape.key_columns)
    key_cols = ", ".join(f"k{i}" for i in range(width))

    def fill(conn: sqlite3.Connection) -> None:
        conn.execute(f"CREATE TABLE {BULK} (n INTEGER PRIMARY KEY, {key_cols})")
        conn.executemany(f"INSERT INTO {BULK} ({key_cols}) VALUES (?{', ?' * (width - 1)})", unique)

    return _run(
        _Insert(store, staging, shape, op, values, origin, now, skip_unchanged), fill, guard
    )


def stage_query_set_based(
    store: Store,
    staging: Path,
    shape: TableShape,
    op: Op,
    query: str,
    values: Item,
    origin: str,
    now: str,
    guard: AbstractContextManager[object],
    *,
    skip_unchanged: bool = False,
) -> BulkStaged | None:
    """Stage `op` with `values` on the items `query` selects (with `skip_unchanged`, those not
    already holding them), its keys never read into Python; None when the row-by-row path
    must decide (nothing was written then)."""
    if store.sqlite_file is None or not shape.key_columns:
        return None
    body = query.strip()
    while body.endswith(";"):
        body = body[:-1].rstrip()
    # The store's own checks of a read (one read-only statement, stoppable, timed), run up to
    # its first row, give its columns; an error here is the one the row-by-row path would give.
    columns = store.query(body, limit=0).columns
    by_lower = {c.lower(): i for i, c in enumerate(columns)}
    picks = [by_lower.get(k.lower()) for k in shape.key_columns]
    if len(by_lower) != len(columns) or None in picks:
        return None
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    width = len(picks)
    key_cols = ", ".join(f"k{i}" for i in range(width))

    def fill(conn: sqlite3.Connection) -> None:
        # The query's rows in its own order (a lone source with no ORDER BY around it keeps
        # the query's ORDER BY); a key selected twice makes the INSERT fail on the item index,
        # and the row-by-row path folds it, as it does more rows than one call stages.
        conn.execute(f"CREATE TABLE {BULK} (n INTEGER PRIMARY KEY, {key_cols})")
        conn.set_authorizer(_only_the_store)
        try:
            found = conn.execute(
                f"INSERT INTO {BULK} ({key_cols}) WITH tt_q({names}) AS (\n{body}\n) "
                f"SELECT {', '.join(f'c{p}' for p in picks)} FROM tt_q "
                f"LIMIT {MAX_ITEMS_PER_CALL + 1}"
            ).rowcount
        finally:
            conn.set_authorizer(None)
        if not 0 < found <= MAX_ITEMS_PER_CALL:
            raise _Undecided
        check_pre_image_names(shape, found)

    return _run(
        _Insert(store, staging, shape, op, values, origin, now, skip_unchanged), fill, guard
    )


def _only_the_store(
    action: int, arg1: str | None, _arg2: str | None, db: str | None, _src: str | None
) -> int:
    """The authorizer while the model's query fills the scratch table: it reads what the
    store's own read connection shows (the store checked and ran the query there) and fills
    the scratch table, nothing else. The scratch database is the one thing here that
    connection lacks, and the ways to see it by another name (a pragma listing every schema,
    dbstat) are refused: a refusal fails the statement, and the row-by-row path runs the
    query on the store alone. Staging is not attached yet."""
    if action == sqlite3.SQLITE_INSERT:
        return sqlite3.SQLITE_OK if (arg1, db) == ("tt_bulk", SCRATCH) else sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_READ:
        return sqlite3.SQLITE_DENY if db == SCRATCH or arg1 == "dbstat" else sqlite3.SQLITE_OK
    if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class _Undecided(Exception):
    """This path cannot decide: roll back and let the row-by-row path stage."""


@dataclass(frozen=True)
class _Insert:
    """One set-based stage: where it reads and writes, what it stages, and its INSERT."""

    store: Store
    staging: Path
    shape: TableShape
    op: Op
    values: Item
    origin: str
    now: str
    skip_unchanged: bool = False
    """Leave out the items that already hold `values` (an update; `sqlite_holds.holds_sql`)."""

    def unchanged_sql(self) -> tuple[str, list[Any]] | None:
        """The condition on `t` of an item the update would not change, or None (stage all)."""
        if not self.skip_unchanged or self.op != "update":
            return None
        return holds_sql("t", self.shape.columns, self.values)


def _run(
    insert: _Insert,
    fill: Callable[[sqlite3.Connection], None],
    guard: AbstractContextManager[object],
) -> BulkStaged | None:
    """Select the items (`fill`: the model's query may run up to its time limit), then, under
    `guard` (the caller's lock), run the INSERT in one short staging transaction; None (nothing
    written) when it cannot. The selection runs before the transaction, as the row-by-row path
    reads before it writes, so a long query holds no staging lock and no caller's lock."""
    store, staging = insert.store, insert.staging
    store_file = store.sqlite_file
    assert store_file is not None
    if reads_should_stop():  # Stop came before the selection began
        raise stopped_error()
    try:
        conn = _connect(store_file, insert.shape.key_columns)
    except sqlite3.Error:
        return None
    deadline = time.monotonic() + QUERY_TIMEOUT_S
    conn.set_progress_handler(lambda: time.monotonic() > deadline or reads_should_stop(), 10_000)
    try:
        try:
            fill(conn)
            _attach_staging(conn, staging)
        except (_Undecided, sqlite3.Error, ValueError, TypeError, OverflowError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
                raise
            return None
        with guard:
            return _write(insert, conn)
    except sqlite3.OperationalError as exc:  # interrupted (rolled back: nothing was written)
        if reads_should_stop():
            raise stopped_error() from exc
        raise timeout_error(QUERY_TIMEOUT_S) from exc
    finally:
        conn.close()


def _free_start(conn: sqlite3.Connection, count: int) -> int | None:
    """A random start for this edit's run of ids (start + 1 … start + count) that no staged id
    (of a row or of a compact batch) falls in (ids are 8 lowercase hex digits, so text order is
    number order); None when every draw was taken."""
    for _ in range(ID_ATTEMPTS):
        start = secrets.randbelow(ID_SPACE - count)
        taken = conn.execute(
            f"SELECT 1 FROM {STAGING}.staged_changes WHERE id BETWEEN ? AND ? UNION ALL "
            f"SELECT 1 FROM {STAGING}.staged_batches WHERE commit_id IS NULL "
            "AND id_start < ? AND ? < id_start + count LIMIT 1",
            (f"{start + 1:08x}", f"{start + count:08x}", start + count, start),
        ).fetchone()
        if taken is None:
            return start
    return None


def _table_has_rows(conn: sqlite3.Connection, insert: _Insert) -> bool:
    """True when the edit's table has a staged change as a `staged_changes` row."""
    mine = (insert.store.identity, insert.shape.name)
    found = conn.execute(
        f"SELECT 1 FROM {STAGING}.staged_changes WHERE store = ? AND tbl = ? LIMIT 1", mine
    ).fetchone()
    return found is not None


def _clashes(conn: sqlite3.Connection, insert: _Insert, batch: int) -> bool:
    """True when an item of this edit already has a staged change (the row-by-row path folds
    or refuses); the caller turned the table's other compact edits into rows first."""
    if not _table_has_rows(conn, insert):
        return False
    mine = (insert.store.identity, insert.shape.name)
    found = conn.execute(
        f"SELECT 1 FROM {STAGING}.{batches.items_table(batch)} b JOIN {STAGING}.staged_changes s "
        "ON s.store = ? AND s.tbl = ? AND s.key_json = b.tt_key LIMIT 1",
        mine,
    ).fetchone()
    return found is not None


def _expand_the_tables(conn: sqlite3.Connection, insert: _Insert) -> None:
    """Another compact edit of this table is staged: the store's compact edits become rows
    (same ids, order and texts), so the item index sees every staged change of the table."""
    other = conn.execute(
        f"SELECT 1 FROM {STAGING}.staged_batches WHERE commit_id IS NULL AND store = ? "
        "AND tbl = ? LIMIT 1",
        (insert.store.identity, insert.shape.name),
    ).fetchone()
    if other is not None:
        batches.expand(conn, insert.store.identity, STAGING)


def _write(insert: _Insert, conn: sqlite3.Connection) -> BulkStaged | None:
    """The staging transaction of `_run`: the batch's header and items (`staging.batches`),
    without the items left out as unchanged (none staged when every one is); an interruption
    is rolled back and raised."""
    store, shape, op, values, origin, now = (
        insert.store, insert.shape, insert.op, insert.values, insert.origin, insert.now
    )  # fmt: skip
    store_file = store.sqlite_file
    assert store_file is not None
    columns = [c.name for c in shape.columns]
    if {c.lower() for c in columns} & set(batches.ITEM_COLUMNS):
        return None
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if busy(exc):  # another process writes staging: the row-by-row path would wait again
                raise busy_error(insert.staging) from exc
            raise
        _expand_the_tables(conn, insert)
        (selected,) = conn.execute(f"SELECT count(*) FROM {BULK}").fetchone()
        start = _free_start(conn, selected)
        if start is None:
            raise _Undecided
        stamp = file_stamp(store_file)
        batch = conn.execute(
            f"INSERT INTO {STAGING}.staged_batches (store, tbl, op, values_json, origin, "
            "created_at, snapshot, id_start, count, columns_json) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
            (store.identity, shape.name, op, dumps(values), origin, now, stamp, start,
             json.dumps(columns)),
        ).lastrowid  # fmt: skip
        assert batch is not None
        items = batches.items_table(batch)
        conn.execute(batches.create_items_sql(STAGING, batch, columns))
        judged = insert.unchanged_sql()
        condition, params = judged if judged is not None else (None, [])
        sql = insert_sql(shape, op, f"{BULK} b", items, condition)
        count = conn.execute(sql, params).rowcount
        left_rows = left_out = 0
        if condition is not None and count < selected:
            source = f"{BULK} b"
            sql = left_out_sql(shape, source, condition)
            left_rows, left_out = conn.execute(sql, params).fetchone()
            mine = [store.identity, shape.name]
            if (
                _table_has_rows(conn, insert)
                and conn.execute(
                    left_out_staged_sql(shape, source, condition), [*params, *mine]
                ).fetchone()
            ):
                raise _Undecided  # row by row folds into the item's change, or leaves it out
        if count + left_rows != selected or selected == 0:
            raise _Undecided  # nothing selected: row by row says so
        if count == 0:  # every item already holds the values: nothing is staged
            conn.execute("ROLLBACK")
            return BulkStaged([], unchanged=left_out)
        if _clashes(conn, insert, batch):
            raise _Undecided  # an item already staged: row by row
        if conn.execute(finite_sql(items, shape)).fetchone() is not None:
            raise _Undecided  # JSON cannot hold it: row by row says so
        small = count < COMPACT_MIN
        read = (1, count if small else PREFIX)
        first = conn.execute(StagedBatch.read_sql(f"{STAGING}.{items}", columns, op), read)
        rows = first.fetchall()  # the rest is read when asked for (most callers read a few)
        same_file = stamp is not None and file_stamp(store_file) == stamp
        # The store changed while it was read: the pre-images are exact, but no stamp vouches
        # for them, so a commit compares each one.
        conn.execute(
            f"UPDATE {STAGING}.staged_batches SET count = ?, snapshot = ? WHERE batch = ?",
            (count, stamp if same_file else None, batch),
        )
        if small:  # every staged batch, in order (compact ones come after every row)
            batches.expand(conn, db=STAGING)
        conn.execute("COMMIT")
    except (_Undecided, sqlite3.Error, ValueError, TypeError, OverflowError) as exc:
        conn.set_progress_handler(None, 0)
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
            raise  # Stop or the time limit: said as a stopped read says it
        return None
    names = None if op == "create" else tuple(columns)
    shared = (store.identity, shape.name, op, values, origin, now)
    where = None if small else (insert.staging, batch)
    return BulkStaged(StagedBatch(shared, start, names, count, rows, where), unchanged=left_out)
