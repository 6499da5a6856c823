"""Issue 15, session 11: query expansion through the general-English table (not shipped).

A query word the catalog does not know, and that no other route (typo, prefix, abbreviation,
synonym, related word, neighbour) maps to a catalog term, is matched to the catalog word
nearest to it by generalvectors.bin (cosine of the two words' mean-pooled token vectors), when
that cosine reaches `min_cosine`; the word then scores that word's postings at `weight` ×
cosine. Like the general channel it only orders: its gain is never vouched for, so no-tool
accuracy cannot change. `ExpandingRanker` is the shipped KeywordRanker plus this step.

    .venv/bin/python bench/expand_search.py                  # dev sets only, before/after
    .venv/bin/python bench/expand_search.py --holdout        # also the holdout sets (read once)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search.catalog_file import load_catalog, load_queries  # noqa: E402
from agent.search.evaluate import evaluate  # noqa: E402
from agent.search.ranker import (  # noqa: E402
    KeywordRanker,
    RankerParams,
    SearchDoc,
    _Alternative,
)
from agent.search.word_vectors import CatalogVectors, general_vectors  # noqa: E402
from catalog import ROWS  # noqa: E402

BENCH = Path(__file__).resolve().parent


class ExpandingRanker(KeywordRanker):
    """KeywordRanker whose otherwise unmatched query words reach their nearest catalog word."""

    def __init__(
        self,
        docs: Sequence[SearchDoc],
        params: RankerParams | None = None,
        weight: float = 1.0,
        min_cosine: float = 0.5,
    ) -> None:
        self.expansion_weight = weight
        self.expansion_min_cosine = min_cosine
        super().__init__(docs, params)

    @cached_property
    def _vocabulary(self) -> tuple[list[str], CatalogVectors] | None:
        """The catalog's words (3+ characters, some letter) and their general vectors."""
        table = general_vectors()
        if table is None:
            return None
        vocabulary = [
            word
            for word in self._surfaces
            if len(word) >= 3 and any(c.isalpha() for c in word) and table.pieces(word)
        ]
        return vocabulary, CatalogVectors([[word] for word in vocabulary], table)

    def _expand_uncached(self, word: str) -> tuple[_Alternative, ...]:
        found = super()._expand_uncached(word)
        if found or self.expansion_weight <= 0 or self._vocabulary is None:
            return found
        vocabulary, vectors = self._vocabulary
        similarities = vectors.similarities([word])
        if not similarities:
            return found
        best = max(range(len(vocabulary)), key=lambda i: (similarities[i], -i))
        if similarities[best] < self.expansion_min_cosine:
            return found
        weight = self.expansion_weight * similarities[best]
        return tuple(
            _Alternative(term, -weight) for term in sorted(self._surface_to_terms[vocabulary[best]])
        )  # a negative weight marks an unvouched alternative (see `_ordered`)

    def _ordered(self, query: str) -> tuple[dict[int, float], float]:
        groups = self._query_groups(query)
        vouched = [group for group in groups if group[0].weight > 0]
        totals: dict[int, float] = {}
        for group in vouched:
            best: dict[int, float] = {}
            for alternative in group:
                for index, value in self._postings[alternative.term]:
                    weighted = alternative.weight * value
                    if weighted > best.get(index, 0.0):
                        best[index] = weighted
            for index, value in best.items():
                totals[index] = totals.get(index, 0.0) + value
        if totals:
            self._add_phrase_bonus(vouched, totals)
            self._add_name_bonus(vouched, totals)
        unvouched = self._add_vector_scores(query, totals)
        for group in groups:
            if group[0].weight > 0:
                continue
            best = {}
            for alternative in group:
                for index, value in self._postings[alternative.term]:
                    best[index] = max(best.get(index, 0.0), -alternative.weight * value)
            for index, value in best.items():
                totals[index] = totals.get(index, 0.0) + value
                unvouched[index] = unvouched.get(index, 0.0) + value
        confidence = max(
            (value - unvouched.get(index, 0.0) for index, value in totals.items()), default=0.0
        )
        return totals, confidence


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weight", type=float, default=1.0)
    parser.add_argument("--min-cosine", type=float, default=0.5)
    parser.add_argument("--holdout", action="store_true", help="also read the holdout sets")
    args = parser.parse_args(argv)
    sets = [
        (
            "devset",
            [SearchDoc(row.name, row.description, tuple(row.keywords)) for row in ROWS],
            BENCH / "search_devset.jsonl",
        )
    ]
    kinds = ("dev", "paraphrase", "holdout") if args.holdout else ("dev", "paraphrase")
    for catalog in sorted((BENCH / "data").glob("*.catalog.json")):
        name = catalog.name.removesuffix(".catalog.json")
        for kind in kinds:
            path = BENCH / "data" / f"{name}.{kind}.queries.jsonl"
            if path.exists():
                sets.append((f"{name}.{kind}", load_catalog(catalog), path))
    objective = {"before": 0.0, "after": 0.0}
    dev_count = 0
    print(f"{'set':<24} {'before R@1/R@5/MRR':>22} {'after R@1/R@5/MRR':>22}  no-tool")
    for label, docs, path in sets:
        queries = load_queries(path)
        before = evaluate(KeywordRanker(docs), queries)
        after = evaluate(ExpandingRanker(docs, None, args.weight, args.min_cosine), queries)
        if label == "devset" or label.endswith(".dev"):
            dev_count += 1
            objective["before"] += (before.recall_at_5 + before.mrr) / 2
            objective["after"] += (after.recall_at_5 + after.mrr) / 2
        cells = [
            f"{r.recall_at_1:.3f}/{r.recall_at_5:.3f}/{r.mrr:.3f}".rjust(22)
            for r in (before, after)
        ]
        no_tool = (
            ""
            if before.no_tool_accuracy is None
            else (f"{before.no_tool_accuracy:.3f} → {after.no_tool_accuracy:.3f}")
        )
        print(f"{label:<24} {cells[0]} {cells[1]}  {no_tool}")
    print(
        f"dev objective (tune_search.py's): {objective['before'] / dev_count:.4f}"
        f" → {objective['after'] / dev_count:.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
