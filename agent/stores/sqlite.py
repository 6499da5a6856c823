"""The SQLite store: any SQLite file, read through a read-only connection, written only by `apply`."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.errors import (
    QueryFailed,
    ReadStopped,
    StoreError,
    UnknownColumnError,
    UnknownTableError,
)
from agent.file_kind import special_file_kind
from agent.stores.base import (
    ApplyResult,
    ChangeToApply,
    Column,
    IndexInfo,
    Item,
    Key,
    Landed,
    QueryResult,
    StagedSource,
    Store,
    TableInfo,
)
from agent.stores.sqlite_readonly import (
    QUERY_TIMEOUT_S,
    ReadOnlyConnection,
    damaged_error,
    json_row,
    json_rows,
    locked_error,
    quote_ident,
)
from agent.stores.sqlite_schema import TableSchema, fetch_rows, normalize_with, rowid_alias
from agent.stores.sqlite_snapshot import file_id

if TYPE_CHECKING:  # the rest loads on first use: the app's first screen lists tables only
    from agent.stores.paging import RowSource
    from agent.stores.references import Reference, ReferencingRows
    from agent.stores.sqlite_indexes import IndexRow

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 5.0


class SQLiteStore(Store):
    """A SQLite file as a store; user SQL runs read-only, enforced by the database."""

    kind = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        query_timeout_s: float = QUERY_TIMEOUT_S,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = path.resolve()
        self.identity = f"sqlite:{self.path}"
        self.label = self.path.name
        self.read_only_file = not os.access(self.path, os.W_OK)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(  # a URI, so a commit can attach staging read-only
            self.path.as_uri(),
            uri=True,
            check_same_thread=False,
            isolation_level=None,
            timeout=busy_timeout_s,
        )
        if not self.read_only_file:
            # A first read here rolls back a hot journal a killed writer left; the read-only
            # connection below could not, and would fail to open.
            self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        self._file = file_id(self.path)
        self._reader = ReadOnlyConnection(self.path, query_timeout_s)
        self._schemas: dict[str, tuple[int, TableSchema]] = {}

    @property
    def supports_sql_joins(self) -> bool:
        """SQLite joins tables."""
        return True

    @property
    def file_path(self) -> Path | None:
        """The database file (resolved)."""
        return self.path

    @property
    def sqlite_file(self) -> Path | None:
        """The database file: staging attaches it read-only for set-based bulk edits."""
        return self.path

    @property
    def no_tables_hint(self) -> str:
        """The file holds no table yet (e.g. a new or wrong file)."""
        return (
            f"{self.path} has no tables. Open a SQLite file that has tables "
            "(`tabletalk --db PATH`), or run `tabletalk` without --db for the demo database."
        )

    @property
    def db_arg(self) -> str:
        """The file path, as `--db` takes it."""
        return str(self.path)

    def pages(self, table: str, where: str | None = None) -> RowSource:
        """Keyset pages of `table` on private read-only connections (never this store's lock)."""
        from agent.stores.sqlite_paging import SQLiteRowSource

        return SQLiteRowSource(self.path, self.schema(table).name, where)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = False,
        query_timeout_s: float = QUERY_TIMEOUT_S,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> SQLiteStore:
        """Open `path` after checking it is a SQLite database (created empty when `create`).

        Read-only queries running longer than `query_timeout_s` are stopped; a commit waits up
        to `busy_timeout_s` for another program's lock on the file before it gives up.
        """
        p = Path(path).expanduser()
        if p.is_dir():
            raise StoreError(
                f"{p} is a directory, not a SQLite database file",
                fix="Pass the database file itself to --db.",
            )
        kind = special_file_kind(p)
        if kind is not None:  # opening a FIFO would wait forever for a writer
            raise StoreError(
                f"{p} is {kind}, not a regular file",
                fix="Pass a SQLite database file to --db.",
            )
        if not p.exists():
            if not create:
                raise StoreError(
                    f"no database file at {p}",
                    fix="Check the path given to --db, or leave out --db to use the demo database.",
                )
            p.parent.mkdir(parents=True, exist_ok=True)
            sqlite3.connect(p).close()
        try:
            with p.open("rb") as fh:
                header = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(
                f"cannot read {p}: {exc.strerror}", fix="Check the file's permissions."
            ) from exc
        if header and header != SQLITE_HEADER:
            raise StoreError(
                f"{p} is not a SQLite database (its header does not say 'SQLite format 3')",
                fix="Pass a SQLite database file to --db.",
            )
        try:
            store = cls(p, query_timeout_s=query_timeout_s, busy_timeout_s=busy_timeout_s)
        except sqlite3.Error as exc:
            raise (
                locked_error(p, str(exc))
                or damaged_error(p, str(exc))
                or StoreError(
                    f"cannot open {p} as a SQLite database: {exc}",
                    fix="Check the file is a readable SQLite database.",
                )
            ) from exc
        try:  # a damaged schema or page size fails here, before anything else runs
            store._reader.execute("SELECT count(*) FROM sqlite_master")
        except StoreError:
            store.close()
            raise
        return store

    # -- schema -------------------------------------------------------------------------------

    def list_tables(self) -> list[str]:
        """User tables, in name order (SQLite's internal sqlite_* tables are left out)."""
        rows = self._reader.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).rows
        return [r[0] for r in rows]

    def schema(self, table: str) -> TableSchema:
        """The table's columns and key, cached until the database schema changes."""
        with self._lock:
            version = self._conn.execute("PRAGMA schema_version").fetchone()[0]
            cached = self._schemas.get(table)
            if cached and cached[0] == version:
                return cached[1]
            name = self._resolve_table(table)
            info = self._conn.execute(f"PRAGMA table_info({quote_ident(name)})").fetchall()
            strict = self._is_strict(name)
            columns = [
                Column(r[1], r[2] or "", key_position=r[5], not_null=bool(r[3]), strict=strict)
                for r in info
            ]
            keyed = sorted((c for c in columns if c.key_position), key=lambda c: c.key_position)
            rowid_key = not keyed
            key_columns: tuple[str, ...] = ()
            if rowid_key:
                alias = rowid_alias(c.name for c in columns)
                if alias is not None:
                    columns.insert(0, Column(name=alias, type="INTEGER", key_position=1))
                    key_columns = (alias,)
            else:
                key_columns = tuple(c.name for c in keyed)
            row_id = key_columns[0] if rowid_key and key_columns else None
            if len(keyed) == 1 and keyed[0].type.upper() == "INTEGER":
                # INTEGER PRIMARY KEY is the row id unless the table has a key index
                # (WITHOUT ROWID, or the DESC quirk).
                indexes = self._conn.execute(f"PRAGMA index_list({quote_ident(name)})")
                row_id = None if any(r[3] == "pk" for r in indexes) else keyed[0].name
            result = TableSchema(name, tuple(columns), key_columns, rowid_key, row_id)
            self._schemas[table] = (version, result)
            return result

    def _is_strict(self, name: str) -> bool:
        """Whether `name` is a STRICT table (`PRAGMA table_list`, SQLite 3.37+; an older
        SQLite cannot open one, so its answer is no)."""
        try:
            row = self._conn.execute(f"PRAGMA main.table_list({quote_ident(name)})").fetchone()
        except sqlite3.Error:
            return False
        return bool(row is not None and len(row) > 5 and row[5])

    def _resolve_table(self, table: str) -> str:
        tables = self.list_tables()
        if table in tables:
            return table
        for t in tables:
            if t.lower() == str(table).lower():
                return t
        raise UnknownTableError(
            f"no table named {table!r} in {self.label}",
            fix=f"Valid tables: {', '.join(tables) or '(none)'}. Call listTables to see them.",
        )

    def column(self, table: str, column: str) -> Column:
        """The named column, or UnknownColumnError listing the valid ones."""
        schema = self.schema(table)
        found = schema.column(column)
        if found is None:
            raise UnknownColumnError(
                f"table {schema.name!r} has no column {column!r}",
                fix=f"Valid columns of {schema.name}: {', '.join(schema.column_names)}.",
            )
        return found

    def describe_table(self, table: str) -> TableInfo:
        """Key columns in key order, columns, indexes and row count."""
        schema = self.schema(table)
        indexes = [
            IndexInfo(name=name, columns=tuple(cols), unique=unique)
            for name, cols, unique, _origin, _partial in self._indexes(schema.name)
        ]
        return TableInfo(
            name=schema.name,
            key_columns=schema.key_columns,
            columns=schema.columns,
            indexes=tuple(indexes),
            row_count=self.count(schema.name),
            rowid_key=schema.rowid_key,
        )

    def _indexes(self, table: str) -> list[IndexRow]:
        from agent.stores.sqlite_indexes import index_list

        with self._lock:
            return index_list(self._conn, table)

    # -- reads --------------------------------------------------------------------------------

    def foreign_keys_to(self, table: str) -> list[Reference]:
        """The foreign keys of every table that reference `table` (`PRAGMA foreign_key_list`)."""
        from agent.stores.references import Reference

        target = self.schema(table)
        found: list[Reference] = []
        with self._lock:
            for name in self.list_tables():
                rows = self._conn.execute(f"PRAGMA foreign_key_list({quote_ident(name)})")
                by_id: dict[int, list[Any]] = {}
                for row in rows.fetchall():
                    by_id.setdefault(row[0], []).append(row)
                for parts in by_id.values():
                    if str(parts[0][2]).lower() != target.name.lower():
                        continue
                    parts.sort(key=lambda r: r[1])
                    to = tuple(r[4] for r in parts)
                    if any(c is None for c in to):  # REFERENCES t without columns: its key
                        to = target.key_columns
                    found.append(Reference(name, tuple(r[3] for r in parts), target.name, to))
        return found

    def referencing_rows(
        self,
        table: str,
        keys: list[Key],
        also: tuple[Reference, ...] = (),
        examples: int = 3,
        deleted: Mapping[str, list[Key]] | None = None,
    ) -> list[ReferencingRows]:
        """Rows of any table that reference the items of `table` with `keys`: through declared
        foreign keys and the references in `also` (e.g. declared relationships). Rows that
        `deleted` names (keys per table, deleted in the same commit) are not counted."""
        from agent.stores.sqlite_references import referencing

        gone = {name.lower(): found for name, found in (deleted or {}).items()}
        references = self.foreign_keys_to(table)
        for extra in also:
            if extra.target.lower() == table.lower() and not any(
                extra.same_join(r) for r in references
            ):
                references.append(extra)
        items = [i for i in self.get_items(table, keys) if i is not None]
        found = []
        for reference in references:
            schema = self.schema(reference.table)
            excluded = {
                tuple(k.values())
                for k in self.normalize_keys(schema.name, gone.get(schema.name.lower(), []))
            }
            with self._lock:
                rows = referencing(self._conn, schema, reference, items, examples, excluded)
            if rows is not None:
                found.append(rows)
        return found

    def normalize_key(self, table: str, key: Key) -> Key:
        """Check `key` names exactly the key columns and coerce its values to their types."""
        return normalize_with(self.schema(table), key)

    def normalize_keys(self, table: str, keys: list[Key]) -> list[Key]:
        """`normalize_key` for many keys of one table (the schema is looked up once)."""
        schema = self.schema(table)
        return [normalize_with(schema, k) for k in keys]

    def select_sql(self, schema: TableSchema) -> str:
        """`SELECT <every column> FROM <table>` for this schema (rowid included when it is the key)."""
        cols = ", ".join(quote_ident(c) for c in schema.column_names)
        return f"SELECT {cols} FROM {quote_ident(schema.name)}"

    def get_item(self, table: str, key: Key) -> Item | None:
        """The item with this key, or None."""
        found = self.get_items(table, [key])
        return found[0]

    def get_items(self, table: str, keys: list[Key]) -> list[Item | None]:
        """Items for many keys in one pass (batched IN lookups); None where no item exists."""
        schema = self.schema(table)
        normalized = [normalize_with(schema, k) for k in keys]
        with self._lock:
            by_key = fetch_rows(self._conn, self.select_sql(schema), schema, normalized)
        return [by_key.get(tuple(k.values())) for k in normalized]

    def holds(self, table: str, key: Key, values: Item, *, whole: bool = False) -> bool:
        """True when the item with `key` exists and each of `values` is what its column stores
        (`sqlite_holds.holds_many`: `column IS ? COLLATE BINARY`, the column's affinity applying
        as in a guarded commit, the storage class too in a column without affinity; a blob
        matches its marker); `whole` also requires `values` to name every column."""
        return self.holds_many(table, [(key, values)], whole=whole)[0]

    def holds_many(
        self, table: str, checks: Sequence[tuple[Key, Item]], *, whole: bool = False
    ) -> list[bool]:
        """`holds` for many pairs, a few compound statements in all (`sqlite_holds.py`)."""
        from agent.stores.sqlite_holds import holds_many

        schema = self.schema(table)
        with self._lock:
            return holds_many(self._conn, schema, checks, whole=whole)

    def query(self, sql: str, limit: int | None = None) -> QueryResult:
        """Run one read-only SELECT/WITH statement; at most `limit` rows."""
        columns, rows, truncated, over_budget = self._reader.execute(sql, limit=limit)
        return QueryResult(columns, json_rows(columns, rows), truncated, over_budget)

    def query_batches(
        self, sql: str, batch_size: int = 200, timeout_s: float | None = None
    ) -> Generator[QueryResult, None, None]:
        """Run one read-only SELECT/WITH statement and yield its rows a batch at a time, so a
        long result never sits in memory whole; the first batch comes even when empty."""
        for columns, rows in self._reader.stream(sql, batch_size, timeout_s):
            yield QueryResult(columns, json_rows(columns, rows))

    def count(self, table: str, where: str | None = None) -> int:
        """Rows of `table`, optionally only those matching the SQL boolean expression `where`."""
        schema = self.schema(table)
        sql = f"SELECT count(*) FROM {quote_ident(schema.name)}"
        if not (where and where.strip()):
            return int(self._reader.execute(sql).rows[0][0])
        from agent.stores.filters import condition_sql

        try:
            rows = self._reader.execute(f"{sql} WHERE {condition_sql(where)}").rows
        except QueryFailed as exc:  # not a refused write, a Stop, a lock or a damaged file
            raise self._filter_error(schema, where, exc.detail) from exc
        return int(rows[0][0])

    def _filter_error(self, schema: TableSchema, where: str, failure: str) -> StoreError:
        """What is wrong with filter `where` on the table, said of the filter alone."""
        from agent.stores.filters import filter_error

        def first_values(column: str) -> list[Any]:
            sql = f"SELECT {quote_ident(column)} FROM {quote_ident(schema.name)} LIMIT 20"
            try:
                return [row[0] for row in self._reader.execute(sql).rows]
            except ReadStopped:
                raise
            except StoreError:
                return []  # no example value: the example is built without one

        columns = [(c.name, c.type, c.key_position > 0) for c in schema.columns]
        return filter_error(
            schema.name, columns, where, failure, self._reader.compile_error, first_values
        )

    def sample_values(self, table: str, column: str, limit: int = 20) -> list[dict[str, Any]]:
        """Distinct values of a column with their counts, most common first."""
        name = self.schema(table).name
        col = quote_ident(self.column(name, column).name)
        rows = self._reader.execute(
            f"SELECT {col}, count(*) AS n FROM {quote_ident(name)} GROUP BY {col} "
            f"ORDER BY n DESC, {col} LIMIT ?",
            (max(1, int(limit)),),
        ).rows
        return [json_row(["value", "count"], r) for r in rows]

    def index_stats(self, table: str) -> list[dict[str, Any]]:
        """Per index: columns, uniqueness, entries, distinct keys, and whether it is the key's index."""
        from agent.stores.sqlite_indexes import index_stats, stat1

        schema = self.schema(table)
        with self._lock:
            counted = stat1(self._conn, schema.name)
        return index_stats(
            schema,
            self.count(schema.name),
            self._indexes(schema.name),
            counted,
            lambda cols: self._distinct(schema.name, cols),
        )

    def _distinct(self, table: str, cols: list[str]) -> int:
        listed = ", ".join(quote_ident(c) for c in cols) or "rowid"
        rows = self._reader.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT {listed} FROM {quote_ident(table)})"
        ).rows
        return int(rows[0][0])

    # -- writes -------------------------------------------------------------------------------

    def apply(
        self, changes: list[ChangeToApply], progress: Any = None, landed: Landed | None = None
    ) -> ApplyResult:
        """Apply every change in ONE transaction, or none of them when any conflicts."""
        self._check_same_file()
        if self.read_only_file:
            raise StoreError(
                f"{self.path} is read-only, so nothing was committed",
                fix="Make the file writable (chmod u+w) or copy it somewhere writable; "
                "the changes stay staged.",
            )
        from agent.stores.sqlite_apply import apply_changes

        with self._lock:
            return apply_changes(self, self._conn, changes, progress, landed)

    def apply_staged(
        self, source: StagedSource, progress: Any = None, landed: Landed | None = None
    ) -> ApplyResult | None:
        """Apply the staged changes set-based in ONE transaction (`sqlite_set_apply`); None when
        the row-by-row `apply` must decide (nothing was applied)."""
        self._check_same_file()
        if self.read_only_file:
            return None  # `apply` says so
        from agent.stores.sqlite_set_apply import apply_staged

        with self._lock:
            return apply_staged(self, self._conn, source, progress, landed)

    def _check_same_file(self) -> None:
        """Refuse to commit when the file at the path is no longer the one this store opened
        (another program moved, restored or replaced it): the write connection would write the
        old file, which nobody sees any more (SQLite refuses that only in rollback mode, as a
        read-only database)."""
        if file_id(self.path) != self._file:
            raise StoreError(
                f"{self.path} was replaced by another file after tabletalk opened it (moved, "
                "restored or rewritten by another program), so nothing was committed",
                fix="Open it again (restart tabletalk, or run the command again) so the commit "
                "checks and writes the file that is there now; the changes stay staged.",
            )

    def close(self) -> None:
        """Close both connections."""
        with self._lock:
            self._reader.close()
            self._conn.close()
