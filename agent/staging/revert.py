"""Stage the inverse of a commit: one new change per item the commit touched, each checked
against the commit's post-image, refused whole when any item already has a staged change or
would have to restore a blob (the history keeps a blob's fingerprint, not its bytes)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from agent.errors import StagingError
from agent.staging.db import rows_in
from agent.staging.encoding import dumps, key_json, maybe_json, take_ids
from agent.staging.history import REVERT_ORIGIN
from agent.staging.write import existing_ids
from agent.stores.base import Item, Key, Op
from agent.stores.sqlite_readonly import BLOB_MARKER

Inverse = tuple[str, Key, Op, Item, Any]
"""(table, key, op, values, pre-image) of one change undoing one change of a commit."""


def stage_inverses(
    conn: sqlite3.Connection, store: str, commit_id: str, inverses: list[Inverse]
) -> list[str]:
    """Insert `inverses` as staged changes of `store` (inside the caller's transaction);
    return their ids. Their origin, `revert:COMMIT`, names the commit they revert (the history
    reads it back to mark both commits)."""
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    keyed = [
        (key_json(key), table, key, op, values, pre) for table, key, op, values, pre in inverses
    ]
    for table, key, _op, values, _pre in inverses:
        blob = next((c for c, v in values.items() if _is_blob_marker(v)), None)
        if blob is not None:
            raise StagingError(
                f"{table} {key}: column {blob!r} held a blob, which the history keeps only as "
                f"its fingerprint ({values[blob]}), so commit {commit_id} cannot be reverted",
                fix="Restore that row from a backup of the database; nothing was staged.",
            )
    taken = _staged_ids(conn, store, [(table, item_key) for item_key, table, *_ in keyed])
    for item_key, table, key, *_ in keyed:
        if (table, item_key) in taken:
            raise StagingError(
                f"{table} {key} already has a staged change ({taken[table, item_key]}), so commit "
                f"{commit_id} cannot be reverted on top of it",
                fix="Commit or discard that change first (`tabletalk staged list`), "
                "then revert again.",
            )
    ids = take_ids(len(keyed), lambda candidates: existing_ids(conn, candidates))
    conn.executemany(
        "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, "
        "pre_image_json, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                id_,
                store,
                table,
                item_key,
                op,
                dumps(values),
                maybe_json(pre),
                REVERT_ORIGIN + commit_id,
                now,
            )
            for id_, (item_key, table, _key, op, values, pre) in zip(ids, keyed, strict=True)
        ],
    )
    return ids


def _is_blob_marker(value: object) -> bool:
    """True for the text a blob is shown and logged as (`<blob N bytes sha256:…>`)."""
    return (
        isinstance(value, str)
        and value.startswith("<blob ")
        and BLOB_MARKER.fullmatch(value) is not None
    )


def _staged_ids(
    conn: sqlite3.Connection, store: str, items: list[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """The staged change's id of each (table, key text) of `items` that has one, found with a
    few IN lookups per table instead of one statement per item."""
    by_table: dict[str, list[str]] = {}
    for table, item_key in items:
        by_table.setdefault(table, []).append(item_key)
    found: dict[tuple[str, str], str] = {}
    for table, keys in by_table.items():
        sql = "SELECT key_json, id FROM staged_changes WHERE store = ? AND tbl = ? AND key_json IN ({marks})"
        rows = rows_in(conn, sql, keys, store, table)
        found.update(((table, item_key), id_) for item_key, id_ in rows)
    return found
