"""Compact bulk edits: one header row per set-based bulk edit and one narrow row per item.

A bulk edit staged set-based (`staging.bulk`) writes a header in `staged_batches` (store,
table, op, values, origin, time, the store file's stamp, the run of ids, the column names) and
a table `staged_batch_<n>` holding, per item in staging order (`tt_n`), the key text
(`tt_key`, unique) and the pre-image in the table's own columns, copied value for value (no
declared types, so every value keeps its storage class). The JSON texts a `staged_changes` row
holds are built only when read (`select_sql`, the same `sqlite_json` rendering the row path
writes), so a batch reads back exactly as the rows staging it row by row would have written.

Compact batches always come after every `staged_changes` row in staging order: a transaction
that does not know them (`db.transaction`, the default) first turns every staged batch into
ordinary rows (`expand`, same ids, texts and order), so code that reads or writes
`staged_changes` never misses one. Listing, counting, a whole-store commit of a lone batch and
the history read batches as they are. A committed batch stays as history: its header gets the
commit's id (`land`) instead of its rows being copied, and the retention policy drops it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import cast

from agent.staging.encoding import loads
from agent.staging.model import StagedChange
from agent.stores.base import Op
from agent.stores.sqlite_json import row_json_sql
from agent.stores.sqlite_readonly import quote_ident

SCHEMA = """
CREATE TABLE IF NOT EXISTS staged_batches (
    batch INTEGER PRIMARY KEY,
    store TEXT NOT NULL,
    tbl TEXT NOT NULL,
    op TEXT NOT NULL,
    values_json TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    snapshot TEXT,
    id_start INTEGER NOT NULL,
    count INTEGER NOT NULL,
    columns_json TEXT NOT NULL,
    commit_id TEXT  -- NULL while staged, else the commit that landed it (then it is history)
);
CREATE INDEX IF NOT EXISTS staged_batches_commit ON staged_batches (commit_id);
"""

ITEM_COLUMNS = ("tt_n", "tt_key")
"""The item table's own columns: staging order and key text (a table column of either name
keeps the bulk edit on the row-by-row path)."""


@dataclass(frozen=True)
class Batch:
    """One header row of `staged_batches`."""

    batch: int
    store: str
    table: str
    op: str
    values_json: str
    origin: str
    created_at: str
    snapshot: str | None
    id_start: int
    count: int
    columns: tuple[str, ...]

    @property
    def items(self) -> str:
        """The name of its item table."""
        return items_table(self.batch)

    @property
    def first_id(self) -> str:
        return f"{self.id_start + 1:08x}"

    @property
    def last_id(self) -> str:
        return f"{self.id_start + self.count:08x}"

    def ids(self) -> list[str]:
        """Its change ids in staging order."""
        start = self.id_start
        return [f"{start + n:08x}" for n in range(1, self.count + 1)]


HEADER = (
    "batch, store, tbl, op, values_json, origin, created_at, snapshot, id_start, count, "
    "columns_json"
)


def items_table(batch: int) -> str:
    """The item table of batch `batch`."""
    return f"staged_batch_{batch}"


def create_items_sql(db: str, batch: int, columns: list[str]) -> str:
    """CREATE TABLE of a batch's items in database `db` (no declared types: values as read)."""
    natives = "".join(f", {quote_ident(c)}" for c in columns)
    return (
        f"CREATE TABLE {db}.{items_table(batch)} "
        f"(tt_n INTEGER PRIMARY KEY, tt_key TEXT NOT NULL UNIQUE{natives})"
    )


def header(row: tuple[object, ...]) -> Batch:
    """A Batch from a header row (HEADER's columns); ValueError/TypeError if malformed."""
    *head, columns_json = row
    columns = json.loads(str(columns_json))
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise ValueError("malformed column list")
    batch = Batch(*head, tuple(columns))  # type: ignore[arg-type, call-arg]
    if not all(isinstance(v, int) for v in (batch.batch, batch.id_start, batch.count)):
        raise TypeError("malformed batch header")
    return batch


def staged(conn: sqlite3.Connection, store: str | None = None, db: str = "main") -> list[Batch]:
    """The staged (not committed) batches, of `store` or all, in staging order."""
    sql = f"SELECT {HEADER} FROM {db}.staged_batches WHERE commit_id IS NULL"
    params: tuple[object, ...] = ()
    if store is not None:
        sql += " AND store = ?"
        params = (store,)
    return [header(r) for r in conn.execute(sql + " ORDER BY batch", params)]


def any_staged(conn: sqlite3.Connection) -> bool:
    """True when some batch is staged (one indexed lookup)."""
    row = conn.execute("SELECT 1 FROM staged_batches WHERE commit_id IS NULL LIMIT 1")
    return row.fetchone() is not None


def count(conn: sqlite3.Connection, store: str) -> int:
    """How many changes `store`'s staged batches hold."""
    row = conn.execute(
        "SELECT coalesce(sum(count), 0) FROM staged_batches WHERE commit_id IS NULL AND store = ?",
        (store,),
    ).fetchone()
    return int(row[0])


