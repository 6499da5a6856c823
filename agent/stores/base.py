"""The store interface every backend implements, and the plain data it returns."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from agent.errors import ReadStopped
from agent.text_plural import counted

if TYPE_CHECKING:
    from agent.stores.paging import RowSource
    from agent.stores.references import Reference, ReferencingRows

Op = Literal["create", "update", "delete"]
Key = dict[str, Any]
Item = dict[str, Any]

INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # SQLite's 64-bit INTEGER range

WHOLE_TABLE_TIMEOUT_S = 3600.0
"""How long `Store.scan_rows` may read (a query's own timeout is for what a model asks)."""


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
    strict: bool = False
    """Declared in a SQLite STRICT table, where an ANY column keeps every value as given."""


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


def stopped_error() -> ReadStopped:
    """A read stopped on request (Stop)."""
    return ReadStopped(
        "the query was stopped",
        fix="It was stopped on request (Stop); nothing was changed. Run it again "
        "if it is still needed, narrowed with a WHERE condition or a LIMIT.",
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


@dataclass(frozen=True)
class StagedSource:
    """Staged changes a store may read set-based, straight from the staging database.

    `path` is that SQLite file; `select` (with `params`) is a SELECT over it, naming it
    `{db}` (the store attaches it under a name of its choosing), returning the columns id, tbl,
    key_json, op, values_json, pre_image_json, snapshot of exactly the changes `ids` (in any
    order). `snapshot` is the stamp (`stores.sqlite_snapshot`) of the store's file when the
    pre-image was read set-based, else NULL.
    """

    path: Path
    select: str
    params: tuple[Any, ...]
    ids: list[str]


Landed = Callable[[list[str]], None]
"""Told the ids of one atomic unit of a commit as soon as the store made it durable."""
RetryListener = Callable[[str, str], None]
"""Told `(text, state)` about a retried request: state "retrying" (text: a one-line status),
then "recovered" (text empty) or "gave-up" (text: what failed and what to do)."""


class TableShape(Protocol):
    """A table's name, columns and key: what staging needs (a TableInfo has it)."""

    @property
    def name(self) -> str: ...

    @property
    def columns(self) -> Sequence[Column]: ...

    @property
    def key_columns(self) -> tuple[str, ...]: ...


class Store(ABC):
    """A place with tables. All reads are read-only; writes happen only through `apply`.

    Capabilities are properties with a default, so callers ask the store instead of probing
    for attributes; a backend overrides what it offers.
    """

    kind: str
    """Backend name: "sqlite" or "dynamodb"."""

    identity: str
    """Stable id that scopes staged changes (see `agent.stores.open.identity_db`)."""

    label: str
    """Short name for headers and messages."""

    # -- capabilities ---------------------------------------------------------------------------

    @property
    def query_language(self) -> str:
        """The language of `query`, `count(where)` and table filters ("SQL", "PartiQL")."""
        return "SQL"

    @property
    def filter_example(self) -> str:
        """A filter condition in `query_language`, for hints."""
        return "status = 'open'"

    @property
    def supports_sql_joins(self) -> bool:
        """True when `query` can join tables (joined views need it)."""
        return False

    @property
    def file_path(self) -> Path | None:
        """The file the store lives in, or None when it is not a file."""
        return None

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite file holding the tables, when staging may attach it read-only to copy
        pre-images set-based (`agent.staging.bulk`); None for any other store."""
        return None

    @property
    def no_tables_hint(self) -> str:
        """What to do when `list_tables` is empty: shown by `tabletalk info` and the app."""
        return f"{self.label} has no tables: open a store that has some (--db)."

    @property
    def db_arg(self) -> str:
        """The `--db` value that opens this same store again."""
        return self.identity

    @property
    def max_transaction_items(self) -> int | None:
        """How many changes `apply` commits atomically: None means the whole list at once.

        A store with a limit applies a longer list as consecutive batches of at most this
        many; each batch is all or nothing, and a conflict stops the commit at its batch.
        """
        return None

    @property
    def value_checker(self) -> Callable[[str, Any], None] | None:
        """For a store whose items take any attribute and nested values (DynamoDB): a function
        that raises on a value it cannot store. None: fixed columns and scalar values (SQLite)."""
        return None

    # -- reads ----------------------------------------------------------------------------------

    @abstractmethod
    def list_tables(self) -> list[str]:
        """Table names, in name order."""

    @abstractmethod
    def describe_table(self, table: str) -> TableInfo:
        """Key, columns, indexes and row count of `table`."""

    def schema(self, table: str) -> TableShape:
        """The table's name, columns and key; a store may answer faster than describe_table."""
        return self.describe_table(table)

    @abstractmethod
    def get_item(self, table: str, key: Key) -> Item | None:
        """The item with this key, or None."""

    def normalize_keys(self, table: str, keys: list[Key]) -> list[Key]:
        """`normalize_key` for many keys of one table (a store may look the table up once)."""
        return [self.normalize_key(table, k) for k in keys]

    def get_items(self, table: str, keys: list[Key]) -> list[Item | None]:
        """Items for many keys (None where none exists); a store may batch the lookups."""
        return [self.get_item(table, self.normalize_key(table, k)) for k in keys]

    def referencing_rows(
        self,
        table: str,
        keys: list[Key],
        also: tuple[Reference, ...] = (),
        examples: int = 3,
        deleted: Mapping[str, list[Key]] | None = None,
    ) -> list[ReferencingRows]:
        """Rows of other tables that reference these items of `table` (declared foreign keys
        and the references in `also`), leaving out the rows `deleted` names (per table: keys
        deleted along with them); empty for a store that cannot tell."""
        return []

    def watch_retries(self, listener: RetryListener | None) -> None:
        """Tell `listener` while requests are retried (a store that retries throttled calls
        on its own, like DynamoDB); the default store never does."""
        return None

    def value_type(self, value: Any) -> str | None:
        """The store's name for the type of a staged value (diffs show it when an update
        changes it); None when the store has no types beyond what the value shows."""
        return None

    def holds(self, table: str, key: Key, values: Item, *, whole: bool = False) -> bool:
        """True when the item with `key` exists and each of `values` equals its attribute;
        `whole` also requires `values` to name every attribute. Stores compare as they store."""
        item = self.get_item(table, key)
        if item is None:
            return False
        if whole:
            return item == values
        return all(name in item and item[name] == value for name, value in values.items())

    def holds_many(
        self, table: str, checks: Sequence[tuple[Key, Item]], *, whole: bool = False
    ) -> list[bool]:
        """`holds` for many (key, values) pairs of one table; stores that can answer them in
        a few reads instead of one per pair override it."""
        return [self.holds(table, key, values, whole=whole) for key, values in checks]

    def holds_as_read(self, table: str, item: Item | None, values: Item) -> bool | None:
        """Whether `item`, as `get_item(s)` just returned it, holds `values` as `holds` would
        judge; None when only a new read can tell (the default, and SQLite, which compares
        in SQL with the column's affinity), so callers ask `holds`/`holds_many`."""
        return None

    @abstractmethod
    def query(self, sql: str, limit: int | None = None) -> QueryResult:
        """Run one read-only statement in `query_language`; at most `limit` rows."""

    @abstractmethod
    def count(self, table: str, where: str | None = None) -> int:
        """Items of `table`, optionally only those matching `where` (a `query_language`
        condition)."""

    def size_label(self, table: str) -> str:
        """How big `table` is, for the home list ("1,204 rows"); a store whose exact count
        would cost a full scan says its approximation and key instead."""
        count = self.count(table)
        return f"{count:,} row{'' if count == 1 else 's'}"

    @abstractmethod
    def sample_values(self, table: str, column: str, limit: int = 20) -> list[dict[str, Any]]:
        """The most frequent values of a column with their counts."""

    @abstractmethod
    def index_stats(self, table: str) -> list[dict[str, Any]]:
        """Each index of `table` with what the store knows of its selectivity."""

    @abstractmethod
    def normalize_key(self, table: str, key: Key) -> Key:
        """Check `key` names exactly the key attributes and coerce its values to their types."""

    @abstractmethod
    def pages(self, table: str, where: str | None = None) -> RowSource:
        """Paged, keyset read of `table` (optionally filtered by a `query_language`
        condition) for table tabs: a huge table opens at once and never loads whole."""

    def take_read_report(self) -> dict[str, Any] | None:
        """What this thread's reads cost since the last call (read units, items scanned, an
        early stop at a cap), for tool results; None when the store does not count."""
        return None

    @property
    def read_units_total(self) -> float | None:
        """Read units all counted reads consumed so far; None when the store does not count."""
        return None

    def query_batches(
        self, sql: str, batch_size: int = 200, timeout_s: float | None = None
    ) -> Generator[QueryResult, None, None]:
        """Like `query` without a limit, a batch of rows at a time (bounded memory); the first
        batch comes even when empty. Close the iterator to stop early.

        The default runs `query` once (a store's own caps bound it) and hands out its rows in
        batches; a store that can stream overrides it.
        """
        result = self.query(sql)
        rows = result.rows
        for start in range(0, max(len(rows), 1), batch_size):
            yield QueryResult(result.columns, rows[start : start + batch_size], result.truncated)

    def scan_rows(
        self, table: str, columns: Sequence[str], batch_size: int = 1000
    ) -> Generator[list[Item], None, None]:
        """Every row of `table` with its key and `columns` (a row lacking one has no entry for
        it), a batch at a time in bounded memory, in no particular order. A whole-table read
        the user asked for (building an embedding index), so the caps of tool reads do not
        apply. The default streams a SELECT through `query_batches`; a store without SQL
        overrides it. Close the iterator to stop early."""
        names = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
        quoted = '"' + table.replace('"', '""') + '"'
        sql = f"SELECT {names} FROM {quoted}"
        batches = self.query_batches(sql, batch_size, timeout_s=WHOLE_TABLE_TIMEOUT_S)
        try:
            for batch in batches:
                yield batch.rows
        finally:
            batches.close()

    # -- writes ---------------------------------------------------------------------------------

    @abstractmethod
    def apply(
        self,
        changes: list[ChangeToApply],
        progress: Any = None,
        landed: Landed | None = None,
    ) -> ApplyResult:
        """Commit `changes`, each guarded by its pre-image (a changed item is a Conflict).

        Atomic over the whole list when `max_transaction_items` is None; otherwise over each
        consecutive batch of that size, stopping at the first batch with a conflict.
        `landed(ids)` is called with the ids of each atomic unit right after the store made it
        durable (before the next unit starts); the staging area drops those changes then, so an
        interrupted commit leaves at most one unit in doubt. Raise a TabletalkError only after
        rolling back the unit in progress.
        """

    def apply_staged(
        self, source: StagedSource, progress: Any = None, landed: Landed | None = None
    ) -> ApplyResult | None:
        """Like `apply`, over the changes `source` selects, read set-based by the store itself
        (no per-change Python); None when this store cannot (then nothing was applied, and the
        caller decodes the changes and calls `apply`). A store may also return None when only
        the row-by-row path can say what is wrong (a conflict, a constraint)."""
        return None

    @abstractmethod
    def close(self) -> None:
        """Release connections."""


def transaction_plan(store: Store, count: int) -> str | None:
    """What committing `count` changes means when it takes several transactions; else None."""
    size = store.max_transaction_items
    if size is None or count <= size:
        return None
    batches = -(-count // size)
    return (
        f"{counted(batches, 'transaction')} of up to {counted(size, 'change')}; each is all or nothing; a conflict "
        "stops the commit there and earlier ones stay committed"
    )
