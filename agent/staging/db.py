"""The staging database: one SQLite file in WAL mode with synchronous=FULL.

WAL lets the TUI, the headless CLI and an MCP server read and write it at the same time.
synchronous=FULL fsyncs the WAL on every commit, so a staged change survives not only a
killed process (which WAL with NORMAL already guarantees) but also a power cut; staging
transactions are few and person-paced (a bulk edit is one transaction), so the cost is small.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent.errors import StagingError
from agent.staging import batches, conflicts
from agent.staging.history import SCHEMA as HISTORY_SCHEMA
from agent.stores.sqlite_json import register

SCHEMA_VERSION = 3  # 2: the commit history tables; 3: compact bulk edits (staging.batches)
# (the snapshot column and the recorded conflicts came without a new number: `_needs_rebuild`)
WAL_CHECKPOINT_PAGES = 4096
"""Pages the WAL may hold before a write copies them into the file (SQLite's default is 1,000):
a 10,000-item bulk edit writes about 1,000 pages when staged and 600 when committed, and a
checkpoint inside that commit (two more fsyncs, 4 MB of writes) is work nobody waits for when
it runs every few bulk edits, or when the last connection closes, as SQLite does then."""
SECURE_DELETE = "FAST"
"""Deleted staging rows are zeroed only inside pages a write changes anyway. SQLite builds that
enable secure_delete by default (Debian's, say) otherwise rewrite every page a commit empties:
forgetting 10,000 landed changes wrote 3.8 MB more to the WAL (and again at the checkpoint),
although the commit history keeps the same rows."""
BUSY_TIMEOUT_S = 10.0
"""How long a staging write waits for another process's write before saying it is busy."""

_STAGED_TABLE = """
CREATE TABLE IF NOT EXISTS staged_changes (
    seq INTEGER PRIMARY KEY,  -- staging order (ids are random, so seq reuse is harmless)
    id TEXT NOT NULL UNIQUE,
    store TEXT NOT NULL,
    tbl TEXT NOT NULL,
    key_json TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op = 'create' OR op = 'update' OR op = 'delete'),
    values_json TEXT NOT NULL,
    pre_image_json TEXT,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    snapshot TEXT  -- the store file's stamp when a set-based stage read the pre-image, or NULL
)"""

_SCHEMA = f"""
{_STAGED_TABLE};
CREATE UNIQUE INDEX IF NOT EXISTS staged_changes_item ON staged_changes (store, tbl, key_json);
CREATE TABLE IF NOT EXISTS commits_in_progress (
    token TEXT PRIMARY KEY,
    store TEXT NOT NULL,
    ids_json TEXT NOT NULL,
    started_at TEXT NOT NULL
);
{HISTORY_SCHEMA}
{batches.SCHEMA}
{conflicts.SCHEMA}
"""

COLUMNS = "id, store, tbl, key_json, op, values_json, pre_image_json, origin, created_at"


IN_CHUNK = 500
"""Values per `IN (...)` list (SQLite's parameter limit is 999 on older builds)."""


def rows_in(
    conn: sqlite3.Connection, sql: str, values: list[Any], *before: Any
) -> Iterator[tuple[Any, ...]]:
    """The rows of `sql` (holding one `{marks}` for an IN list) for every chunk of `values`,
    with the parameters `before` ahead of each chunk."""
    for start in range(0, len(values), IN_CHUNK):
        chunk = values[start : start + IN_CHUNK]
        yield from conn.execute(sql.format(marks=", ".join("?" * len(chunk))), (*before, *chunk))


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's count of commits other connections made to the file (`PRAGMA data_version`):
    two equal readings mean no other process wrote the staging DB in between."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def commits_in_progress(conn: sqlite3.Connection, store: str) -> set[str]:
    """Ids of `store`'s changes that a running or interrupted commit holds."""
    held: set[str] = set()
    for (ids_json,) in conn.execute(
        "SELECT ids_json FROM commits_in_progress WHERE store = ?", (store,)
    ):
        held.update(json.loads(ids_json))
    return held


def _enable_wal(conn: sqlite3.Connection, attempts: int = 100) -> None:
    """Switch to WAL; retried, because two processes creating the file at once can make the
    switch report "database is locked" without waiting on the busy timeout."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05)


def open_staging_db(path: Path, notices: list[str] | None = None) -> sqlite3.Connection:
    """Open (creating dirs, file and schema as needed) the staging database at `path`.

    A damaged file is kept beside (renamed with a timestamp) and what SQLite can still read
    is copied into a fresh staging database; `notices` receives the sentence saying so.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StagingError(
            f"cannot create the folder of the staging database {path}: {exc.strerror}",
            fix="Make the folder writable (or set XDG_STATE_HOME to a writable folder).",
        ) from exc
    try:
        return connect(path)
    except sqlite3.Error as exc:
        if busy(exc):
            raise busy_error(path) from exc
        if not corrupt(exc):
            raise StagingError(
                f"cannot open the staging database {path}: {exc}",
                fix="Check that the file and its folder are readable and writable; "
                "the staged changes are kept in that file.",
            ) from exc
        try:
            return _recover_once(path, str(exc), notices)
        except sqlite3.Error as again:
            raise StagingError(
                f"the staging database {path} is damaged ({exc}) and could not be rebuilt "
                f"({again})",
                fix="Nothing was deleted: the damaged file (or its copy named .damaged-<time> "
                "beside it) keeps the staged changes; free disk space or fix permissions and "
                "try again.",
            ) from again


def _recover_once(path: Path, reason: str, notices: list[str] | None) -> sqlite3.Connection:
    """Recover under the commit lock, so two processes never move the same file aside; the
    second finds the file already rebuilt."""
    from agent.staging.lock import CommitLock
    from agent.staging.recover import recover

    lock = CommitLock(path)
    lock.acquire()
    try:
        try:
            return connect(path)
        except sqlite3.DatabaseError as exc:
            if not corrupt(exc):
                raise
        note = recover(path, reason)
        if notices is not None:
            notices.append(note)
        return connect(path)
    finally:
        lock.release()


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
    )
    try:
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA secure_delete={SECURE_DELETE}")
        register(conn)  # the SQL functions a compact bulk edit's texts are read with
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StagingError(
                f"the staging database {path} was written by a newer tabletalk "
                f"(schema {version}, this one knows {SCHEMA_VERSION})",
                fix="Upgrade tabletalk, or commit/discard the changes with the newer version.",
            )
        check = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed ({check})")
        if version < SCHEMA_VERSION or _needs_rebuild(conn):
            with transaction(conn, batches_as_they_are=True):  # not created yet
                _rebuild_slow_check(conn)
                for statement in _statements():
                    conn.execute(statement)
                conn.execute(conflicts.TRIGGER)
                _add_snapshot_column(conn)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return conn
    except BaseException:
        conn.close()
        raise


def busy(exc: sqlite3.Error) -> bool:
    """True for "database is locked"/"busy": another connection holds the write lock."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def corrupt(exc: sqlite3.Error) -> bool:
    """True for errors that mean the file itself is damaged (not a lock or permissions)."""
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def busy_error(path: Path) -> StagingError:
    """The staging database is held by another process: say which if known, and to retry."""
    from agent.staging.lock import CommitLock

    pid = CommitLock(path).holder()
    who = f"a tabletalk commit (pid {pid})" if pid else "another tabletalk process"
    return StagingError(
        f"the staging database {path} is busy: {who} is writing to it",
        fix="Wait for it to finish and try again; nothing was changed and no staged change "
        "was lost.",
    )


def _needs_rebuild(conn: sqlite3.Connection) -> bool:
    """True when the file lacks something of this version's schema that an older version of the
    same schema number did not write (so the number stays, and that version still opens it),
    or that has gone since: the `snapshot` column, any table, index or trigger the schema
    creates (the recorded conflicts, the index keeping one change per item), or has the slow
    check."""
    wanted = _schema_names()
    found = dict(
        conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE name IN ({', '.join('?' * len(wanted))})",
            wanted,
        ).fetchall()
    )
    sql = found.get("staged_changes")
    if sql is None or "op IN (" in sql or "snapshot" not in sql:
        return True
    return any(name not in found for name in wanted)


_CREATED = re.compile(r"CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER)\s+IF NOT EXISTS\s+(\w+)")


def _schema_names() -> tuple[str, ...]:
    """Every table, index and trigger the schema creates (the trigger comes on its own)."""
    return tuple(_CREATED.findall(_SCHEMA + conflicts.TRIGGER))


def _add_snapshot_column(conn: sqlite3.Connection) -> None:
    """Give a staging file written before set-based stamps its `snapshot` column; its rows keep
    NULL there (a commit then compares their pre-images row by row in SQL, as before). Older
    tabletalk versions name their columns and ignore it, so the schema version stays."""
    names = {r[1] for r in conn.execute("PRAGMA table_info(staged_changes)")}
    if "snapshot" not in names:
        conn.execute("ALTER TABLE staged_changes ADD COLUMN snapshot TEXT")


def _rebuild_slow_check(conn: sqlite3.Connection) -> None:
    """Rebuild a staged_changes table whose op CHECK uses `IN (...)`: SQLite builds a lookup
    table for that list on every inserted row, which tripled the cost of a bulk insert. The
    rows, their order (seq) and the schema version stay the same."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'staged_changes'"
    ).fetchone()
    if row is None or "op IN (" not in row[0]:
        return
    conn.execute("ALTER TABLE staged_changes RENAME TO staged_changes_old")
    conn.execute("DROP INDEX IF EXISTS staged_changes_item")
    conn.execute(_STAGED_TABLE)
    conn.execute(
        f"INSERT INTO staged_changes (seq, {COLUMNS}) SELECT seq, {COLUMNS} FROM staged_changes_old"
    )
    conn.execute("DROP TABLE staged_changes_old")


