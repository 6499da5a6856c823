"""The plain data of the staging area: a staged change, one attribute's diff, a commit's outcome."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.stores.base import ChangeToApply, Conflict, Item, Key, Op


@dataclass(frozen=True)
class StagedChange:
    """One pending create/update/delete, with the item as it was when staged (`pre_image`)."""

    id: str
    store: str
    table: str
    key: Key
    op: Op
    values: Item
    pre_image: Item | None
    origin: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form for tools, the CLI and MCP clients."""
        return {
            "id": self.id,
            "table": self.table,
            "key": dict(self.key),
            "op": self.op,
            "values": dict(self.values),
            "pre_image": None if self.pre_image is None else dict(self.pre_image),
            "origin": self.origin,
            "time": self.created_at,
        }

    def to_apply(self) -> ChangeToApply:
        """The form `Store.apply` takes."""
        return ChangeToApply(self.id, self.table, self.key, self.op, self.values, self.pre_image)


@dataclass(frozen=True)
class Unchanged:
    """An update that would change nothing, so nothing was staged: the item already holds
    every value (`change_id` None), or its staged change `change_id` already sets them; or
    (`withdrawn`) folding it into staged change `change_id` takes that change back to what the
    item holds, so the change was dropped."""

    table: str
    key: Key
    values: Item
    change_id: str | None = None
    withdrawn: bool = False


@dataclass(frozen=True)
class BulkStaged:
    """What a bulk edit that skips no-ops did: the changes it staged (new or folded), how many
    matched items it left out because they hold the values already (`unchanged`) or their
    staged change already sets them (`already_staged`), and the ids of the staged changes it
    dropped because the new values take them back to what their items hold (`withdrawn`)."""

    changes: Sequence[StagedChange]
    unchanged: int = 0
    already_staged: int = 0
    withdrawn: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        """The items the edit named or selected."""
        return len(self.changes) + self.unchanged + self.already_staged + len(self.withdrawn)


@dataclass(frozen=True)
class AttributeDiff:
    """One attribute's old → new value (old is None for a create, new is None for a delete).

    `old_type`/`new_type` are the store's type names, set only when an update changes the
    type (a DynamoDB Number becoming a String looks the same once printed).
    """

    attribute: str
    old: Any
    new: Any
    old_type: str | None = None
    new_type: str | None = None


@dataclass
class CommitReport:
    """What a commit did: the ids now in the store, the conflicts, and what is still staged.

    `committed` counts what really landed, including `recovered`: changes an interrupted
    earlier commit had applied, found when this commit settled it first. `kept` are the ids
    this commit tried that are still staged (on SQLite, all of them when there is a conflict).
    """

    committed: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the commit landed without conflicts."""
        return not self.conflicts
