"""SQLite pages for table tabs: keyset paging (by rowid or primary key) on a read-only
connection, with an OFFSET fallback for jumps and a separate connection for the count; large
values are cut to what a tab can show (`_shown`)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from agent.errors import StoreError, UnknownTableError
from agent.stores.filters import condition_sql, filter_error
from agent.stores.paging import PAGE_SIZE, ColumnSpec, Page, TabClosed
from agent.stores.sqlite_readonly import (
    compile_error,
    connect_read_only,
    damaged_error,
    locked_error,
    quote_ident,
)
from agent.stores.sqlite_schema import rowid_alias

CELL_CHARS = 4096
"""Characters of a text value a page holds (a cell shows ~40, the row detail this many)."""


def _shown(column: str) -> str:
    """A non-key column as a page holds it: a blob as `blob_label` writes it (SQLite reads its
    length without loading it), text past CELL_CHARS cut with `…`. A page is display only, so 200
    rows of 5 MB documents cost kilobytes, not a gigabyte."""
    name = quote_ident(column)
    return (
        f"CASE typeof({name}) WHEN 'blob' THEN '<' || length({name}) || "
        f"CASE length({name}) WHEN 1 THEN ' byte>' ELSE ' bytes>' END "
        f"WHEN 'text' THEN CASE WHEN length({name}) > {CELL_CHARS} "
        f"THEN substr({name}, 1, {CELL_CHARS}) || '…' ELSE {name} END ELSE {name} END"
    )


class SQLiteRowSource:
    """Pages of one SQLite table (optionally filtered by a WHERE expression), read-only."""

    truncated = False

    def __init__(self, path: str | Path, table: str, where: str | None = None) -> None:
        self.path = Path(path)
        self.table = table
        self.where = (where or "").strip() or None
        self.title = table if not self.where else f"{table} ⧩"
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._closed = False
        self._closed_by_user = False
        self._conn = connect_read_only(self.path)
        self._count_conn = connect_read_only(self.path)
        self._pages: dict[int, Page] = {}
        self._count: int | None = None
        info = self._run(self._conn, f"PRAGMA table_xinfo({quote_ident(table)})").fetchall()
        if not info:
            names = [
                r[0]
                for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            raise UnknownTableError(
                f"There is no table '{table}' in {self.path.name}.",
                fix=f"Open one of: {', '.join(sorted(names)) or '(no tables)'}.",
            )
        visible = [row for row in info if row[6] == 0]
        pk = sorted((row for row in visible if row[5] > 0), key=lambda row: row[5])
        self.key_columns: tuple[str, ...] = tuple(row[1] for row in pk)
        self.columns = [
            ColumnSpec(row[1], (row[2] or "ANY").upper(), key=row[5] > 0) for row in visible
        ]
        # The row id under a name no column hides (a column may be called `rowid`).
        self._rowid = rowid_alias(row[1] for row in info)
        self._has_rowid = self._rowid is not None and self._table_has_rowid()
        if self._rowid is not None and self._has_rowid:
            self._order = [self._rowid]
            if not self.key_columns:
                self.key_columns = (self._rowid,)
        else:
            # No row id reachable: by key; a table with neither is read by OFFSET alone.
            self._order = list(self.key_columns)
        self._dense_rowid_start: int | None = None

    def invalidate(self) -> None:
        """Forget cached pages and the count (the table changed, e.g. after a commit)."""
        with self._lock, self._count_lock:
            self._pages.clear()
            self._count = None
            self._dense_rowid_start = None

    def _table_has_rowid(self) -> bool:
        try:
            # Bare: quoted, a name no column takes reads as a string in a WITHOUT ROWID table.
            self._conn.execute(f"SELECT {self._rowid} FROM {quote_ident(self.table)} LIMIT 0")
        except sqlite3.OperationalError:
            return False
        return True

    def _filter_sql(self) -> str:
        return f" WHERE {condition_sql(self.where)}" if self.where else ""

    def _select(self) -> str:
        order_cols = "".join(
            f"{quote_ident(c)} AS __order_{i}, " for i, c in enumerate(self._order)
        )
        cols = ", ".join(
            quote_ident(c.name) if c.key else f"{_shown(c.name)} AS __cell_{i}"
            for i, c in enumerate(self.columns)
        )
        return f"SELECT {order_cols}{cols} FROM {quote_ident(self.table)}"

    def count(self) -> int:
        """Rows matching the filter (cached; computed once)."""
        if self._count is None:
            with self._lock:
                if self._closed:
                    return 0
                sql = f"SELECT count(*) FROM {quote_ident(self.table)}{self._filter_sql()}"
                self._count = int(self._execute(sql, filtered=True).fetchone()[0])
                if self._has_rowid and not self.where and self._count:
                    rowid = quote_ident(str(self._rowid))
                    low, high = self._execute(
                        f"SELECT min({rowid}), max({rowid}) FROM {quote_ident(self.table)}"
                    ).fetchone()
                    if high - low + 1 == self._count:
                        self._dense_rowid_start = int(low)
        return self._count

    def page(self, number: int) -> Page:
        """Rows `number * PAGE_SIZE ...`; keyset from a neighbouring cached page when possible."""
        cached = self._pages.get(number)
        if cached is not None:
            return cached
        with self._lock:
            if self._closed:
                return Page(number, [], [], [])
            rows = self._fetch(number)
        n_order = len(self._order)
        page = Page(
            number=number,
            rows=[tuple(r[n_order:]) for r in rows],
            keys=[self._key_of(r) for r in rows],
            order_keys=[tuple(r[:n_order]) for r in rows],
        )
        self._remember(page)
        return page

    def whole_row(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The row with `key` as the table holds it (pages cut long values); None if gone."""
        names = [c.name for c in self.columns]
        cols = ", ".join(quote_ident(n) for n in names)
        where = " AND ".join(f"{quote_ident(k)} IS ?" for k in self.key_columns) or "0"
        params = tuple(key.get(k) for k in self.key_columns)
        with self._lock:
            if self._closed:
                return None
            sql = f"SELECT {cols} FROM {quote_ident(self.table)} WHERE {where}"
            row = self._execute(sql, params).fetchone()
        return None if row is None else dict(zip(names, row, strict=True))

    def _key_of(self, row: tuple[Any, ...]) -> dict[str, Any]:
        n_order = len(self._order)
        if self._has_rowid and self.key_columns == (self._rowid,):
            return {self.key_columns[0]: row[0]}
        names = [c.name for c in self.columns]
        return {k: row[n_order + names.index(k)] for k in self.key_columns}

    def _fetch(self, number: int) -> list[tuple[Any, ...]]:
        base = self._select()
        order = ", ".join(f"__order_{i}" for i in range(len(self._order)))
        limit = PAGE_SIZE
        if self._dense_rowid_start is not None:
            low = self._dense_rowid_start + number * PAGE_SIZE
            rowid = quote_ident(str(self._rowid))
            sql = f"{base} WHERE {rowid} >= ? AND {rowid} < ? ORDER BY {rowid}"
            return self._execute(sql, (low, low + PAGE_SIZE)).fetchall()
        before = self._pages.get(number - 1)
        ordered = f" ORDER BY {order}" if order else ""
        if before is not None and order and before.order_keys and len(before.rows) == PAGE_SIZE:
            last = before.order_keys[-1]
            cond = self._after(last)
            joiner = " AND " if self.where else " WHERE "
            sql = f"{base}{self._filter_sql()}{joiner}{cond} ORDER BY {order} LIMIT {limit}"
            return self._execute(sql, last, filtered=True).fetchall()
        sql = f"{base}{self._filter_sql()}{ordered} LIMIT {limit} OFFSET ?"
        return self._execute(sql, (number * PAGE_SIZE,), filtered=True).fetchall()

    def _after(self, last: tuple[Any, ...]) -> str:
        cols = ", ".join(map(quote_ident, self._order))
        marks = ", ".join("?" for _ in last)
        return f"({cols}) > ({marks})"

    def _execute(
        self, sql: str, params: tuple[Any, ...] = (), *, filtered: bool = False
    ) -> sqlite3.Cursor:
        return self._run(self._conn, sql, params, filtered=filtered)

    def _run(
        self,
        conn: sqlite3.Connection,
        sql: str,
        params: tuple[Any, ...] = (),
        *,
        filtered: bool = False,
    ) -> sqlite3.Cursor:
        """`conn.execute`; a failure as a StoreError. `filtered`: `sql` holds the filter, so a
        failure is explained by the filter alone (`filter_error`), never by this SQL."""
        try:
            return conn.execute(sql, params)
        except (sqlite3.Error, sqlite3.Warning) as exc:
            if self._closed_by_user:
                raise TabClosed from exc
            known = locked_error(self.path, str(exc)) or damaged_error(self.path, str(exc))
            if known is not None:
                raise known from exc
            if filtered and self.where:
                raise self._filter_error(conn, str(exc)) from exc
            raise StoreError(
                f"Could not read '{self.table}': {exc}",
                fix="Check that the database file is readable and not corrupt.",
            ) from exc

    def _filter_error(self, conn: sqlite3.Connection, failure: str) -> StoreError:
        """What is wrong with the filter, in its own words (compiled alone on `conn`)."""
        table = quote_ident(self.table)

        def first_values(column: str) -> list[Any]:
            try:
                sql = f"SELECT {quote_ident(column)} FROM {table} LIMIT 20"
                return [row[0] for row in conn.execute(sql)]
            except sqlite3.Error:
                return []

        columns = [(c.name, c.type, c.key) for c in self.columns]
        where = self.where or ""
        return filter_error(
            self.table, columns, where, failure, lambda sql: compile_error(conn, sql), first_values
        )

    def _remember(self, page: Page) -> None:
        self._pages[page.number] = page
        if len(self._pages) > 60:
            far = max(self._pages, key=lambda n: abs(n - page.number))
            self._pages.pop(far, None)

    def close(self) -> None:
        """Abort a running read (a count of a huge table), then close once no thread uses it."""
        self._closed_by_user = True
        self._conn.interrupt()
        self._count_conn.interrupt()
        with self._lock, self._count_lock:
            self._closed = True
            self._conn.close()
            self._count_conn.close()
