"""An update that would change nothing is not staged: the item already holds every value, as
a commit compares them (SQLite's column affinity, DynamoDB's types), or its staged change
already sets them. The model is told so; a partial no-op is staged whole."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.staging import StagingArea
from agent.stores.dynamodb.store import DynamoDBStore
from agent.stores.open import open_store
from agent.tools.base import ToolContext
from tests.agent.test_dynamodb_store import raw_client
from tests.support.moto_dynamodb import REGION, create_numbered_table
from tests.support.tools import err, ok, opened_ctx

COLUMNS = ("status", "qty", "price", "code", "raw")
ROW = f"SELECT {', '.join(f'typeof({c}), {c}' for c in COLUMNS)} FROM items WHERE id = 1"
"""Every column's storage class and value: what a commit changed, to the storage class."""


@pytest.fixture
def items_db(tmp_path: Path) -> Path:
    """One row under every affinity: TEXT, INTEGER, REAL, TEXT holding '1.0', none (BLOB)."""
    path = tmp_path / "items.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, status TEXT, qty INTEGER, price REAL, "
            "code TEXT, raw)"
        )
        conn.execute("INSERT INTO items VALUES (1, 'shipped', 5, 2.0, '1.0', 1)")
    conn.close()
    return path


@pytest.fixture
def ctx(items_db: Path, tmp_path: Path) -> Iterator[ToolContext]:
    with opened_ctx(items_db, tmp_path) as context:
        yield context


def stage(ctx: ToolContext, values: dict[str, Any]) -> dict[str, Any]:
    return ok(ctx, "stageItem", table="items", op="update", key={"id": 1}, values=values)


def stored(path: Path) -> tuple[Any, ...]:
    with sqlite3.connect(path) as conn:
        row = conn.execute(ROW).fetchone()
    conn.close()
    return tuple(row)


def test_an_update_to_the_values_the_item_has_stages_nothing_and_says_so(
    ctx: ToolContext,
) -> None:
    result = stage(ctx, {"status": "shipped"})
    assert result["staged"] == 0 and result["unchanged"] is True
    assert "already has these values (status)" in result["message"]
    assert "Do not stage it again" in result["next"]
    assert ctx.staging.count() == 0 and ctx.staging.list() == []


UNCHANGED = [{"qty": "5"}, {"qty": 5.0}, {"price": 2}, {"price": "2"}, {"code": "1.0"}, {"raw": 1}]
CHANGED = [
    {"code": 1},
    {"raw": "1"},
    {"raw": 1.5},
    {"raw": 1.0},  # 1 IS 1.0 where no affinity converts, yet the commit stores a REAL
    {"status": None},
    {"status": "Shipped"},
]


@pytest.mark.parametrize("values", UNCHANGED, ids=str)
def test_a_value_the_column_stores_as_the_same_value_is_no_change(
    ctx: ToolContext, items_db: Path, values: dict[str, Any]
) -> None:
    """'5' in an INTEGER column is 5 (affinity converts it when written): what `stage` would
    have staged commits to the very same row, storage class and all."""
    assert stage(ctx, values)["staged"] == 0
    before = stored(items_db)
    ctx.staging.stage("items", "update", {"id": 1}, values)  # staged anyway, as before
    assert ctx.staging.commit().ok
    assert stored(items_db) == before


@pytest.mark.parametrize("values", CHANGED, ids=str)
def test_a_value_the_column_stores_differently_is_staged(
    ctx: ToolContext, items_db: Path, values: dict[str, Any]
) -> None:
    """1 in a TEXT column holding '1.0' becomes '1'; '1' in a column without affinity stays
    text next to the integer 1: the commit changes the row, so the update is staged."""
    before = stored(items_db)
    assert stage(ctx, values)["staged"] == 1
    assert ctx.staging.commit().ok
    assert stored(items_db) != before


@pytest.fixture
def collated_db(tmp_path: Path) -> Path:
    """Columns whose collation calls different text equal: NOCASE (case), RTRIM (spaces)."""
    path = tmp_path / "collated.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, "
            "code TEXT COLLATE RTRIM)"
        )
        conn.execute("INSERT INTO people VALUES (1, 'ada', 'x1')")
    conn.close()
    return path


@pytest.mark.parametrize("values", [{"name": "Ada"}, {"code": "x1  "}], ids=str)
def test_a_column_collation_does_not_hide_a_change(
    collated_db: Path, tmp_path: Path, values: dict[str, Any]
) -> None:
    """Under NOCASE 'ada' = 'Ada', yet the commit writes 'Ada': the update is staged and
    commits the new text (it was answered "already has these values" and lost)."""
    with opened_ctx(collated_db, tmp_path) as context:
        result = ok(context, "stageItem", table="people", op="update", key={"id": 1}, values=values)
        assert result["staged"] == 1
        assert context.staging.commit().ok
        row = context.store.get_item("people", {"id": 1})
        assert row is not None and {k: row[k] for k in values} == values


