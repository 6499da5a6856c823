"""Rows that point at other rows: declared foreign keys and relationships, and the rows that
would be left orphaned when the items they reference are deleted."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.stores.base import Item
from agent.text_plural import counted, noun


@dataclass(frozen=True)
class Reference:
    """`table.columns` hold the values of `target.target_columns` (a foreign key or a
    declared relationship, named by `via`)."""

    table: str
    columns: tuple[str, ...]
    target: str
    target_columns: tuple[str, ...]
    via: str = "foreign key"

    def describe(self) -> str:
        """`orders.product_id → products.id`."""
        return (
            f"{self.table}.{', '.join(self.columns)} → "
            f"{self.target}.{', '.join(self.target_columns)}"
        )

    def same_join(self, other: Reference) -> bool:
        return (self.table.lower(), self.columns, self.target.lower(), self.target_columns) == (
            other.table.lower(),
            other.columns,
            other.target.lower(),
            other.target_columns,
        )


@dataclass(frozen=True)
class ReferencingRows:
    """How many rows of `reference.table` point at the given items, with a few examples."""

    reference: Reference
    count: int
    targets: int
    """How many of the given items are pointed at."""
    examples: list[Item] = field(default_factory=list)

    def describe(self) -> str:
        """`28 rows of orders (orders.product_id → products.id, e.g. id=3, id=9)`."""
        shown = "; ".join(", ".join(f"{k}={v}" for k, v in e.items()) for e in self.examples)
        more = ", …" if self.count > len(self.examples) else ""
        return (
            f"{counted(self.count, 'row')} of {self.reference.table} still "
            f"{noun(self.count, 'points', 'point')} at "
            f"{counted(self.targets, 'deleted item')} "
            f"({self.reference.describe()}{', e.g. ' + shown + more if shown else ''})"
        )


def orphan_warning(found: list[ReferencingRows], then: str = "the commit asks first") -> str:
    """One line for the review: `⚠ Deletes leave 73 rows pointing at nothing (11 in orders, 62
    in reviews); the commit asks first.` A table reached by two references is named with its
    columns and no total is given, since one row can point at two deleted items."""
    tables = [o.reference.table.lower() for o in found]
    repeated = len(set(tables)) < len(tables)

    def where(o: ReferencingRows) -> str:
        ref = o.reference
        named = f"{ref.table}.{', '.join(ref.columns)}" if repeated else ref.table
        return f"{o.count:,} in {named}"

    listed = ", ".join(where(o) for o in found)
    rows = "rows" if repeated else counted(sum(o.count for o in found), "row")
    return f"⚠ Deletes leave {rows} pointing at nothing ({listed}){'; ' + then if then else ''}."
