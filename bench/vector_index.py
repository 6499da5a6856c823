"""Embedding index: build throughput against the scripted endpoint, and KNN query latency.

Build: a table of N rows embedded through real boto3 against the scripted InvokeModel
endpoint on 127.0.0.1 (deterministic bag-of-words vectors), so what is measured is our
code: reading rows, hashing, requests on 4 threads, writing vectors. Peak RSS of the process
is reported. Query: unit vectors shaped like text embeddings (see `embedding_like`; made with
numpy: `pip install -e '.[bench]'`) written straight into an index of V rows of D dims, then
the p50/p95 of `nearest` (binary coarse pass + exact cosine re-rank, `agent/vectors/knn.py`)
over Q queries; its recall@10 against exact top-10s computed with numpy; and as the floor, in
the same run, exact brute force over a vec0 table of the same float vectors (the search before
the coarse pass; `--no-floor` skips it, e.g. at 1,000,000 vectors to halve the build).

    python bench/vector_index.py [--rows 100000] [--model cohere.embed-english-v3]
                                 [--vectors 100000] [--dims 1024] [--queries 50]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.stores.open import open_store  # noqa: E402
from agent.vectors import knn  # noqa: E402
from agent.vectors.embedder import Embedder  # noqa: E402
from agent.vectors.index import VectorIndex  # noqa: E402
from agent.vectors.sidecar import PARTITIONS  # noqa: E402
from tests.support.scripted_bedrock import ScriptedBedrock  # noqa: E402

WORDS = (
    "wireless earbuds speaker lamp desk chair blanket wool cotton steel mug coffee grinder "
    "kettle tea cable charger phone case laptop stand monitor keyboard mouse pad bag"
).split()


def make_table(path: Path, rows: int) -> None:
    rng = random.Random(7)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT)")
    conn.executemany(
        "INSERT INTO products VALUES (?, ?, ?)",
        (
            (i, " ".join(rng.choices(WORDS, k=4)), rng.choice(("audio", "home", "office")))
            for i in range(1, rows + 1)
        ),
    )
    conn.commit()
    conn.close()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_build(work: Path, rows: int, model: str) -> None:
    db = work / "build.sqlite"
    make_table(db, rows)
    with ScriptedBedrock() as endpoint:
        os.environ.update(endpoint.env())
        store = open_store(db)
        index = VectorIndex.open(store)
        try:
            info = store.describe_table("products")
            embedder = Embedder(model)
            start = time.perf_counter()
            plan = index.plan(info, ["name", "category"], model, embedder.dims)
            planned = time.perf_counter()
            index.build(plan, embedder)
            built = time.perf_counter()
            again = index.plan(info, None, model, embedder.dims)
            replanned = time.perf_counter()
        finally:
            index.close()
            store.close()
        print(f"build: {rows:,} rows with {model} ({embedder.dims} dims)")
        print(f"  read + hash: {planned - start:.1f} s")
        print(
            f"  embed + write: {built - planned:.1f} s = {rows / (built - planned):,.0f} rows/s "
            f"({len(endpoint.invocations):,} InvokeModel requests)"
        )
        print(
            f"  rebuild with nothing changed: {replanned - built:.1f} s, "
            f"{len(again.embed)} rows to embed"
        )
        print(f"  peak RSS: {peak_rss_mb():,.0f} MB")


def embedding_like(rng: Any, n: int, dims: int, topics: Any, shared: Any) -> Any:
    """n unit vectors shaped like text embeddings: a direction shared by all (real embeddings
    are anisotropic, which makes sign bits less informative), a topic, and noise of varying
    strength, so a query's neighbours lie at a spread of distances."""
    import numpy as np

    topic = topics[rng.integers(0, len(topics), n)]
    noise = rng.standard_normal((n, dims)) / np.sqrt(dims)
    strength = rng.uniform(0.7, 1.6, (n, 1))
    v = 0.4 * shared + topic + strength * noise
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def bench_query(work: Path, vectors: int, dims: int, queries: int, floor: bool) -> None:
    import numpy as np

    db = work / "query.sqlite"
    make_table(db, 1)
    os.environ["XDG_DATA_HOME"] = str(work / "data-query")
    store = open_store(db)
    index = VectorIndex.open(store)
    rng = np.random.default_rng(11)
    topics = rng.standard_normal((max(50, vectors // 1000), dims)) / np.sqrt(dims)
    shared = rng.standard_normal(dims) / np.sqrt(dims)
    asked = embedding_like(rng, queries, dims, topics, shared)
    best = [np.empty(0, dtype=np.int64) for _ in range(queries)]  # exact top 10 (numpy)
    best_score = [np.empty(0, dtype=np.float32) for _ in range(queries)]
    fast_ms: list[float] = []
    floor_ms: list[float] = []
    kept = 0
    write_s = floor_write_s = 0.0
    try:
        meta = index.create("products", ("name",), "bench", dims)
        if floor:
            index.conn.execute(
                f"CREATE VIRTUAL TABLE floor USING vec0(embedding float[{dims}] "
                "distance_metric=cosine)"
            )
        batch = 10_000
        for first in range(0, vectors, batch):
            count = min(vectors, first + batch) - first
            chunk = embedding_like(rng, count, dims, topics, shared)
            rows = [(f'{{"id": {i}}}', "x", "h") for i in range(first, first + count)]
            t0 = time.perf_counter()
            index.write(meta, rows, chunk.tolist())
            write_s += time.perf_counter() - t0
            if floor:
                t0 = time.perf_counter()
                with index.conn:
                    index.conn.executemany(
                        "INSERT INTO floor (rowid, embedding) VALUES (?, ?)",
                        ((first + n + 1, v.tobytes()) for n, v in enumerate(chunk)),
                    )
                floor_write_s += time.perf_counter() - t0
            scores = asked @ chunk.T
            for q in range(queries):
                ids = np.concatenate([best[q], np.arange(first, first + count)])
                both = np.concatenate([best_score[q], scores[q]])
                top = np.argsort(-both)[:10]
                best[q], best_score[q] = ids[top], both[top]
        for q, vector in enumerate(asked.tolist()):
            t0 = time.perf_counter()
            hits = index.nearest(meta, vector, 10)
            fast_ms.append((time.perf_counter() - t0) * 1000)
            assert len(hits) == 10
            kept += len({int(k["id"]) for k, _, _ in hits} & set(best[q].tolist()))
            if floor:
                blob = sqlite_vec.serialize_float32(vector)
                t0 = time.perf_counter()
                list(
                    index.conn.execute(
                        "SELECT rowid FROM floor WHERE embedding MATCH ? AND k = 10", (blob,)
                    )
                )
                floor_ms.append((time.perf_counter() - t0) * 1000)
        size = index.size_bytes()
    finally:
        index.close()
        store.close()
    fast = statistics.median(fast_ms)
    print(f"query: {vectors:,} vectors of {dims} dims, k=10, {queries} queries")
    print(
        f"  index write (coarse bits + float vectors): {write_s:.1f} s = "
        f"{vectors / write_s:,.0f} vectors/s; sidecar {size / 1e9:.2f} GB "
        f"(incl. the floor table: {floor}); peak RSS {peak_rss_mb():,.0f} MB"
    )
    print(
        f"  fast (coarse over {PARTITIONS} partitions + exact re-rank of "
        f"{knn.pool_size(10)}): p50 {fast:.1f} ms, "
        f"p95 {_p95(fast_ms):.1f} ms (target p50 < 50 ms)"
    )
    print(f"  recall@10 of fast vs exact (numpy): {kept / (10 * queries):.3f}")
    if floor:
        low = statistics.median(floor_ms)
        print(
            f"  floor, exact vec0 float KNN (the old search), same run: p50 {low:.1f} ms, "
            f"p95 {_p95(floor_ms):.1f} ms; its write {floor_write_s:.1f} s"
        )
        print(f"  fast / floor p50: {fast / low:.3f}")
    print(f"  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--model", default="cohere.embed-english-v3")
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument(
        "--no-floor",
        action="store_true",
        help="skip the exact vec0 float table (the old search) used as the timing floor",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(work / "data")
        os.environ["XDG_STATE_HOME"] = str(work / "state")
        if not args.skip_build:
            bench_build(work, args.rows, args.model)
        bench_query(work, args.vectors, args.dims, args.queries, not args.no_floor)


if __name__ == "__main__":
    main()
