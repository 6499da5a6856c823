"""Conversations over the same catalog share one ranker; a different catalog gets its own."""

from __future__ import annotations

from agent.active_set import ActiveSet
from agent.search.ranker import KeywordRanker
from agent.search.searcher import ToolSearcher
from agent.toolset import Toolset


def _searcher(toolset: Toolset, always_loaded: tuple[str, ...] = ()) -> ToolSearcher:
    return ToolSearcher(toolset, ActiveSet(toolset.inline_names()), always_loaded=always_loaded)


def test_a_second_conversation_over_the_same_tools_reuses_the_first_ones_ranker() -> None:
    first, second = _searcher(Toolset.build()), _searcher(Toolset.build())
    assert first.ranker is second.ranker  # its tool vectors are built once per process
    fresh = KeywordRanker(second.docs)
    assert second.ranker.rank("export to csv") == fresh.rank("export to csv")


def test_a_conversation_over_other_tools_gets_a_ranker_of_its_own() -> None:
    toolset = Toolset.build()
    plain = _searcher(toolset)
    top = plain.search("export to csv")["tools"][0]["name"]
    pinned = _searcher(toolset, always_loaded=(top,))  # a pinned tool is not searched
    assert pinned.ranker is not plain.ranker
    assert top not in [tool["name"] for tool in pinned.search("export to csv")["tools"]]
    assert top in [tool["name"] for tool in _searcher(toolset).search("export to csv")["tools"]]
