"""The read-only side of the SQLite store: a connection the database itself keeps read-only.

User SQL runs on a separate connection opened with `mode=ro`, `PRAGMA query_only=ON` and an
authorizer that allows only reads; nothing here inspects SQL text. A query stops when a Stop
check of its thread says so (`agent.stop.reads_stop_when`), and anyway after a timeout.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import sqlite3
import threading
import time
from collections.abc import Generator, Iterator
from itertools import chain, repeat
from pathlib import Path
from typing import Any, NamedTuple

from agent.errors import QueryFailed, ReadOnlyQueryError, StoreError
from agent.stop import reads_should_stop
from agent.stores.base import MAX_READ_BYTES, NARROWER_QUERY, stopped_error

_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}
_READ_ONLY_PRAGMAS = {
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "collation_list",
    "function_list",
    "pragma_list",
}
_READ_ONLY_VTABLES = ("json_each", "json_tree", "dbstat", "generate_series")
"""Eponymous virtual tables that only read; constructed before the authorizer (see
`_warm_tables`). Writable ones (sqlite_dbpage) are never constructed, so stay refused."""
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}

READ_ONLY_MESSAGE = "only read-only SELECT/WITH queries are allowed"
READ_ONLY_FIX = (
    "Rewrite it as a single SELECT (or WITH ... SELECT). To change data, stage the change "
    "with stageItem or bulkEdit; a person reviews and commits it."
)
SQL_ERROR_FIX = "Check the table and column names with describeTable, then retry the query."
LOCKED_TEXTS = ("database is locked", "database table is locked", "database schema is locked")
DAMAGED_TEXTS = ("file is not a database", "disk image is malformed", "malformed database schema")


def locked_error(path: Path, text: str) -> StoreError | None:
    """The error for a file another program holds a lock on, when SQLite's `text` says so;
    else None. The file is fine: waiting, or closing that program, is the fix."""
    if not text.startswith(LOCKED_TEXTS):  # SQLite's own words, not a name in the query
        return None
    return StoreError(
        f"{path} is locked by another program that is writing to it (SQLite: {text})",
        fix="Wait for that program to finish (or close it), then try again; tabletalk "
        "changed nothing.",
    )


def damaged_error(path: Path, text: str) -> StoreError | None:
    """The error for a damaged database file, when SQLite's `text` says it is one; else None."""
    if not any(marker in text for marker in DAMAGED_TEXTS):
        return None
    return StoreError(
        f"the database file {path} is damaged or not a SQLite database (SQLite: {text})",
        fix="tabletalk changed nothing. Check it with: "
        f"sqlite3 {shlex.quote(str(path))} 'PRAGMA integrity_check'; "
        "restore a backup, or save what is readable with sqlite3's .recover into a new file.",
    )


QUERY_TIMEOUT_S = 30.0


class _NewVirtualTable(Exception):
    """A virtual table this connection has not constructed yet (see `_warm_tables` and
    `_warm_pragma_tables`)."""


