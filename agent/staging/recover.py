"""Recovering a damaged staging database: keep the file, copy what SQLite can still read.

The damaged file (with its `-wal`) is renamed aside with a timestamp, never deleted, and each
staged change and commit record that can still be read, row by row around damaged pages, is
copied into a fresh staging database (a compact bulk edit's changes as ordinary rows). Nothing suggests discarding pending work.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.errors import StagingError
from agent.staging import batches
from agent.stores.sqlite_json import register
from agent.text_plural import counted

_CHUNK = 200
_OPS = ("create", "update", "delete")
_CHANGE_COLUMNS = (
    "seq, id, store, tbl, key_json, op, values_json, pre_image_json, origin, created_at"
)


def recover(path: Path, reason: str) -> str:
    """Move the damaged database at `path` aside, rebuild it from its readable rows; say so."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    try:
        path.rename(aside)
        for suffix in ("-wal", "-shm", "-journal"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                side.rename(aside.with_name(aside.name + suffix))
    except OSError as exc:
        raise StagingError(
            f"the staging database {path} is damaged ({reason}) and cannot be moved aside "
            f"({exc.strerror})",
            fix="Make its folder writable and try again; the file is left as it is.",
        ) from exc
    changes, records = _salvage(aside)
    commits, logged = _salvage_history(aside)
    _salvage_batches(aside, changes, {c[1] for c in commits}, logged)
    from agent.staging.db import connect, transaction

    conn = connect(path)
    try:
        with transaction(conn):
            conn.executemany(
                f"INSERT OR IGNORE INTO staged_changes ({_CHANGE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                changes,
            )
            conn.executemany(
                "INSERT OR IGNORE INTO commits_in_progress (token, store, ids_json, started_at) "
                "VALUES (?, ?, ?, ?)",
                records,
            )
            conn.executemany(  # the rowid too: the history's order is its rowid
                "INSERT OR IGNORE INTO commit_log "
                "(rowid, id, store, committed_at, committed_by, changes) VALUES (?, ?, ?, ?, ?, ?)",
                commits,
            )
            conn.executemany(
                f"INSERT OR IGNORE INTO commit_log_changes ({_LOGGED_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                logged,
            )
    finally:
        conn.close()
    return (
        f"The staging database was damaged ({reason}); it is kept as {aside}. "
        f"{counted(len(changes), 'staged change')} and {counted(len(commits), 'commit')} of history could be "
        "read and were recovered into a fresh staging database; check them with "
        "`tabletalk staged list`."
    )


def _salvage(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The readable, well-formed rows of both tables of the damaged file (maybe none)."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=1.0)
    except sqlite3.Error:
        return [], []
    try:
        changes = [r for r in _rows(conn, "staged_changes", _CHANGE_COLUMNS) if _good_change(r)]
        records = [
            r
            for r in _rows(conn, "commits_in_progress", "rowid, token, store, ids_json, started_at")
            if _good_record(r)
        ]
        return changes, [r[1:] for r in records]
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


_LOGGED_COLUMNS = "commit_id, seq, tbl, key_json, op, values_json, pre_image_json, origin"


def _salvage_history(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The readable rows of the commit history (commits, their changes) of the damaged file."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=1.0)
    except sqlite3.Error:
        return [], []
    try:
        commits = [
            r
            for r in _rows(
                conn, "commit_log", "rowid, id, store, committed_at, committed_by, changes"
            )
            if all(isinstance(v, str) for v in r[1:5]) and isinstance(r[5], int)
        ]
        known = {r[1] for r in commits}
        logged = [
            r
            for r in _scan(conn, "commit_log_changes", _LOGGED_COLUMNS)
            if r[0] in known and isinstance(r[1], int) and r[4] in _OPS
            and all(isinstance(v, str) for v in (r[2], r[3], r[5], r[7]))
        ]  # fmt: skip
        return commits, logged
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


def _salvage_batches(
    path: Path,
    changes: list[tuple[Any, ...]],
    commits: set[str],
    logged: list[tuple[Any, ...]],
) -> None:
    """Add the readable changes of compact bulk edits (`staging.batches`) as ordinary rows:
    staged ones after the staged changes, landed ones to their commit's history."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=1.0)
    except sqlite3.Error:
        return
    try:
        register(conn)
        headers = []
        for row in _scan(conn, "staged_batches", f"{batches.HEADER}, commit_id"):
            with contextlib.suppress(ValueError, TypeError):
                headers.append((batches.header(row[:-1]), row[-1]))
        seq = max((c[0] for c in changes), default=0)
        for batch, commit_id in headers:
            if commit_id is not None and commit_id not in commits:
                continue
            for row in _batch_rows(conn, batch):
                seq += 1
                if commit_id is None and _good_change((seq, *row)):
                    changes.append((seq, *row))
                elif commit_id is not None and _good_change((seq, *row)):
                    logged.append((commit_id, seq, *row[2:8]))
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


def _batch_rows(conn: sqlite3.Connection, batch: batches.Batch) -> list[tuple[Any, ...]]:
    """A batch's readable changes as staged_changes rows, read around damaged pages."""
    sql = batches.select_sql(batch) + " WHERE b.tt_n BETWEEN ? AND ? ORDER BY b.tt_n"
    found: list[tuple[Any, ...]] = []
    for start in range(1, batch.count + 1, _CHUNK):
        try:
            found.extend(conn.execute(sql, (start, start + _CHUNK - 1)).fetchall())
        except sqlite3.Error:
            for one in range(start, min(start + _CHUNK, batch.count + 1)):
                with contextlib.suppress(sqlite3.Error):
                    found.extend(conn.execute(sql, (one, one)).fetchall())
    return found


def _rows(conn: sqlite3.Connection, table: str, columns: str) -> list[tuple[Any, ...]]:
    """Rows of `table` by rowid range; a range that fails is read row by row, skipping damage."""
    first_column = columns.split(",")[0]
    try:
        low, high = conn.execute(
            f"SELECT min({first_column}), max({first_column}) FROM {table}"
        ).fetchone()
    except sqlite3.Error:
        return _scan(conn, table, columns)
    if low is None or high is None:
        return _scan(conn, table, columns)
    found: list[tuple[Any, ...]] = []
    sql = f"SELECT {columns} FROM {table} WHERE {first_column} BETWEEN ? AND ?"
    for start in range(low, high + 1, _CHUNK):
        try:
            found.extend(conn.execute(sql, (start, start + _CHUNK - 1)).fetchall())
        except sqlite3.Error:
            for one in range(start, min(start + _CHUNK, high + 1)):
                with contextlib.suppress(sqlite3.Error):
                    found.extend(conn.execute(sql, (one, one)).fetchall())
    return found


def _scan(conn: sqlite3.Connection, table: str, columns: str) -> list[tuple[Any, ...]]:
    """A plain scan that keeps every row read before the first damaged page."""
    found: list[tuple[Any, ...]] = []
    try:
        for row in conn.execute(f"SELECT {columns} FROM {table}"):
            found.append(row)
    except sqlite3.Error:
        pass
    return found


def _good_change(row: tuple[Any, ...]) -> bool:
    """A staged change row whose fields have the types and JSON the staging area needs."""
    seq, id_, store, table, key_json, op, values_json, pre_json, origin, created = row
    texts = (id_, store, table, key_json, values_json, origin, created)
    if not isinstance(seq, int) or not all(isinstance(t, str) for t in texts) or op not in _OPS:
        return False
    try:
        key = json.loads(key_json)
        values = json.loads(values_json)
        pre = None if pre_json is None else json.loads(pre_json)
    except (TypeError, ValueError):
        return False
    return (
        isinstance(key, dict)
        and isinstance(values, dict)
        and (pre is None or isinstance(pre, dict))
    )


def _good_record(row: tuple[Any, ...]) -> bool:
    _rowid, token, store, ids_json, started = row
    if not all(isinstance(t, str) for t in (token, store, ids_json, started)):
        return False
    try:
        ids = json.loads(ids_json)
    except ValueError:
        return False
    return isinstance(ids, list) and all(isinstance(i, str) for i in ids)
