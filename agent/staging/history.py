"""Commit history: every committed change with its pre-image, and reverts that are staged.

A commit's log row is written with its `commits_in_progress` record; each change that lands is
copied into the log in the same staging transaction that takes it out of staging (so the log
holds exactly what reached the store, also when an interrupted commit is settled later); a
compact bulk edit that lands whole is not copied: its header names the commit instead
(`staging.batches`), and its rows are read from it. The
post-image is derived: an update's pre-image with the new values, a create's values, nothing
for a delete. Reverting stages the inverse of each change with the post-image as its pre-image,
so a row changed since the commit shows as a conflict instead of being overwritten.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.staging import batches
from agent.staging.encoding import loads
from agent.stores.base import Item, Key, Op, Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS commit_log (
    id TEXT PRIMARY KEY,
    store TEXT NOT NULL,
    committed_at TEXT NOT NULL,
    committed_by TEXT NOT NULL,
    changes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS commit_log_store ON commit_log (store, committed_at);
CREATE TABLE IF NOT EXISTS commit_log_changes (
    commit_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tbl TEXT NOT NULL,
    key_json TEXT NOT NULL,
    op TEXT NOT NULL,
    values_json TEXT NOT NULL,
    pre_image_json TEXT,
    origin TEXT NOT NULL,
    PRIMARY KEY (commit_id, seq)
) WITHOUT ROWID;
"""

Inverse = tuple[str, Key, Op, Item, Item | None]
"""The change undoing a logged one: table, key, op, values, the pre-image to check against."""

KEEP_DAYS = 90
KEEP_CHANGES = 200_000
"""Default retention: commits older than this many days, or beyond this many logged changes
(oldest first), are forgotten; `[history]` in config.toml changes both."""


@dataclass(frozen=True)
class Retention:
    """How long and how much history is kept."""

    days: int = KEEP_DAYS
    changes: int = KEEP_CHANGES


@dataclass(frozen=True)
class CommitEntry:
    """One commit in the log."""

    id: str
    store: str
    committed_at: str
    committed_by: str
    changes: int
    tables: tuple[str, ...] = ()
    reverts: tuple[str, ...] = ()
    """The commits this one undid (its changes were staged by reverting them)."""
    reverted_by: tuple[str, ...] = ()
    """Later commits that undid this one."""


@dataclass(frozen=True)
class LoggedChange:
    """One committed change, with the item before and after."""

    table: str
    key: Key
    op: Op
    values: Item
    pre_image: Item | None
    origin: str

    @property
    def post_image(self) -> Item | None:
        """The item as the commit left it (None after a delete)."""
        if self.op == "delete":
            return None
        if self.op == "create":
            return {**self.key, **self.values}
        return {**(self.pre_image or {}), **self.values}


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the history tables (idempotent)."""
    conn.executescript(SCHEMA)


def start(conn: sqlite3.Connection, commit_id: str, store: str, by: str) -> None:
    """Open a commit's log row (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO commit_log (id, store, committed_at, committed_by) VALUES (?, ?, ?, ?)",
        (commit_id, store, datetime.now(UTC).isoformat(timespec="seconds"), by),
    )


def record(conn: sqlite3.Connection, commit_id: str, ids: list[str], every: bool) -> None:
    """Copy these staged changes into the log before they leave staging (caller's transaction).

    `every` says the ids are all the staged rows, so one INSERT … SELECT copies them.
    """
    columns = "tbl, key_json, op, values_json, pre_image_json, origin"
    if every:
        logged = conn.execute(
            f"INSERT INTO commit_log_changes (commit_id, seq, {columns}) "
            f"SELECT ?, seq, {columns} FROM staged_changes",
            (commit_id,),
        ).rowcount
    else:
        logged = conn.executemany(
            f"INSERT INTO commit_log_changes (commit_id, seq, {columns}) "
            f"SELECT ?, seq, {columns} FROM staged_changes WHERE id = ?",
            [(commit_id, i) for i in ids],
        ).rowcount
    conn.execute("UPDATE commit_log SET changes = changes + ? WHERE id = ?", (logged, commit_id))


