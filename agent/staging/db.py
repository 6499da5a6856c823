"""The staging database: one SQLite file in WAL mode with synchronous=FULL.

WAL lets the TUI, the headless CLI and an MCP server read and write it at the same time.
synchronous=FULL fsyncs the WAL on every commit, so a staged change survives not only a
killed process (which WAL with NORMAL already guarantees) but also a power cut; staging
transactions are few and person-paced (a bulk edit is one transaction), so the cost is small.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent.errors import StagingError

SCHEMA_VERSION = 1

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
    created_at TEXT NOT NULL
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
"""

COLUMNS = "id, store, tbl, key_json, op, values_json, pre_image_json, origin, created_at"


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


def open_staging_db(path: Path) -> sqlite3.Connection:
    """Open (creating dirs, file and schema as needed) the staging database at `path`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=FULL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StagingError(
                f"the staging database {path} was written by a newer tabletalk "
                f"(schema {version}, this one knows {SCHEMA_VERSION})",
                fix="Upgrade tabletalk, or commit/discard the changes with the newer version.",
            )
        with transaction(conn):
            _rebuild_slow_check(conn)
            for statement in _statements():
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return conn
    except sqlite3.Error as exc:
        raise StagingError(
            f"cannot open the staging database {path}: {exc}",
            fix="Check that the directory is writable and the file is not corrupted; "
            "moving the file away starts an empty staging area.",
        ) from exc


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
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
