"""Committing staged changes, and what happens when a commit is interrupted.

One commit at a time per staging area (`agent.staging.lock`). A commit records its change ids
in `commits_in_progress` (one small transaction), then calls `store.apply`, which reports
each atomic unit as it becomes durable (SQLite: the whole commit is one transaction); each
unit's changes leave staging at once, in one staging transaction (the last unit's also deletes
the record). A crash leaves the record and, at most, one unit applied but still staged: the
next process to open the staging area settles it from the store (`agent.staging.settle`)
before showing, diffing, discarding or committing anything. Staging onto an item whose change a
running commit holds is refused, so no merged edit is lost. A store raises a TabletalkError
from `apply` only after rolling back its open unit, so such a failure settles the commit at
once; any other exception leaves it in doubt until the next settlement.

The store may read the changes set-based straight from the staging database
(`Store.apply_staged`); only when it declines are they decoded here for `Store.apply`. When a
store's only staged changes are one compact bulk edit (`staging.batches`), the store reads its
item table, and the edit landing whole stays as the commit's history instead of being copied.
The conflicts a commit finds are recorded with the transaction that closes its record
(`agent.staging.conflicts`).
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.errors import InDoubtError, TabletalkError
from agent.staging import batches, conflicts, history
from agent.staging.batches import Batch
from agent.staging.db import transaction
from agent.staging.encoding import loads, loads_many
from agent.staging.model import CommitReport
from agent.staging.settle import forget
from agent.stores.base import ChangeToApply, Conflict, Item, Key, StagedSource, Store

log = logging.getLogger(__name__)


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


@dataclass
class Pending:
    """The changes one commit takes: ids in commit order, their decoding (run only when the
    store applies them row by row), their (id, table, key text) for the vector hook (read only
    when the store has an embedding index), and where a store can read them set-based (None:
    it cannot)."""

    ids: list[str]
    load: Callable[[], list[ChangeToApply]]
    keys: Callable[[], list[tuple[str, str, str]]]
    source: StagedSource | None = None


def pending_all(conn: sqlite3.Connection, store: str, path: Path) -> Pending:
    """Every staged change of `store`, in staging order.

    The store reads them back as `store` AND seq <= the last one's: a change staged later (by
    another process, while this commit starts) gets a larger seq, since SQLite gives a new row
    one more than the largest in the table and these rows stay until they land (the record
    holds them: no discard, fold or rebase touches them).
    """
    compact = batches.staged(conn, store)
    if (
        len(compact) == 1
        and not conn.execute(
            "SELECT 1 FROM staged_changes WHERE store = ? LIMIT 1", (store,)
        ).fetchone()
    ):
        return _pending_batch(conn, store, path, compact[0])
    if compact:
        batches.expand(conn, store)
    rows = conn.execute(
        "SELECT id, seq FROM staged_changes WHERE +store = ? ORDER BY seq", (store,)
    ).fetchall()
    last = rows[-1][1] if rows else 0
    where = ("+store = ? AND seq <= ?", (store, last))
    return _pending(conn, store, path, [r[0] for r in rows], where)


def pending_chosen(
    conn: sqlite3.Connection, store: str, path: Path, ids: list[str]
) -> Pending | None:
    """The staged changes `ids` of `store`, in that order; None when one is not staged."""
    batches.expand(conn, store)
    unique = list(dict.fromkeys(ids))
    chosen = ("id IN (SELECT value FROM json_each(?)) AND store = ?", (json.dumps(unique), store))
    found = {
        r[0] for r in conn.execute(f"SELECT id FROM staged_changes WHERE {chosen[0]}", chosen[1])
    }
    if any(i not in found for i in unique):
        return None
    return _pending(conn, store, path, unique, chosen)


def _pending_batch(conn: sqlite3.Connection, store: str, path: Path, batch: Batch) -> Pending:
    """The store's one staged compact bulk edit, which the store reads as it is (the header's
    values are literals in the SELECT); decoding it for the row-by-row path, or a change of
    staging meanwhile, turns it into rows first (same ids)."""
    ids = batch.ids()

    def load() -> list[ChangeToApply]:
        with transaction(conn):
            pass  # the batch becomes rows (db.transaction), read as any staged changes
        by_id = {c.id: c for c in changes_to_commit(conn, store)}
        return [by_id[i] for i in ids]

    def keys() -> list[tuple[str, str, str]]:
        rows = conn.execute(f"SELECT id, tbl, key_json FROM ({batches.select_sql(batch)})")
        return rows.fetchall()

    select = batches.select_template(batch)
    source = StagedSource(path, select, (), ids)
    return Pending(ids, load, keys, source)


def _pending(
    conn: sqlite3.Connection,
    store: str,
    path: Path,
    ids: list[str],
    where: tuple[str, tuple[Any, ...]],
) -> Pending:
    """The changes `ids`, which `where` selects exactly (never whatever is staged for the store
    when it is read: the commit's record names these ids); decoded only if the store asks for
    Python values."""
    source = StagedSource(
        path,
        "SELECT id, tbl, key_json, op, values_json, pre_image_json, snapshot "
        "FROM {db}.staged_changes "
        f"WHERE {where[0]}",
        where[1],
        ids,
    )

    def load() -> list[ChangeToApply]:
        by_id = {c.id: c for c in changes_to_commit(conn, store)}
        return [by_id[i] for i in ids]

    def keys() -> list[tuple[str, str, str]]:
        sql = f"SELECT id, tbl, key_json FROM staged_changes WHERE {where[0]}"
        return conn.execute(sql, where[1]).fetchall()

    return Pending(ids, load, keys, source)


def commit_changes(
    store: Store,
    conn: sqlite3.Connection,
    choose: Callable[[], Pending],
    progress: Callable[[int, int], Any] | None = None,
    by: str = "user",
    keep: history.Retention | None = None,
) -> CommitReport:
    """Apply the changes `choose` picks through the store; drop what landed from staging, keep
    the rest.

    `choose` runs inside the transaction that records the commit, so another process cannot
    discard, fold or stage between the choice and the record (a change it discarded would be
    reported committed, one staged in its place committed unnamed). What lands is logged in
    the commit history (`by` names who committed). The caller holds the commit lock and has
    settled any interrupted commit first.
    """
    keep = keep or history.Retention()
    token = secrets.token_hex(8)
    with transaction(conn, batches_as_they_are=True):  # `choose` decides on compact ones
        pending = choose()
        ids = pending.ids
        if not ids:
            return CommitReport()
        # The keys the vector hook needs are read before they leave staging, and only when
        # the store has an embedding index to mark.
        keys = pending.keys() if _has_vector_index(store) else []
        conn.execute(
            "INSERT INTO commits_in_progress (token, store, ids_json, started_at) "
            "VALUES (?, ?, ?, ?)",
            (token, store.identity, json.dumps(ids), datetime.now(UTC).isoformat()),
        )
        history.start(conn, token, store.identity, by)
    landed: list[str] = []
    unrecorded: list[str] = []
    closed = False

    def on_landed(unit: list[str]) -> None:
        # The store made this unit durable: it leaves staging now, so a crash after this
        # point leaves at most the next unit in doubt. The last unit also ends the record.
        nonlocal closed
        landed.extend(unit)
        last = not unrecorded and len(landed) == len(ids)
        try:
            with settled_later(conn), transaction(conn, batches_as_they_are=True):
                forget(conn, unit, commit_id=token)
                if last:
                    _close_record(conn, token, keep)
            closed = last
        except (sqlite3.Error, TabletalkError):
            unrecorded.extend(unit)  # the record still names them: settled later

    try:
        result = None
        if pending.source is not None:
            result = store.apply_staged(pending.source, progress, on_landed)
        if result is None:
            result = store.apply(pending.load(), progress, on_landed)
    except InDoubtError as exc:
        # The unit may have landed although the store could not say so: the record keeps
        # exactly its changes (and any unrecorded), to be settled from the store.
        done_now = set(landed)
        doubt = [*unrecorded, *(i for i in exc.ids if i not in done_now)]
        with transaction(conn):
            conn.execute(
                "UPDATE commits_in_progress SET ids_json = ? WHERE token = ?",
                (json.dumps(doubt), token),
            )
        raise
    except TabletalkError:
        # Any other error of a store comes after rolling back its open unit: what landed
        # already left staging, and nothing is in doubt.
        if not unrecorded:
            with transaction(conn):
                _close_record(conn, token, keep)
        raise
    done = set(landed)
    missed = [i for i in result.applied if i not in done]  # applied without reporting units
    if not closed or missed:
        checked = _checked(ids, store.max_transaction_items, result.conflicts)
        with transaction(conn):
            forget(conn, missed + unrecorded, commit_id=token)
            _close_record(conn, token, keep)
            conflicts.record(conn, store.identity, checked, result.conflicts)
    done.update(missed)
    committed = [i for i in ids if i in done]
    kept = [i for i in ids if i not in done]
    if keys and done:
        _mark_indexes_stale(store, [(t, loads(k)) for i, t, k in keys if i in done])
    return CommitReport(committed=committed, conflicts=result.conflicts, kept=kept)


def _checked(ids: list[str], size: int | None, found: list[Conflict]) -> list[str]:
    """The changes the store checked: all of them when it applies all at once; one applying in
    consecutive batches of `size` (in `ids` order) checked every batch up to the one that
    conflicted, and nothing after it."""
    if size is None or not found:
        return ids
    where = {change_id: n for n, change_id in enumerate(ids)}
    last = max(where.get(c.change_id, -1) for c in found)  # an unknown id claims nothing
    return ids[: (last // size + 1) * size]


@contextmanager
def settled_later(conn: sqlite3.Connection) -> Iterator[None]:
    """Run a staging transaction that the commit record already covers without waiting for
    its fsync (synchronous=NORMAL: it survives a killed process, and a power cut can only undo
    it, which leaves the record for the next open to settle from the store), then go back to
    synchronous=FULL for everything else."""
    conn.execute("PRAGMA synchronous=NORMAL")
    try:
        yield
    finally:
        conn.execute("PRAGMA synchronous=FULL")


def _close_record(conn: sqlite3.Connection, token: str, keep: history.Retention) -> None:
    """The commit is over: forget its record and close its history entry."""
    conn.execute("DELETE FROM commits_in_progress WHERE token = ?", (token,))
    history.finish(conn, token, keep)


def _has_vector_index(store: Store) -> bool:
    """True when the store has an embedding-index sidecar (whose rows a commit makes stale)."""
    from agent.vectors.location import sidecar_path  # light: the index module loads boto3

    return sidecar_path(store.identity).exists()


def _mark_indexes_stale(store: Store, landed: Iterable[tuple[str, Key]]) -> None:
    """Rows a commit changed are stale in the store's embedding indexes; a failure here never
    fails the commit: the next `tabletalk index build` rereads every row."""
    from agent.vectors.index import mark_stale

    try:
        mark_stale(store.identity, landed)
    except Exception:
        log.exception("could not mark committed rows stale in the vector index")