class ReadRows(NamedTuple):
    """What one read returned: `truncated` when rows were left out (row limit or byte budget);
    `over_budget` when the byte budget was the reason."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool
    over_budget: bool = False


def timeout_error(timeout_s: float) -> StoreError:
    """A query stopped because it ran past its time limit."""
    return StoreError(
        f"the query ran longer than {timeout_s:g} s and was stopped",
        fix="Narrow it: add a WHERE condition on an indexed column, a LIMIT, "
        "or bound any recursive CTE.",
    )


def value_bytes(value: Any) -> int:
    """What one value costs against the byte budget: its length for text and blobs, else 8."""
    if isinstance(value, str | bytes):
        return len(value)
    return 8


def _columns(cursor: sqlite3.Cursor) -> list[str]:
    """The result's column names, made unique as SQLite names a view's (`id`, `id:1`): rows
    are dicts, so a second `id` (a join's `SELECT o.id, c.id`) would replace the first."""
    names = [d[0] for d in cursor.description or ()]
    if len(set(names)) == len(names):
        return names
    taken = set(names)
    unique: list[str] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            n = 1
            while f"{name}:{n}" in taken:
                n += 1
            name = f"{name}:{n}"
            taken.add(name)
        seen.add(name)
        unique.append(name)
    return unique


def quote_ident(name: str) -> str:
    """Quote an SQL identifier for SQLite."""
    return '"' + name.replace('"', '""') + '"'


BLOB_MARKER = re.compile(r"<blob \d+ bytes sha256:[0-9a-f]{16}>")
"""What `json_value` shows for a blob (a key given back as this names no row)."""


def json_value(value: Any) -> Any:
    """A JSON-friendly form of one SQLite value: blobs become a short marker with a digest."""
    if isinstance(value, bytes | bytearray | memoryview):
        import hashlib  # not at import: the app's first screen needs no digest

        data = bytes(value)
        return f"<blob {len(data)} bytes sha256:{hashlib.sha256(data).hexdigest()[:16]}>"
    return value


def json_row(columns: list[str], row: tuple[Any, ...]) -> dict[str, Any]:
    """Zip column names and one result row into a JSON-friendly dict."""
    if bytes in map(type, row):
        return {name: json_value(value) for name, value in zip(columns, row, strict=False)}
    return dict(zip(columns, row, strict=False))


def json_rows(columns: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """`json_row` for many rows; without blobs the dicts are built at C speed (no Python loop)."""
    if bytes in set(map(type, chain.from_iterable(rows))):
        return [json_row(columns, row) for row in rows]
    return list(map(dict, map(zip, repeat(columns), rows)))


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write: a `mode=ro` URI plus `query_only`, usable from any thread."""
    if not path.exists():
        raise StoreError(
            f"No database file at {path}.", fix="Pass an existing SQLite file with --db."
        )
    conn = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro",
        uri=True,
        check_same_thread=False,
        isolation_level=None,
        timeout=5.0,
    )
    conn.execute("PRAGMA query_only=ON")
    return conn


def compile_error(conn: sqlite3.Connection, sql: str) -> str | None:
    """SQLite's complaint about compiling `sql` on `conn`, or None when it compiles. Only
    EXPLAIN runs (the statement's program is listed, never run), and a second statement after
    `;` is refused by sqlite3 before anything runs."""
    try:
        conn.execute(f"EXPLAIN {sql}").close()
    except (sqlite3.Error, sqlite3.Warning) as exc:
        return str(exc)
    return None


LOCK_POLL_S = 0.05
"""How often a read waiting for the connection looks at its thread's Stop."""


class ReadOnlyConnection:
    """A connection for untrusted SQL: writes, ATTACH, transactions and writing pragmas are denied."""

    def __init__(self, path: Path, timeout_s: float = QUERY_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self.path = path
        self._deadline = float("inf")
        self._conn = connect_read_only(path)
        self._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_READ_BYTES)
        self._pragmas_warm = False  # built by the first statement that needs them
        self._warm_tables()
        self._lock = threading.Lock()  # one statement at a time
        self._denied: str | None = None
        self._conn.set_authorizer(self._authorize)
        self._conn.set_progress_handler(self._should_stop, 10_000)

    def _warm_pragma_tables(self) -> None:
        """Create the eponymous pragma tables (pragma_table_info, ...) with the authorizer off.

        Creating one asks the authorizer to update sqlite_master, which it must refuse; once
        created, a query on one asks only to read it and to run its pragma, which `_authorize`
        judges by the pragma's name. `WHERE 0` keeps every pragma from running. Done at the
        first statement refused that way (about 70 statements: not at open, where the app
        waits for its first screen).
        """
        for (name,) in self._conn.execute("PRAGMA pragma_list").fetchall():
            try:
                self._conn.execute(f"SELECT * FROM pragma_{name} WHERE 0").fetchall()
            except sqlite3.Error:
                pass  # a pragma without a table-valued form

    def _warm_tables(self) -> None:
        """Construct the read-only table-valued functions (json_each, dbstat, ...) and the
        database's own virtual tables (FTS, R-tree) with our own SQL, outside the authorizer.

        On a connection's first use of a virtual table SQLite parses its declared schema,
        which asks the authorizer for SQLITE_UPDATE on sqlite_master; refusing that fails
        with "vtable constructor failed". Once constructed (for the connection's life), a
        query on one asks only SQLITE_READ on its columns, which `_authorize` allows; writing
        to one asks SQLITE_INSERT/UPDATE/DELETE, which it refuses.
        """
        present = {name for (name,) in self._conn.execute("PRAGMA module_list")}
        names = [quote_ident(name) for name in _READ_ONLY_VTABLES if name in present]
        try:
            names += [
                quote_ident(name)
                for (name,) in self._conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND sql LIKE 'CREATE VIRTUAL TABLE%'"
                )
            ]
        except sqlite3.Error:
            pass  # schema unreadable now; a query meeting a virtual table warms again
        for name in names:
            try:
                self._conn.execute(f"SELECT * FROM {name} WHERE 0").fetchall()
            except sqlite3.Error:
                pass  # a module this SQLite lacks: queries on it fail with SQLite's message

    def _warm_new_virtual_tables(self) -> None:
        """`_warm_tables` again with the authorizer off (our SQL only): a virtual table was
        created after this connection opened, or a pragma table is used for the first time.
        It waits for the connection as a read does (`_take_lock`: a Stop ends the wait)."""
        self._take_lock()
        try:
            self._conn.set_authorizer(None)
            try:
                if not self._pragmas_warm:
                    self._warm_pragma_tables()
                    self._pragmas_warm = True
                self._warm_tables()
            finally:
                self._conn.set_authorizer(self._authorize)
        finally:
            self._lock.release()

    def _should_stop(self) -> int:
        """Non-zero stops the running statement: Stop was pressed (a `reads_stop_when` check of
        the thread running it), or it ran past its deadline."""
        return int(time.monotonic() > self._deadline or reads_should_stop())

    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None
    ) -> int:
        if action in _ALLOWED_ACTIONS:
            if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
                self._denied = f"function {arg2}"
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            if (arg1 or "").lower() in _READ_ONLY_PRAGMAS:
                return sqlite3.SQLITE_OK
            if (arg1 or "").lower() == "data_version" and arg2 is None:
                return sqlite3.SQLITE_OK  # read by FTS5 on every MATCH
            self._denied = f"PRAGMA {arg1}"
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            self._denied = "schema"  # e.g. a pragma table built at its first use
            return sqlite3.SQLITE_DENY
        self._denied = f"action {action}"
        return sqlite3.SQLITE_DENY

    def execute(self, sql: str, params: tuple[Any, ...] = (), limit: int | None = None) -> ReadRows:
        """Run one read-only statement; rows up to `limit` and `MAX_READ_BYTES`, fetched one
        at a time so a result over the budget is never held whole."""
        try:
            return self._execute(sql, params, limit, first_try=True)
        except _NewVirtualTable:
            self._warm_new_virtual_tables()
            return self._execute(sql, params, limit, first_try=False)

    def _execute(
        self, sql: str, params: tuple[Any, ...], limit: int | None, *, first_try: bool
    ) -> ReadRows:
        with self._statement(self.timeout_s, first_try=first_try):
            cursor = self._start(sql, params)
            result = self._fetch(cursor, _columns(cursor), limit)
            cursor.close()
            return result

    def stream(
        self, sql: str, batch_size: int, timeout_s: float | None = None
    ) -> Generator[tuple[list[str], list[tuple[Any, ...]]], None, None]:
        """Run one read-only statement and yield (columns, rows) a batch at a time, with no
        byte budget (the caller bounds what it keeps). The first batch is yielded even when
        empty; the statement holds this connection until the generator ends or is closed."""
        try:
            yield from self._stream(sql, batch_size, timeout_s or self.timeout_s, first_try=True)
        except _NewVirtualTable:
            self._warm_new_virtual_tables()
            yield from self._stream(sql, batch_size, timeout_s or self.timeout_s, first_try=False)

    def _stream(
        self, sql: str, batch_size: int, timeout_s: float, *, first_try: bool
    ) -> Generator[tuple[list[str], list[tuple[Any, ...]]], None, None]:
        with self._statement(timeout_s, first_try=first_try):
            cursor = self._start(sql, ())
            try:
                columns = _columns(cursor)
                rows = cursor.fetchmany(batch_size)
                yield columns, rows
                while rows:
                    rows = cursor.fetchmany(batch_size)
                    if rows:
                        yield columns, rows
            finally:
                cursor.close()

    def _start(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        cursor = self._conn.execute(sql, params)
        if cursor.description is None:
            raise ReadOnlyQueryError(
                f"{READ_ONLY_MESSAGE}; this statement returns no rows, so it is not a "
                "read (a DROP ... IF EXISTS or CREATE ... IF NOT EXISTS that changes "
                "nothing is still a write)",
                fix=READ_ONLY_FIX,
            )
        return cursor

    @contextlib.contextmanager
    def _statement(self, timeout_s: float, *, first_try: bool) -> Iterator[None]:
        """Hold the connection for one statement, stoppable, with SQLite errors explained."""
        self._take_lock()
        try:
            self._denied = None
            self._deadline = time.monotonic() + timeout_s
            try:
                yield
            except sqlite3.Warning as exc:  # several statements in one string
                raise QueryFailed(
                    f"only one SQL statement per query is allowed ({exc})",
                    fix="Send a single SELECT statement without a second statement after ';'.",
                    detail=str(exc),
                ) from exc
            except sqlite3.ProgrammingError as exc:
                if "one statement" in str(exc):
                    raise QueryFailed(
                        "only one SQL statement per query is allowed",
                        fix="Send a single SELECT statement without a second statement after ';'.",
                        detail=str(exc),
                    ) from exc
                raise QueryFailed(
                    f"SQLite error: {exc}", fix=SQL_ERROR_FIX, detail=str(exc)
                ) from exc
            except sqlite3.DataError as exc:  # a value longer than SQLITE_LIMIT_LENGTH
                raise StoreError(
                    f"a value in this result is larger than the {MAX_READ_BYTES // 2**20} MB "
                    f"limit of one read ({exc})",
                    fix=NARROWER_QUERY,
                ) from exc
            except sqlite3.DatabaseError as exc:
                text = str(exc)
                if first_try and text.startswith("vtable constructor failed"):
                    raise _NewVirtualTable from exc
                if first_try and self._denied == "schema" and not self._pragmas_warm:
                    raise _NewVirtualTable from exc
                if text == "interrupted" and reads_should_stop():
                    raise stopped_error() from exc
                if text == "interrupted" and time.monotonic() > self._deadline:
                    raise timeout_error(timeout_s) from exc
                if self._denied is not None and self._denied.startswith("PRAGMA"):
                    raise ReadOnlyQueryError(
                        f"{READ_ONLY_MESSAGE}; {self._denied} is not allowed here",
                        fix=f"Pragmas allowed here: {', '.join(sorted(_READ_ONLY_PRAGMAS))}; "
                        "they also work as tables: SELECT * FROM pragma_table_info('orders').",
                    ) from exc
                if self._denied is not None or "readonly" in text or "read-only" in text:
                    raise ReadOnlyQueryError(
                        f"{READ_ONLY_MESSAGE}; this statement would change the database "
                        f"or its connection ({text})",
                        fix=READ_ONLY_FIX,
                    ) from exc
                known = locked_error(self.path, text) or damaged_error(self.path, text)
                if known is not None:
                    raise known from exc
                raise QueryFailed(f"SQLite error: {text}", fix=SQL_ERROR_FIX, detail=text) from exc
            finally:
                self._deadline = float("inf")
                if self._conn.in_transaction:
                    self._conn.rollback()
        finally:
            self._lock.release()

    def compile_error(self, sql: str) -> str | None:
        """`compile_error` on this connection, its authorizer on: SQLite's complaint about
        `sql`, or None when it compiles (nothing runs)."""
        self._take_lock()
        try:
            return compile_error(self._conn, sql)
        finally:
            if self._conn.in_transaction:
                self._conn.rollback()
            self._lock.release()

    def _take_lock(self) -> None:
        """Wait for the statement running on this connection (another thread's) to end; a
        Stop of this thread ends the wait, and one that came before the read ends it at once."""
        while not self._lock.acquire(timeout=LOCK_POLL_S):
            if reads_should_stop():
                raise stopped_error()
        if reads_should_stop():
            self._lock.release()
            raise stopped_error()

    @staticmethod
    def _fetch(cursor: sqlite3.Cursor, columns: list[str], limit: int | None) -> ReadRows:
        rows: list[tuple[Any, ...]] = []
        used = 0
        names = sum(map(len, columns))  # each row is read out as name: value pairs
        while limit is None or len(rows) <= limit:
            row = cursor.fetchone()
            if row is None:
                return ReadRows(columns, rows, False)
            if limit is not None and len(rows) == limit:
                break
            used += names + sum(map(value_bytes, row))
            if used > MAX_READ_BYTES:
                if not rows:
                    raise StoreError(
                        f"one row of this result is larger than the {MAX_READ_BYTES // 2**20} MB "
                        "limit of one read",
                        fix=NARROWER_QUERY,
                    )
                return ReadRows(columns, rows, True, over_budget=True)
            rows.append(row)
        return ReadRows(columns, rows, True)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
