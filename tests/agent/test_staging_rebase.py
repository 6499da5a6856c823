"""Rebase ("take current"): after a conflict, a change can be made to apply on top of the
item's current value (`StagingArea.rebase`, `tabletalk staged rebase`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_cli_staged import cli


@pytest.fixture
def area(demo_path: Path) -> Iterator[StagingArea]:
    staging = StagingArea(SQLiteStore.open(demo_path))
    yield staging
    staging.close()
    staging.store.close()


def other_program(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql)
    conn.close()


def test_after_a_conflict_rebase_lets_the_change_commit_on_top(
    area: StagingArea, demo_path: Path
) -> None:
    change = area.stage("orders", "update", {"id": 1}, {"quantity": 50})
    other_program(demo_path, "UPDATE orders SET quantity = 7, status = 'held' WHERE id = 1")
    assert not area.commit().ok
    report = area.rebase([change.id])
    assert report.refreshed == [change.id] and report.dropped == []
    rebased = area.get(change.id)
    assert rebased.pre_image is not None and rebased.pre_image["quantity"] == 7
    assert rebased.values == {"quantity": 50}
    assert area.commit().ok
    item = area.store.get_item("orders", {"id": 1})
    assert (item["quantity"], item["status"]) == (50, "held")  # on top of the other edit


def test_rebase_drops_what_the_table_already_matches(area: StagingArea, demo_path: Path) -> None:
    same = area.stage("orders", "update", {"id": 2}, {"status": "done-elsewhere"})
    gone = area.stage("orders", "delete", {"id": 3})
    kept = area.stage("orders", "delete", {"id": 5})
    other_program(demo_path, "UPDATE orders SET status = 'done-elsewhere' WHERE id = 2")
    other_program(demo_path, "DELETE FROM orders WHERE id = 3")
    other_program(demo_path, "UPDATE orders SET quantity = quantity + 1 WHERE id = 5")
    report = area.rebase()
    assert set(report.dropped) == {same.id, gone.id} and report.refreshed == [kept.id]
    assert [c.id for c in area.list()] == [kept.id]
    assert area.commit().ok and area.store.get_item("orders", {"id": 5}) is None


def test_an_update_of_a_deleted_item_cannot_be_rebased(area: StagingArea, demo_path: Path) -> None:
    change = area.stage("orders", "update", {"id": 4}, {"quantity": 1})
    other_program(demo_path, "DELETE FROM orders WHERE id = 4")
    code, out, _ = cli("staged", "rebase", change.id, "--db", str(demo_path))
    assert code == 1
    assert "Rebased 0 changes" in out and "could not rebase 1" in out
    assert f"{change.id}: the item no longer exists; discard the change" in out
    assert area.get(change.id).pre_image == change.pre_image  # untouched


def test_cli_commit_conflict_advice_names_rebase_and_it_works(
    area: StagingArea, demo_path: Path
) -> None:
    area.stage("customers", "update", {"id": 4}, {"name": "Mine"})
    other_program(demo_path, "UPDATE customers SET name = 'Theirs' WHERE id = 4")
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 1 and f"`tabletalk staged rebase ID --db {demo_path}` (or --all)" in out
    code, out, _ = cli("staged", "rebase", "--all", "--db", str(demo_path))
    assert code == 0 and out.strip() == "Rebased 1 change onto the current values."
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 0 and out.startswith("Committed 1 change ")
    assert area.store.get_item("customers", {"id": 4})["name"] == "Mine"


def test_a_create_whose_key_was_taken_becomes_an_update_of_that_item(
    area: StagingArea, demo_path: Path
) -> None:
    values = {"name": "Nine", "email": "n@x", "city": "Oslo", "created_at": "2026-01-01"}
    change = area.stage("customers", "create", {"id": 900}, values)
    other_program(
        demo_path, "INSERT INTO customers VALUES (900, 'Other', 'o@x', 'Rome', '2026-01-02')"
    )
    assert not area.commit().ok
    assert area.rebase([change.id]).refreshed == [change.id]
    rebased = area.get(change.id)
    assert rebased.op == "update" and rebased.pre_image["name"] == "Other"
    assert area.commit().ok
    assert area.store.get_item("customers", {"id": 900})["name"] == "Nine"
