"""What a staged change does, attribute by attribute (old → new), for review screens."""

from __future__ import annotations

import dataclasses

from agent.staging.model import AttributeDiff, StagedChange
from agent.stores.base import Store


def diff_of(store: Store, change: StagedChange) -> list[AttributeDiff]:
    """Per attribute old → new: all attributes for create/delete, the changed ones for update."""
    before = change.pre_image or {}
    if change.op == "create":
        after = {**change.key, **change.values}
        return [AttributeDiff(a, None, v) for a, v in after.items()]
    if change.op == "delete":
        return [AttributeDiff(a, v, None) for a, v in before.items()]
    return [_typed(store, AttributeDiff(a, before.get(a), v)) for a, v in change.values.items()]


def _typed(store: Store, diff: AttributeDiff) -> AttributeDiff:
    """The diff with both type names when the store says the update changes the type."""
    if diff.old is None or diff.new is None:
        return diff
    old, new = store.value_type(diff.old), store.value_type(diff.new)
    if old is None or new is None or old == new:
        return diff
    return dataclasses.replace(diff, old_type=old, new_type=new)
