"""Persisting staged changes: new ones inserted, ones on an already staged item folded into it.

One transaction per call (the caller's): either every change of the call is staged, or none is
and the first error (or a summary of all of them) is raised.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import UTC, datetime
from itertools import repeat
from typing import Any

from agent.errors import StagedSetMoved, StagingError, TabletalkError
from agent.staging import conflicts
from agent.staging.checks import in_commit_error, others_change_error, summarize
from agent.staging.db import COLUMNS, commits_in_progress, rows_in
from agent.staging.encoding import dumps, key_json, loads, maybe_json, row_to_change, take_ids
from agent.staging.merge import check_new, fold, joined_origin
from agent.staging.model import StagedChange
from agent.stores.base import Item, Key, Op, Store, TableShape
from agent.text_plural import noun


def write_changes(
    conn: sqlite3.Connection,
    identity: str,
    table: str,
    op: Op,
    entries: list[tuple[str, Key, Item | None]],
    values: Item,
    origin: str,
    *,
    own_only: bool = False,
) -> list[StagedChange]:
    """Stage `op` with `values` on each (item key text, key, pre-image) of `entries`, inside the
    caller's transaction on `conn`; the changes in the order of `entries`.

    A folded change keeps its id; with `own_only` (an MCP client below `full`, which may not
    discard others' changes either) folding into a change another origin staged is refused: it
    would rewrite their change under their name. Otherwise the folded change names both origins
    (`joined_origin`), so it is no longer any one client's own."""
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    rows = staged_rows(conn, identity, table, [e[0] for e in entries])
    staged = {row[3]: row_to_change(row) for row in rows}
    held = commits_in_progress(conn, identity) if staged else set()
    in_commit = {row[3] for row in rows if row[0] in held}
    fresh = [e for e in entries if e[0] not in staged]
    errors: list[TabletalkError] = []
    for _, key, item in fresh:
        if (item is None) != (op == "create"):
            try:
                check_new(table, op, key, item)
            except TabletalkError as exc:
                errors.append(exc)
    updates: list[tuple[Any, ...]] = []
    by_key: dict[str, StagedChange] = {}
    for item_key, key, _ in entries:
        existing = staged.get(item_key)
        if existing is None:
            continue
        try:
            if item_key in in_commit:
                raise in_commit_error(existing.id)
            if own_only and existing.origin != origin:
                raise others_change_error(table, key, existing, origin)
            change = fold(existing, table, op, key, values)
        except TabletalkError as exc:
            errors.append(exc)
            continue
        change = dataclasses.replace(change, origin=joined_origin(existing.origin, origin))
        by_key[item_key] = change
        updates.append(
            (
                change.op,
                dumps(change.values),
                maybe_json(change.pre_image),
                change.origin,
                change.id,
            )
        )
    if errors:
        raise errors[0] if len(entries) == 1 else summarize(errors, len(entries))
    count = len(fresh)
    ids = take_ids(count, lambda candidates: existing_ids(conn, candidates))
    item_keys = [e[0] for e in fresh]
    pre_images = [None] * count if op == "create" else [e[2] for e in fresh]
    pre_jsons = [None] * count if op == "create" else list(map(dumps, pre_images))
    inserts = zip(
        ids, repeat(identity), repeat(table), item_keys, repeat(op),
        repeat(dumps(values)), pre_jsons, repeat(origin), repeat(now),
    )  # fmt: skip
    created = map(
        StagedChange, ids, repeat(identity), repeat(table), [e[1] for e in fresh],
        repeat(op), map(dict, repeat(values, count)), pre_images, repeat(origin),
        repeat(now),
    )  # fmt: skip
    if not by_key:
        results = list(created)
    else:
        by_key.update(zip(item_keys, created, strict=True))
        results = [by_key[e[0]] for e in entries]
    conn.executemany(
        "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, "
        "pre_image_json, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        inserts,
    )
    conn.executemany(
        "UPDATE staged_changes SET op = ?, values_json = ?, pre_image_json = ?, "
        "origin = ? WHERE id = ?",
        updates,
    )
    return results


def staged_rows(
    conn: sqlite3.Connection, identity: str, table: str, item_keys: list[str]
) -> list[Any]:
    """Rows already staged for these items of `table` (few keys: by index; many: the table)."""
    sql = f"SELECT {COLUMNS} FROM staged_changes WHERE store = ? AND tbl = ?"
    params: list[Any] = [identity, table]
    if len(item_keys) > 500:
        return conn.execute(sql, params).fetchall()
    marks = ", ".join("?" * len(item_keys))
    return conn.execute(f"{sql} AND key_json IN ({marks})", params + item_keys).fetchall()


def existing_ids(conn: sqlite3.Connection, candidates: list[str]) -> set[str]:
    """Which of `candidates` are already ids in the staging database."""
    if len(candidates) > 500:  # many: reading every id is cheaper when there are fewer
        (total,) = conn.execute("SELECT count(*) FROM staged_changes").fetchone()
        if total <= len(candidates):
            every = {r[0] for r in conn.execute("SELECT id FROM staged_changes")}
            return every.intersection(candidates)
    rows = rows_in(conn, "SELECT id FROM staged_changes WHERE id IN ({marks})", candidates)
    return {r[0] for r in rows}


def staged_by_id(conn: sqlite3.Connection, store: str, ids: list[str]) -> list[StagedChange]:
    """Those of the changes `ids` of `store` that are staged now (in no particular order)."""
    # By the id index: neither the store index (every change of the store) nor a seq sort.
    sql = f"SELECT {COLUMNS} FROM staged_changes WHERE +store = ? AND id IN ({{marks}})"
    return [row_to_change(r) for r in rows_in(conn, sql, ids, store)]


def moved_since(conn: sqlite3.Connection, store: str, read: list[StagedChange]) -> list[str]:
    """Ids of the changes `read` earlier that are no longer staged with the same op and values
    (committed, discarded or folded into since): call inside the transaction that acts on them.
    A bulk edit's changes share one values text, decoded once."""
    sql = "SELECT id, op, values_json FROM staged_changes WHERE +store = ? AND id IN ({marks})"
    now = {id_: (op, values) for id_, op, values in rows_in(conn, sql, [c.id for c in read], store)}
    decoded: dict[str, Any] = {}
    moved = []
    for change in read:
        found = now.get(change.id)
        if found is None or found[0] != change.op:
            moved.append(change.id)
            continue
        text = found[1]
        if text not in decoded:
            decoded[text] = loads(text)
        if decoded[text] != change.values:
            moved.append(change.id)
    return moved


def unseen_since(conn: sqlite3.Connection, store: str, read: list[StagedChange]) -> int:
    """How many of the store's staged changes are not among `read` (staged since it was read),
    assuming none of `read` moved (`moved_since`); call inside the acting transaction."""
    staged: int = conn.execute(
        "SELECT count(*) FROM staged_changes WHERE store = ?", (store,)
    ).fetchone()[0]
    return staged - len({c.id for c in read})


def check_as_shown(conn: sqlite3.Connection, store: str, shown: list[StagedChange]) -> None:
    """Inside a commit's transaction: StagedSetMoved when the store's staged changes are no
    longer exactly `shown` (one moved, or another was staged since a person reviewed them)."""
    moved = moved_since(conn, store, shown)
    if moved:
        raise StagedSetMoved(
            f"{len(moved):,} of the changes shown were committed, discarded or changed by "
            "another process meanwhile; nothing was committed",
            fix="Look at the staged changes again, then commit.",
        )
    unseen = unseen_since(conn, store, shown)
    if unseen > 0:
        raise StagedSetMoved(
            f"{unseen:,} {noun(unseen, 'change was', 'changes were')} staged by another "
            "process since the changes were shown; nothing was committed",
            fix="Look at the staged changes again, then commit.",
        )


def item_entries(
    store: Store, shape: TableShape, raw_keys: list[Key]
) -> list[tuple[str, Key, Item | None]]:
    """(key JSON, key, current item or None) once per item `raw_keys` names, in order: the
    entries `write_changes` takes. A found item's own key is used (the store's normal form)."""
    items = store.get_items(shape.name, raw_keys)  # checks the keys
    required = frozenset(shape.key_columns)
    unique: dict[str, tuple[Key, Item | None]] = {}
    for raw, item in zip(raw_keys, items, strict=True):
        if item is not None and item.keys() >= required:
            key = {k: item[k] for k in shape.key_columns}
        else:
            key = store.normalize_key(shape.name, raw)
        unique.setdefault(key_json(key), (key, item))
    return [(item_key, key, item) for item_key, (key, item) in unique.items()]


def discard_where(
    conn: sqlite3.Connection, store: str, table: str | None, origin: str | None
) -> int:
    """Delete `store`'s staged changes (of `table`, from `origin`, when given); how many."""
    sql, params = "DELETE FROM staged_changes WHERE store = ?", [store]
    if table is not None:
        sql += " AND tbl = ?"
        params.append(table)
    if origin is not None:
        sql += " AND origin = ?"
        params.append(origin)
    count = int(conn.execute(sql, params).rowcount)
    conflicts.prune(conn, store)
    return count


def reject_attribute(
    conn: sqlite3.Connection, store: str, change: StagedChange, attribute: str
) -> StagedChange | None:
    """Inside a write transaction: drop one attribute from `change` (an update or create read
    in it); None when an update lost its last attribute and was discarded."""
    change_id = change.id
    if change.op == "delete" or attribute not in change.values:
        what = "a delete has no attributes" if change.op == "delete" else (
            f"change {change_id} does not set {attribute!r}"
        )  # fmt: skip
        raise StagingError(
            what,
            fix=f"Attributes it sets: {', '.join(change.values) or 'none'}; to drop the "
            f"whole change, discard it (`tabletalk staged discard {change_id}`).",
        )
    values = {k: v for k, v in change.values.items() if k != attribute}
    if change_id in commits_in_progress(conn, store):
        raise in_commit_error(change_id)
    if change.op == "update" and not values:
        conn.execute("DELETE FROM staged_changes WHERE id = ?", (change_id,))
        conflicts.drop(conn, [change_id])
        return None
    conn.execute(
        "UPDATE staged_changes SET values_json = ? WHERE id = ?", (dumps(values), change_id)
    )
    return dataclasses.replace(change, values=values)
