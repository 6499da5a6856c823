"""The staging area: staging checks, one change per item, review edits, scoping, and commits."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from agent import paths
from agent.errors import BadKeyError, StagingError, StoreError, UnknownColumnError
from agent.staging import AttributeDiff, StagingArea
from agent.stores.sqlite import SQLiteStore


@pytest.fixture
def area(demo_store: SQLiteStore, tmp_path: Path) -> StagingArea:
    staging = StagingArea(demo_store, tmp_path / "staging.sqlite")
    yield staging
    staging.close()


def change_behind_its_back(store: SQLiteStore, sql: str, *params: object) -> None:
    """Write to the database from another connection, as another program would."""
    conn = sqlite3.connect(store.path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


# -- staging ------------------------------------------------------------------------------------


def test_stage_update_records_pre_image_and_json_shape(area: StagingArea) -> None:
    before = area.store.get_item("orders", {"id": 5})
    change = area.stage("orders", "update", {"id": "5"}, {"STATUS": "shipped"}, origin="chat")
    assert change.key == {"id": 5}
    assert change.values == {"status": "shipped"}
    assert change.pre_image == before
    assert change.store == area.store.identity
    as_json = change.to_dict()
    assert set(as_json) == {"id", "table", "key", "op", "values", "pre_image", "origin", "time"}
    assert as_json["origin"] == "chat" and as_json["time"].endswith("Z")
    assert area.store.get_item("orders", {"id": 5}) == before  # nothing written yet


def test_default_path_is_the_state_dir(demo_store: SQLiteStore) -> None:
    staging = StagingArea(demo_store)
    staging.stage("orders", "delete", {"id": 1})
    assert staging.path == paths.staging_db_path() and staging.path.exists()
    staging.close()


def test_update_or_delete_of_missing_item_is_refused(area: StagingArea) -> None:
    with pytest.raises(BadKeyError) as caught:
        area.stage("orders", "update", {"id": 987654}, {"status": "x"})
    assert "no item with key id=987654 in table orders" in caught.value.message
    assert "use op create" in caught.value.message
    with pytest.raises(BadKeyError) as caught:
        area.stage("orders", "delete", {"id": 987654})
    assert "no item with key id=987654 in table orders" in caught.value.message
    assert "nothing to delete" in caught.value.message
    assert "create" not in caught.value.message + caught.value.fix
    assert area.count() == 0


def test_create_on_existing_key_is_refused(area: StagingArea) -> None:
    with pytest.raises(BadKeyError, match="already exists"):
        area.stage("orders", "create", {"id": 1}, {"status": "pending"})


def test_bad_values_are_refused(area: StagingArea) -> None:
    with pytest.raises(UnknownColumnError) as caught:
        area.stage("orders", "update", {"id": 1}, {"colour": "red"})
    assert "status" in caught.value.fix
    with pytest.raises(StagingError, match="at least one attribute"):
        area.stage("orders", "update", {"id": 1}, {})
    with pytest.raises(BadKeyError, match="cannot change the key"):
        area.stage("orders", "update", {"id": 1}, {"id": 2})
    with pytest.raises(StagingError, match="unknown op"):
        area.stage("orders", "upsert", {"id": 1}, {"status": "x"})  # type: ignore[arg-type]
    with pytest.raises(StagingError, match="no values"):
        area.stage("orders", "delete", {"id": 1}, {"status": "x"})
    assert area.count() == 0


def test_create_and_its_diff(area: StagingArea) -> None:
    change = area.stage(
        "stock_levels",
        "create",
        {"warehouse": "east", "product_id": 1},
        {"quantity": 5, "updated_at": "2026-03-15T10:00:00"},
    )
    assert change.pre_image is None
    diff = area.diff(change)
    assert AttributeDiff("warehouse", None, "east") in diff
    assert AttributeDiff("quantity", None, 5) in diff


def test_diffs_of_update_and_delete(area: StagingArea) -> None:
    row = area.store.get_item("orders", {"id": 2})
    update = area.stage("orders", "update", {"id": 2}, {"quantity": 42})
    assert area.diff(update) == [AttributeDiff("quantity", row["quantity"], 42)]
    delete = area.stage("orders", "delete", {"id": 3})
    old = area.store.get_item("orders", {"id": 3})
    assert area.diff(delete) == [AttributeDiff(k, v, None) for k, v in old.items()]


def test_second_update_on_an_item_merges_into_the_first(area: StagingArea) -> None:
    first = area.stage("orders", "update", {"id": 7}, {"status": "shipped"})
    second = area.stage("orders", "update", {"id": 7}, {"quantity": 3, "status": "delivered"})
    assert second.id == first.id and second.pre_image == first.pre_image
    assert second.values == {"status": "delivered", "quantity": 3}
    assert area.count() == 1
    deleted = area.stage("orders", "delete", {"id": 7})
    assert deleted.id == first.id and deleted.op == "delete" and deleted.values == {}
    with pytest.raises(StagingError, match="staged for deletion"):
        area.stage("orders", "update", {"id": 7}, {"quantity": 1})


def test_update_on_a_staged_create_folds_into_it(area: StagingArea) -> None:
    key = {"warehouse": "east", "product_id": 2}
    created = area.stage("stock_levels", "create", key, {"quantity": 1, "updated_at": "t"})
    updated = area.stage("stock_levels", "update", key, {"quantity": 9})
    assert updated.id == created.id and updated.op == "create"
    assert updated.values == {"quantity": 9, "updated_at": "t"}
    with pytest.raises(StagingError, match="only exists as staged create"):
        area.stage("stock_levels", "delete", key)


def test_list_get_count_and_unknown_ids(area: StagingArea) -> None:
    a = area.stage("orders", "update", {"id": 1}, {"quantity": 1})
    b = area.stage("customers", "update", {"id": 1}, {"city": "Oslo"})
    assert [c.id for c in area.list()] == [a.id, b.id]
    assert [c.id for c in area.list("customers")] == [b.id]
    assert area.get(a.id) == a
    assert area.count() == 2
    with pytest.raises(StagingError) as caught:
        area.get("nope")
    assert "tabletalk staged list" in caught.value.fix


def test_reject_attribute(area: StagingArea) -> None:
    change = area.stage("orders", "update", {"id": 1}, {"quantity": 1, "status": "shipped"})
    kept = area.reject_attribute(change.id, "quantity")
    assert kept is not None and kept.values == {"status": "shipped"}
    assert area.get(change.id).values == {"status": "shipped"}
    with pytest.raises(StagingError, match="does not set"):
        area.reject_attribute(change.id, "quantity")
    assert area.reject_attribute(change.id, "status") is None
    assert area.count() == 0


def test_discard_variants(area: StagingArea) -> None:
    a = area.stage("orders", "update", {"id": 1}, {"quantity": 1})
    area.stage("orders", "update", {"id": 2}, {"quantity": 2})
    c = area.stage("customers", "update", {"id": 1}, {"city": "Oslo"})
    area.stage("customers", "update", {"id": 2}, {"city": "Oslo"})
    assert area.discard(ids=[a.id]) == 1
    with pytest.raises(StagingError):
        area.discard(ids=[a.id])
    assert area.discard(table="orders") == 1
    assert [x.id for x in area.list()][0] == c.id
    with pytest.raises(StagingError, match="say which"):
        area.discard()
    assert area.discard(all=True) == 2
    assert area.count() == 0


def test_each_store_sees_only_its_own_changes(demo_path: Path, tmp_path: Path) -> None:
    other_path = Path(shutil.copy(demo_path, tmp_path / "other.sqlite"))
    shared = tmp_path / "shared-staging.sqlite"
    one = StagingArea(SQLiteStore.open(demo_path), shared)
    two = StagingArea(SQLiteStore.open(other_path), shared)
    mine = one.stage("orders", "update", {"id": 1}, {"quantity": 5})
    theirs = two.stage("orders", "update", {"id": 1}, {"quantity": 6})
    assert [c.id for c in one.list()] == [mine.id]
    assert [c.id for c in two.list()] == [theirs.id]
    with pytest.raises(StagingError):
        one.get(theirs.id)
    assert one.discard(all=True) == 1
    assert two.count() == 1
    report = one.commit()
    assert report.committed == [] and two.count() == 1


# -- commits ------------------------------------------------------------------------------------


def test_commit_applies_and_empties_staging(area: StagingArea) -> None:
    area.stage("orders", "update", {"id": 1}, {"status": "cancelled"})
    area.stage("orders", "delete", {"id": 2})
    area.stage("products", "update", {"id": 1}, {"stock": 0})
    report = area.commit()
    assert report.ok and len(report.committed) == 3
    assert area.count() == 0
    store = area.store
    assert store.get_item("orders", {"id": 1})["status"] == "cancelled"
    assert store.get_item("orders", {"id": 2}) is None
    assert store.get_item("products", {"id": 1})["stock"] == 0


def test_commit_just_some_ids(area: StagingArea) -> None:
    a = area.stage("orders", "update", {"id": 1}, {"quantity": 11})
    b = area.stage("orders", "update", {"id": 2}, {"quantity": 12})
    assert area.commit([a.id]).committed == [a.id]
    assert [c.id for c in area.list()] == [b.id]
    with pytest.raises(StagingError):
        area.commit(["missing"])


def test_conflict_keeps_everything_staged_and_applies_nothing(area: StagingArea) -> None:
    store = area.store
    good_one = area.stage("orders", "update", {"id": 1}, {"quantity": 50})
    good_two = area.stage("orders", "delete", {"id": 2})
    bad = area.stage("orders", "update", {"id": 3}, {"quantity": 51})
    change_behind_its_back(store, "UPDATE orders SET status = 'lost' WHERE id = 3")
    before_one = store.get_item("orders", {"id": 1})
    report = area.commit()
    assert not report.ok and report.committed == []
    assert [c.change_id for c in report.conflicts] == [bad.id]
    assert report.conflicts[0].current["status"] == "lost"
    assert "status" in report.conflicts[0].reason
    assert store.get_item("orders", {"id": 1}) == before_one
    assert store.get_item("orders", {"id": 2}) is not None
    assert {c.id for c in area.list()} == {good_one.id, good_two.id, bad.id}


def test_create_conflict_when_someone_else_created_it(area: StagingArea) -> None:
    key = {"warehouse": "east", "product_id": 3}
    change = area.stage("stock_levels", "create", key, {"quantity": 1, "updated_at": "t"})
    change_behind_its_back(area.store, "INSERT INTO stock_levels VALUES ('east', 3, 77, 'x')")
    report = area.commit()
    assert [c.change_id for c in report.conflicts] == [change.id]
    assert report.conflicts[0].current["quantity"] == 77
    assert "already exists" in report.conflicts[0].reason
    assert area.count() == 1


def test_delete_conflict_when_item_is_gone(area: StagingArea) -> None:
    change = area.stage("orders", "update", {"id": 4}, {"quantity": 2})
    change_behind_its_back(area.store, "DELETE FROM orders WHERE id = 4")
    report = area.commit()
    assert report.conflicts[0].change_id == change.id
    assert report.conflicts[0].current is None
    assert "no longer exists" in report.conflicts[0].reason


def test_read_only_database_commit_fails_clearly_and_keeps_changes(
    read_only_demo: Path, tmp_path: Path
) -> None:
    store = SQLiteStore.open(read_only_demo)
    staging = StagingArea(store, tmp_path / "staging.sqlite")
    change = staging.stage("orders", "update", {"id": 1}, {"quantity": 3})
    with pytest.raises(StoreError) as caught:
        staging.commit()
    assert "nothing was committed" in caught.value.message
    assert [c.id for c in staging.list()] == [change.id]
    merged = staging.stage("orders", "update", {"id": 1}, {"status": "shipped"})
    assert merged.id == change.id  # the failed commit is settled, not left in doubt


def test_interrupted_commit_is_recognised_as_applied(area: StagingArea) -> None:
    """A crash after the store committed but before staging forgot the changes."""
    applied = area.stage("orders", "update", {"id": 1}, {"quantity": 77})
    not_applied = area.stage("orders", "update", {"id": 2}, {"quantity": 78})
    conn = sqlite3.connect(area.path)
    conn.execute(
        "INSERT INTO commits_in_progress VALUES ('crashed', ?, ?, 'then')",
        (area.store.identity, f'["{applied.id}", "{not_applied.id}"]'),
    )
    conn.commit()
    conn.close()
    change_behind_its_back(area.store, "UPDATE orders SET quantity = 77 WHERE id = 1")
    # Staging settles the interrupted commit first: the landed change leaves staging, so
    # this is a new change on top of the committed value, not folded into the landed one.
    again = area.stage("orders", "update", {"id": 1}, {"status": "x"})
    assert again.id != applied.id and again.pre_image["quantity"] == 77
    assert area.take_notices() == [
        "An interrupted commit was settled: 1 change had already landed in the table and "
        "left staging; 1 had not and are still staged."
    ]
    report = area.commit()
    assert report.ok and report.recovered == []
    assert set(report.committed) == {again.id, not_applied.id}
    assert area.store.get_item("orders", {"id": 2})["quantity"] == 78
    assert area.store.get_item("orders", {"id": 1})["status"] == "x"
    assert area.count() == 0


def test_rowid_tables_and_blobs_commit(tmp_path: Path) -> None:
    """Implicit-rowid keys work end to end; a blob's marker pre-image still commits cleanly."""
    path = tmp_path / "notes.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE notes (body TEXT, data BLOB);"
        "INSERT INTO notes VALUES ('one', x'0102'), ('two', NULL), ('three', x'ff');"
    )
    conn.commit()
    conn.close()
    store = SQLiteStore.open(path)
    staging = StagingArea(store, tmp_path / "staging.sqlite")
    staging.stage("notes", "update", {"rowid": 1}, {"body": "uno"})
    staging.stage("notes", "delete", {"rowid": "2"})
    staging.stage("notes", "create", {"rowid": 10}, {"body": "ten"})
    assert staging.commit().ok
    assert store.get_item("notes", {"rowid": 1})["body"] == "uno"
    assert store.get_item("notes", {"rowid": 1})["data"].startswith("<blob 2 bytes")
    assert store.get_item("notes", {"rowid": 2}) is None
    assert store.get_item("notes", {"rowid": 10}) == {"rowid": 10, "body": "ten", "data": None}
    staging.stage("notes", "update", {"rowid": 3}, {"body": "tres"})
    change_behind_its_back(store, "UPDATE notes SET data = x'fe' WHERE rowid = 3")
    report = staging.commit()
    assert not report.ok and "data" in report.conflicts[0].reason


