"""Retrieval metrics for a tool ranker over labelled queries: recall@1, recall@5, MRR and
no-tool accuracy, with the full ranking of every query kept for inspection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agent.search.catalog_file import LabelledQuery

NO_MATCH_THRESHOLD = 2.0
"""A top score below this counts as 'nothing fits' for no-tool queries. Keyword scores are
BM25F sums, so one ordinary word matching one description scores about 1-3."""


class Ranker(Protocol):
    """Anything with `rank(query, limit)` returning objects with `.name` and `.score`."""

    def rank(self, query: str, limit: int = 5) -> Sequence[object]: ...


@dataclass(frozen=True)
class EvalReport:
    """Metrics over the queries that have gold tools, plus no-tool accuracy over those without.

    `recall_at_1` / `recall_at_5`: fraction of labelled queries whose top 1 / top `limit`
    holds ANY gold name; `mrr`: mean of 1/rank of the first gold name (0 when absent from
    the top `limit`); `n`: number of labelled queries. `no_tool_accuracy` is the fraction of
    `n_no_tool` empty-gold queries for which nothing scored at or above the no-match
    threshold (None when there are none). `rankings` keeps (query, ranked names) for every
    query in input order.
    """

    recall_at_1: float
    recall_at_5: float
    mrr: float
    n: int
    rankings: list[tuple[str, list[str]]] = field(default_factory=list)
    no_tool_accuracy: float | None = None
    n_no_tool: int = 0


def evaluate(
    ranker: Ranker,
    queries: Sequence[LabelledQuery],
    limit: int = 5,
    *,
    no_match_threshold: float = NO_MATCH_THRESHOLD,
) -> EvalReport:
    """Rank every query and score the rankings (see EvalReport for each metric's definition).

    recall@k counts a query as a hit when its top k contains any of its gold names.
    """
    hits_at_1 = hits_at_k = 0
    reciprocal_sum = 0.0
    labelled = no_tool = no_tool_hits = 0
    rankings: list[tuple[str, list[str]]] = []
    for item in queries:
        ranked = list(ranker.rank(item.query, limit=limit))
        names = [str(getattr(hit, "name", hit)) for hit in ranked]
        rankings.append((item.query, names))
        if not item.gold:
            no_tool += 1
            top = float(getattr(ranked[0], "score", 0.0)) if ranked else 0.0
            if top < no_match_threshold:
                no_tool_hits += 1
            continue
        labelled += 1
        gold = set(item.gold)
        first = next((rank for rank, name in enumerate(names, start=1) if name in gold), None)
        if first is not None:
            hits_at_k += 1
            reciprocal_sum += 1.0 / first
            if first == 1:
                hits_at_1 += 1
    return EvalReport(
        recall_at_1=hits_at_1 / labelled if labelled else 0.0,
        recall_at_5=hits_at_k / labelled if labelled else 0.0,
        mrr=reciprocal_sum / labelled if labelled else 0.0,
        n=labelled,
        rankings=rankings,
        no_tool_accuracy=no_tool_hits / no_tool if no_tool else None,
        n_no_tool=no_tool,
    )
