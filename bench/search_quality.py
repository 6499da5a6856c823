"""Search quality: our KeywordRanker against rank-bm25's BM25Okapi, in the same run.

Runs on the dev set for our own catalog (bench/search_devset.jsonl over catalog.ROWS) and on
every public set under bench/data/ (NAME.catalog.json with each NAME*.queries.jsonl).
The BM25 baseline indexes lower-cased name + description words (regex \\w+, which keeps
snake_case names whole), as the issue defines it; "bm25-ws" splits on whitespace instead
(punctuation stays on words), the weaker reading of the same definition. With --minilm DIR
(an unpacked all-MiniLM-L6-v2 checkpoint, see bench/minilm.py) the embedding model ranks too:
cosine similarity of the query with "name words: description" (vectors cached in
--minilm-cache, keyed by text). ms/query is the median time of one `rank` call (for the
embedding model, its share of the batched encoding plus the similarity search).

    .venv/bin/python bench/search_quality.py [--json] [--rankings-dir bench/out]
        [--minilm DIR [--minilm-cache FILE]] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rank_bm25 import BM25Okapi  # noqa: E402

from agent.search.catalog_file import load_catalog, load_queries  # noqa: E402
from agent.search.evaluate import EvalReport, evaluate  # noqa: E402
from agent.search.ranker import KeywordRanker, ScoredDoc, SearchDoc  # noqa: E402
from agent.search.text import split_identifier  # noqa: E402
from catalog import ROWS  # noqa: E402

BENCH = Path(__file__).resolve().parent
WORD = re.compile(r"\w+")


def regex_words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def split_words(text: str) -> list[str]:
    return text.lower().split()


class Bm25Baseline:
    """BM25Okapi over lower-cased `name description` words; only docs scoring > 0 are returned.
    `tokenize` is regex \\w+ words (the main baseline) or plain whitespace splitting."""

    def __init__(
        self, docs: list[SearchDoc], tokenize: Callable[[str], list[str]] = regex_words
    ) -> None:
        self.docs = docs
        self.tokenize = tokenize
        corpus = [tokenize(f"{doc.name} {doc.description}") for doc in docs]
        self.bm25 = BM25Okapi([tokens or [""] for tokens in corpus])

    def rank(self, query: str, limit: int = 5) -> list[ScoredDoc]:
        scores = self.bm25.get_scores(self.tokenize(query))
        order = sorted(range(len(self.docs)), key=lambda i: (-scores[i], i))[:limit]
        return [ScoredDoc(self.docs[i].name, float(scores[i]), i) for i in order if scores[i] > 0]


class EmbeddingCache:
    """Sentence vectors by SHA-1 of the text, kept in one .npz file between runs."""

    def __init__(self, model_dir: Path, path: Path | None) -> None:
        import numpy as np
        from minilm import MiniLM

        self.np = np
        self.model = MiniLM(model_dir)
        self.path = path
        self.vectors: dict[str, Any] = {}
        if path and path.exists():
            with np.load(path) as stored:
                self.vectors = {key: stored[key] for key in stored.files}

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def encode(self, texts: Sequence[str]) -> Any:
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.vectors))
        if missing:
            for text, vector in zip(missing, self.model.encode(missing), strict=True):
                self.vectors[self.key(text)] = vector
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.np.savez(self.path, **self.vectors)
        return self.np.stack([self.vectors[self.key(t)] for t in texts])


class MiniLmBaseline:
    """all-MiniLM-L6-v2: cosine similarity of the query with each "name words: description"."""

    def __init__(self, docs: list[SearchDoc], cache: EmbeddingCache) -> None:
        self.docs = docs
        self.cache = cache
        texts = [f"{' '.join(split_identifier(d.name))}: {d.description}" for d in docs]
        self.matrix = cache.encode(texts)

    def prepare(self, queries: Sequence[str]) -> float:
        """Encode every query once (cached); returns the median ms of encoding one query alone,
        timed on the first 12 as a session would (no batching, no cache)."""
        self.cache.encode(queries)
        times = []
        for query in queries[:12]:
            start = time.perf_counter()
            self.cache.model.encode([query])
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times) if times else 0.0

    def rank(self, query: str, limit: int = 5) -> list[ScoredDoc]:
        scores = self.matrix @ self.cache.encode([query])[0]
        order = sorted(range(len(self.docs)), key=lambda i: (-float(scores[i]), i))[:limit]
        return [ScoredDoc(self.docs[i].name, float(scores[i]), i) for i in order]


class Timed:
    """Wraps a ranker and records the time of each `rank` call."""

    def __init__(self, ranker: Any) -> None:
        self.ranker = ranker
        self.ms: list[float] = []

    def rank(self, query: str, limit: int = 5) -> Sequence[object]:
        start = time.perf_counter()
        result = self.ranker.rank(query, limit)
        self.ms.append((time.perf_counter() - start) * 1000)
        return result


def datasets() -> list[tuple[str, list[SearchDoc], Path]]:
    """(label, docs, queries file) for the dev set and each bench/data set."""
    found = [
        (
            "devset (our catalog)",
            [SearchDoc(row.name, row.description, tuple(row.keywords)) for row in ROWS],
            BENCH / "search_devset.jsonl",
        )
    ]
    for catalog_path in sorted((BENCH / "data").glob("*.catalog.json")):
        stem = catalog_path.name.removesuffix(".catalog.json")
        docs = load_catalog(catalog_path)
        for queries_path in sorted(catalog_path.parent.glob(f"{stem}*.queries.jsonl")):
            label = queries_path.name.removesuffix(".queries.jsonl")
            found.append((label, docs, queries_path))
    return found


def row(label: str, report: EvalReport, ms: float) -> dict[str, object]:
    return {
        "ranker": label,
        "ms_per_query": round(ms, 3),
        "recall@1": round(report.recall_at_1, 3),
        "recall@5": round(report.recall_at_5, 3),
        "mrr": round(report.mrr, 3),
        "n": report.n,
        "no_tool_accuracy": None
        if report.no_tool_accuracy is None
        else round(report.no_tool_accuracy, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rankings-dir", type=Path, help="write per-query rankings here")
    parser.add_argument("--minilm", type=Path, help="all-MiniLM-L6-v2 dir: rank with it too")
    parser.add_argument(
        "--minilm-cache",
        type=Path,
        default=Path("/tmp/tabletalk-bench/minilm-vectors.npz"),
        help="where the embedding model's vectors are kept between runs",
    )
    parser.add_argument("--only", help="run only the sets whose label contains this")
    args = parser.parse_args(argv)
    cache = EmbeddingCache(args.minilm, args.minilm_cache) if args.minilm else None
    results: dict[str, list[dict[str, object]]] = {}
    for label, docs, queries_path in datasets():
        if args.only and args.only not in label:
            continue
        queries = load_queries(queries_path)
        rows = []
        rankers: list[tuple[str, Any]] = [
            ("keyword", KeywordRanker(docs)),
            ("bm25", Bm25Baseline(docs)),
            ("bm25-ws", Bm25Baseline(docs, split_words)),
        ]
        encode_ms = 0.0
        if cache is not None:
            embedder = MiniLmBaseline(docs, cache)
            encode_ms = embedder.prepare([item.query for item in queries])
            rankers.append(("minilm", embedder))
        for name, ranker in rankers:
            timed = Timed(ranker)
            report = evaluate(timed, queries, limit=5)
            ms = statistics.median(timed.ms) + (encode_ms if name == "minilm" else 0.0)
            rows.append(row(name, report, ms))
            if args.rankings_dir:
                args.rankings_dir.mkdir(parents=True, exist_ok=True)
                out = args.rankings_dir / f"{label.split()[0]}.{name}.rankings.jsonl"
                with out.open("w", encoding="utf-8") as handle:
                    for (query, ranked), item in zip(report.rankings, queries, strict=True):
                        handle.write(
                            json.dumps({"query": query, "gold": list(item.gold), "ranked": ranked})
                            + "\n"
                        )
        results[f"{label} [{len(docs)} tools, {len(queries)} queries]"] = rows
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for label, rows in results.items():
        print(label)
        print(f"  {'ranker':<8} {'R@1':>6} {'R@5':>6} {'MRR':>6} {'ms/q':>7} {'n':>5}  no-tool acc")
        for entry in rows:
            no_tool = entry["no_tool_accuracy"]
            print(
                f"  {entry['ranker']:<8} {entry['recall@1']:>6.3f} {entry['recall@5']:>6.3f}"
                f" {entry['mrr']:>6.3f} {entry['ms_per_query']:>7.3f} {entry['n']:>5}"
                f"  {'-' if no_tool is None else no_tool}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
