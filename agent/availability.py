"""Which catalog requirements a store meets, so a tool that cannot work is never offered."""

from __future__ import annotations

from typing import TYPE_CHECKING

import catalog
from catalog import Requirement, ToolRow

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agent.stores.base import Store


def met_requirements(store: Store) -> frozenset[Requirement]:
    """The requirements `store` meets now (cheap: a file check, a one-row read at most)."""
    from agent.vectors.location import sidecar_path

    met: set[Requirement] = set()
    if sidecar_path(store.identity).exists():
        from agent.vectors.sidecar import has_index  # apsw and sqlite-vec only when one exists

        if has_index(store.identity):
            met.add(Requirement.VECTOR_INDEX)
    return frozenset(met)


def offered_rows(store: Store, rows: Iterable[ToolRow] = catalog.ROWS) -> tuple[ToolRow, ...]:
    """The rows whose tools can work against `store`."""
    return catalog.available_rows(met_requirements(store), rows)
