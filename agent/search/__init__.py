"""Tool search: the keyword ranker, catalog/query file loading and retrieval evaluation."""

from __future__ import annotations

from agent.search.ranker import KeywordRanker, ScoredDoc, SearchDoc

__all__ = ["KeywordRanker", "ScoredDoc", "SearchDoc"]
