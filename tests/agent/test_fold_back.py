"""A staged update folded back to what the item holds (price 5 → 6, then 6 → 5) is dropped
from staging, in the transaction that folds it: the list shows only real changes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.errors import StagingError
from agent.staging import StagingArea
from agent.staging.model import Unchanged
from agent.stores.dynamodb.store import DynamoDBStore
from agent.stores.open import open_store
from agent.tools.base import ToolContext
from tests.agent.test_dynamodb_store import raw_client
from tests.support.moto_dynamodb import REGION, create_numbered_table
from tests.support.tools import ok, opened_ctx


@pytest.fixture
def items_db(tmp_path: Path) -> Path:
    path = tmp_path / "items.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, price INTEGER, status TEXT, raw)")
        conn.execute("INSERT INTO items VALUES (1, 5, 'new', 1)")
    conn.close()
    return path


@pytest.fixture
def ctx(items_db: Path, tmp_path: Path) -> Iterator[ToolContext]:
    with opened_ctx(items_db, tmp_path) as context:
        yield context


def stage(ctx: ToolContext, values: dict[str, Any]) -> dict[str, Any]:
    return ok(ctx, "stageItem", table="items", op="update", key={"id": 1}, values=values)


def test_folding_a_change_back_to_the_stored_values_drops_it(
    ctx: ToolContext, items_db: Path
) -> None:
    first = stage(ctx, {"price": 6})
    (change_id,) = first["ids"]
    back = stage(ctx, {"price": 5})
    assert back["staged"] == 0 and back["changeId"] == change_id
    assert back["withdrawn"] is True
    assert f"Staged change {change_id} was dropped" in back["message"]
    assert ctx.staging.list() == [] and back["pendingTotal"] == 0
    other = StagingArea(ctx.store, ctx.staging.path)  # another process sees it gone
    try:
        assert other.count() == 0
    finally:
        other.close()
    assert ctx.staging.commit().committed == []


def test_a_value_the_column_stores_as_the_stored_one_folds_back_too(ctx: ToolContext) -> None:
    """'5' in an INTEGER column is 5; 1.0 where no affinity converts it is a REAL, not 1."""
    stage(ctx, {"price": 6})
    assert stage(ctx, {"price": "5"})["withdrawn"] is True
    stage(ctx, {"raw": 2})
    kept = stage(ctx, {"raw": 1.0})
    assert kept["staged"] == 1 and "withdrawn" not in kept
    (change,) = ctx.staging.list()
    assert change.values == {"raw": 1.0}


def test_a_change_with_any_value_still_different_stays_whole(ctx: ToolContext) -> None:
    first = stage(ctx, {"price": 6, "status": "sold"})
    again = stage(ctx, {"price": 5})
    assert again["staged"] == 1 and again["ids"] == first["ids"]
    (change,) = ctx.staging.list()
    assert change.values == {"price": 5, "status": "sold"}


def test_a_store_changed_since_keeps_the_change(ctx: ToolContext, items_db: Path) -> None:
    """Someone set the price to 7 meanwhile: 5 is a change again, so it stays staged (and its
    commit meets the other write as a conflict)."""
    stage(ctx, {"price": 6})
    with sqlite3.connect(items_db) as conn:
        conn.execute("UPDATE items SET price = 7 WHERE id = 1")
    conn.close()
    kept = stage(ctx, {"price": 5})
    assert kept["staged"] == 1
    (change,) = ctx.staging.list()
    assert change.values == {"price": 5}
    assert not ctx.staging.commit().ok


def test_another_process_folding_in_meanwhile_keeps_its_values(
    ctx: ToolContext, items_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store was asked about price 5 alone; before the fold is written another process
    folds status into the change: dropping it would lose that, so the fold is written."""
    stage(ctx, {"price": 6})
    other_store = open_store(items_db)
    other = StagingArea(other_store, ctx.staging.path)
    check = ctx.store.holds_many

    def holds_then_the_other_folds(*args: Any, **kwargs: Any) -> list[bool]:
        answer = check(*args, **kwargs)
        other.stage("items", "update", {"id": 1}, {"status": "sold"})
        return answer

    monkeypatch.setattr(ctx.store, "holds_many", holds_then_the_other_folds)
    try:
        result = stage(ctx, {"price": 5})
    finally:
        other.close()
        other_store.close()
    assert result["staged"] == 1
    (change,) = ctx.staging.list()
    assert change.values == {"price": 5, "status": "sold"}


