"""bulkEdit leaves out the matched items that already hold the new values (judged as stageItem
judges one: SQLite's affinity and storage class, DynamoDB's types) and says how many; when
every item already holds them it stages nothing and says so."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.stores.dynamodb.store import DynamoDBStore
from agent.stores.sqlite import SQLiteStore
from agent.tools.base import ToolContext
from tests.agent.test_dynamodb_store import raw_client
from tests.agent.test_stage_unchanged import CHANGED, UNCHANGED
from tests.support.moto_dynamodb import REGION, create_numbered_table
from tests.support.tools import ok, opened_ctx


def orders_db(path: Path, shipped: int, pending: int) -> Path:
    """`shipped` orders already shipped (ids 1…), then `pending` pending ones."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT, qty INTEGER)")
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, 1)",
            [
                (i, "shipped" if i <= shipped else "pending")
                for i in range(1, shipped + pending + 1)
            ],
        )
    conn.close()
    return path


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    with opened_ctx(orders_db(tmp_path / "orders.sqlite", 12, 28), tmp_path) as context:
        yield context


def statuses(ctx: ToolContext) -> dict[int, str]:
    return {r["id"]: r["status"] for r in ctx.store.query("SELECT id, status FROM orders").rows}


TWICE = "SELECT id FROM orders UNION ALL SELECT id FROM orders WHERE id IN "


@pytest.mark.parametrize(
    "selection",
    [
        {"query": "SELECT id FROM orders"},
        {"keys": [{"id": i} for i in range(1, 41)]},
        {"query": TWICE + "(2, 3)"},  # items left out selected twice count once
        {"query": TWICE + "(2, 20)"},  # a staged one too (row by row)
    ],
    ids=["query", "keys", "query naming held items twice", "query naming a staged item twice"],
)
def test_items_that_already_hold_the_values_are_left_out_and_counted(
    ctx: ToolContext, selection: dict[str, Any]
) -> None:
    result = ok(ctx, "bulkEdit", table="orders", set={"status": "shipped"}, **selection)
    assert (result["matched"], result["unchanged"], result["staged"]) == (40, 12, 28)
    assert result["message"] == (
        'Matched 40 items; 12 already have status="shipped" and were left out; staged 28 changes.'
    )
    staged = ctx.staging.list()
    assert sorted(c.key["id"] for c in staged) == list(range(13, 41))
    assert all(c.pre_image is not None and c.pre_image["status"] == "pending" for c in staged)
    assert ctx.staging.count() == result["pendingTotal"] == 28
    report = ctx.staging.commit()
    assert len(report.committed) == 28 and report.ok
    assert set(statuses(ctx).values()) == {"shipped"}


def test_when_every_item_already_holds_the_values_nothing_is_staged(ctx: ToolContext) -> None:
    result = ok(
        ctx, "bulkEdit", table="orders", query="SELECT id FROM orders WHERE id <= 12",
        set={"status": "shipped", "qty": 1},
    )  # fmt: skip
    assert result["staged"] == 0 and result["unchanged"] == 12 and result["matched"] == 12
    assert "Nothing was staged" in result["message"]
    assert "all 12 matched items already have" in result["message"]
    assert "Do not stage it again" in result["next"]
    assert ctx.staging.count() == 0 and ctx.staging.list() == []


def test_a_large_edit_stays_compact_and_leaves_out_what_already_holds_the_values(
    tmp_path: Path,
) -> None:
    """600 matched, 200 already shipped: the 400 others are one compact edit whose ids and
    changes are exactly those of the 400 items, in the query's order."""
    with opened_ctx(orders_db(tmp_path / "big.sqlite", 200, 400), tmp_path) as context:
        query = "SELECT id FROM orders ORDER BY id DESC"
        result = ok(context, "bulkEdit", table="orders", query=query, set={"status": "shipped"})
        assert (result["matched"], result["unchanged"], result["staged"]) == (600, 200, 400)
        listed = context.staging.list()
        assert [c.key["id"] for c in listed] == list(range(600, 200, -1))
        ids = [int(c.id, 16) for c in listed]
        assert ids == list(range(ids[0], ids[0] + 400)), "one run of ids, no gaps"
        assert listed[0].id == result["ids"][0]
        assert context.staging.count() == 400
        report = context.staging.commit()
        assert len(report.committed) == 400 and report.ok


@pytest.fixture
def typed_db(tmp_path: Path) -> Path:
    """The row of test_stage_unchanged under every affinity, plus a NOCASE column and a blob."""
    path = tmp_path / "items.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, status TEXT, qty INTEGER, price REAL, "
            "code TEXT, raw, name TEXT COLLATE NOCASE, b BLOB)"
        )
        conn.execute("INSERT INTO items VALUES (1, 'shipped', 5, 2.0, '1.0', 1, 'ada', x'00ff')")
    conn.close()
    return path


def blob_marker(db: Path) -> str:
    store = SQLiteStore.open(db)
    try:
        item = store.get_item("items", {"id": 1})
        assert item is not None
        return str(item["b"])
    finally:
        store.close()


