"""Which rows staged deletes would leave pointing at nothing (declared foreign keys and
relationships), so a review can show them before the commit."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent.staging.model import StagedChange
from agent.stores.base import Store
from agent.stores.references import Reference, ReferencingRows


def relationship_references(
    store: Store, table: str, relationships: Iterable[Any]
) -> list[Reference]:
    """Declared relationships as references to `table`: the side of `table` must join on its
    key (the parent side); the other side holds the referencing rows."""
    key = tuple(c.lower() for c in store.schema(table).key_columns)
    found = []
    for rel in relationships:
        sides = ((rel.left, rel.left_on, rel.right, rel.right_on),
                 (rel.right, rel.right_on, rel.left, rel.left_on))  # fmt: skip
        for parent, parent_on, child, child_on in sides:
            if parent.lower() == table.lower() and (parent_on.lower(),) == key:
                found.append(Reference(child, (child_on,), parent, (parent_on,), rel.name))
    return found


def orphaned_by(
    store: Store, deletes: list[StagedChange], relationships: Iterable[Any] = ()
) -> list[ReferencingRows]:
    """Rows of other tables that reference items these deletes remove (empty when the store
    cannot tell); rows these deletes remove too are not orphans."""
    by_table: dict[str, list[Any]] = {}
    for change in deletes:
        if change.op == "delete":
            by_table.setdefault(change.table, []).append(change.key)
    rels = list(relationships)
    found: list[ReferencingRows] = []
    for table, keys in by_table.items():
        also = tuple(relationship_references(store, table, rels))
        found += store.referencing_rows(table, keys, also=also, deleted=by_table)
    return found