def finish(conn: sqlite3.Connection, commit_id: str, keep: Retention) -> None:
    """Close a commit's log: drop it if nothing landed, then apply the retention policy."""
    conn.execute("DELETE FROM commit_log WHERE id = ? AND changes = 0", (commit_id,))
    cutoff = (datetime.now(UTC) - timedelta(days=keep.days)).isoformat(timespec="seconds")
    old = [
        r[0] for r in conn.execute("SELECT id FROM commit_log WHERE committed_at < ?", (cutoff,))
    ]
    total = conn.execute("SELECT coalesce(sum(changes), 0) FROM commit_log").fetchone()[0]
    if total > keep.changes:
        for commit_id_, changes in conn.execute(
            "SELECT id, changes FROM commit_log ORDER BY rowid"  # commit order, not the clock
        ).fetchall():
            if total <= keep.changes:
                break
            old.append(commit_id_)
            total -= changes
    for gone in dict.fromkeys(old):
        batches.drop_committed(conn, gone)
        conn.execute("DELETE FROM commit_log_changes WHERE commit_id = ?", (gone,))
        conn.execute("DELETE FROM commit_log WHERE id = ?", (gone,))


def commits(conn: sqlite3.Connection, store: str, limit: int = 200) -> list[CommitEntry]:
    """The store's commits, newest first: in the order they were made (rowid: a new row gets
    one more than the largest), which a clock set back does not change."""
    rows = conn.execute(
        "SELECT id, store, committed_at, committed_by, changes FROM commit_log "
        "WHERE store = ? AND changes > 0 ORDER BY rowid DESC LIMIT ?",
        (store, limit),
    ).fetchall()
    entries = [_entry(row, _tables(conn, row[0]), _reverts(conn, row[0])) for row in rows]
    undone: dict[str, list[str]] = {}
    for entry in entries:  # newest first, so a commit's reverts are listed before it
        for reverted in entry.reverts:
            undone.setdefault(reverted, []).append(entry.id)
    return [replace(e, reverted_by=tuple(undone.get(e.id, ()))) for e in entries]


REVERT_ORIGIN = "revert:"
"""How a reverted change's origin begins: `revert:COMMIT` (staging.revert)."""


def _reverts(conn: sqlite3.Connection, commit_id: str) -> tuple[str, ...]:
    """The commits whose inverse this commit landed (read off its changes' origins)."""
    return tuple(
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT substr(origin, ?) FROM commit_log_changes "
            "WHERE commit_id = ? AND origin LIKE ? ORDER BY 1",
            (len(REVERT_ORIGIN) + 1, commit_id, REVERT_ORIGIN + "%"),
        )
    )


def _reverted_by(conn: sqlite3.Connection, commit_id: str) -> tuple[str, ...]:
    """The commits that landed this commit's inverse (a scan of the log: for one commit)."""
    return tuple(
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT commit_id FROM commit_log_changes WHERE origin = ?",
            (REVERT_ORIGIN + commit_id,),
        )
    )


def _tables(conn: sqlite3.Connection, commit_id: str) -> tuple[str, ...]:
    """The tables a commit changed, in name order (logged rows and landed batches)."""
    return tuple(
        r[0]
        for r in conn.execute(
            "SELECT tbl FROM commit_log_changes WHERE commit_id = ? UNION "
            "SELECT tbl FROM staged_batches WHERE commit_id = ? ORDER BY 1",
            (commit_id, commit_id),
        )
    )


def find(conn: sqlite3.Connection, store: str, commit_id: str) -> CommitEntry | None:
    """One commit of the store by id (or an unambiguous prefix of it: hex digits only, so an
    empty id or a LIKE wildcard names no commit)."""
    prefix = commit_id.strip().lower()
    if not re.fullmatch(r"[0-9a-f]+", prefix):
        return None
    rows = conn.execute(
        "SELECT id, store, committed_at, committed_by, changes FROM commit_log "
        "WHERE store = ? AND id LIKE ? || '%' AND changes > 0 LIMIT 2",
        (store, prefix),
    ).fetchall()
    if len(rows) != 1:
        return None
    found = rows[0][0]
    return replace(
        _entry(rows[0], _tables(conn, found), _reverts(conn, found)),
        reverted_by=_reverted_by(conn, found),
    )


