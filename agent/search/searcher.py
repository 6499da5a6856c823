"""searchTools as the loop runs it: budget per turn, ranking, and discoveries joining the set.

Ranking is the decider model's choice when `[search] decider` is configured (mode
"decision"), else — or when the decider fails, with `fallback_reason` — the keyword ranker
(mode "keyword"). Tools the user pinned with `[tools] always_loaded` are never searched for.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import catalog
from agent.active_set import ActiveSet
from agent.config import Settings
from agent.errors import TabletalkError
from agent.search.decider import Decider
from agent.search.text import MAX_QUERY_CHARS
from catalog import Visibility

if TYPE_CHECKING:  # the ranker (and rapidfuzz) load at a session's first search
    from agent.search.ranker import SearchDoc
    from agent.toolset import Toolset

SEARCH_BUDGET = 3
BUDGET_EXHAUSTED: dict[str, Any] = {
    "error": "search-budget-exhausted",
    "message": "search budget exhausted, call ask() to clarify with the user or use a "
    "previously-discovered tool",
    "budgetCap": SEARCH_BUDGET,
}


def check_query(query: str) -> None:
    """Refuse a query over MAX_QUERY_CHARS, naming the limit."""
    if len(query) > MAX_QUERY_CHARS:
        raise TabletalkError(
            f"the search query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS}",
            fix="Search for one capability in a few words, e.g. 'export to csv'.",
        )


def _pinned(name: str, always_loaded: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in always_loaded)


def promoted_names(toolset: Toolset) -> tuple[str, ...]:
    """Tools the user's overrides made inline although their own row says discoverable."""
    source = {row.name: row for row in catalog.ROWS}
    source.update({name: tool.row for name, tool in toolset.external.items()})
    return tuple(
        row.name
        for row in toolset.rows
        if row.visibility is Visibility.INLINE
        and row.name in source
        and source[row.name].visibility is not Visibility.INLINE
    )


def search_docs(toolset: Toolset, always_loaded: Sequence[str] = ()) -> list[SearchDoc]:
    """What search scores: every row but the loop's own tools and the user's always-loaded ones."""
    from agent.search.ranker import SearchDoc

    loop_tools = catalog.loop_names(toolset.rows)
    return [
        SearchDoc(row.name, row.description, tuple(row.keywords))
        for row in toolset.rows
        if row.name not in loop_tools and not _pinned(row.name, always_loaded)
    ]


@dataclass(frozen=True)
class Ranking:
    """What one search ranked: the mode that ran, (name, score) best first, and why it fell back."""

    mode: str
    hits: list[tuple[str, float]]
    fallback_reason: str | None = None
    no_tool_probability: float | None = None


def rank_tools(
    query: str,
    limit: int,
    docs: Sequence[SearchDoc],
    ranker: Any,
    decider: Decider | None,
) -> Ranking:
    """Decision mode when a decider is given and answers; keyword mode otherwise."""
    check_query(query)
    fallback_reason = None
    if decider is not None:
        decision = decider.decide(query, docs, limit)
        if decision.fallback_reason is None:
            return Ranking(
                "decision",
                [(name, probability) for name, probability in decision.tools],
                no_tool_probability=decision.no_tool_probability,
            )
        fallback_reason = decision.fallback_reason
    hits = [(hit.name, float(hit.score)) for hit in ranker.rank(query, limit=limit)]
    return Ranking("keyword", hits, fallback_reason)


def search_catalog(
    docs: Sequence[SearchDoc], query: str, limit: int, settings: Settings
) -> dict[str, Any]:
    """One search outside a conversation (`tabletalk tools search`): mode, tools, fallback."""
    from agent.search.ranker import KeywordRanker

    ranking = rank_tools(query, limit, docs, KeywordRanker(docs), Decider.from_settings(settings))
    descriptions = {doc.name: doc.description for doc in docs}
    result: dict[str, Any] = {
        "mode": ranking.mode,
        "tools": [
            {"name": name, "score": round(score, 4), "description": descriptions.get(name, "")}
            for name, score in ranking.hits
        ],
    }
    if ranking.no_tool_probability is not None:
        result["noToolProbability"] = round(ranking.no_tool_probability, 4)
    if ranking.fallback_reason:
        result["fallback_reason"] = ranking.fallback_reason
    return result


class ToolSearcher:
    """Runs searchTools for one conversation; `start_turn` resets the per-turn budget.

    The documents are listed and the ranker found at the first search (most turns search
    nothing); conversations over the same catalog share one ranker (`shared_ranker`).
    """

    def __init__(
        self,
        toolset: Toolset,
        active: ActiveSet,
        ranker: Any | None = None,
        *,
        decider: Decider | None = None,
        always_loaded: Sequence[str] | None = None,
    ) -> None:
        self.toolset = toolset
        self.active = active
        if always_loaded is None:
            always_loaded = getattr(toolset, "always_loaded", None) or promoted_names(toolset)
        self._always_loaded = tuple(always_loaded)
        self._ranker = ranker
        self.decider = decider
        self.calls_this_turn = 0

    @functools.cached_property
    def docs(self) -> list[SearchDoc]:
        """What search scores (see `search_docs`)."""
        return search_docs(self.toolset, self._always_loaded)

    @property
    def ranker(self) -> Any:
        """The keyword ranker over `docs`: the one given, else the process's for this catalog."""
        if self._ranker is None:
            from agent.search.ranker import shared_ranker

            self._ranker = shared_ranker(tuple(self.docs))
        return self._ranker

    def start_turn(self) -> None:
        self.calls_this_turn = 0

    def over_budget(self) -> bool:
        """True once this turn's budget is spent (the next call must not run)."""
        return self.calls_this_turn >= SEARCH_BUDGET

    def _entry(self, name: str, score: float, schemas: bool) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": name,
            "score": round(float(score), 4),
            "description": self.toolset.description(name),
        }
        if schemas:
            entry["input_schema"] = self.toolset.spec(name)["toolSpec"]["inputSchema"]["json"]
        return entry

    def search(self, query: str, limit: int = 5, schemas: bool = False) -> dict[str, Any]:
        """Rank the catalog; discoverable matches join the active set right here."""
        if self.over_budget():
            return dict(BUDGET_EXHAUSTED)
        check_query(query)
        self.calls_this_turn += 1
        ranking = rank_tools(query, limit, self.docs, self.ranker, self.decider)
        tools, joined, already = [], [], []
        for name, score in ranking.hits:
            tools.append(self._entry(name, score, schemas))
            if name in self.active:
                already.append(name)
            elif self.active.add(name):
                joined.append(name)
        result: dict[str, Any] = {
            "mode": ranking.mode,
            "tools": tools,
            "always": list(self.active.inline),
            "joined": joined,
            "alreadyActive": already,
            "budgetLeft": SEARCH_BUDGET - self.calls_this_turn,
        }
        if ranking.fallback_reason:
            result["fallback_reason"] = ranking.fallback_reason
        if ranking.no_tool_probability is not None:
            result["noToolProbability"] = round(ranking.no_tool_probability, 4)
        if not tools:
            result["message"] = (
                "No tool matched. Rephrase as one capability (e.g. 'export to csv'), "
                "or call ask() to clarify with the user."
            )
        else:
            result["message"] = (
                "Tools in 'joined' are callable from your next step."
                if joined
                else "Every match is already callable."
            )
        return result
