"""The vector sidecar database of one store: where it lives, how it opens, its schema.

Vectors are searched with sqlite-vec (a `vec0` virtual table per index, cosine distance).
It is loaded through apsw, which bundles SQLite with extension loading enabled: Python
builds without `sqlite3.Connection.enable_load_extension` (pyenv's default) are common.
The store itself is never opened through apsw; only this sidecar is.
"""

from __future__ import annotations

import apsw
import sqlite_vec

from agent.errors import TabletalkError
from agent.vectors.location import sidecar_path

SCHEMA = """
CREATE TABLE IF NOT EXISTS indexes (
    id INTEGER PRIMARY KEY,
    tbl TEXT NOT NULL UNIQUE,
    columns_json TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL,
    built_at TEXT NOT NULL,
    coarse INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    index_id INTEGER NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
    key_json TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (index_id, key_json)
);
CREATE TABLE IF NOT EXISTS stale (
    tbl TEXT NOT NULL,
    key_json TEXT NOT NULL,
    PRIMARY KEY (tbl, key_json)
);
"""


def open_sidecar(identity: str, *, create: bool = True) -> apsw.Connection | None:
    """The sidecar connection with sqlite-vec loaded; None when it does not exist and
    `create` is False."""
    path = sidecar_path(identity)
    if not path.exists():
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    conn.set_busy_timeout(5000)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(SCHEMA)
        columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(indexes)")}
        if "coarse" not in columns:  # made before the coarse pass: its vec0 tables lack it
            conn.execute("ALTER TABLE indexes ADD COLUMN coarse INTEGER NOT NULL DEFAULT 0")
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        conn.close()
        raise TabletalkError(
            f"The vector index file {path} is damaged ({exc})",
            fix=f"Move it aside (mv '{path}' '{path}.damaged'); then `tabletalk index build "
            "TABLE` builds the index again (embedding costs apply).",
        ) from exc
    return conn


PARTITIONS = 16
"""Partitions of each index's bit vectors (by item id); the coarse pass asks each for its
nearest rows, which keeps sqlite-vec's top-k selection cheap (see `knn`)."""


def vec_table(index_id: int, coarse: bool = True) -> str:
    """The vec0 table of one index: `vecb_N` holds each row's sign bits (the coarse pass,
    partitioned by item id), next to `vecf_N` (see `float_table`); `vec_N` (older sidecars)
    holds only float vectors."""
    return f"vecb_{int(index_id)}" if coarse else f"vec_{int(index_id)}"


def float_table(index_id: int) -> str:
    """The plain table of one index's float vectors, read by item id for the exact re-rank."""
    return f"vecf_{int(index_id)}"


def create_vector_tables(conn: apsw.Connection, index_id: int, dims: int) -> None:
    """The bit vec0 table and the float table of a new index."""
    conn.execute(
        f"CREATE VIRTUAL TABLE {vec_table(index_id)} USING vec0("
        f"part integer partition key, coarse bit[{int(dims)}])"
    )
    conn.execute(
        f"CREATE TABLE {float_table(index_id)} (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)"
    )


def has_index(identity: str) -> bool:
    """Whether any table of the store has an index (cheap: no file, no index)."""
    path = sidecar_path(identity)
    if not path.exists():
        return False
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            rows = list(conn.execute("SELECT 1 FROM indexes LIMIT 1"))
        finally:
            conn.close()
    except apsw.Error:
        return False
    return bool(rows)