def select_sql(batch: Batch, db: str = "main", snapshot: bool = False) -> str:
    """SELECT of a batch's changes as `staged_changes` rows (db.COLUMNS, then `snapshot` if
    asked), in staging order; the header's values are literals, so a store reading it set-based
    needs no join (and no pre-image text is built unless it is read)."""
    from agent.stores.sqlite_json import literal

    def text(value: str | None) -> str:
        return "NULL" if value is None else literal(value)

    pre = "NULL" if batch.op == "create" else row_json_sql("b", list(batch.columns))
    tail = f", {text(batch.snapshot)} AS snapshot" if snapshot else ""
    return (
        f"SELECT printf('%08x', {batch.id_start} + b.tt_n) AS id, {text(batch.store)} AS store, "
        f"{text(batch.table)} AS tbl, b.tt_key AS key_json, {text(batch.op)} AS op, "
        f"{text(batch.values_json)} AS values_json, {pre} AS pre_image_json, "
        f"{text(batch.origin)} AS origin, {text(batch.created_at)} AS created_at{tail} "
        f"FROM {db}.{batch.items} b"
    )


def select_template(batch: Batch) -> str:
    """`select_sql` (with the snapshot) as a `StagedSource` template: every brace doubled and
    the item table's database named `{db}` in its FROM clause only (literals hold any text)."""
    sql = select_sql(batch, snapshot=True).replace("{", "{{").replace("}", "}}")
    source = f"FROM main.{batch.items} b"
    assert sql.endswith(source)
    return f"{sql[: -len(source)]}FROM {{db}}.{batch.items} b"


def changes(conn: sqlite3.Connection, batch: Batch) -> list[StagedChange]:
    """A batch's changes, built from its key texts and pre-image values (no JSON text), equal
    to those its rows decode to."""
    from agent.staging.staged_batch import StagedBatch

    read = StagedBatch.read_sql(f"main.{batch.items}", list(batch.columns), batch.op)
    found = conn.execute(read, (1, batch.count)).fetchall()
    op = cast(Op, batch.op)
    shared = (
        batch.store,
        batch.table,
        op,
        loads(batch.values_json),
        batch.origin,
        batch.created_at,
    )
    columns = None if batch.op == "create" else batch.columns
    return list(StagedBatch(shared, batch.id_start, columns, batch.count, found, None))


def rows(conn: sqlite3.Connection, batch: Batch) -> list[tuple[object, ...]]:
    """A batch's changes as `staged_changes` rows (db.COLUMNS), in staging order."""
    return conn.execute(select_sql(batch) + " ORDER BY b.tt_n").fetchall()


def expand(conn: sqlite3.Connection, store: str | None = None, db: str = "main") -> None:
    """Turn the staged batches (of `store`, or all) into `staged_changes` rows at the end of
    the staging order, same ids and texts (inside the caller's write transaction).

    An item that already has a row was staged after the batch by a process of the previous
    version (it checked the schema when it opened the file and does not see batches): that
    later change stays the item's, as it would have folded over the batch's; failing here
    instead would stop every staging transaction, discards included."""
    for batch in staged(conn, store, db):
        conn.execute(
            f"INSERT INTO {db}.staged_changes (id, store, tbl, key_json, op, values_json, "
            "pre_image_json, origin, created_at, snapshot) "
            f"{select_sql(batch, db, snapshot=True)} WHERE true ORDER BY b.tt_n "
            "ON CONFLICT (store, tbl, key_json) DO NOTHING"
        )
        drop(conn, batch.batch, db)


def drop(conn: sqlite3.Connection, batch: int, db: str = "main") -> None:
    """Forget a batch: its items and its header."""
    conn.execute(f"DROP TABLE IF EXISTS {db}.{items_table(batch)}")
    conn.execute(f"DELETE FROM {db}.staged_batches WHERE batch = ?", (batch,))


def land(conn: sqlite3.Connection, ids: list[str], commit_id: str) -> list[str]:
    """Log the staged batches `ids` covers whole as landed in `commit_id` (they stay, as its
    history) and return the ids left to forget row by row; when `ids` covers a batch in part,
    every batch becomes rows first (inside the caller's write transaction)."""
    found = staged(conn)
    if not found:
        return ids
    whole = []
    for batch in found:
        first, last = batch.first_id, batch.last_id
        mine = {i for i in ids if first <= i <= last}  # ids are 8 lowercase hex digits
        if mine and len(mine) != batch.count:
            expand(conn)
            return ids
        if mine:
            whole.append(batch)
    left = ids
    for batch in whole:
        conn.execute(
            "UPDATE staged_batches SET commit_id = ? WHERE batch = ?", (commit_id, batch.batch)
        )
        conn.execute(
            "UPDATE commit_log SET changes = changes + ? WHERE id = ?", (batch.count, commit_id)
        )
        first, last = batch.first_id, batch.last_id
        left = [i for i in left if not first <= i <= last]
    return left


def committed(conn: sqlite3.Connection, commit_id: str) -> list[Batch]:
    """The batches a commit landed, in staging order."""
    return [
        header(r)
        for r in conn.execute(
            f"SELECT {HEADER} FROM staged_batches WHERE commit_id = ? ORDER BY batch",
            (commit_id,),
        )
    ]


def drop_committed(conn: sqlite3.Connection, commit_id: str) -> None:
    """Forget the batches of a commit the history no longer keeps."""
    for batch in committed(conn, commit_id):
        drop(conn, batch.batch)
