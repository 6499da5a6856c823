"""The staging area: edits wait here, persisted, until a person reviews and commits them."""

from __future__ import annotations

from agent.staging.area import MAX_ITEMS_PER_CALL, StagingArea
from agent.staging.model import AttributeDiff, CommitReport, StagedChange

__all__ = [
    "MAX_ITEMS_PER_CALL",
    "AttributeDiff",
    "CommitReport",
    "StagedChange",
    "StagingArea",
]
