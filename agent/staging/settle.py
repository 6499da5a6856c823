"""Settling a commit that was interrupted (process killed, machine lost) before it finished.

A commit writes a record naming its change ids (`commits_in_progress`) before the store
applies anything, and removes the changes from staging as each atomic unit of the store lands
(SQLite: the whole commit is one unit). So only the changes of the last unit can be in doubt:
still staged, named by a record, and perhaps already in the store. A record whose commit lock
is free belongs to a dead process; the store decides what landed: a change whose item now
looks exactly like its result (update: pre-image with the new values; create: an item with
those values; delete: no item), compared as the store compares values, landed and leaves
staging; any other stays staged, to be committed (or to conflict) like any change.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from agent.staging import batches, conflicts, history
from agent.staging.db import COLUMNS, rows_in, transaction
from agent.staging.encoding import row_to_change
from agent.stores.base import ChangeToApply, Store
from agent.text_plural import counted


@dataclass
class Settlement:
    """What settling interrupted commits found: changes that had landed, and ones that had not."""

    landed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def extend(self, other: Settlement) -> None:
        """Add another settlement's ids to this one."""
        self.landed.extend(other.landed)
        self.kept.extend(other.kept)

    def describe(self) -> str:
        """One sentence for the user, e.g. after `tabletalk staged list`."""
        return (
            f"An interrupted commit was settled: {counted(len(self.landed), 'change')} had already "
            f"landed in the table and left staging; {len(self.kept)} had not and are still staged."
        )


def has_records(conn: sqlite3.Connection, store: str) -> bool:
    """True when some commit of `store` is running or was interrupted (one indexed lookup)."""
    row = conn.execute("SELECT 1 FROM commits_in_progress WHERE store = ? LIMIT 1", (store,))
    return row.fetchone() is not None


def settle_interrupted(store: Store, conn: sqlite3.Connection) -> Settlement:
    """Decide from the store which changes of interrupted commits landed; forget their records.

    The caller holds the commit lock, so every record found belongs to a dead process.
    """
    records = conn.execute(
        "SELECT token, ids_json FROM commits_in_progress WHERE store = ?", (store.identity,)
    ).fetchall()
    if not records:
        return Settlement()
    with transaction(conn):
        pass  # staged compact bulk edits become rows (db.transaction), to be read below
    held = list(dict.fromkeys(i for _, ids_json in records for i in json.loads(ids_json)))
    changes = _staged(conn, store.identity, held)
    landed = already_applied(store, changes)
    done = [c.id for c in changes if c.id in landed]
    with transaction(conn):
        for token, ids_json in records:
            mine = set(json.loads(ids_json))
            forget(conn, [i for i in done if i in mine], commit_id=token)
            history.finish(conn, token, history.Retention())
        conn.executemany(
            "DELETE FROM commits_in_progress WHERE token = ?", [(t,) for t, _ in records]
        )
    return Settlement(landed=done, kept=[c.id for c in changes if c.id not in landed])


def _staged(conn: sqlite3.Connection, store: str, ids: list[str]) -> list[ChangeToApply]:
    """The still-staged changes among `ids` (a landed unit's ids are already gone)."""
    sql = f"SELECT {COLUMNS} FROM staged_changes WHERE store = ? AND id IN ({{marks}}) ORDER BY seq"
    return [row_to_change(r).to_apply() for r in rows_in(conn, sql, ids, store)]


def forget(conn: sqlite3.Connection, ids: list[str], commit_id: str | None = None) -> None:
    """Delete these staged changes (landed in the store: logged under `commit_id` first);
    when they are every row, empty the table in one sweep. A compact bulk edit they cover whole
    stays as the commit's history (`batches.land`)."""
    if commit_id is not None:
        ids = batches.land(conn, ids, commit_id)
    elif batches.any_staged(conn):
        batches.expand(conn)
    if not ids:
        return
    total = conn.execute("SELECT count(*) FROM staged_changes").fetchone()[0]
    if total == len(ids):
        # Every staged id, in order, read from the id index alone: equal to ours exactly when
        # the table holds nothing but these changes.
        (every,) = conn.execute(
            "SELECT group_concat(id, ',') FROM (SELECT id FROM staged_changes ORDER BY id)"
        ).fetchone()
        if every == ",".join(sorted(ids)):
            if commit_id is not None:
                history.record(conn, commit_id, ids, every=True)
            conn.execute("DELETE FROM staged_changes")  # SQLite's truncate optimisation
            conflicts.drop_all(conn)  # (no delete trigger on staged_changes: it would stop it)
            return
    if commit_id is not None:
        history.record(conn, commit_id, ids, every=False)
    conn.executemany("DELETE FROM staged_changes WHERE id = ?", [(i,) for i in ids])
    conflicts.drop(conn, ids)


def already_applied(store: Store, changes: list[ChangeToApply]) -> set[str]:
    """Ids of changes whose result is already what the store holds.

    `Store.holds_many` compares as the store would store the values (SQLite: `column IS ?
    COLLATE BINARY` with the column's affinity, so 5.0 vs 5 or '1' vs 1 are judged as SQLite
    would, and 'Ada' is not 'ada' in a NOCASE column, nor 1.0 1 without affinity; DynamoDB: null
    is an absent attribute), a few reads per table and op (BatchGetItem on DynamoDB), not one
    per change.
    """
    groups: dict[tuple[str, str], list[ChangeToApply]] = {}
    for change in changes:
        groups.setdefault((change.table, change.op), []).append(change)
    applied: set[str] = set()
    for (table, op), group in groups.items():
        if op == "delete":
            done = [item is None for item in store.get_items(table, [c.key for c in group])]
        elif op == "create":
            done = store.holds_many(table, [(c.key, c.values) for c in group])
        else:
            expected = [(c.key, {**(c.pre_image or {}), **c.values}) for c in group]
            done = store.holds_many(table, expected, whole=True)
        applied.update(c.id for c, landed in zip(group, done, strict=True) if landed)
    return applied
