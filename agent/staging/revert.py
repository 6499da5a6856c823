"""Stage the inverse of a commit: one new change per item the commit touched, each checked
against the commit's post-image, refused whole when any item already has a staged change."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from agent.errors import StagingError
from agent.staging.encoding import dumps, key_json, maybe_json, take_ids
from agent.staging.write import existing_ids
from agent.stores.base import Item, Key, Op

Inverse = tuple[str, Key, Op, Item, Any]
"""(table, key, op, values, pre-image) of one change undoing one change of a commit."""


def stage_inverses(
    conn: sqlite3.Connection, store: str, commit_id: str, inverses: list[Inverse], origin: str
) -> list[str]:
    """Insert `inverses` as staged changes of `store` (inside the caller's transaction);
    return their ids. The origin names the commit they revert."""
    now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    keyed = [
        (key_json(key), table, key, op, values, pre) for table, key, op, values, pre in inverses
    ]
    for item_key, table, key, *_ in keyed:
        taken = conn.execute(
            "SELECT id FROM staged_changes WHERE store = ? AND tbl = ? AND key_json = ?",
            (store, table, item_key),
        ).fetchone()
        if taken:
            raise StagingError(
                f"{table} {key} already has a staged change ({taken[0]}), so commit "
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
                f"{origin}:{commit_id}",
                now,
            )
            for id_, (item_key, table, _key, op, values, pre) in zip(ids, keyed, strict=True)
        ],
    )
    return ids