def _entry(row: tuple[Any, ...], tables: tuple[str, ...], reverts: tuple[str, ...]) -> CommitEntry:
    return CommitEntry(row[0], row[1], row[2], row[3], int(row[4]), tables, reverts)


def changes_of(conn: sqlite3.Connection, commit_id: str) -> list[LoggedChange]:
    """A commit's changes, in staging order."""
    rows = conn.execute(
        "SELECT tbl, key_json, op, values_json, pre_image_json, origin FROM commit_log_changes "
        "WHERE commit_id = ? ORDER BY seq",
        (commit_id,),
    ).fetchall()
    for batch in batches.committed(conn, commit_id):
        # id, store, tbl, key_json, op, values_json, pre_image_json, origin, created_at
        rows.extend(r[2:8] for r in batches.rows(conn, batch))
    return [
        LoggedChange(tbl, loads(key), op, loads(values), loads(pre) if pre else None, origin)
        for tbl, key, op, values, pre, origin in rows
    ]


def inverse(change: LoggedChange) -> Inverse:
    """The change that undoes `change`: (table, key, op, values, pre-image to check against)."""
    after = change.post_image
    if change.op == "create":
        return change.table, change.key, "delete", {}, after
    if change.op == "delete":
        values = {k: v for k, v in (change.pre_image or {}).items() if k not in change.key}
        return change.table, change.key, "create", values, None
    before = change.pre_image or {}
    undo = {column: before.get(column) for column in change.values}
    return change.table, change.key, "update", undo, after


def as_stored(store: Store, inverses: list[Inverse]) -> list[Inverse]:
    """Each inverse checked against the row as the store keeps it.

    The logged post-image holds the values as they were staged ("19.99" for a REAL column, no
    column a create left to its default); where the store judges that its row still holds them
    (`Store.holds_many`, its own comparison, a few reads per table, not one per row), the row
    read now is the pre-image, so the revert commits; elsewhere the post-image stays, and the
    commit names the row as changed since.
    """
    checked: dict[str, list[tuple[int, Key, Item]]] = {}
    for index, (table, key, _op, _values, after) in enumerate(inverses):
        if after is not None:
            checked.setdefault(table, []).append((index, key, after))
    anchored = list(inverses)
    for table, candidates in checked.items():
        holds = store.holds_many(table, [(key, after) for _i, key, after in candidates])
        indexes = [c[0] for c, held in zip(candidates, holds, strict=True) if held]
        rows = store.get_items(table, [inverses[i][1] for i in indexes])
        for index, row in zip(indexes, rows, strict=True):
            if row is not None:
                table_, key, op, values, _after = inverses[index]
                anchored[index] = (table_, key, op, values, row)
    return anchored


def revert_words(
    entry: CommitEntry,
    id_length: int | None = None,
    undid: str = "reverts",
    undone: str = "reverted by",
) -> str:
    """`reverts ID; reverted by ID, ID` for a commit that undid others or was undone (ids cut
    to `id_length`, still a prefix `find` takes); empty otherwise."""
    parts = []
    for label, ids in ((undid, entry.reverts), (undone, entry.reverted_by)):
        if ids:
            parts.append(f"{label} {', '.join(i[:id_length] for i in ids)}")
    return "; ".join(parts)


def describe(entry: CommitEntry) -> dict[str, Any]:
    """JSON-ready form of a commit entry."""
    return {
        "id": entry.id,
        "committedAt": entry.committed_at,
        "by": entry.committed_by,
        "changes": entry.changes,
        "tables": list(entry.tables),
        "reverts": list(entry.reverts),
        "revertedBy": list(entry.reverted_by),
    }
