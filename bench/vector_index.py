"""Embedding index: build throughput against the scripted endpoint, and KNN query latency.

Build: a table of N rows embedded through real boto3 against the scripted InvokeModel
endpoint on 127.0.0.1 (deterministic bag-of-words vectors), so what is measured is our
code: reading rows, hashing, requests on 4 threads, writing vectors. Peak RSS of the process
is reported. Query: random unit vectors written straight into an index of V rows of D dims,
then the p50/p95 of `nearest` (sqlite-vec brute force, cosine) over Q random queries.

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.stores.open import open_store  # noqa: E402
from agent.vectors.embedder import Embedder  # noqa: E402
from agent.vectors.index import VectorIndex  # noqa: E402
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


def _unit(v: list[float]) -> list[float]:
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def bench_query(work: Path, vectors: int, dims: int, queries: int) -> None:
    db = work / "query.sqlite"
    make_table(db, 1)
    os.environ["XDG_DATA_HOME"] = str(work / "data-query")
    store = open_store(db)
    index = VectorIndex.open(store)
    rng = random.Random(11)
    pool = [_unit([rng.gauss(0, 1) for _ in range(dims)]) for _ in range(256)]

    def unit() -> list[float]:
        """A pool vector with a few coordinates changed: cheap, and clustered like embeddings."""
        v = list(rng.choice(pool))
        for _ in range(16):
            v[rng.randrange(dims)] = rng.gauss(0, 0.2)
        return _unit(v)

    try:
        meta = index._create("products", ("name",), "bench", dims)
        batch = 2000
        for start in range(0, vectors, batch):
            rows = [(f'{{"id": {i}}}', "x", "h") for i in range(start, min(vectors, start + batch))]
            index._write(meta, rows, [unit() for _ in rows])
        times = []
        for _ in range(queries):
            q = unit()
            t0 = time.perf_counter()
            hits = index.nearest(meta, q, 10)
            times.append((time.perf_counter() - t0) * 1000)
            assert len(hits) == 10
    finally:
        index.close()
        store.close()
    times.sort()
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(f"query: {vectors:,} vectors of {dims} dims, k=10, {queries} queries")
    print(f"  p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms (target p50 < 50 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--model", default="cohere.embed-english-v3")
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(work / "data")
        os.environ["XDG_STATE_HOME"] = str(work / "state")
        if not args.skip_build:
            bench_build(work, args.rows, args.model)
        bench_query(work, args.vectors, args.dims, args.queries)


if __name__ == "__main__":
    main()
