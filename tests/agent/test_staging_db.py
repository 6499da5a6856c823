"""The staging database file: an older file's slow op CHECK is rebuilt, keeping every change."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agent.staging import StagingArea
from agent.staging.db import SCHEMA_VERSION
from agent.stores.sqlite import SQLiteStore

OLD_TABLE = """
CREATE TABLE staged_changes (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    store TEXT NOT NULL,
    tbl TEXT NOT NULL,
    key_json TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete')),
    values_json TEXT NOT NULL,
    pre_image_json TEXT,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX staged_changes_item ON staged_changes (store, tbl, key_json);
PRAGMA user_version = 1;
"""


def test_an_older_staging_file_keeps_its_changes_and_loses_the_slow_check(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    path = tmp_path / "staging.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_TABLE)
    pre = demo_store.get_item("orders", {"id": 3})
    conn.execute(
        "INSERT INTO staged_changes (seq, id, store, tbl, key_json, op, values_json, "
        "pre_image_json, origin, created_at) VALUES (7, 'abcd1234', ?, 'orders', '{\"id\":3}', "
        "'update', '{\"status\":\"shipped\"}', ?, 'chat', '2026-03-15T10:00:00Z')",
        (demo_store.identity, json.dumps(pre)),
    )
    conn.commit()
    conn.close()

    area = StagingArea(demo_store, path)
    (change,) = area.list()
    assert change.id == "abcd1234" and change.values == {"status": "shipped"}
    later = area.stage("orders", "update", {"id": 4}, {"status": "shipped"})
    assert [c.id for c in area.list()] == ["abcd1234", later.id]  # staging order kept
    check = sqlite3.connect(path)
    sql = check.execute("SELECT sql FROM sqlite_master WHERE name = 'staged_changes'").fetchone()
    assert "op IN (" not in sql[0]
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with pytest.raises(sqlite3.IntegrityError):  # the CHECK still refuses other ops
        check.execute(
            "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, origin, "
            "created_at) VALUES ('x', 's', 't', '{}', 'upsert', '{}', 'o', 'now')"
        )
    with pytest.raises(sqlite3.IntegrityError):  # the item index is back
        check.execute(
            "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, origin, "
            "created_at) VALUES ('y', ?, 'orders', '{\"id\":3}', 'delete', '{}', 'o', 'now')",
            (demo_store.identity,),
        )
    check.close()
    assert area.commit().ok and area.count() == 0
    area.close()
    reopened = StagingArea(demo_store, path)  # reopening is a no-op
    assert reopened.count() == 0
    reopened.close()


def test_many_openers_of_a_new_staging_db_at_once_all_succeed(tmp_path: Path) -> None:
    import threading

    from agent.staging.db import open_staging_db

    for round_number in range(5):
        path = tmp_path / f"race{round_number}" / "staging.sqlite"
        errors: list[BaseException] = []
        start = threading.Barrier(4)

        def opener(
            start: threading.Barrier = start, path: Path = path, errors: list = errors
        ) -> None:
            try:
                start.wait()
                open_staging_db(path).close()
            except BaseException as exc:  # noqa: BLE001 - collected for the assert
                errors.append(exc)

        threads = [threading.Thread(target=opener) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_staging_file_deleted_or_replaced_while_open_is_followed(
    demo_store: SQLiteStore, tmp_path: Path, how: str
) -> None:
    """Another program deletes (or swaps) the staging file while the app has it open. A change
    staged afterwards must reach the file at the path, which every other process reads (and
    which outlives this one), not the unlinked file only the app still holds."""
    path = tmp_path / "staging.sqlite"
    app = StagingArea(demo_store, path)
    app.stage("orders", "update", {"id": 1}, {"status": "cancelled"})
    for side in ("", "-wal", "-shm"):
        path.with_name(path.name + side).unlink(missing_ok=True)
    if how == "replaced":
        other = StagingArea(demo_store, tmp_path / "other.sqlite")
        other.stage("orders", "update", {"id": 2}, {"status": "cancelled"})
        other.close()
        for side in ("", "-wal", "-shm"):
            source = tmp_path / f"other.sqlite{side}"
            if source.exists():
                source.rename(path.with_name(path.name + side))
    app.stage("orders", "update", {"id": 3}, {"status": "cancelled"})
    expected = [2, 3] if how == "replaced" else [3]
    assert [c.key["id"] for c in app.list()] == expected
    assert any(how in notice for notice in app.take_notices())
    cli = StagingArea(demo_store, path)
    assert [c.key["id"] for c in cli.list()] == expected
    cli.close()
    app.close()


@pytest.mark.parametrize("dropped", ["staged_changes_item", "commit_log_store", "commit_log"])
def test_a_staging_file_missing_part_of_its_schema_gets_it_back_on_open(
    demo_store: SQLiteStore, tmp_path: Path, dropped: str
) -> None:
    """A file whose item index (or history) had gone opened as if whole: the same item could
    then be staged twice, two changes the commit would apply one after the other."""
    path = tmp_path / "staging.sqlite"
    area = StagingArea(demo_store, path)
    area.stage("orders", "update", {"id": 3}, {"status": "held"})
    area.close()
    with sqlite3.connect(path) as conn:
        kind = "INDEX" if dropped.endswith("_store") or dropped.endswith("_item") else "TABLE"
        conn.execute(f"DROP {kind} {dropped}")

    area = StagingArea(demo_store, path)
    area.stage("orders", "update", {"id": 3}, {"status": "shipped"})
    (change,) = area.list()  # folded into the one change, not a second one
    assert change.values == {"status": "shipped"}
    assert area.commit().ok and area.count() == 0
    assert demo_store.get_item("orders", {"id": 3})["status"] == "shipped"
    area.close()
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert dropped in names