def test_duplicate_changes_in_one_apply_are_checked_in_order(demo_store: SQLiteStore) -> None:
    """Two changes on one item in one commit: the second sees the first's result."""
    from agent.stores.base import ChangeToApply

    row = demo_store.get_item("orders", {"id": 1})
    first = ChangeToApply("a", "orders", {"id": 1}, "update", {"quantity": 100}, row)
    second = ChangeToApply("b", "orders", {"id": 1}, "update", {"quantity": 200}, row)
    result = demo_store.apply([first, second])
    assert result.applied == [] and [c.change_id for c in result.conflicts] == ["b"]
    assert result.conflicts[0].current["quantity"] == 100
    assert demo_store.get_item("orders", {"id": 1}) == row


def test_create_may_repeat_key_columns_only_with_the_same_value(area: StagingArea) -> None:
    key = {"warehouse": "east", "product_id": 4}
    same = {"Product_ID": "4", "quantity": 1, "updated_at": "t"}
    change = area.stage("stock_levels", "create", key, same)
    assert change.values == {"quantity": 1, "updated_at": "t"}
    with pytest.raises(BadKeyError, match="but the key says"):
        area.stage(
            "stock_levels", "create", {"warehouse": "east", "product_id": 5}, {"PRODUCT_ID": 6}
        )


def test_committing_one_store_keeps_the_other_stores_changes(
    demo_path: Path, tmp_path: Path
) -> None:
    other_path = Path(shutil.copy(demo_path, tmp_path / "other.sqlite"))
    shared = tmp_path / "shared-staging.sqlite"
    one = StagingArea(SQLiteStore.open(demo_path), shared)
    two = StagingArea(SQLiteStore.open(other_path), shared)
    one.stage_many("orders", keys=[{"id": i} for i in range(1, 51)], set={"quantity": 7})
    theirs = two.stage("orders", "update", {"id": 1}, {"quantity": 8})
    assert one.commit().ok and one.count() == 0
    assert [c.id for c in two.list()] == [theirs.id]
    assert two.store.get_item("orders", {"id": 1})["quantity"] != 7
