"""Committing staged changes, and what happens when a commit is interrupted.

A commit first records its change ids in `commits_in_progress` (one small transaction), then
calls `store.apply` (SQLite: one transaction, all or nothing), then, in one transaction,
deletes the applied changes from staging and its own record. A crash between the store's
commit and that delete leaves changes that are applied but still staged, and a record naming
them. The next commit treats such an in-doubt change as already applied when the item now
looks exactly like the change's result (update: the pre-image with the new values; create: an
item with those values; delete: no item), compared as the store compares values; those are removed from staging and reported in
`recovered` (and `committed`); the rest are committed normally (a change that did not land
still looks like its pre-image, so it is applied as usual). Staging onto an item whose change
an unsettled commit holds is refused until a commit (or discard) settles it, so no merged edit
is lost. A store raises a TabletalkError from `apply` only when nothing was applied, so such a
failure settles the commit at once; any other exception leaves it in doubt.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agent.errors import TabletalkError
from agent.staging.db import transaction
from agent.staging.encoding import loads, loads_many
from agent.staging.model import CommitReport
from agent.stores.base import ChangeToApply, Item, Store


def changes_to_commit(conn: sqlite3.Connection, store: str) -> list[ChangeToApply]:
    """All of `store`'s staged changes, decoded straight into the form `Store.apply` takes."""
    rows = conn.execute(
        "SELECT id, tbl, key_json, op, values_json, pre_image_json FROM staged_changes "
        "WHERE +store = ? ORDER BY seq",  # scan in seq order: no sort of 10k rows
        (store,),
    ).fetchall()
    memo: dict[str, Item] = {}
    key_names: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    changes = []
    pre_images = loads_many([r[5] for r in rows])
    for (id_, table, item_key, op, values_json, _), pre_image in zip(rows, pre_images, strict=True):
        if values_json not in memo:
            memo[values_json] = loads(values_json)
        values = memo[values_json]
        known = key_names.get(table)
        if pre_image is not None and known is not None and pre_image.keys() >= known[1]:
            # An item holds its key: skip a decode.
            names = known[0]
            if len(names) == 1:
                key = {names[0]: pre_image[names[0]]}
            else:
                key = {n: pre_image[n] for n in names}
        else:
            key = loads(item_key)
            key_names.setdefault(table, (tuple(key), frozenset(key)))
        changes.append(ChangeToApply(id_, table, key, op, values, pre_image))
    return changes


def commit_changes(
    store: Store,
    conn: sqlite3.Connection,
    changes: list[ChangeToApply],
    progress: Callable[[int, int], Any] | None = None,
) -> CommitReport:
    """Apply `changes` through `store.apply`; drop what landed from staging, keep the rest."""
    if not changes:
        return CommitReport()
    ids = [c.id for c in changes]
    token = secrets.token_hex(8)
    with transaction(conn):
        earlier = conn.execute(
            "SELECT token, ids_json FROM commits_in_progress WHERE store = ?", (store.identity,)
        ).fetchall()
        conn.execute(
            "INSERT INTO commits_in_progress (token, store, ids_json, started_at) "
            "VALUES (?, ?, ?, ?)",
            (token, store.identity, json.dumps(ids), datetime.now(UTC).isoformat()),
        )
    in_doubt = {i for _, ids_json in earlier for i in json.loads(ids_json)}
    try:
        recovered = _already_applied(store, [c for c in changes if c.id in in_doubt])
        pending = [c for c in changes if c.id not in recovered]
        result = store.apply(pending, progress)
    except TabletalkError:
        # A store raises its own errors only when nothing was applied (it rolled back): the
        # commit is settled, and only a crash may leave its record behind.
        with transaction(conn):
            conn.execute("DELETE FROM commits_in_progress WHERE token = ?", (token,))
        raise
    landed = set(result.applied)
    done = [c.id for c in changes if c.id in landed or c.id in recovered]
    settled = set(ids)
    with transaction(conn):
        _forget(conn, done)
        conn.execute("DELETE FROM commits_in_progress WHERE token = ?", (token,))
        still_staged: set[str] = set()
        if earlier:
            rows = conn.execute("SELECT id FROM staged_changes WHERE store = ?", (store.identity,))
            still_staged = {r[0] for r in rows}
        for old_token, ids_json in earlier:
            left = [i for i in json.loads(ids_json) if i not in settled and i in still_staged]
            if left:
                conn.execute(
                    "UPDATE commits_in_progress SET ids_json = ? WHERE token = ?",
                    (json.dumps(left), old_token),
                )
            else:
                conn.execute("DELETE FROM commits_in_progress WHERE token = ?", (old_token,))
    recovered_ids = [c.id for c in changes if c.id in recovered]
    committed = done if not result.conflicts else [i for i in done if i in landed]
    return CommitReport(committed=committed, conflicts=result.conflicts, recovered=recovered_ids)


def _forget(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Delete these staged changes; when they are every row, empty the table in one sweep."""
    total = conn.execute("SELECT count(*) FROM staged_changes").fetchone()[0]
    if ids and total == len(ids):
        # Every staged id, in order, read from the id index alone: equal to ours exactly when
        # the table holds nothing but these changes.
        (every,) = conn.execute(
            "SELECT group_concat(id, ',') FROM (SELECT id FROM staged_changes ORDER BY id)"
        ).fetchone()
        if every == ",".join(sorted(ids)):
            conn.execute("DELETE FROM staged_changes")  # SQLite's truncate optimisation
            return
    conn.executemany("DELETE FROM staged_changes WHERE id = ?", [(i,) for i in ids])


def _already_applied(store: Store, changes: list[ChangeToApply]) -> set[str]:
    """Ids of in-doubt changes whose result is already what the store holds.

    `Store.holds` compares as the store's guarded commit does (SQLite: `column IS ?` with the
    column's affinity, so 5.0 vs 5 or '1' vs 1 are judged as SQLite would).
    """
    applied: set[str] = set()
    for change in changes:
        if change.op == "delete":
            done = store.get_item(change.table, change.key) is None
        elif change.op == "create":
            done = store.holds(change.table, change.key, change.values)
        else:
            expected = {**(change.pre_image or {}), **change.values}
            done = store.holds(change.table, change.key, expected, whole=True)
        if done:
            applied.add(change.id)
    return applied
