"""A semantic search: embed the query with the index's model, take the nearest rows, and
(optionally) keep only rows matching a condition, checked through the store's read-only path."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

from agent.errors import ReadStopped, TabletalkError
from agent.stores.base import Item, Key, Store
from agent.vectors import knn
from agent.vectors.embedder import Embedder
from agent.vectors.index import IndexMeta, VectorIndex
from agent.vectors.sidecar import open_sidecar
from agent.vectors.source import key_condition, key_json, quote_ident

T = TypeVar("T")

FILTER_EXACT_ROWS = 2_000
"""A condition matching at most this many rows is searched exactly among those rows."""


def search(
    store: Store,
    table: str,
    query: str,
    limit: int = 10,
    where: str | None = None,
    *,
    profile: str | None = None,
    region: str | None = None,
) -> dict[str, Any]:
    """The rows of `table` nearest in meaning to `query`: key, distance, indexed text, row."""
    conn = open_sidecar(store.identity, create=False)
    if conn is None:
        VectorIndex.missing(table)
    index = VectorIndex(store, conn)
    try:
        meta = index.require(table)
        finished = index.finished(table)
        embedder = Embedder(meta.model, meta.dims, profile=profile, region=region)
        refreshed = index.refresh(meta, embedder)
        vector = embedder.embed([query], "query")[0]
        hits = nearest_rows(index, meta, vector, limit, where)
    finally:
        index.close()
    result: dict[str, Any] = {"table": table, "model": meta.model, "results": hits}
    if refreshed:
        result["refreshed"] = refreshed
    if not finished:
        result["unfinished"] = (
            f"the index of {table} is being built or its build was interrupted: rows it has "
            f"not embedded yet are not searched; `tabletalk index build {table}` finishes it "
            "(only the missing rows are embedded)"
        )
    return result


def _hit(key: Key, distance: float, text: str, row: Item | None) -> dict[str, Any]:
    return {"key": key, "distance": round(distance, 6), "text": text, "row": row}


def nearest_rows(
    index: VectorIndex, meta: IndexMeta, vector: list[float], limit: int, where: str | None
) -> list[dict[str, Any]]:
    """The `limit` rows nearest to `vector` (satisfying `where`, when given), as tool hits."""
    if where and index.store.query_language != "SQL":
        return _filtered_by_keys(index, meta, vector, limit, where)
    if where:
        return _filtered(index, meta, vector, limit, where)
    return _plain(index, meta, vector, limit)


def _plain(index: VectorIndex, meta: IndexMeta, vector: list[float], limit: int) -> list[Any]:
    hits = []
    for key, distance, text in index.nearest(meta, vector, limit):
        row = index.store.get_item(meta.table, key)
        if row is not None:
            hits.append(_hit(key, distance, text, row))
    return hits


def _filtered(
    index: VectorIndex, meta: IndexMeta, vector: list[float], limit: int, where: str
) -> list[Any]:
    """The nearest rows that satisfy `where`, never fewer than exist.

    A condition matching few rows is searched exactly among them. A broad one takes the
    coarse pass over-fetched by its selectivity and keeps the matching candidates; when too
    few of those match (the condition's rows lie away from the query), the coarse pass runs
    again restricted to every matching row. Either way the exact re-rank sees a full pool of
    matching rows, as an unfiltered search would.
    """
    store, table = index.store, meta.table
    matching = _checked(lambda: store.count(table, where))
    if matching == 0:
        return []
    if matching <= FILTER_EXACT_ROWS:
        ids = index.item_ids(meta, _matching_keys(store, table, where))
        ranked = index.nearest_among(meta, vector, ids, limit)
    else:
        total = index.count(meta)
        pool = knn.pool_size(limit)
        n = min(knn.KNN_MAX, total, math.ceil(2 * pool * total / matching))
        candidates = index.coarse_candidates(meta, vector, n)
        found = _matching_rows(store, table, [json.loads(k) for _, k in candidates], where)
        kept = [item_id for item_id, spelled in candidates if spelled in found]
        if len(kept) < pool and n < total:
            every = index.item_ids(meta, _matching_keys(store, table, where))
            kept = [i for i, _ in index.coarse_candidates(meta, vector, pool, every)]
        ranked = index.nearest_among(meta, vector, kept[:pool], limit)
    rows = _matching_rows(store, table, [key for key, _, _ in ranked], where)
    return [
        _hit(key, distance, text, rows[key_json(key)])
        for key, distance, text in ranked
        if key_json(key) in rows
    ]


def _filtered_by_keys(
    index: VectorIndex, meta: IndexMeta, vector: list[float], limit: int, where: str
) -> list[Any]:
    """The nearest items satisfying a PartiQL `where` (DynamoDB): one capped read of the
    matching items (as `count(where)` reads them there; a projection would cost the same read
    units), searched exactly among them."""
    store, table = index.store, meta.table
    keys = list(store.describe_table(table).key_columns)
    sql = f"SELECT * FROM {quote_ident(table)} WHERE {where}"
    rows = _checked(lambda: store.query(sql)).rows
    by_key = {key_json({k: row.get(k) for k in keys}): row for row in rows}
    if not by_key:
        return []
    ranked = index.nearest_among(meta, vector, index.item_ids(meta, list(by_key)), limit)
    return [_hit(key, distance, text, by_key[key_json(key)]) for key, distance, text in ranked]


def _checked(read: Callable[[], T]) -> T:
    """Run a read that applies the caller's condition; its failure names the fix."""
    try:
        return read()
    except ReadStopped:
        raise  # Stop, not a bad condition
    except TabletalkError as exc:
        raise TabletalkError(
            f"the condition could not be applied: {exc.message}",
            fix="pass `where` as a condition on the table's columns, e.g. price < 50",
        ) from exc


def _matching_keys(store: Store, table: str, where: str) -> list[str]:
    """The keys (as the index spells them) of every row satisfying `where`."""
    info = store.describe_table(table)
    select = ", ".join(quote_ident(k) for k in info.key_columns)
    sql = f"SELECT {select} FROM {quote_ident(table)} WHERE ({where})"
    keys: list[str] = []
    batches = _checked(lambda: store.query_batches(sql, 1000))
    try:
        for batch in _checked(lambda: list(batches)):
            keys.extend(key_json({k: row.get(k) for k in info.key_columns}) for row in batch.rows)
    finally:
        batches.close()
    return keys


def _matching_rows(store: Store, table: str, keys: list[Key], where: str) -> dict[str, Item]:
    """The rows among `keys` that satisfy `where`, by key, read through `Store.query`."""
    found: dict[str, Item] = {}
    for start in range(0, len(keys), 200):
        chunk = keys[start : start + 200]
        names = list(chunk[0]) if chunk else []
        select = ", ".join(quote_ident(n) for n in names)
        sql = (
            f"SELECT {select}, * FROM {quote_ident(table)} "
            f"WHERE ({where}) AND ({key_condition(chunk)})"
        )
        result = _checked(lambda: store.query(sql, limit=len(chunk)))  # noqa: B023
        for row in result.rows:
            found[key_json({n: row.get(n) for n in names})] = row
    return found
