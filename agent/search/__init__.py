"""Tool search: the keyword ranker, catalog/query file loading and retrieval evaluation.

Nothing is imported here: a turn that searches nothing never loads the ranker (rapidfuzz and
its word tables).
"""
