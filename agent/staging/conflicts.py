"""Conflicts a commit found, kept in the staging database so every process shows them.

A commit whose optimistic check fails leaves the change staged; `record` writes what it found
(the reason, the item's current value as the commit read it, and when) in the transaction that
closes the commit's record, so a crash before that leaves no record at all, never one for a
commit that did not finish. The same transaction drops the records of the changes the commit
checked and found clean (a store applying in batches checked every batch up to the one that
conflicted, that one included, and none after it). A record goes when its change does:
landed (`settle.forget`), discarded, withdrawn or dropped by a rebase (`drop`), and the trigger
`staged_conflicts_moved` drops it when its change's op, values or pre-image change (a fold, a
rebase, a rejected attribute; also when a tabletalk that knows nothing of these records does
it). Reads show only records whose change is still staged.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent.stores.base import Conflict, Item

SCHEMA = """
CREATE TABLE IF NOT EXISTS staged_conflicts (
    change_id TEXT PRIMARY KEY,
    store TEXT NOT NULL,
    reason TEXT NOT NULL,
    current_json TEXT,  -- the item as the commit read it (NULL: no item)
    found_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS staged_conflicts_store ON staged_conflicts (store);
"""

TRIGGER = """
CREATE TRIGGER IF NOT EXISTS staged_conflicts_moved
AFTER UPDATE OF op, values_json, pre_image_json ON staged_changes
BEGIN
    DELETE FROM staged_conflicts WHERE change_id = OLD.id;
END
"""
"""Run on its own: its body's `;` would split it where db.py splits the schema."""


@dataclass(frozen=True)
class RecordedConflict:
    """A conflict a commit (of any process) found: the same fields as `Conflict`, and when."""

    change_id: str
    reason: str
    current: Item | None
    found_at: str

    def to_dict(self) -> dict[str, Any]:
        """What the commit found, for JSON output (`staged list --json`, listStagedChanges)."""
        return {"reason": self.reason, "current": self.current, "found_at": self.found_at}


def record(
    conn: sqlite3.Connection, store: str, checked: Iterable[str], found: list[Conflict]
) -> None:
    """Inside the commit's closing transaction: the records of `checked` become `found`."""
    conn.executemany("DELETE FROM staged_conflicts WHERE change_id = ?", [(i,) for i in checked])
    now = datetime.now(UTC).isoformat()
    conn.executemany(
        "INSERT OR REPLACE INTO staged_conflicts (change_id, store, reason, current_json, "
        "found_at) SELECT ?, ?, ?, ?, ? WHERE EXISTS "
        "(SELECT 1 FROM staged_changes WHERE id = ? AND store = ?)",
        [(c.change_id, store, c.reason, _dumps(c.current), now, c.change_id, store) for c in found],
    )
    prune(conn, store)  # and those whose change another process removed, knowing nothing of them


def prune(conn: sqlite3.Connection, store: str) -> None:
    """Forget `store`'s records whose change is no longer staged (one lookup per record)."""
    conn.execute(
        "DELETE FROM staged_conflicts WHERE store = ? AND NOT EXISTS "
        "(SELECT 1 FROM staged_changes s WHERE s.id = change_id)",
        (store,),
    )


def drop(conn: sqlite3.Connection, ids: Iterable[str]) -> None:
    """Forget the records of these changes (landed, discarded, rebased)."""
    conn.executemany("DELETE FROM staged_conflicts WHERE change_id = ?", [(i,) for i in ids])


def drop_all(conn: sqlite3.Connection) -> None:
    """Nothing is staged any more: no record is left."""
    conn.execute("DELETE FROM staged_conflicts")


def recorded(conn: sqlite3.Connection, store: str) -> dict[str, RecordedConflict]:
    """`store`'s recorded conflicts of changes still staged, in staging order."""
    rows = conn.execute(
        "SELECT c.change_id, c.reason, c.current_json, c.found_at FROM staged_conflicts c "
        "JOIN staged_changes s ON s.id = c.change_id AND s.store = c.store "
        "WHERE c.store = ? ORDER BY s.seq",
        (store,),
    ).fetchall()
    return {
        i: RecordedConflict(i, reason, None if current is None else json.loads(current), at)
        for i, reason, current, at in rows
    }


def stamp(conn: sqlite3.Connection, store: str) -> tuple[Any, ...]:
    """Cheap to read, and different after any record of `store` is written or dropped."""
    row = conn.execute(
        "SELECT count(*), max(found_at), total(rowid) FROM staged_conflicts WHERE store = ?",
        (store,),
    ).fetchone()
    return tuple(row)


def _dumps(current: Item | None) -> str | None:
    if current is None:
        return None
    return json.dumps(current, ensure_ascii=False, default=str)
