"""The fast nearest-row search (binary coarse pass + exact re-rank) against exact search, on
real sqlite-vec: the nearest rows are kept, and a `where` condition never loses a matching row."""

from __future__ import annotations

import functools
import json
import math
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.stores.base import Store
from agent.stores.open import open_store
from agent.vectors import knn, search
from agent.vectors.index import IndexMeta, VectorIndex
from agent.vectors.search import nearest_rows

ROWS = 6000
DIMS = 256
CENTERS = 60


def _unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def _cosine(a: list[float], b: list[float]) -> float:
    return 1.0 - sum(x * y for x, y in zip(a, b, strict=True))


@functools.cache
def _clustered() -> tuple[dict[int, list[float]], list[tuple[int, int, int]]]:
    """The vectors (made once per test session) and the table rows (id, grp, far)."""
    rng = random.Random(5)
    centers = [_unit([rng.gauss(0, 1) for _ in range(DIMS)]) for _ in range(CENTERS)]
    vectors: dict[int, list[float]] = {}
    rows = []
    for i in range(1, ROWS + 1):
        far = 1 if i % 1201 == 0 else 0  # 4 rows
        base = [-x for x in centers[0]] if far else centers[i % CENTERS]
        vectors[i] = _unit([x + rng.gauss(0, 0.35 / math.sqrt(DIMS)) for x in base])
        rows.append((i, i % CENTERS, far))
    return vectors, rows


class Points:
    """A table of ROWS rows with clustered vectors; rows with far = 1 point away from center 0."""

    def __init__(self, tmp_path: Path) -> None:
        self.vectors, rows = _clustered()
        self.path = tmp_path / "points.sqlite"
        conn = sqlite3.connect(self.path)
        conn.execute("CREATE TABLE points (id INTEGER PRIMARY KEY, grp INTEGER, far INTEGER)")
        conn.executemany("INSERT INTO points VALUES (?, ?, ?)", rows)
        conn.commit()
        conn.close()

    def query_near(self, row: int) -> list[float]:
        """A vector close to the row's own."""
        rng = random.Random(row)
        return _unit([x + rng.gauss(0, 0.1 / math.sqrt(DIMS)) for x in self.vectors[row]])

    def exact_ids(self, vector: list[float], k: int, keep: set[int] | None = None) -> list[int]:
        """Brute force in Python: the k nearest row ids (among `keep`)."""
        ids = [i for i in self.vectors if keep is None or i in keep]
        ids.sort(key=lambda i: _cosine(vector, self.vectors[i]))
        return ids[:k]


@pytest.fixture
def points(tmp_path: Path) -> Iterator[tuple[Points, Store, VectorIndex, IndexMeta]]:
    data = Points(tmp_path)
    store = open_store(data.path)
    index = VectorIndex.open(store)
    meta = index.create("points", ("grp",), "bench", DIMS)
    rows = [(json.dumps({"id": i}), f"row {i}", "h") for i in data.vectors]
    index.write(meta, rows, list(data.vectors.values()))
    yield data, store, index, meta
    index.close()
    store.close()


def _ids(hits: list[dict]) -> list[int]:
    return [h["key"]["id"] for h in hits]


def test_the_coarse_pass_keeps_the_nearest_rows(
    points: tuple[Points, Store, VectorIndex, IndexMeta], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, _, index, meta = points
    coarse_calls: list[int] = []
    real_coarse = knn.coarse

    def counted(*args: object) -> list[int]:
        coarse_calls.append(1)
        return real_coarse(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(knn, "coarse", counted)
    kept = 0
    for row in range(7, ROWS, 600):
        vector = data.query_near(row)
        fast = [key["id"] for key, _, _ in index.nearest(meta, vector, 10)]
        exact = data.exact_ids(vector, 10)
        assert fast[0] == row == exact[0]
        kept += len(set(fast) & set(exact))
    assert len(coarse_calls) == 10  # every query went through the coarse pass
    assert kept / (10 * 10) >= 0.85  # near-tied clusters at 256 dims; random picks: ~0.002


def test_a_selective_condition_finds_every_matching_row(
    points: tuple[Points, Store, VectorIndex, IndexMeta],
) -> None:
    data, _, index, meta = points
    vector = data.query_near(ROWS)  # center 0: the far rows are the farthest of all
    hits = nearest_rows(index, meta, vector, 10, "far = 1")
    assert sorted(_ids(hits)) == [1201, 2402, 3603, 4804]
    assert _ids(hits) == data.exact_ids(vector, 10, {1201, 2402, 3603, 4804})
    assert all(h["row"]["far"] == 1 for h in hits)


def test_a_broad_condition_keeps_the_nearest_matching_rows(
    points: tuple[Points, Store, VectorIndex, IndexMeta], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, store, index, meta = points
    monkeypatch.setattr(search, "FILTER_EXACT_ROWS", 100)  # 3,000 rows match: the coarse path
    even = {i for i in data.vectors if i % 2 == 0}
    kept = 0
    for row in range(10, ROWS, 600):
        vector = data.query_near(row)
        hits = nearest_rows(index, meta, vector, 10, "id % 2 = 0")
        assert all(h["row"]["id"] % 2 == 0 for h in hits) and len(hits) == 10
        exact = data.exact_ids(vector, 10, even)
        assert _ids(hits)[0] == row == exact[0]
        kept += len(set(_ids(hits)) & set(exact))
    assert kept / (10 * 10) >= 0.9
    # a broad condition with few rows near the query: the coarse pass runs among its rows
    vector = data.query_near(ROWS)
    assert store.count("points", "far = 1 OR grp = 7") == 104
    hits = nearest_rows(index, meta, vector, 10, "far = 1 OR grp = 7")
    exact = data.exact_ids(vector, 10, {i for i in data.vectors if i % 1201 == 0 or i % 60 == 7})
    assert _ids(hits) == exact


def test_an_index_made_without_the_coarse_column_is_upgraded_in_place(
    points: tuple[Points, Store, VectorIndex, IndexMeta],
) -> None:
    data, _, index, meta = points
    old = meta.id
    with index.conn:  # the layout of an older sidecar: float vectors only, coarse = 0
        index.conn.execute(
            f"CREATE VIRTUAL TABLE vec_{old} USING vec0(embedding float[{DIMS}] "
            "distance_metric=cosine)"
        )
        index.conn.execute(f"INSERT INTO vec_{old} SELECT id, embedding FROM vecf_{old}")
        index.conn.execute(f"DROP TABLE vecb_{old}")
        index.conn.execute(f"DROP TABLE vecf_{old}")
        index.conn.execute("UPDATE indexes SET coarse = 0 WHERE id = ?", (old,))
    before = index.get("points")
    assert before is not None and not before.coarse
    vector = data.query_near(99)
    assert index.nearest(before, vector, 1)[0][0] == {"id": 99}  # exact search still works
    upgraded = index.require("points")
    assert upgraded.coarse and index.count(upgraded) == ROWS
    tables = {r[0] for r in index.conn.execute("SELECT name FROM sqlite_master")}
    assert {f"vecb_{old}", f"vecf_{old}"} <= tables and f"vec_{old}" not in tables
    assert index.nearest(upgraded, vector, 1)[0][0] == {"id": 99}
