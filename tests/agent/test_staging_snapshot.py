"""A set-based bulk edit records the store file's stamp (agent/stores/sqlite_snapshot.py); a
commit that finds the same stamp skips comparing each row, any other commit compares. These
tests change the store between staging and commit in the ways a stamp must notice, and check
that an older staging file (no stamp column) still shows, commits and reverts its changes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from agent.staging import StagingArea
from agent.staging.history import SCHEMA as HISTORY_SCHEMA
from agent.stores.sqlite import SQLiteStore

QUERY = "SELECT id FROM orders WHERE id <= 20"


def _set(path: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def test_a_row_changed_by_another_program_between_stage_and_commit_conflicts(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    staged = area.stage_many("orders", query=QUERY, set={"status": "held"})
    _set(demo_store.path, "UPDATE orders SET quantity = 99 WHERE id = 7")
    report = area.commit()
    assert [c.change_id for c in report.conflicts] == [staged[6].id]
    assert report.conflicts[0].current["quantity"] == 99  # type: ignore[index]
    assert area.count() == 20  # all or nothing: nothing landed
    assert demo_store.get_item("orders", {"id": 1})["status"] != "held"  # type: ignore[index]
    area.close()


def test_a_store_in_wal_mode_is_compared_row_by_row_and_a_change_conflicts(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    _set(demo_store.path, "PRAGMA journal_mode=WAL")
    store = SQLiteStore.open(demo_store.path)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    staged = area.stage_many("orders", query=QUERY, set={"status": "shipped"})
    conn = sqlite3.connect(demo_store.path)  # a writer that keeps its WAL open
    conn.execute("UPDATE orders SET total = total + 1 WHERE id = 3")
    conn.commit()
    report = area.commit()
    conn.close()
    assert [c.change_id for c in report.conflicts] == [staged[2].id]
    assert area.commit([c.id for c in staged if c.id != staged[2].id]).ok
    area.close()
    store.close()


def test_a_commit_leaves_staging_durable_for_the_next_stage(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    """Removing landed changes may skip its fsync (the record settles it); staging may not."""
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    area.stage_many("orders", query=QUERY, set={"status": "shipped"})
    assert area.commit().ok
    assert area._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # noqa: SLF001 - FULL
    area.close()


OLD_SCHEMA = """
CREATE TABLE staged_changes (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    store TEXT NOT NULL,
    tbl TEXT NOT NULL,
    key_json TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op = 'create' OR op = 'update' OR op = 'delete'),
    values_json TEXT NOT NULL,
    pre_image_json TEXT,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX staged_changes_item ON staged_changes (store, tbl, key_json);
CREATE TABLE commits_in_progress (
    token TEXT PRIMARY KEY,
    store TEXT NOT NULL,
    ids_json TEXT NOT NULL,
    started_at TEXT NOT NULL
);
"""


def test_an_older_staging_file_shows_commits_and_reverts_its_changes(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    path = tmp_path / "staging.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA + HISTORY_SCHEMA + "PRAGMA user_version = 2;")
    rows = [demo_store.get_item("orders", {"id": i}) for i in (3, 4)]
    conn.executemany(
        "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, "
        "pre_image_json, origin, created_at) VALUES (?, ?, 'orders', ?, 'update', "
        "'{\"status\":\"shipped\"}', ?, 'chat', '2026-03-15T10:00:00Z')",
        [
            (f"old{i}", demo_store.identity, json.dumps({"id": r["id"]}), json.dumps(r))  # type: ignore[index]
            for i, r in enumerate(rows)
        ],
    )
    conn.commit()
    conn.close()

    area = StagingArea(demo_store, path)
    assert [c.id for c in area.list()] == ["old0", "old1"]
    assert [(d.old, d.new) for d in area.diff(area.get("old1"))] == [
        (rows[1]["status"], "shipped")  # type: ignore[index]
    ]
    added = area.stage_many("orders", query="SELECT id FROM orders WHERE id IN (5, 6)", delete=True)
    report = area.commit()
    assert report.ok and report.committed == ["old0", "old1", *[c.id for c in added]]
    assert demo_store.get_item("orders", {"id": 3})["status"] == "shipped"  # type: ignore[index]
    assert rows[0]["status"] != "shipped"  # type: ignore[index]
    assert demo_store.get_item("orders", {"id": 5}) is None
    (entry,) = area.history()
    assert entry.changes == 4
    area.revert(entry.id)
    assert area.commit().ok
    assert [demo_store.get_item("orders", {"id": i}) for i in (3, 4)] == rows
    assert demo_store.get_item("orders", {"id": 5}) is not None
    area.close()


def test_real_keys_of_an_unchanged_file_commit_exactly_the_staged_rows(tmp_path: Path) -> None:
    """REAL keys are not taken from their JSON text (a parser may read one a bit off): such a
    commit is checked row by row and lands exactly the staged rows."""
    db = tmp_path / "reals.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE r (k REAL PRIMARY KEY, v TEXT) WITHOUT ROWID")
    keys = [0.1 + 0.2, 0.3, 1 / 3, 2.5e-308, 12345678901234567.0]
    conn.executemany("INSERT INTO r VALUES (?, 'old')", [(k,) for k in keys])
    conn.commit()
    conn.close()
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    staged = area.stage_many("r", query="SELECT k FROM r WHERE k < 1", set={"v": "new"})
    assert sorted(c.key["k"] for c in staged) == sorted(k for k in keys if k < 1)
    assert area.commit().ok
    after = {row["k"]: row["v"] for row in store.query("SELECT k, v FROM r").rows}
    assert after == {k: "new" if k < 1 else "old" for k in keys}
    area.close()
    store.close()


def test_a_change_made_in_wal_mode_then_switched_back_still_conflicts(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    """Another program switches the file to WAL, writes, and switches back: its WAL commits
    need not touch the change counter, but the two switches do, so the stamp differs."""
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    staged = area.stage_many("orders", query=QUERY, set={"status": "held"})
    conn = sqlite3.connect(demo_store.path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("UPDATE orders SET quantity = 98 WHERE id = 4")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    report = area.commit()
    assert [c.change_id for c in report.conflicts] == [staged[3].id]
    assert area.count() == 20
    area.close()


def test_a_change_written_through_a_connection_in_exclusive_locking_mode_conflicts(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    """Exclusive locking mode bumps the counter once for all its transactions: once is enough."""
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    staged = area.stage_many("orders", query=QUERY, set={"status": "held"})
    conn = sqlite3.connect(demo_store.path, isolation_level=None)
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("UPDATE orders SET quantity = 97 WHERE id = 5")
    conn.execute("UPDATE orders SET quantity = 96 WHERE id = 6")
    conn.close()
    report = area.commit()
    assert sorted(c.change_id for c in report.conflicts) == sorted([staged[4].id, staged[5].id])
    area.close()
