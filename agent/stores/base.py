"""The store interface every backend implements, and the plain data it returns."""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

Op = Literal["create", "update", "delete"]
Key = dict[str, Any]
Item = dict[str, Any]

INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # SQLite's 64-bit INTEGER range


def unstorable(value: Any) -> str | None:
    """Why a store cannot keep this number (an int beyond 64 bits, NaN, ±Infinity); else None."""
    if isinstance(value, int):
        if INT_MIN <= value <= INT_MAX:
            return None
        return f"{value} is outside the integer range {INT_MIN} to {INT_MAX}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number, so it cannot be stored"
    return None


@dataclass(frozen=True)
class Column:
    """One column (attribute) of a table."""

    name: str
    type: str
    key_position: int = 0  # 1-based position in the primary key; 0 when not a key column
    not_null: bool = False


@dataclass(frozen=True)
class IndexInfo:
    """One secondary index."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True)
class TableInfo:
    """What `describe_table` returns."""

    name: str
    key_columns: tuple[str, ...]
    columns: tuple[Column, ...]
    indexes: tuple[IndexInfo, ...]
    row_count: int
    rowid_key: bool = False  # True when the key is SQLite's implicit rowid

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for tool results and the CLI."""
        return {
            "table": self.name,
            "key": list(self.key_columns),
            "columns": [{"name": c.name, "type": c.type} for c in self.columns],
            "indexes": [
                {"name": i.name, "columns": list(i.columns), "unique": i.unique}
                for i in self.indexes
            ],
            "rowCount": self.row_count,
        }


MAX_READ_BYTES = 8 * 1024 * 1024
"""Byte budget of one read (text and blob lengths, 8 per number); also SQLite's limit on any
single value it builds on the read-only connection, so zeroblob(10e9) fails instead of
allocating."""
NARROWER_QUERY = (
    "Select fewer columns, cut long text or blobs with substr(column, 1, 200) or length(column), "
    "or lower the limit."
)


@dataclass
class QueryResult:
    """Rows of a read-only query; `truncated` when more rows existed than `limit` or than
    the read's byte budget allowed (`over_budget`)."""

    columns: list[str]
    rows: list[Item]
    truncated: bool = False
    over_budget: bool = False


class ChangeToApply(NamedTuple):
    """One staged change as a store commits it (see staging.StagedChange).

    A NamedTuple rather than a frozen dataclass: a bulk commit builds ten thousand of them,
    and a tuple is several times cheaper to create.
    """

    id: str
    table: str
    key: Key
    op: Op
    values: Item
    pre_image: Item | None


@dataclass(frozen=True)
class Conflict:
    """A change that could not commit: why, and the item's value now."""

    change_id: str
    reason: str
    current: Item | None


@dataclass
class ApplyResult:
    """Outcome of `Store.apply`: the ids that landed and the conflicts (which did not)."""

    applied: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)


Landed = Callable[[list[str]], None]
"""Told the ids of one atomic unit of a commit as soon as the store made it durable."""


class Store(Protocol):
    """A place with tables. All reads are read-only; writes happen only through `apply`."""

    kind: str
    """Backend name: "sqlite" or "dynamodb"."""

    identity: str
    """Stable id that scopes staged changes (SQLite: "sqlite:" + resolved file path)."""

    label: str
    """Short name for headers and messages."""

    def list_tables(self) -> list[str]: ...

    def describe_table(self, table: str) -> TableInfo: ...

    def get_item(self, table: str, key: Key) -> Item | None: ...

    def query(self, sql: str, limit: int | None = None) -> QueryResult: ...

    def query_batches(
        self, sql: str, batch_size: int = 200, timeout_s: float | None = None
    ) -> Generator[QueryResult, None, None]:
        """Like `query` without a limit, a batch of rows at a time (bounded memory); the first
        batch comes even when empty. Close the iterator to stop early."""
        ...

    def interrupt(self) -> None:
        """Stop a running read; called from another thread when the user presses Stop.

        Safe at any time and a no-op when nothing runs; the stopped read raises
        StoreError("the query was stopped", fix=...).
        """
        ...

    def count(self, table: str, where: str | None = None) -> int: ...

    def sample_values(self, table: str, column: str, limit: int = 20) -> list[dict[str, Any]]: ...

    def index_stats(self, table: str) -> list[dict[str, Any]]: ...

    def normalize_key(self, table: str, key: Key) -> Key: ...

    def apply(
        self,
        changes: list[ChangeToApply],
        progress: Any = None,
        landed: Landed | None = None,
    ) -> ApplyResult:
        """Apply `changes` optimistically (each update/delete only onto its pre-image).

        `landed(ids)` is called with the ids of each atomic unit right after the store made it
        durable (SQLite: once, after its one transaction; a store that commits in batches: once
        per batch), before the next unit starts; the staging area drops those changes then, so
        an interrupted commit leaves at most one unit in doubt. Raise a TabletalkError only
        after rolling back the unit in progress.
        """
        ...

    def close(self) -> None: ...
