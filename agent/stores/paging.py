"""Paged reads for table tabs: what a page is, and a source any store's `query` can back.

A store's `pages(table, where)` returns a RowSource; SQLite's keyset reader is in
`sqlite_paging.py`. Query results (saved queries, joined views) use `QueryRowSource`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent.stores.base import Store

PAGE_SIZE = 200
"""Rows per fetched page."""


@dataclass(frozen=True)
class ColumnSpec:
    """A column as a table tab shows it."""

    name: str
    type: str
    key: bool = False


@dataclass
class Page:
    """One fetched page: row tuples (values in `columns` order) and each row's key dict.

    A source whose columns grow as it reads (DynamoDB: the union of the attributes seen so far)
    sends its `columns` as of this page, and each row's whole `records` for the row detail
    (attributes past the shown columns included); a row shorter than the columns lacks the
    later ones.
    """

    number: int
    rows: list[tuple[Any, ...]]
    keys: list[dict[str, Any]]
    order_keys: list[Any]
    columns: list[ColumnSpec] | None = None
    records: list[dict[str, Any]] | None = None


def blob_label(size: int) -> str:
    """How a table tab shows a blob of `size` bytes in a cell."""
    return f"<{size} byte{'' if size == 1 else 's'}>"


class RowSource(Protocol):
    """What a table tab reads rows through (pages are fetched on a worker thread)."""

    title: str
    columns: list[ColumnSpec]
    key_columns: tuple[str, ...]
    truncated: bool
    """True when the source holds only the first rows of a longer result."""

    def count(self) -> int:
        """Rows matching the filter (cached)."""
        ...

    def page(self, number: int) -> Page:
        """Rows `number * PAGE_SIZE ...` (an empty page past the end)."""
        ...

    def invalidate(self) -> None:
        """Forget cached pages and the count (the table changed, e.g. after a commit)."""
        ...

    def whole_row(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The row with `key`, every value whole, for a source whose pages cut long values;
        None when its pages hold them whole (or the row is gone)."""
        ...

    def close(self) -> None:
        """Stop any running read and release the source."""
        ...


class TabClosed(Exception):
    """A read was cut short because its tab closed; workers drop it silently."""


class QueryRowSource:
    """Rows of a read-only query through the Store (any backend), fetched up to a cap."""

    CAP = 5000

    def __init__(
        self, store: Store, title: str, sql: str, key_columns: tuple[str, ...] = ()
    ) -> None:
        self.title = title
        self.key_columns = key_columns
        result = store.query(sql, limit=self.CAP)
        self.truncated = result.truncated
        self.columns = [ColumnSpec(name, "", key=name in key_columns) for name in result.columns]
        names = [c.name for c in self.columns]
        self._rows = [tuple(row.get(n) for n in names) for row in result.rows]
        self._keys = [{k: row.get(k) for k in key_columns} for row in result.rows]

    def count(self) -> int:
        """Rows the query returned (at most CAP)."""
        return len(self._rows)

    def invalidate(self) -> None:
        """Fixed rows: a query tab shows what the query returned when it opened."""

    def whole_row(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """None: a query's rows are held whole."""
        return None

    def page(self, number: int) -> Page:
        """A slice of the fetched rows."""
        start = number * PAGE_SIZE
        end = start + PAGE_SIZE
        return Page(number, self._rows[start:end], self._keys[start:end], [])

    def close(self) -> None:
        """Nothing to release."""
        return None
