"""Rows that staged deletes would orphan: rows deleted in the same staged set do not count."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent.staging import StagingArea
from agent.staging.orphans import orphaned_by
from agent.stores.sqlite import SQLiteStore


def _order_ids(path: Path, product: int) -> list[int]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT id FROM orders WHERE product_id = ? ORDER BY id", (product,))
        return [r[0] for r in rows]


def test_rows_deleted_with_their_parent_are_not_orphans(
    demo_store: SQLiteStore, demo_path: Path
) -> None:
    orders = _order_ids(demo_path, 5)
    assert len(orders) > 3
    area = StagingArea(demo_store)
    area.stage("products", "delete", {"id": 5}, origin="test")
    before = {r.reference.table: r.count for r in orphaned_by(demo_store, area.list())}
    assert before["orders"] == len(orders)
    area.stage_many("orders", query="SELECT id FROM orders WHERE product_id = 5", delete=True)
    after = {r.reference.table: r.count for r in orphaned_by(demo_store, area.list())}
    assert "orders" not in after, "every referencing order is deleted too"
    assert after["stock_levels"] == before["stock_levels"], "stock levels still point at it"


def test_rows_deleted_in_part_leave_the_rest_counted(
    demo_store: SQLiteStore, demo_path: Path
) -> None:
    orders = _order_ids(demo_path, 5)
    area = StagingArea(demo_store)
    area.stage("products", "delete", {"id": 5}, origin="test")
    for order in orders[:2]:
        area.stage("orders", "delete", {"id": order}, origin="test")
    (found,) = [r for r in orphaned_by(demo_store, area.list()) if r.reference.table == "orders"]
    assert found.count == len(orders) - 2 and found.targets == 1
    assert found.examples and all(e["id"] not in orders[:2] for e in found.examples)
    assert f"{len(orders) - 2} rows of orders still point at 1 deleted item" in found.describe()
