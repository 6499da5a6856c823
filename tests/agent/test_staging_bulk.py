"""Bulk staging: keys or a read-only query, one change on many items, all or nothing, ≤ 10,000."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.errors import BadKeyError, ReadOnlyQueryError, StagingError
from agent.staging import MAX_ITEMS_PER_CALL, StagingArea
from agent.stores.demo import build_demo_db
from agent.stores.sqlite import SQLiteStore


@pytest.fixture
def area(demo_store: SQLiteStore, tmp_path: Path) -> StagingArea:
    staging = StagingArea(demo_store, tmp_path / "staging.sqlite")
    yield staging
    staging.close()


def test_stage_many_by_query(area: StagingArea) -> None:
    pending = area.store.count("orders", "status = 'pending'")
    changes = area.stage_many(
        "orders", query="SELECT id FROM orders WHERE status = 'pending'", set={"status": "shipped"}
    )
    assert len(changes) == pending == area.count()
    assert all(c.op == "update" and c.pre_image["status"] == "pending" for c in changes)
    report = area.commit()
    assert report.ok and area.store.count("orders", "status = 'pending'") == 0


def test_stage_many_by_keys_with_delete(area: StagingArea) -> None:
    changes = area.stage_many("orders", keys=[{"id": 1}, {"id": "2"}, {"id": 2}], delete=True)
    assert [c.key for c in changes] == [{"id": 1}, {"id": 2}]
    assert area.commit().ok
    assert area.store.count("orders", "id IN (1, 2)") == 0


def test_composite_keys_from_a_query(area: StagingArea) -> None:
    changes = area.stage_many(
        "stock_levels",
        query="SELECT product_id, warehouse FROM stock_levels WHERE warehouse = 'north'",
        set={"quantity": 0},
    )
    assert changes and all(list(c.key) == ["warehouse", "product_id"] for c in changes)
    assert area.commit().ok
    assert area.store.count("stock_levels", "warehouse = 'north' AND quantity != 0") == 0


def test_arguments_must_be_exactly_one_of_each(area: StagingArea) -> None:
    with pytest.raises(StagingError, match="exactly one of keys or query"):
        area.stage_many("orders", set={"status": "x"})
    with pytest.raises(StagingError, match="exactly one of keys or query"):
        area.stage_many("orders", keys=[{"id": 1}], query="SELECT id FROM orders", delete=True)
    with pytest.raises(StagingError, match="exactly one of set"):
        area.stage_many("orders", keys=[{"id": 1}])
    with pytest.raises(StagingError, match="exactly one of set"):
        area.stage_many("orders", keys=[{"id": 1}], set={"status": "x"}, delete=True)


def test_query_must_return_key_columns(area: StagingArea) -> None:
    with pytest.raises(StagingError) as caught:
        area.stage_many("orders", query="SELECT status FROM orders", set={"status": "x"})
    assert "key columns" in caught.value.message and "SELECT id FROM orders" in caught.value.fix


def test_query_is_read_only(area: StagingArea) -> None:
    with pytest.raises(ReadOnlyQueryError):
        area.stage_many("orders", query="DELETE FROM orders RETURNING id", set={"status": "x"})
    assert area.store.count("orders") >= 2000


def test_a_missing_key_stages_nothing(area: StagingArea) -> None:
    with pytest.raises(BadKeyError) as caught:
        area.stage_many("orders", keys=[{"id": 1}, {"id": 999999}], set={"status": "x"})
    assert "1 of 2 items cannot be staged" in caught.value.message
    assert area.count() == 0


def test_more_than_the_limit_stages_nothing(tmp_path: Path) -> None:
    db = build_demo_db(tmp_path / "big.sqlite", orders=MAX_ITEMS_PER_CALL + 1)
    staging = StagingArea(SQLiteStore.open(db), tmp_path / "staging.sqlite")
    with pytest.raises(StagingError) as caught:
        staging.stage_many("orders", query="SELECT id FROM orders", set={"status": "x"})
    assert "10,000" in caught.value.message and "narrow" in caught.value.fix.lower()
    keys = [{"id": i} for i in range(1, MAX_ITEMS_PER_CALL + 2)]
    with pytest.raises(StagingError, match="10,000"):
        staging.stage_many("orders", keys=keys, delete=True)
    assert staging.count() == 0
    changes = staging.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 10000", set={"status": "x"}
    )
    assert len(changes) == MAX_ITEMS_PER_CALL == staging.count()
    assert staging.commit().ok
    assert staging.store.count("orders", "status = 'x'") == MAX_ITEMS_PER_CALL


def test_bulk_folds_into_already_staged_items(area: StagingArea) -> None:
    earlier = area.stage("orders", "update", {"id": 2}, {"quantity": 9})
    changes = area.stage_many("orders", keys=[{"id": 1}, {"id": 2}, {"id": 3}], set={"status": "x"})
    assert [c.key["id"] for c in changes] == [1, 2, 3]
    assert changes[1].id == earlier.id and changes[1].values == {"quantity": 9, "status": "x"}
    assert area.count() == 3
    changes[0].values["status"] = "mutated"  # a returned change is a snapshot, not shared state
    assert changes[2].values == {"status": "x"}
    assert area.get(changes[0].id).values == {"status": "x"}


def test_over_the_limit_is_one_clear_sentence(area: StagingArea) -> None:
    keys = [{"id": i} for i in range(1, MAX_ITEMS_PER_CALL + 2)]
    with pytest.raises(StagingError) as caught:
        area.stage_many("orders", keys=keys, set={"status": "x"})
    assert caught.value.message == (
        "the selection matches 10,001 items; bulkEdit stages at most 10,000 per call, "
        "so nothing was staged"
    )


def _wal_pages(area: StagingArea) -> int:
    """Pages the staging database's WAL holds: it only grows while no checkpoint runs (the area
    checkpoints every 4,096 pages)."""
    conn = sqlite3.connect(area.path)
    try:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    finally:
        conn.close()
    wal = area.path.with_name(area.path.name + "-wal")
    return (wal.stat().st_size - 32) // (page_size + 24)  # the header, then (frame header, page)


def _pages(area: StagingArea, *tables: str) -> int:
    conn = sqlite3.connect(area.path)
    try:
        marks = ", ".join("?" * len(tables))
        sql = (
            "SELECT count(*) FROM dbstat WHERE name IN "
            f"(SELECT name FROM sqlite_master WHERE tbl_name IN ({marks}))"
        )
        return int(conn.execute(sql, tables).fetchone()[0])
    finally:
        conn.close()


def test_a_commit_does_not_rewrite_the_pages_its_landed_changes_leave(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    """Committing a bulk edit writes its history, not the emptied staging pages again (SQLite
    builds with secure_delete on would zero each one through the WAL: twice the writes)."""
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    try:
        area.stage_many("orders", query="SELECT id FROM orders", set={"status": "shipped"})
        area.review()  # a review screen turns the compact bulk edit into staged rows
        staged_pages = _pages(area, "staged_changes")
        before = _wal_pages(area)
        assert area.commit().ok and area.count() == 0
        written = _wal_pages(area) - before
        history_pages = _pages(area, "commit_log_changes")
        assert written < history_pages + staged_pages // 4 + 10, (written, history_pages)
    finally:
        area.close()


def test_committing_a_bulk_edit_as_staged_keeps_it_as_history_without_copying_it(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    """A bulk edit committed as it was staged is not copied into the history: the commit writes
    a few pages (its record, the log), far fewer than the edit's items fill, and the history
    still shows every change with its pre-image."""
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    try:
        staged = area.stage_many("orders", query="SELECT id FROM orders", set={"status": "x"})
        item_pages = _pages(area, "staged_batch_1")
        before = _wal_pages(area)
        assert area.commit().ok and area.count() == 0
        written = _wal_pages(area) - before
        assert written < 20 < item_pages * 3, (written, item_pages)
        (entry,) = area.history()
        assert entry.changes == len(staged) and entry.tables == ("orders",)
        _, logged = area.commit_entry(entry.id)
        assert [(c.key, c.pre_image) for c in logged] == [(c.key, c.pre_image) for c in staged]
    finally:
        area.close()


def test_a_bulk_edit_refuses_to_copy_a_huge_column_name_into_every_pre_image(
    tmp_path: Path,
) -> None:
    """Each pre-image names every column: with a 512 KB column name, 200 staged rows took
    100 MB (300 rows of a 1 MB name: 300 MB, 11.6 s). Such an edit is refused before anything
    is read, by keys or by query, with the number of rows that fits; a smaller one stages."""
    path = tmp_path / "wide.sqlite"
    huge = "c" * 512 * 1024
    with sqlite3.connect(path) as connection:
        connection.execute(f'CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT, "{huge}" TEXT)')
        connection.executemany(
            "INSERT INTO t (id, note) VALUES (?, ?)", [(i, f"n{i}") for i in range(200)]
        )
    connection.close()
    store = SQLiteStore.open(path)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    keys = [{"id": i} for i in range(200)]
    for selection in ({"keys": keys}, {"query": "SELECT id FROM t"}):
        with pytest.raises(StagingError) as caught:
            area.stage_many("t", **selection, set={"note": "x"})  # type: ignore[arg-type]
        assert "over the 64 MB limit" in caught.value.message
        assert "nothing was staged" in caught.value.message
        assert caught.value.fix and "at most 127 items per call" in caught.value.fix
        assert area.count() == 0
    staged = area.stage_many("t", keys=keys[:3], set={"note": "x"})
    assert [c.pre_image[huge] for c in staged if c.pre_image] == [None, None, None]
    area.close()
    store.close()