def test_a_commit_between_the_check_and_the_staging_is_not_missed(
    ctx: ToolContext, items_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process commits its change of the item (status lost) after this update's
    check found the item already shipped: "already has these values" would be stale (the
    item is lost now and nothing stays staged to set it back), so the update is staged, as
    `stage` would, and its commit meets the other's change as a conflict."""
    other_store = open_store(items_db)
    other = StagingArea(other_store, ctx.staging.path)
    other.stage("items", "update", {"id": 1}, {"status": "lost"})
    check = ctx.store.holds

    def holds_then_the_other_commits(*args: Any, **kwargs: Any) -> bool:
        answer = check(*args, **kwargs)
        assert other.commit().ok
        return answer

    monkeypatch.setattr(ctx.store, "holds", holds_then_the_other_commits)
    try:
        result = stage(ctx, {"status": "shipped"})
    finally:
        other.close()
        other_store.close()
    assert result["staged"] == 1
    (change,) = ctx.staging.list()
    assert change.values == {"status": "shipped"}
    assert ctx.store.get_item("items", {"id": 1})["status"] == "lost"


def test_a_partial_no_op_is_staged_whole(ctx: ToolContext) -> None:
    """The change keeps what was asked for: after a conflict, "take current" still sets every
    value; the review shows the unchanged one as old = new."""
    result = stage(ctx, {"status": "shipped", "qty": 6})
    assert result["staged"] == 1
    (change,) = ctx.staging.list()
    assert change.values == {"status": "shipped", "qty": 6}
    diff = {d.attribute: (d.old, d.new) for d in ctx.staging.diff(change)}
    assert diff == {"status": ("shipped", "shipped"), "qty": (5, 6)}


def test_the_same_update_on_a_staged_item_changes_nothing_and_names_the_change(
    ctx: ToolContext,
) -> None:
    first = stage(ctx, {"status": "lost", "qty": 7})
    (change_id,) = first["ids"]
    again = stage(ctx, {"status": "lost"})
    assert again["staged"] == 0 and again["changeId"] == change_id
    assert f"staged change {change_id} already sets these values" in again["message"]
    (change,) = ctx.staging.list()
    assert change.values == {"status": "lost", "qty": 7}, "the staged change is kept as it was"
    assert stage(ctx, {"qty": 7.0})["staged"] == 1, "another JSON value folds in as before"
    folded = stage(ctx, {"status": "shipped"})
    assert folded["staged"] == 1 and folded["ids"] == [change_id]
    assert ctx.staging.get(change_id).values == {"status": "shipped", "qty": 7.0}


def test_an_update_of_a_missing_item_or_a_deleted_one_is_still_refused(ctx: ToolContext) -> None:
    missing = err(
        ctx, "stageItem", table="items", op="update", key={"id": 9}, values={"status": "x"}
    )
    assert "no item with key" in missing["error"]
    ok(ctx, "stageItem", table="items", op="delete", key={"id": 1})
    deleting = err(
        ctx, "stageItem", table="items", op="update", key={"id": 1}, values={"status": "shipped"}
    )
    assert "staged for deletion" in deleting["error"]


# -- DynamoDB (moto's server) ------------------------------------------------------------------


@pytest.fixture
def dynamo_ctx(dynamo_endpoint: str, tmp_path: Path) -> Iterator[ToolContext]:
    client = raw_client()
    create_numbered_table(client, "things")
    client.put_item(
        TableName="things",
        Item={
            "id": {"N": "1"},
            "status": {"S": "shipped"},
            "qty": {"N": "3"},
            "price": {"N": "2.50"},
            "flag": {"BOOL": True},
            "tags": {"SS": ["a", "b"]},
            "box": {"M": {"n": {"N": "1"}, "ok": {"BOOL": False}}},
        },
    )
    with opened_ctx(f"dynamodb://{REGION}", tmp_path) as context:
        assert isinstance(context.store, DynamoDBStore)
        yield context


DYNAMO_UNCHANGED = [
    {"status": "shipped"},
    {"qty": 3.0},
    {"price": 2.5},
    {"price": {"$decimal": "2.500"}},
    {"tags": {"$set": ["b", "a"]}},
    {"box": {"ok": False, "n": 1.0}},
    {"gone": None},
]
DYNAMO_CHANGED = [
    {"flag": 1},
    {"qty": "3"},
    {"box": {"n": 1, "ok": 0}},
    {"tags": {"$set": ["a"]}},
    {"status": None},
]


@pytest.mark.parametrize("values", DYNAMO_UNCHANGED, ids=str)
def test_dynamodb_compares_as_a_condition_does(
    dynamo_ctx: ToolContext, values: dict[str, Any]
) -> None:
    """Numbers by value, sets as sets, a null for an absent attribute: no change."""
    result = ok(dynamo_ctx, "stageItem", table="things", op="update", key={"id": 1}, values=values)
    assert result["staged"] == 0 and result["unchanged"] is True
    assert dynamo_ctx.staging.count() == 0


@pytest.mark.parametrize("values", DYNAMO_CHANGED, ids=str)
def test_dynamodb_types_tell_values_apart(dynamo_ctx: ToolContext, values: dict[str, Any]) -> None:
    """true is not 1 and "3" is not 3 in DynamoDB (nor inside a map): staged."""
    result = ok(dynamo_ctx, "stageItem", table="things", op="update", key={"id": 1}, values=values)
    assert result["staged"] == 1
