"""Set-based staging of a bulk edit on a SQLite store: one INSERT … SELECT, no per-row Python.

The staging database and the store's file share one short-lived connection, and the staged
rows (key text, pre-image, id) are built by SQLite from the table itself in one statement, in
one read snapshot. A bulk edit selected by a query never brings its keys into Python: the store
first runs the query as it runs any read, up to its first row (read-only, its columns), then a
statement runs it as a subquery into a scratch table, in its own order, seeing only what the
store's read connection shows (`_only_the_store`); the INSERT joins that table to the store's.
The query runs before staging is attached and outside the caller's lock (it may run up to its
time limit), so meanwhile others read and stage as usual. The texts are the ones the row-by-row path writes: the pre-image through
`stores.sqlite_json` (exact, see there), an integer key inline, every other key through
`encoding.key_json`. Whenever this path cannot decide alone (an item already staged or selected
twice, a key with no item, more rows than one call stages, a value JSON cannot hold, an
unreadable file) it writes nothing and returns None, and the caller stages row by row, which
folds, refuses and explains as always. What it staged comes back as a `StagedBatch`, decoded
only where it is read.

Each staged row also records the store file's stamp (`stores.sqlite_snapshot`), taken before
and after the read (NULL when they differ): a commit that finds the file with the same stamp
knows no row changed since and need not compare them one by one.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from agent.staging.checks import MAX_ITEMS_PER_CALL, check_pre_image_names
from agent.staging.db import (
    BUSY_TIMEOUT_S,
    SECURE_DELETE,
    WAL_CHECKPOINT_PAGES,
    busy,
    busy_error,
)
from agent.staging.encoding import dumps, key_json, loads
from agent.staging.model import StagedChange
from agent.stores.base import Item, Key, Op, Store, TableShape
from agent.stores.sqlite_json import literal, register, row_json_sql
from agent.stores.sqlite_readonly import (
    QUERY_TIMEOUT_S,
    json_value,
    quote_ident,
    stopped_error,
    timeout_error,
)
from agent.stores.sqlite_snapshot import file_stamp

STAGING = "tt_stage"
"""The staging database's name on the shared connection (the store's file is `main`)."""
SCRATCH = "tt_scratch"
"""The in-memory database on the shared connection that holds the selected keys."""
BULK = f"{SCRATCH}.tt_bulk"
"""The selected keys (k0…kn) in staging order (n)."""
ID_SQL = "printf('%08x', ? + b.n)"
"""A new change id: 8 hex digits, like `encoding.take_ids`; one bulk edit's ids are a run from
a random start (`_free_start`), so the id index takes them in order instead of at 10,000
random places (a quarter of the INSERT's time)."""
ID_SPACE = 16**8
ID_ATTEMPTS = 5
"""Random starts drawn when their run holds a staged id (about 2% of 10,000-row edits next to
10,000 staged changes draw twice)."""


class StagedBatch(Sequence[StagedChange]):
    """The changes one set-based stage wrote, in staging order; each is decoded from its stored
    texts when it is read, so staging 10,000 items does not build 10,000 items nobody reads."""

    def __init__(
        self,
        shared: tuple[str, str, Op, Item, str, str],
        rows: list[tuple[str, str, str | None]],
    ) -> None:
        self._shared = shared  # store, table, op, values, origin, created_at
        self._rows = rows  # id, key_json, pre_image_json

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> StagedChange: ...

    @overload
    def __getitem__(self, index: slice) -> list[StagedChange]: ...

    def __getitem__(self, index: int | slice) -> StagedChange | list[StagedChange]:
        if isinstance(index, slice):
            return [self._change(row) for row in self._rows[index]]
        return self._change(self._rows[index])

    def __iter__(self) -> Iterator[StagedChange]:
        return map(self._change, self._rows)

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence (a list, say) of the same changes in the same order."""
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def _change(self, row: tuple[str, str, str | None]) -> StagedChange:
        store, table, op, values, origin, created_at = self._shared
        id_, key_text, pre_text = row
        pre_image = None if pre_text is None else loads(pre_text)
        return StagedChange(
            id_, store, table, loads(key_text), op, dict(values), pre_image, origin, created_at
        )


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
        conn.create_function("tt_key", len(keys), _key_json(keys), deterministic=True)
    except BaseException:
        conn.close()
        raise
    return conn


def _attach_staging(conn: sqlite3.Connection, staging: Path) -> None:
    """Attach the staging database writable, as durable as its own connections write."""
    conn.execute(f"ATTACH ? AS {STAGING}", (staging.resolve().as_uri(),))
    conn.execute(f"PRAGMA {STAGING}.synchronous=FULL")
    conn.execute(f"PRAGMA {STAGING}.secure_delete={SECURE_DELETE}")


def _insert_sql(shape: TableShape, op: Op, source: str) -> str:
    """INSERT … SELECT of one staged row per row of `source` (a FROM item `b` with the key
    columns k0…kn and the staging order n as its rowid), joined to the table `t`; a key without
    a row makes key_json NULL, so the statement fails on the NOT NULL and writes nothing."""
    keys = shape.key_columns
    columns = [c.name for c in shape.columns]
    join = " AND ".join(f"t.{quote_ident(k)} = b.k{i}" for i, k in enumerate(keys))
    missing = f"t.{quote_ident(keys[0])} IS NULL"
    return (
        f"INSERT INTO {STAGING}.staged_changes (id, store, tbl, key_json, op, values_json, "
        "pre_image_json, origin, created_at, snapshot) "
        f"SELECT {ID_SQL}, ?, ?, CASE WHEN {missing} THEN NULL ELSE {_key_sql(keys)} END, ?, ?, "
        f"{'NULL' if op == 'create' else row_json_sql('t', columns)}, ?, ?, ? "
        f"FROM {source} LEFT JOIN main.{quote_ident(shape.name)} t ON {join} ORDER BY b.n"
    )


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
) -> StagedBatch | None:
    """Stage `op` with `values` on the items of `raw_keys` in one statement; None when the
    row-by-row path must decide (nothing was written then)."""
    if store.sqlite_file is None or not raw_keys or not shape.key_columns:
        return None
    unique = list(
        dict.fromkeys(tuple(k.values()) for k in store.normalize_keys(shape.name, raw_keys))
    )
    width = len(shape.key_columns)
    key_cols = ", ".join(f"k{i}" for i in range(width))

    def fill(conn: sqlite3.Connection) -> None:
        conn.execute(f"CREATE TABLE {BULK} (n INTEGER PRIMARY KEY, {key_cols})")
        conn.executemany(
            f"INSERT INTO {BULK} ({key_cols}) VALUES (?{', ?' * (width - 1)})", unique
        )

    sql = _insert_sql(shape, op, f"{BULK} b")
    return _run(_Insert(store, staging, shape, op, values, origin, now, sql), fill, guard)


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
) -> StagedBatch | None:
    """Stage `op` with `values` on the items `query` selects, its keys never read into Python;
    None when the row-by-row path must decide (nothing was written then)."""
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

    sql = _insert_sql(shape, op, f"{BULK} b")
    return _run(_Insert(store, staging, shape, op, values, origin, now, sql), fill, guard)


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
    sql: str


def _run(
    insert: _Insert,
    fill: Callable[[sqlite3.Connection], None],
    guard: AbstractContextManager[object],
) -> StagedBatch | None:
    """Select the items (`fill`: the model's query may run up to its time limit), then, under
    `guard` (the caller's lock), run the INSERT in one short staging transaction; None (nothing
    written) when it cannot. The selection runs before the transaction, as the row-by-row path
    reads before it writes, so a long query holds no staging lock and no caller's lock."""
    store, staging = insert.store, insert.staging
    store_file = store.sqlite_file
    assert store_file is not None
    try:
        conn = _connect(store_file, insert.shape.key_columns)
    except sqlite3.Error:
        return None
    deadline = time.monotonic() + QUERY_TIMEOUT_S
    stopped: list[bool] = []
    conn.set_progress_handler(lambda: bool(stopped) or time.monotonic() > deadline, 10_000)
    try:
        with store.watch_stop(lambda: stopped.append(True)):
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
        if stopped:
            raise stopped_error() from exc
        raise timeout_error(QUERY_TIMEOUT_S) from exc
    finally:
        conn.close()


def _free_start(conn: sqlite3.Connection) -> int:
    """A random start for this edit's run of ids (start + 1 … start + n) that no staged id
    falls in (ids are 8 lowercase hex digits, so text order is number order); the INSERT's
    unique index still refuses any clash."""
    (count,) = conn.execute(f"SELECT count(*) FROM {BULK}").fetchone()
    start = secrets.randbelow(ID_SPACE - count)
    for _ in range(ID_ATTEMPTS):
        taken = conn.execute(
            f"SELECT 1 FROM {STAGING}.staged_changes WHERE id BETWEEN ? AND ? LIMIT 1",
            (f"{start + 1:08x}", f"{start + count:08x}"),
        ).fetchone()
        if taken is None:
            break
        start = secrets.randbelow(ID_SPACE - count)
    return start


def _write(insert: _Insert, conn: sqlite3.Connection) -> StagedBatch | None:
    """The staging transaction of `_run`; an interruption is rolled back and raised."""
    store, shape, op, values, origin, now = (
        insert.store, insert.shape, insert.op, insert.values, insert.origin, insert.now
    )  # fmt: skip
    store_file = store.sqlite_file
    assert store_file is not None
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if busy(exc):  # another process writes staging: the row-by-row path would wait again
                raise busy_error(insert.staging) from exc
            raise
        (before,) = conn.execute(
            f"SELECT coalesce(max(seq), 0) FROM {STAGING}.staged_changes"
        ).fetchone()
        stamp = file_stamp(store_file)
        shared = (store.identity, shape.name, op, dumps(values), origin, now, stamp)
        for attempt in range(ID_ATTEMPTS):
            try:
                conn.execute(insert.sql, (_free_start(conn), *shared))
                break
            except sqlite3.IntegrityError as exc:
                if "staged_changes.id" not in str(exc) or attempt == ID_ATTEMPTS - 1:
                    raise  # an item already staged, a key without an item: row by row
        rows = conn.execute(
            f"SELECT id, key_json, pre_image_json FROM {STAGING}.staged_changes "
            "WHERE seq > ? ORDER BY seq",
            (before,),
        ).fetchall()
        if not rows:
            conn.execute("ROLLBACK")
            return None  # nothing selected, or more than one call stages: row by row says so
        if stamp is not None and file_stamp(store_file) != stamp:
            # The store changed while it was read: the pre-images are exact, but no stamp
            # vouches for them, so a commit compares each one.
            conn.execute(
                f"UPDATE {STAGING}.staged_changes SET snapshot = NULL WHERE seq > ?", (before,)
            )
        conn.execute("COMMIT")
    except (_Undecided, sqlite3.Error, ValueError, TypeError, OverflowError) as exc:
        conn.set_progress_handler(None, 0)
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
            raise  # Stop or the time limit: said as a stopped read says it
        return None
    return StagedBatch((store.identity, shape.name, op, values, origin, now), rows)
