"""The embedding indexes of one store: build (incremental), refresh stale rows, search, drop.

One sidecar database per store (see `sidecar`). Per indexed table: its columns, model and
vector size, and per row the key, the embedded text and its hash; vectors sit in a `vec0`
table keyed by the row's item id. A commit marks the rows it touched stale (`mark_stale`);
the next search or build re-reads those rows and re-embeds the ones whose text changed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn

import apsw
import sqlite_vec

from agent.errors import TabletalkError
from agent.stores.base import Key, Store, TableInfo
from agent.vectors import knn
from agent.vectors.embedder import Embedder
from agent.vectors.location import sidecar_path
from agent.vectors.sidecar import (
    PARTITIONS,
    create_vector_tables,
    float_table,
    open_sidecar,
    vec_table,
)
from agent.vectors.source import key_json, read_rows, row_text, text_hash

log = logging.getLogger(__name__)

WRITE_CHUNK = 256
"""Rows embedded and written per sidecar transaction (progress survives an interruption)."""


class MissingIndex(TabletalkError):
    """The table has no embedding index."""


UNFINISHED = ""
"""`indexes.built_at` while a build runs or after one was interrupted (set when it ends)."""


def build_command(table: str) -> str:
    """The command that builds an index for `table`."""
    return f"tabletalk index build {table} --columns COLUMN[,COLUMN...]"


@dataclass(frozen=True)
class IndexMeta:
    """One table's index: what it embeds and with which model."""

    id: int
    table: str
    columns: tuple[str, ...]
    model: str
    dims: int
    coarse: bool = True  # bit vectors + float table; False: one float vec0 (older sidecars)

    @property
    def vec(self) -> str:
        """Its vec0 table (the bit vectors of the coarse pass, or older float vectors)."""
        return vec_table(self.id, self.coarse)

    @property
    def floats(self) -> str:
        """Its table of float vectors by item id."""
        return float_table(self.id)


@dataclass
class BuildPlan:
    """What a build will do: rows to embed (new or changed), item ids to drop, rows unchanged."""

    table: str
    columns: tuple[str, ...]
    embed: list[tuple[str, str, str]] = field(default_factory=list)  # key_json, text, hash
    drop: list[int] = field(default_factory=list)
    unchanged: int = 0
    fresh: bool = False  # no index yet, or a different column set/model/size: built anew