def test_a_client_below_full_cannot_drop_another_origins_change(ctx: ToolContext) -> None:
    stage(ctx, {"price": 6})
    with pytest.raises(StagingError):
        ctx.staging.stage_unless_unchanged(
            "items", "update", {"id": 1}, {"price": 5}, origin="mcp:bob", own_only=True
        )
    (change,) = ctx.staging.list()
    assert change.values == {"price": 6}


def test_stage_itself_still_folds_as_asked(ctx: ToolContext) -> None:
    """`stage` stages what it is told (a diff shows old = new); the tools skip no-ops."""
    ctx.staging.stage("items", "update", {"id": 1}, {"price": 6})
    folded = ctx.staging.stage("items", "update", {"id": 1}, {"price": 5})
    assert not isinstance(folded, Unchanged) and folded.values == {"price": 5}
    assert ctx.staging.count() == 1


# -- DynamoDB (moto's server) ------------------------------------------------------------------


@pytest.fixture
def dynamo_ctx(dynamo_endpoint: str, tmp_path: Path) -> Iterator[ToolContext]:
    client = raw_client()
    create_numbered_table(client, "things")
    client.put_item(TableName="things", Item={"id": {"N": "1"}, "qty": {"N": "3"}})
    with opened_ctx(f"dynamodb://{REGION}", tmp_path) as context:
        assert isinstance(context.store, DynamoDBStore)
        yield context


def test_dynamodb_a_change_folded_back_is_dropped(dynamo_ctx: ToolContext) -> None:
    def stage_qty(value: Any) -> dict[str, Any]:
        return ok(
            dynamo_ctx, "stageItem", table="things", op="update", key={"id": 1},
            values={"qty": value},
        )  # fmt: skip

    stage_qty(4)
    assert stage_qty("3")["staged"] == 1, '"3" is a String, not the Number 3'
    assert stage_qty(3.0)["withdrawn"] is True, "3.0 is the Number 3"
    assert dynamo_ctx.staging.count() == 0


def test_a_commit_through_the_same_area_meanwhile_is_seen(
    ctx: ToolContext, items_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Price 5 is held when the store is asked; before the staging transaction another thread
    of this process stages price 9 and commits it through the same area (its connection, so
    `PRAGMA data_version` does not move). The update to 5 was left out as held, though the
    item now holds 9: it must be staged (and its commit meet the 9 as a conflict)."""
    check = ctx.store.holds_many

    def holds_then_a_commit_lands(*args: Any, **kwargs: Any) -> list[bool]:
        answer = check(*args, **kwargs)
        ctx.staging.stage("items", "update", {"id": 1}, {"price": 9})
        assert ctx.staging.commit().ok
        return answer

    monkeypatch.setattr(ctx.store, "holds_many", holds_then_a_commit_lands)
    result = stage(ctx, {"price": 5})
    assert result["staged"] == 1, result
    monkeypatch.undo()
    (change,) = ctx.staging.list()
    assert change.values == {"price": 5}
    assert not ctx.staging.commit().ok, "the 9 committed meanwhile is a conflict"


def test_a_fold_back_judged_before_a_commit_through_the_same_area_is_not_dropped(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Change 5 → 6 staged; stageItem 5 asks the store (holds 5: a fold back). Meanwhile the
    same area commits the 6 and stages 6 → 7 on the item: dropping that change as the fold
    back would lose the 7 the user staged after."""
    stage(ctx, {"price": 6})
    check = ctx.store.holds_many

    def holds_then_commit_and_restage(*args: Any, **kwargs: Any) -> list[bool]:
        answer = check(*args, **kwargs)
        assert ctx.staging.commit().ok
        ctx.staging.stage("items", "update", {"id": 1}, {"price": 7})
        return answer

    monkeypatch.setattr(ctx.store, "holds_many", holds_then_commit_and_restage)
    result = stage(ctx, {"price": 5})
    monkeypatch.undo()
    assert result["staged"] == 1, result
    (change,) = ctx.staging.list()
    assert change.values == {"price": 5} and change.pre_image is not None
    assert change.pre_image["price"] == 6
