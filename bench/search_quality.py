"""Search quality: our KeywordRanker against rank-bm25's BM25Okapi, in the same run.

Runs on the dev set for our own catalog (bench/search_devset.jsonl over catalog.ROWS) and on
every public set under bench/data/ (NAME.catalog.json with each NAME*.queries.jsonl).
The BM25 baseline indexes lower-cased name + description words (regex \\w+, which keeps
snake_case names whole), as the issue defines it; "bm25-ws" splits on whitespace instead
(punctuation stays on words), the weaker reading of the same definition.

    .venv/bin/python bench/search_quality.py [--json] [--rankings-dir bench/out]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rank_bm25 import BM25Okapi  # noqa: E402

from agent.search.catalog_file import load_catalog, load_queries  # noqa: E402
from agent.search.evaluate import EvalReport, evaluate  # noqa: E402
from agent.search.ranker import KeywordRanker, ScoredDoc, SearchDoc  # noqa: E402
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


def row(label: str, report: EvalReport) -> dict[str, object]:
    return {
        "ranker": label,
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
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, object]]] = {}
    for label, docs, queries_path in datasets():
        queries = load_queries(queries_path)
        rows = []
        rankers = (
            ("keyword", KeywordRanker(docs)),
            ("bm25", Bm25Baseline(docs)),
            ("bm25-ws", Bm25Baseline(docs, split_words)),
        )
        for name, ranker in rankers:
            report = evaluate(ranker, queries, limit=5)
            rows.append(row(name, report))
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
        print(f"  {'ranker':<8} {'R@1':>6} {'R@5':>6} {'MRR':>6} {'n':>5}  no-tool acc")
        for entry in rows:
            no_tool = entry["no_tool_accuracy"]
            print(
                f"  {entry['ranker']:<8} {entry['recall@1']:>6.3f} {entry['recall@5']:>6.3f}"
                f" {entry['mrr']:>6.3f} {entry['n']:>5}  {'-' if no_tool is None else no_tool}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
