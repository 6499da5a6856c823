"""A semantic search: embed the query with the index's model, take the nearest rows, and
(optionally) keep only rows matching a condition, checked through the store's read-only path."""

from __future__ import annotations

from typing import Any

from agent.errors import TabletalkError
from agent.stores.base import Item, Key, Store
from agent.vectors.embedder import Embedder
from agent.vectors.index import IndexMeta, VectorIndex
from agent.vectors.sidecar import open_sidecar
from agent.vectors.source import key_condition, key_json, quote_ident

MAX_CANDIDATES = 5000
"""With a condition, at most this many nearest rows are checked against it."""


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
        embedder = Embedder(meta.model, meta.dims, profile=profile, region=region)
        refreshed = index.refresh(meta, embedder)
        vector = embedder.embed([query], "query")[0]
        hits = (
            _filtered(index, meta, vector, limit, where)
            if where
            else _plain(index, meta, vector, limit)
        )
    finally:
        index.close()
    result: dict[str, Any] = {"table": table, "model": meta.model, "results": hits}
    if refreshed:
        result["refreshed"] = refreshed
    return result


def _hit(key: Key, distance: float, text: str, row: Item | None) -> dict[str, Any]:
    return {"key": key, "distance": round(distance, 6), "text": text, "row": row}


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
    """Widen the candidate set until `limit` rows match `where` or every row was checked."""
    total = index.count(meta)
    k = min(total, max(limit * 10, 100))
    while True:
        candidates = index.nearest(meta, vector, k)
        matching = _matching_rows(index.store, meta.table, [c[0] for c in candidates], where)
        hits = [
            _hit(key, distance, text, matching[key_json(key)])
            for key, distance, text in candidates
            if key_json(key) in matching
        ]
        if len(hits) >= limit or k >= min(total, MAX_CANDIDATES):
            return hits[:limit]
        k = min(total, MAX_CANDIDATES, k * 4)


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
        try:
            result = store.query(sql, limit=len(chunk))
        except TabletalkError as exc:
            raise TabletalkError(
                f"the condition could not be applied: {exc.message}",
                fix="pass `where` as a condition on the table's columns, e.g. price < 50",
            ) from exc
        for row in result.rows:
            found[key_json({n: row.get(n) for n in names})] = row
    return found
