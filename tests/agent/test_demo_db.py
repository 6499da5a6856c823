"""The demo database: deterministic, dated relative to its build day, complete, created atomically."""

from __future__ import annotations

import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path

from agent import paths
from agent.stores.demo import build_demo_db, ensure_demo_db
from agent.stores.open import open_store
from agent.stores.sqlite import SQLiteStore

TODAY = date(2026, 3, 15)


def dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_two_builds_with_the_same_day_are_identical(tmp_path: Path) -> None:
    first = build_demo_db(tmp_path / "a.sqlite", today=TODAY)
    second = build_demo_db(tmp_path / "b.sqlite", today=TODAY)
    assert dump(first) == dump(second)


def test_dates_follow_the_build_day(tmp_path: Path) -> None:
    later = build_demo_db(tmp_path / "later.sqlite", today=TODAY + timedelta(days=10))
    store = SQLiteStore.open(later)
    newest = store.query("SELECT max(created_at) AS d FROM orders").rows[0]["d"]
    assert newest.startswith(str(TODAY + timedelta(days=10))[:7])


def test_required_content(demo_store: SQLiteStore) -> None:
    assert demo_store.count("customers") >= 200
    assert demo_store.count("products") >= 50
    assert demo_store.count("orders") >= 2000
    statuses = {s["value"] for s in demo_store.sample_values("orders", "status")}
    assert statuses == {"pending", "shipped", "delivered", "cancelled"}
    indexed = {i.columns for i in demo_store.describe_table("orders").indexes}
    assert {("status",), ("customer_id",)} <= indexed
    span = demo_store.query(
        "SELECT min(created_at) AS first, max(created_at) AS last FROM orders"
    ).rows[0]
    first = datetime.fromisoformat(span["first"]).date()
    last = datetime.fromisoformat(span["last"]).date()
    assert TODAY - timedelta(days=90) <= first and last <= TODAY
    assert (last - first).days >= 80
    orphan = demo_store.count(
        "orders",
        "customer_id NOT IN (SELECT id FROM customers) "
        "OR product_id NOT IN (SELECT id FROM products)",
    )
    assert orphan == 0
    assert demo_store.describe_table("stock_levels").key_columns == ("warehouse", "product_id")


def test_scales_to_more_orders(tmp_path: Path) -> None:
    store = SQLiteStore.open(build_demo_db(tmp_path / "big.sqlite", orders=5000, today=TODAY))
    assert store.count("orders") == 5000


def test_ensure_builds_once_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "data" / "demo.sqlite"
    assert ensure_demo_db(target, today=TODAY) == target
    stamp = target.stat().st_mtime_ns
    assert ensure_demo_db(target) == target
    assert target.stat().st_mtime_ns == stamp
    assert [p.name for p in target.parent.iterdir()] == ["demo.sqlite"]


def test_open_store_without_db_uses_demo_in_data_dir(isolated_dirs: Path) -> None:
    store = open_store(None)
    assert store.kind == "sqlite"
    assert paths.demo_db_path().exists()
    assert str(paths.demo_db_path().resolve()) in store.identity
    assert str(isolated_dirs) in store.identity
    store.close()


def test_open_store_with_path(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    assert store.label == demo_path.name
    store.close()


def test_a_demo_built_this_morning_has_no_order_later_today(tmp_path: Path) -> None:
    """Built at 10:58, nothing is dated after 10:58 (today's later times move a day back)."""
    from datetime import datetime

    now = datetime(2026, 12, 4, 10, 58)
    store = SQLiteStore.open(build_demo_db(tmp_path / "morning.sqlite", now=now))
    try:
        for table in ("customers", "orders"):
            newest = store.query(f"SELECT max(created_at) AS d FROM {table}").rows[0]["d"]
            assert newest <= now.isoformat(), table
        today = store.query(
            "SELECT count(*) AS n FROM orders WHERE created_at >= '2026-12-04'"
        ).rows[0]["n"]
        assert today > 0, "orders of the morning stay today's"
        latest = store.query("SELECT max(updated_at) AS d FROM stock_levels").rows[0]["d"]
        assert latest <= now.isoformat()
    finally:
        store.close()
