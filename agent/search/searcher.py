"""searchTools as the loop runs it: budget per turn, ranking, and discoveries joining the set."""

from __future__ import annotations

from typing import Any

from agent.active_set import ActiveSet
from agent.search.ranker import KeywordRanker, SearchDoc
from agent.toolset import LOOP_TOOLS, Toolset

SEARCH_BUDGET = 3
BUDGET_EXHAUSTED: dict[str, Any] = {
    "error": "search-budget-exhausted",
    "message": "search budget exhausted, call ask() to clarify with the user or use a "
    "previously-discovered tool",
    "budgetCap": SEARCH_BUDGET,
}


def search_docs(toolset: Toolset) -> list[SearchDoc]:
    """What the ranker scores: every row but the loop's own tools."""
    return [
        SearchDoc(row.name, row.description, tuple(row.keywords))
        for row in toolset.rows
        if row.name not in LOOP_TOOLS
    ]


class ToolSearcher:
    """Runs searchTools for one conversation; `start_turn` resets the per-turn budget."""

    def __init__(self, toolset: Toolset, active: ActiveSet, ranker: Any | None = None) -> None:
        self.toolset = toolset
        self.active = active
        self.ranker = ranker or KeywordRanker(search_docs(toolset))
        self.calls_this_turn = 0

    def start_turn(self) -> None:
        self.calls_this_turn = 0

    def over_budget(self) -> bool:
        """True once this turn's budget is spent (the next call must not run)."""
        return self.calls_this_turn >= SEARCH_BUDGET

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        """Rank the whole catalog; discoverable matches join the active set right here."""
        if self.over_budget():
            return dict(BUDGET_EXHAUSTED)
        self.calls_this_turn += 1
        ranked = self.ranker.rank(query, limit=limit)
        tools, joined, already = [], [], []
        for hit in ranked:
            name = hit.name
            tools.append(
                {"name": name, "score": round(float(hit.score), 4),
                 "description": self.toolset.description(name)}
            )
            if name in self.active:
                already.append(name)
            elif self.active.add(name):
                joined.append(name)
        result: dict[str, Any] = {
            "mode": "keyword",
            "tools": tools,
            "always": list(self.active.inline),
            "joined": joined,
            "alreadyActive": already,
            "budgetLeft": SEARCH_BUDGET - self.calls_this_turn,
        }
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
