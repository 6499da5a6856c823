"""A DynamoDB attribute of type NULL is there: an update setting it to null removes it (REMOVE),
so stageItem and bulkEdit stage that update rather than leave it out as changing nothing, and a
staged change folded back to null is not dropped as if the item held it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.stores.dynamodb.store import DynamoDBStore
from agent.tools.base import ToolContext
from tests.agent.test_dynamodb_store import raw_client
from tests.support.moto_dynamodb import REGION, create_numbered_table
from tests.support.tools import ok, opened_ctx

KEY = {"id": {"N": "1"}}


@pytest.fixture
def ctx(dynamo_endpoint: str, tmp_path: Path) -> Iterator[ToolContext]:
    client = raw_client()
    create_numbered_table(client, "things")
    client.put_item(TableName="things", Item={**KEY, "note": {"NULL": True}, "s": {"S": "a"}})
    with opened_ctx(f"dynamodb://{REGION}", tmp_path) as context:
        assert isinstance(context.store, DynamoDBStore)
        yield context


def attributes() -> dict[str, Any]:
    return raw_client().get_item(TableName="things", Key=KEY)["Item"]


@pytest.mark.parametrize("tool", ["stageItem", "bulkEdit"])
def test_null_on_a_null_typed_attribute_is_staged_and_removes_it(
    ctx: ToolContext, tool: str
) -> None:
    if tool == "stageItem":
        args: dict[str, Any] = {"op": "update", "key": {"id": 1}, "values": {"note": None}}
    else:
        args = {"keys": [{"id": 1}], "set": {"note": None}}
    result = ok(ctx, tool, table="things", **args)
    assert result["staged"] == 1, result
    assert ctx.staging.commit().ok
    assert "note" not in attributes()


def test_a_change_folded_back_to_null_on_a_null_typed_attribute_is_kept(
    ctx: ToolContext,
) -> None:
    """`note` is set, then set to null: the fold removes the attribute, a change to keep."""
    first = ok(ctx, "stageItem", table="things", op="update", key={"id": 1}, values={"note": "x"})
    again = ok(ctx, "stageItem", table="things", op="update", key={"id": 1}, values={"note": None})
    assert not again.get("withdrawn"), again
    [change] = ctx.staging.list()
    assert change.id == first["ids"][0] and change.values == {"note": None}


def test_null_on_an_absent_attribute_still_changes_nothing(ctx: ToolContext) -> None:
    result = ok(ctx, "stageItem", table="things", op="update", key={"id": 1}, values={"gone": None})
    assert result["staged"] == 0 and ctx.staging.count() == 0
