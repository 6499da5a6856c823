"""Rebase ("take current"): refresh staged changes' pre-images to what the store holds now.

After a conflict the item changed under the change; rebasing makes the change apply on top of
the current value instead. Per change:

- update: pre-image := current item; dropped when its values already equal the current ones;
  refused when the item is gone (discard it, or stage a create).
- delete: pre-image := current item; dropped when the item is already gone.
- create: kept as is while its key is free; when an item now has that key, it becomes an
  update of that item (dropped when the item already has those values).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.staging.encoding import maybe_json
from agent.staging.model import StagedChange
from agent.stores.base import Item, Store
from agent.text_plural import counted


@dataclass
class RebaseReport:
    """What `StagingArea.rebase` did: refreshed ids, dropped ids, and ids it could not rebase."""

    refreshed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (id, why)

    def describe(self) -> str:
        """One sentence for the user."""
        parts = [f"Rebased {counted(len(self.refreshed), 'change')} onto the current values"]
        if self.dropped:
            parts.append(
                f"dropped {len(self.dropped)} that the table already matches "
                "(nothing left to commit)"
            )
        if self.refused:
            parts.append(f"could not rebase {len(self.refused)}")
        return "; ".join(parts) + "."


Update = tuple[str, str | None, str]  # (op, pre_image_json, id)


def plan_rebase(store: Store, changes: list[StagedChange]) -> tuple[list[Update], RebaseReport]:
    """The staging rows to rewrite (and the report, whose `dropped` ids are to be deleted)."""
    report = RebaseReport()
    updates: list[Update] = []
    for change in changes:
        current = store.get_item(change.table, change.key)
        if change.op == "delete":
            if current is None:
                report.dropped.append(change.id)
            else:
                updates.append(("delete", maybe_json(current), change.id))
                report.refreshed.append(change.id)
        elif current is None:
            if change.op == "create":
                report.refreshed.append(change.id)  # the key is free: it applies as it is
            else:
                report.refused.append(
                    (
                        change.id,
                        "the item no longer exists; discard the change, or stage a create",
                    )
                )
        elif _matches(store, change, current):
            report.dropped.append(change.id)
        else:
            updates.append(("update", maybe_json(current), change.id))
            report.refreshed.append(change.id)
    return updates, report


def _matches(store: Store, change: StagedChange, current: Item) -> bool:
    """True when the item already has every value the change sets (as the store compares)."""
    return store.holds(change.table, change.key, change.values)
