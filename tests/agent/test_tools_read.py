"""Read tools against a real demo database: what the model gets back, and how it is told off."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agent.tools.base import MAX_CELL_CHARS, ToolContext
from tests.support.tools import err, ok, opened_ctx

CET = timezone(timedelta(hours=1), "CET")


@pytest.fixture
def ctx(tmp_path: Path, demo_path: Path):
    with opened_ctx(
        demo_path, tmp_path, now=lambda: datetime(2026, 3, 2, 9, 30, 5, tzinfo=CET)
    ) as context:
        yield context


def test_current_time_gives_date_weekday_and_zone(ctx: ToolContext) -> None:
    result = ok(ctx, "getCurrentTime")
    assert result == {
        "iso": "2026-03-02T09:30:05+01:00",
        "date": "2026-03-02",
        "time": "09:30:05",
        "weekday": "Monday",
        "timezone": "CET",
        "utcOffset": "+01:00",
    }
    assert "field 'now'" in err(ctx, "getCurrentTime", now="x")["error"]


def test_list_and_describe_tables(ctx: ToolContext) -> None:
    assert ok(ctx, "listTables")["tables"] == ["customers", "orders", "products", "stock_levels"]
    described = ok(ctx, "describeTable", table="Orders")  # case-insensitive match
    assert described["table"] == "orders" and described["key"] == ["id"]
    assert described["rowCount"] == 2000
    assert "status" in [c["name"] for c in described["columns"]]
    failure = err(ctx, "describeTable", table="order")
    assert "unknown table 'order'" in failure["error"] and "orders" in failure["fix"]


def test_run_query_caps_rows_and_says_so(ctx: ToolContext) -> None:
    result = ok(ctx, "runQuery", query="SELECT id, status FROM orders ORDER BY id")
    assert result["rowCount"] == 50 and len(result["rows"]) == 50
    assert "more matched" in result["truncated"]
    small = ok(ctx, "runQuery", query="SELECT id FROM orders WHERE id <= 3", limit=10)
    assert small["rows"] == [{"id": 1}, {"id": 2}, {"id": 3}] and "truncated" not in small
    assert "field 'limit'" in err(ctx, "runQuery", query="SELECT 1", limit=501)["error"]


def test_run_query_refuses_writes(ctx: ToolContext) -> None:
    err(ctx, "runQuery", query="UPDATE orders SET status = 'x'")
    assert ctx.store.count("orders", "status = 'x'") == 0


def test_long_cells_are_cut_and_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    db = tmp_path / "notes.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, blob BLOB)")
        conn.execute("INSERT INTO notes VALUES (1, ?, ?)", ("x" * 5000, b"\x00\x01" * 100))
    with opened_ctx(db, tmp_path) as context:
        result = ok(context, "runQuery", query="SELECT * FROM notes")
    body = result["rows"][0]["body"]
    assert len(body) == MAX_CELL_CHARS + 1 and body.endswith("…")
    assert "200 bytes" in result["rows"][0]["blob"]
    assert "cut" in result["note"]


def test_get_item(ctx: ToolContext) -> None:
    found = ok(ctx, "getItem", table="orders", key={"id": "7"})
    assert found["item"]["id"] == 7 and found["key"] == {"id": 7}
    missing = ok(ctx, "getItem", table="orders", key={"id": 999999})
    assert missing["item"] is None and "runQuery" in missing["message"]
    assert "id" in err(ctx, "getItem", table="orders", key={"order_id": 7})["fix"]


def test_count_items_with_and_without_a_condition(ctx: ToolContext) -> None:
    assert ok(ctx, "countItems", table="orders")["count"] == 2000
    pending = ctx.store.query("SELECT count(*) AS n FROM orders WHERE status = 'pending'").rows[0][
        "n"
    ]
    assert ok(ctx, "countItems", table="orders", query="status = 'pending'")["count"] == pending
    assert (
        ok(ctx, "countItems", table="orders", query="WHERE status = 'pending'")["count"] == pending
    )
    failure = err(ctx, "countItems", table="orders", query="SELECT * FROM orders")
    assert "condition" in failure["error"] and "runQuery" in failure["fix"]
    err(ctx, "countItems", table="orders", query="no_such_column = 1")


def test_sample_values_and_index_stats(ctx: ToolContext) -> None:
    values = ok(ctx, "sampleValues", table="orders", column="status")["values"]
    assert {v["value"] for v in values} == {"pending", "shipped", "delivered", "cancelled"}
    assert sum(v["count"] for v in values) == 2000
    failure = err(ctx, "sampleValues", table="orders", column="state")
    assert "'state'" in failure["error"] and "status" in failure["fix"]
    stats = ok(ctx, "getIndexStats", table="orders")
    assert {"orders_status", "orders_customer_id"} <= {i["name"] for i in stats["indexes"]}
    err(ctx, "getIndexStats", table="nope")