MORE_UNCHANGED: list[dict[str, Any]] = [{"status": "shipped", "qty": 5}, {"b": "MARKER"}]
MORE_CHANGED: list[dict[str, Any]] = [{"name": "Ada"}, {"b": "<blob 2 bytes>"}, {"b": None}]


@pytest.mark.parametrize("path", ["set-based", "row by row"])
@pytest.mark.parametrize(
    ("values", "left_out"),
    [(v, True) for v in UNCHANGED + MORE_UNCHANGED] + [(v, False) for v in CHANGED + MORE_CHANGED],
    ids=str,
)
def test_bulk_edit_judges_each_value_as_stage_item_does(
    typed_db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    values: dict[str, Any],
    left_out: bool,
) -> None:
    """'5' is 5 in an INTEGER column, 1.0 is not 1 where no affinity converts it, NOCASE does
    not hide 'Ada' from 'ada', a blob matches its marker: the same answer as stageItem's, on
    the set-based path (SQL) and on the row-by-row one."""
    if "b" in values and values["b"] == "MARKER":
        values = {"b": blob_marker(typed_db)}
    if path == "row by row":
        monkeypatch.setattr(SQLiteStore, "sqlite_file", property(lambda _self: None))
    with opened_ctx(typed_db, tmp_path) as context:
        single = ok(context, "stageItem", table="items", op="update", key={"id": 1}, values=values)
        assert (single["staged"] == 0) is left_out
        context.staging.discard(all=True)
        result = ok(context, "bulkEdit", table="items", keys=[{"id": 1}], set=values)
        assert (result["staged"], result["unchanged"]) == ((0, 1) if left_out else (1, 0))
        assert context.staging.count() == result["staged"]


def test_items_with_staged_changes_fold_or_are_left_out_as_stage_item_decides(
    ctx: ToolContext,
) -> None:
    """Item 1 (shipped) has a staged change to lost: shipping it takes that change back to
    what it holds, so the change is dropped. Item 13 (pending) has a staged change that
    already ships it: left out. Item 14 (pending) has a staged qty change: shipped too."""
    lost = ok(
        ctx, "stageItem", table="orders", op="update", key={"id": 1}, values={"status": "lost"}
    )
    ok(ctx, "stageItem", table="orders", op="update", key={"id": 13}, values={"status": "shipped"})
    qty = ok(ctx, "stageItem", table="orders", op="update", key={"id": 14}, values={"qty": 3})
    result = ok(
        ctx, "bulkEdit", table="orders", query="SELECT id FROM orders WHERE id IN (1, 2, 13, 14, 15)",
        set={"status": "shipped"},
    )  # fmt: skip
    assert result["matched"] == 5 and result["staged"] == 2
    assert result["unchanged"] == 2, "item 2 holds it, item 13's staged change sets it"
    assert result["withdrawn"] == lost["ids"]
    assert "1 staged change was dropped" in result["message"]
    by_item = {c.key["id"]: c for c in ctx.staging.list()}
    assert set(by_item) == {13, 14, 15}
    assert by_item[14].id == qty["ids"][0]
    assert by_item[14].values == {"qty": 3, "status": "shipped"}


# -- DynamoDB (moto's server) ------------------------------------------------------------------


@pytest.fixture
def dynamo_ctx(dynamo_endpoint: str, tmp_path: Path) -> Iterator[ToolContext]:
    client = raw_client()
    create_numbered_table(client, "orders")
    for i in range(1, 8):
        item = {"id": {"N": str(i)}, "status": {"S": "shipped" if i <= 3 else "pending"}}
        item["qty"] = {"N": "2"} if i % 2 else {"S": "2"}
        client.put_item(TableName="orders", Item=item)
    with opened_ctx(f"dynamodb://{REGION}", tmp_path) as context:
        assert isinstance(context.store, DynamoDBStore)
        yield context


def test_dynamodb_bulk_edit_leaves_out_items_that_already_hold_the_values(
    dynamo_ctx: ToolContext,
) -> None:
    keys = [{"id": i} for i in range(1, 8)]
    result = ok(dynamo_ctx, "bulkEdit", table="orders", keys=keys, set={"status": "shipped"})
    assert (result["matched"], result["unchanged"], result["staged"]) == (7, 3, 4)
    assert sorted(c.key["id"] for c in dynamo_ctx.staging.list()) == [4, 5, 6, 7]
    dynamo_ctx.staging.discard(all=True)
    typed = ok(dynamo_ctx, "bulkEdit", table="orders", keys=keys, set={"qty": 2.0})
    assert (typed["unchanged"], typed["staged"]) == (4, 3), '2 is 2.0, "2" is not'
    assert sorted(c.key["id"] for c in dynamo_ctx.staging.list()) == [2, 4, 6]


def test_dynamodb_bulk_edit_where_every_item_holds_the_values_stages_nothing(
    dynamo_ctx: ToolContext,
) -> None:
    query = "SELECT id FROM \"orders\" WHERE status = 'shipped'"
    result = ok(dynamo_ctx, "bulkEdit", table="orders", query=query, set={"status": "shipped"})
    assert (result["matched"], result["unchanged"], result["staged"]) == (3, 3, 0)
    assert "Nothing was staged" in result["message"]
    assert dynamo_ctx.staging.count() == 0