def _statements() -> list[str]:
    return [s.strip() for s in _SCHEMA.split(";") if s.strip()]


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction: every statement inside sees the file as the first one saw it, so
    another process turning a compact bulk edit into rows (or dropping a commit's batch) between
    them is seen by none or all, never half (the edit missed, its item table gone)."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


@contextmanager
def transaction(
    conn: sqlite3.Connection, batches_as_they_are: bool = False
) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception.

    Staged compact bulk edits first become `staged_changes` rows (`batches.expand`) unless
    `batches_as_they_are` (the caller handles them). A write lock held by another process past
    the busy timeout becomes a StagingError that says so (and names the committing process
    when one holds the commit lock).
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if busy(exc):
            raise busy_error(_path_of(conn)) from exc
        raise
    try:
        if not batches_as_they_are and batches.any_staged(conn):
            batches.expand(conn)
        yield conn
    except BaseException as exc:
        _rollback(conn)  # SQLite may have ended it already (a full disk): keep the first error
        if isinstance(exc, sqlite3.OperationalError) and unwritable(exc):
            raise write_error(_path_of(conn), exc) from exc
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if busy(exc):
            _rollback(conn)
            raise busy_error(_path_of(conn)) from exc
        if unwritable(exc):
            _rollback(conn)
            raise write_error(_path_of(conn), exc) from exc
        raise


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def unwritable(exc: sqlite3.Error) -> bool:
    """True for a write the disk or the file refused (full, I/O error, read-only)."""
    text = str(exc).lower()
    return "disk is full" in text or "i/o error" in text or "readonly" in text


def write_error(path: Path, exc: sqlite3.Error) -> StagingError:
    """A staging write the disk or the file refused, with the way out."""
    if "readonly" in str(exc).lower():
        fix = "Make the file and its folder writable, then try again"
    else:
        fix = "Free disk space (or point XDG_STATE_HOME at another disk), then try again"
    return StagingError(
        f"the staging database {path} cannot be written ({exc})",
        fix=f"{fix}; every change already staged is kept.",
    )


def _path_of(conn: sqlite3.Connection) -> Path:
    row = conn.execute("PRAGMA database_list").fetchone()
    return Path(row[2])
