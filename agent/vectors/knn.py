"""Nearest rows of one index: a binary-quantised coarse pass, then an exact cosine re-rank.

Exact KNN over float vectors reads every vector (4 KB each at 1024 dims). The coarse pass
reads only each row's sign bits (128 bytes) with sqlite-vec's hamming KNN, and the exact
cosine distance is computed for the best `pool_size(k)` candidates, whose float vectors are
read by item id from a plain table. sqlite-vec's top-k selection costs about rows × k, so the
coarse pass asks each of the index's PARTITIONS for its share of the pool instead of asking
the whole index for all of it. An index no larger than the pool is searched exactly.
`bench/vector_index.py` measures the speed, and the recall@10 against exact search.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import apsw
import sqlite_vec

from agent.vectors.sidecar import PARTITIONS

RERANK_FACTOR = 25
"""Candidates re-ranked exactly per wanted row (with at least RERANK_MIN)."""
RERANK_MIN = 256
KNN_MAX = 4096
"""The largest k sqlite-vec's KNN accepts."""

Hit = tuple[str, float, str]
"""(key_json, cosine distance, indexed text)"""


def pool_size(k: int) -> int:
    """How many coarse candidates are re-ranked exactly for `k` results."""
    return min(KNN_MAX, max(RERANK_MIN, k * RERANK_FACTOR))


def _hits(rows: Iterable[Any]) -> list[Hit]:
    """(key_json, distance, text) rows as typed hits."""
    return [(str(key), float(distance), str(text)) for key, distance, text in rows]


def legacy_exact(conn: apsw.Connection, vec: str, vector: bytes, k: int) -> list[Hit]:
    """The k nearest rows by exact cosine KNN over a vec0 table of float vectors (the layout
    of older sidecars, until `VectorIndex.upgrade` copies it)."""
    sql = (
        f"SELECT i.key_json, v.distance, i.text FROM ("
        f"SELECT rowid, distance FROM {vec} WHERE embedding MATCH ? AND k = ?) AS v "
        f"JOIN items AS i ON i.id = v.rowid ORDER BY v.distance"
    )
    return _hits(conn.execute(sql, (vector, int(k))))


def coarse(
    conn: apsw.Connection,
    bits: str,
    vector: bytes,
    n: int,
    among: Sequence[int] | None = None,
) -> list[int]:
    """Item ids of about the n nearest rows by hamming distance of the sign bits (each
    partition's n / PARTITIONS nearest), nearest first. With `among`, the n nearest of those
    rows (one query over every partition: a fallback for conditions, see `search`)."""
    sql = f"SELECT rowid, distance FROM {bits} WHERE coarse MATCH vec_quantize_binary(?) AND k = ?"
    if among is not None:
        sql += " AND rowid IN (SELECT value FROM json_each(?))"
        args = (vector, min(int(n), KNN_MAX), json.dumps(list(among)))
        return [int(r[0]) for r in conn.execute(sql, args)]
    share = min(KNN_MAX, math.ceil(n / PARTITIONS))
    found: list[tuple[float, int]] = []
    for part in range(PARTITIONS):
        rows = conn.execute(sql + " AND part = ?", (vector, share, part))
        found.extend((float(distance), int(rowid)) for rowid, distance in rows)
    found.sort()
    return [rowid for _, rowid in found]


def rerank(
    conn: apsw.Connection, floats: str, vector: bytes, item_ids: Sequence[int], k: int
) -> list[Hit]:
    """The k of `item_ids` nearest by exact cosine distance."""
    if not item_ids:
        return []
    sql = (
        f"SELECT i.key_json, vec_distance_cosine(f.embedding, ?) AS d, i.text "
        f"FROM json_each(?) AS j JOIN {floats} AS f ON f.id = j.value "
        f"JOIN items AS i ON i.id = j.value ORDER BY d LIMIT ?"
    )
    rows = conn.execute(sql, (vector, json.dumps(list(item_ids)), int(k)))
    return _hits(rows)


def exact(conn: apsw.Connection, floats: str, vector: bytes, k: int) -> list[Hit]:
    """The k nearest rows by exact cosine distance over every float vector."""
    sql = (
        f"SELECT i.key_json, d, i.text FROM ("
        f"SELECT id, vec_distance_cosine(embedding, ?) AS d FROM {floats} ORDER BY d LIMIT ?"
        f") JOIN items AS i USING (id) ORDER BY d"
    )
    return _hits(conn.execute(sql, (vector, int(k))))


def nearest(
    conn: apsw.Connection, bits: str, floats: str, vector: list[float], k: int, total: int
) -> list[Hit]:
    """The k nearest rows: exact when the index is no larger than the re-rank pool, else the
    coarse pass over every row and an exact re-rank of its candidates."""
    blob = sqlite_vec.serialize_float32(vector)
    pool = pool_size(k)
    if total <= pool:
        return exact(conn, floats, blob, k)
    return rerank(conn, floats, blob, coarse(conn, bits, blob, pool), k)