class VectorIndex:
    """The sidecar of one store, open."""

    def __init__(self, store: Store, conn: apsw.Connection) -> None:
        self.store = store
        self.conn = conn

    @classmethod
    def open(cls, store: Store) -> VectorIndex:
        conn = open_sidecar(store.identity)
        assert conn is not None
        return cls(store, conn)

    def close(self) -> None:
        self.conn.close()

    # -- reading -----------------------------------------------------------------------

    def get(self, table: str) -> IndexMeta | None:
        for row in self.conn.execute(
            "SELECT id, tbl, columns_json, model, dims, coarse FROM indexes WHERE tbl = ?",
            (table,),
        ):
            return IndexMeta(
                int(row[0]), str(row[1]), tuple(json.loads(row[2])), row[3], row[4], bool(row[5])
            )
        return None

    def require(self, table: str) -> IndexMeta:
        """The table's index (upgraded to the coarse-pass layout if it was made before)."""
        meta = self.get(table)
        if meta is None:
            self.missing(table)
        assert meta is not None
        return self.upgrade(meta)

    def upgrade(self, meta: IndexMeta) -> IndexMeta:
        """Copy an index of an older sidecar (one vec0 table of float vectors) into the
        coarse-pass layout; the vectors are kept, nothing is embedded again."""
        if meta.coarse:
            return meta
        new = IndexMeta(meta.id, meta.table, meta.columns, meta.model, meta.dims, True)
        with self.conn:
            create_vector_tables(self.conn, new.id, new.dims)
            self.conn.execute(
                f"INSERT INTO {new.floats} (id, embedding) SELECT rowid, embedding FROM {meta.vec}"
            )
            self.conn.execute(
                f"INSERT INTO {new.vec} (rowid, part, coarse) "
                f"SELECT id, id % {PARTITIONS}, vec_quantize_binary(embedding) FROM {new.floats}"
            )
            self.conn.execute(f"DROP TABLE {meta.vec}")
            self.conn.execute("UPDATE indexes SET coarse = 1 WHERE id = ?", (meta.id,))
        return new

    @staticmethod
    def missing(table: str) -> NoReturn:
        """Fail for a table without an index, naming the command that builds one."""
        raise MissingIndex(
            f"table '{table}' has no embedding index",
            fix=f"build one with `{build_command(table)}`",
        )

    def status(self) -> list[dict[str, Any]]:
        """Per index: table, columns, model, dims, rows indexed, stale rows, built time."""
        out = []
        for row in list(
            self.conn.execute("SELECT id, tbl, columns_json, model, dims, built_at FROM indexes")
        ):
            (rows,) = next(
                self.conn.execute("SELECT count(*) FROM items WHERE index_id = ?", (row[0],))
            )
            (stale,) = next(
                self.conn.execute("SELECT count(*) FROM stale WHERE tbl = ?", (row[1],))
            )
            out.append(
                {
                    "table": row[1],
                    "columns": json.loads(row[2]),
                    "model": row[3],
                    "dims": row[4],
                    "rows": rows,
                    "stale": stale,
                    "builtAt": None if row[5] == UNFINISHED else row[5],
                    "finished": row[5] != UNFINISHED,
                }
            )
        return out

    def size_bytes(self) -> int:
        """The sidecar's size on disk (with its write-ahead log)."""
        path = sidecar_path(self.store.identity)
        return sum(
            p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists()
        )

    # -- building ----------------------------------------------------------------------

    def plan(
        self, info: TableInfo, columns: Sequence[str] | None, model: str, dims: int
    ) -> BuildPlan:
        """Read the table and compare each row's text hash with what the index holds."""
        meta = self.get(info.name)
        if not columns:
            if meta is None:
                raise TabletalkError(
                    f"table '{info.name}' has no index yet: name the columns to embed",
                    fix=f"add --columns, e.g. `{build_command(info.name)}`",
                )
            columns = meta.columns
        cols = tuple(columns)
        fresh = meta is None or (meta.columns, meta.model, meta.dims) != (cols, model, dims)
        known: dict[str, tuple[int, str]] = {}
        if meta is not None and not fresh:
            for item_id, key, digest in self.conn.execute(
                "SELECT id, key_json, text_hash FROM items WHERE index_id = ?", (meta.id,)
            ):
                known[key] = (int(item_id), str(digest))
        plan = BuildPlan(info.name, cols, fresh=fresh)
        for key, text in read_rows(self.store, info, cols):
            if not text:
                continue  # nothing to embed (every chosen column empty): not indexed
            spelled, digest = key_json(key), text_hash(text)
            seen = known.pop(spelled, None)
            if seen is not None and seen[1] == digest:
                plan.unchanged += 1
            else:
                plan.embed.append((spelled, text, digest))
        plan.drop = [item_id for item_id, _ in known.values()]
        return plan

    def build(
        self,
        plan: BuildPlan,
        embedder: Embedder,
        on_progress: Callable[[int], None] | None = None,
    ) -> None:
        """Carry out a plan: embed its rows in chunks and write them; drop deleted rows."""
        meta = self.get(plan.table)
        if meta is None or plan.fresh:
            meta = self.create(plan.table, plan.columns, embedder.model_id, embedder.dims)
        meta = self.upgrade(meta)
        with self.conn:  # until the build ends, the index says it is not finished
            self.conn.execute("UPDATE indexes SET built_at = ? WHERE id = ?", (UNFINISHED, meta.id))
        self._drop_items(meta, plan.drop)
        for start in range(0, len(plan.embed), WRITE_CHUNK):
            chunk = plan.embed[start : start + WRITE_CHUNK]
            vectors = embedder.embed([text for _, text, _ in chunk], "document", on_progress)
            self.write(meta, chunk, vectors)
        with self.conn:
            self.conn.execute("DELETE FROM stale WHERE tbl = ?", (plan.table,))
            self.conn.execute("UPDATE indexes SET built_at = ? WHERE id = ?", (_now(), meta.id))

    def finished(self, table: str) -> bool:
        """False while a build of `table`'s index runs, or after one was interrupted (killed,
        failed): rows it had not embedded yet are missing from searches until a build ends."""
        for (built_at,) in self.conn.execute(
            "SELECT built_at FROM indexes WHERE tbl = ?", (table,)
        ):
            return bool(built_at != UNFINISHED)
        return True

    def create(self, table: str, columns: tuple[str, ...], model: str, dims: int) -> IndexMeta:
        """A new, empty index for `table` (replacing any it had)."""
        self.drop(table)
        with self.conn:
            self.conn.execute(
                "INSERT INTO indexes (tbl, columns_json, model, dims, built_at, coarse) "
                "VALUES (?, ?, ?, ?, ?, 1)",
                (table, json.dumps(list(columns)), model, int(dims), UNFINISHED),
            )
            meta = IndexMeta(int(self.conn.last_insert_rowid()), table, columns, model, dims)
            create_vector_tables(self.conn, meta.id, dims)
        return meta

    def write(
        self, meta: IndexMeta, rows: Sequence[tuple[str, str, str]], vectors: list[list[float]]
    ) -> None:
        """Store rows (key_json, text, text hash) with their vectors, replacing earlier ones."""
        vec, floats = meta.vec, meta.floats
        with self.conn:
            for (key, text, digest), vector in zip(rows, vectors, strict=True):
                found = list(
                    self.conn.execute(
                        "SELECT id FROM items WHERE index_id = ? AND key_json = ?", (meta.id, key)
                    )
                )
                if found:
                    item_id = int(found[0][0])
                    self.conn.execute(
                        "UPDATE items SET text = ?, text_hash = ? WHERE id = ?",
                        (text, digest, item_id),
                    )
                    self.conn.execute(f"DELETE FROM {vec} WHERE rowid = ?", (item_id,))
                    self.conn.execute(f"DELETE FROM {floats} WHERE id = ?", (item_id,))
                else:
                    self.conn.execute(
                        "INSERT INTO items (index_id, key_json, text_hash, text) VALUES (?,?,?,?)",
                        (meta.id, key, digest, text),
                    )
                    item_id = int(self.conn.last_insert_rowid())
                blob = sqlite_vec.serialize_float32(vector)
                self.conn.execute(
                    f"INSERT INTO {vec} (rowid, part, coarse) "
                    f"VALUES (?, ?, vec_quantize_binary(?))",
                    (item_id, item_id % PARTITIONS, blob),
                )
                self.conn.execute(
                    f"INSERT INTO {floats} (id, embedding) VALUES (?, ?)", (item_id, blob)
                )

    def _drop_items(self, meta: IndexMeta, item_ids: Iterable[int]) -> None:
        with self.conn:
            for item_id in item_ids:
                self.conn.execute("DELETE FROM items WHERE id = ?", (item_id,))
                self.conn.execute(f"DELETE FROM {meta.vec} WHERE rowid = ?", (item_id,))
                if meta.coarse:
                    self.conn.execute(f"DELETE FROM {meta.floats} WHERE id = ?", (item_id,))

    def drop(self, table: str) -> bool:
        """Remove a table's index; False when it had none."""
        meta = self.get(table)
        if meta is None:
            return False
        with self.conn:
            self.conn.execute(f"DROP TABLE IF EXISTS {meta.vec}")
            self.conn.execute(f"DROP TABLE IF EXISTS {meta.floats}")
            self.conn.execute("DELETE FROM items WHERE index_id = ?", (meta.id,))
            self.conn.execute("DELETE FROM stale WHERE tbl = ?", (table,))
            self.conn.execute("DELETE FROM indexes WHERE id = ?", (meta.id,))
        return True

    # -- stale rows --------------------------------------------------------------------

    def stale_keys(self, table: str) -> list[str]:
        return [
            str(r[0])
            for r in self.conn.execute("SELECT key_json FROM stale WHERE tbl = ?", (table,))
        ]

    def refresh(self, meta: IndexMeta, embedder: Embedder) -> int:
        """Re-read the table's stale rows: re-embed changed ones, drop deleted ones."""
        keys = self.stale_keys(meta.table)
        if not keys:
            return 0
        embed: list[tuple[str, str, str]] = []
        drop: list[int] = []
        for spelled in keys:
            item = self.store.get_item(meta.table, json.loads(spelled))
            found = list(
                self.conn.execute(
                    "SELECT id, text_hash FROM items WHERE index_id = ? AND key_json = ?",
                    (meta.id, spelled),
                )
            )
            text = row_text(meta.columns, item) if item is not None else ""
            if not text:
                drop.extend(int(r[0]) for r in found)
                continue
            digest = text_hash(text)
            if not found or found[0][1] != digest:
                embed.append((spelled, text, digest))
        self._drop_items(meta, drop)
        if embed:
            self.write(meta, embed, embedder.embed([t for _, t, _ in embed], "document"))
        with self.conn:
            for spelled in keys:
                self.conn.execute(
                    "DELETE FROM stale WHERE tbl = ? AND key_json = ?", (meta.table, spelled)
                )
        return len(embed) + len(drop)

    # -- searching ---------------------------------------------------------------------

    def nearest(self, meta: IndexMeta, vector: list[float], k: int) -> list[tuple[Key, float, str]]:
        """The k nearest rows: (key, cosine distance, indexed text), nearest first (a coarse
        pass and an exact re-rank on large indexes, see `knn`)."""
        if not meta.coarse:
            blob = sqlite_vec.serialize_float32(vector)
            hits = knn.legacy_exact(self.conn, meta.vec, blob, k)
        else:
            hits = knn.nearest(self.conn, meta.vec, meta.floats, vector, k, self.count(meta))
        return [(json.loads(key), distance, text) for key, distance, text in hits]

    def coarse_candidates(
        self, meta: IndexMeta, vector: list[float], n: int, among: Sequence[int] | None = None
    ) -> list[tuple[int, str]]:
        """(item id, key_json) of the n nearest rows by the coarse pass (only rows of `among`
        when given), nearest first."""
        ids = knn.coarse(self.conn, meta.vec, sqlite_vec.serialize_float32(vector), n, among)
        keys = self._keys_of(ids)
        return [(item_id, keys[item_id]) for item_id in ids if item_id in keys]

    def _keys_of(self, item_ids: Sequence[int]) -> dict[int, str]:
        sql = "SELECT id, key_json FROM items WHERE id IN (SELECT value FROM json_each(?))"
        return {int(a): str(b) for a, b in self.conn.execute(sql, (json.dumps(list(item_ids)),))}

    def item_ids(self, meta: IndexMeta, spelled_keys: Sequence[str]) -> list[int]:
        """The item ids of the rows with these keys (as `key_json` spells them) that are indexed."""
        sql = (
            "SELECT id FROM items WHERE index_id = ? "
            "AND key_json IN (SELECT value FROM json_each(?))"
        )
        return [
            int(r[0]) for r in self.conn.execute(sql, (meta.id, json.dumps(list(spelled_keys))))
        ]

    def nearest_among(
        self, meta: IndexMeta, vector: list[float], item_ids: Sequence[int], k: int
    ) -> list[tuple[Key, float, str]]:
        """The k of `item_ids` nearest by exact cosine distance, nearest first."""
        blob = sqlite_vec.serialize_float32(vector)
        hits = knn.rerank(self.conn, meta.floats, blob, item_ids, k)
        return [(json.loads(key), distance, text) for key, distance, text in hits]

    def count(self, meta: IndexMeta) -> int:
        (n,) = next(self.conn.execute("SELECT count(*) FROM items WHERE index_id = ?", (meta.id,)))
        return int(n)


def mark_stale(identity: str, touched: Iterable[tuple[str, Key]]) -> int:
    """Mark rows a commit changed as stale in the store's indexes; nothing to do (and no file
    opened) when the store has no sidecar. Returns how many rows were marked."""
    if not sidecar_path(identity).exists():
        return 0
    conn = open_sidecar(identity, create=False)
    if conn is None:
        return 0
    try:
        indexed = {str(r[0]) for r in conn.execute("SELECT tbl FROM indexes")}
        marks = [(table, key_json(key)) for table, key in touched if table in indexed]
        if marks:
            with conn:
                conn.executemany("INSERT OR IGNORE INTO stale (tbl, key_json) VALUES (?, ?)", marks)
        return len(marks)
    finally:
        conn.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
