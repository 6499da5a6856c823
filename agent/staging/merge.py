"""How a new change folds into an item's already-staged change (one change per item).

See the rules in `agent.staging.area`'s docstring; `fold` is the single place they live. An
update folding a staged update back to what the item holds drops it instead: that needs the
store's judgement, read before the staging transaction (`agent.staging.unchanged`).
"""

from __future__ import annotations

from dataclasses import replace

from agent.errors import BadKeyError, StagingError
from agent.staging.model import StagedChange
from agent.stores.base import Item, Key, Op


def check_new(table: str, op: Op, key: Key, item: Item | None) -> None:
    """Refuse a first change on an item that does not fit what the store holds now."""
    if op == "create" and item is not None:
        raise BadKeyError(
            f"an item with key {_show(key)} already exists in table {table}",
            fix="Use op update to change it.",
        )
    if op == "delete" and item is None:
        raise BadKeyError(
            f"no item with key {_show(key)} in table {table}, so there is nothing to delete",
            fix="Check the key with getItem; an item that is not there needs no delete.",
        )
    if op == "update" and item is None:
        raise BadKeyError(
            f"no item with key {_show(key)} in table {table}; use op create to add it",
            fix="Check the key with getItem, or use op create to add the item.",
        )


def fold(staged: StagedChange, table: str, op: Op, key: Key, values: Item) -> StagedChange:
    """The change that replaces `staged` (same id and pre-image) when `op` is staged on its item."""
    discard_hint = f"`tabletalk staged discard {staged.id}`"
    if staged.op == "delete":
        raise StagingError(
            f"the item with key {_show(key)} in {table} is staged for deletion (change {staged.id})",
            fix=f"Discard that change first ({discard_hint}), then stage this one.",
        )
    if op == "create":
        raise BadKeyError(
            f"the item with key {_show(key)} in {table} already has staged change {staged.id}",
            fix="Use op update to change its values.",
        )
    if op == "delete":
        if staged.op == "create":
            raise StagingError(
                f"the item with key {_show(key)} in {table} only exists as staged create "
                f"{staged.id}",
                fix=f"Discard the create instead ({discard_hint}).",
            )
        return replace(staged, op="delete", values={})
    return replace(staged, values={**staged.values, **values})


ORIGIN_JOIN = " + "


def joined_origin(existing: str, origin: str) -> str:
    """The origin of a change `origin` folded into: both names, so the panel shows who staged
    what and neither side, if only allowed its own changes, can discard the other's edit."""
    return existing if origin in existing.split(ORIGIN_JOIN) else existing + ORIGIN_JOIN + origin


def _show(key: Key) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in key.items())
