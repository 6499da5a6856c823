"""The read tools that go past plain reads, on DynamoDB (moto's server): sampleValues,
getIndexStats, exports, saved specs, declared relationships and the orphan warning."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from agent.specs import Relationship
from agent.staging import StagingArea
from agent.staging.orphans import orphaned_by
from agent.stores.dynamodb.store import DynamoDBStore
from agent.stores.open import open_store
from tests.agent.test_dynamodb_store import area, raw_client, store, tool
from tests.support.moto_dynamodb import REGION

__all__ = ["area", "store"]


def _put(table: str, items: list[dict[str, Any]]) -> None:
    client = raw_client()
    for start in range(0, len(items), 25):
        client.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": i}} for i in items[start : start + 25]]}
        )


@pytest.fixture
def shop(dynamo_endpoint: str) -> DynamoDBStore:
    """customers (3), orders (30, customer_id with an index) and notes (6, customer_id, no index)."""
    client = raw_client()
    for name, index in (("customers", False), ("orders", True), ("notes", False)):
        extra: dict[str, Any] = {}
        definitions = [{"AttributeName": "id", "AttributeType": "N"}]
        if index:
            definitions.append({"AttributeName": "customer_id", "AttributeType": "N"})
            extra["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": "customer-index",
                    "KeySchema": [{"AttributeName": "customer_id", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ]
        client.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=definitions,
            BillingMode="PAY_PER_REQUEST",
            **extra,
        )
    _put("customers", [{"id": {"N": str(i)}, "name": {"S": f"c{i}"}} for i in (1, 2, 3)])
    _put(
        "orders",
        [
            {"id": {"N": str(i)}, "customer_id": {"N": str(i % 3 + 1)}, "status": {"S": "new"}}
            for i in range(1, 31)
        ],
    )
    _put("notes", [{"id": {"N": str(i)}, "customer_id": {"N": str(i % 2 + 1)}} for i in range(6)])
    opened = open_store(f"dynamodb://{REGION}")
    assert isinstance(opened, DynamoDBStore)
    return opened


def test_sample_values_counts_each_value_and_reports_the_scan(
    store: DynamoDBStore, tmp_path: Path
) -> None:
    sampled = tool(store, tmp_path, "sampleValues", table="orders", column="status")
    assert sampled["values"] == [
        {"value": "pending", "count": 60},
        {"value": "shipped", "count": 60},
    ] or sampled["values"] == [{"value": "shipped", "count": 60}, {"value": "pending", "count": 60}]
    capacity = sampled["capacity"]  # the scan, and the sample that finds the table's key
    assert capacity["itemsScanned"] >= 120 and capacity["readUnits"] > 0


def test_index_stats_name_each_index_with_its_key_and_projection(
    store: DynamoDBStore, tmp_path: Path
) -> None:
    stats = tool(store, tmp_path, "getIndexStats", table="orders")
    (index,) = stats["indexes"]
    assert index["name"] == "status-index" and index["kind"] == "GSI"
    assert index["columns"] == ["status"] and index["projection"] == "ALL"


def test_exports_keep_types_readable(
    store: DynamoDBStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    raw_client().update_item(
        TableName="orders",
        Key={"id": {"N": "2"}},
        UpdateExpression="SET tags = :t, big = :b",
        ExpressionAttributeValues={
            ":t": {"SS": ["gift", "red"]},
            ":b": {"N": "12345678901234567890.123456789"},
        },
    )
    query = "SELECT * FROM \"orders\" WHERE status = 'shipped'"
    done = tool(store, tmp_path, "exportJson", query=query, path="shipped.json")
    assert done["rows"] == 60
    rows = json.loads(Path(done["path"]).read_text())
    two = next(r for r in rows if r["id"] == 2)
    assert two["tags"] == {"$set": ["gift", "red"]}
    assert two["big"] == {"$decimal": "12345678901234567890.123456789"}, "no float rounding"
    done = tool(store, tmp_path, "exportCsv", query=query, path="shipped.csv")
    with Path(done["path"]).open(newline="") as f:
        read = list(csv.DictReader(f))
    two_csv = next(r for r in read if r["id"] == "2")
    assert json.loads(two_csv["tags"]) == {"$set": ["gift", "red"]}, "nested values as JSON"
    assert two_csv["total"] == "2.1"


def test_a_saved_spec_is_checked_listed_and_opened(store: DynamoDBStore, tmp_path: Path) -> None:
    spec = {"name": "shipped", "table": "orders", "query": "status = 'shipped'"}
    saved = tool(store, tmp_path, "saveSpec", **spec)
    assert saved["saved"]["table"] == "orders"
    listed = tool(store, tmp_path, "listSavedSpecs")
    assert [s["name"] for s in listed["specs"]] == ["shipped"]
    opened = tool(store, tmp_path, "openSavedSpec", name="shipped")
    assert opened["spec"]["query"] == "status = 'shipped'"


def test_declared_relationships_warn_of_orphans_on_delete(
    shop: DynamoDBStore, tmp_path: Path
) -> None:
    declared = tool(
        shop, tmp_path, "declareRelationship",
        left="orders", left_on="customer_id", right="customers", right_on="id",
    )  # fmt: skip
    assert declared["created"]
    listed = tool(shop, tmp_path, "listRelationships", table="customers")
    assert len(listed["relationships"]) == 1
    area = StagingArea(shop, tmp_path / "staging.sqlite")
    try:
        area.stage("customers", "delete", {"id": 1})
        relationships = [
            Relationship("buyer", "orders", "customer_id", "customers", "id"),
            Relationship("notes", "notes", "customer_id", "customers", "id"),
        ]
        found = {r.reference.table: r for r in orphaned_by(shop, area.list(), relationships)}
    finally:
        area.close()
    orders, notes = found["orders"], found["notes"]
    assert orders.count == 10 and orders.targets == 1  # ids 3, 6, ... 30: through the index
    assert {e["id"] for e in orders.examples} <= set(range(3, 31, 3)) and orders.examples
    assert notes.count == 3  # 0, 2, 4: a scan (no index on notes.customer_id)
    assert "10 rows of orders still point at 1 deleted item" in orders.describe()


def test_attributes_missing_from_the_sample_are_still_usable(
    shop: DynamoDBStore, tmp_path: Path
) -> None:
    _put("orders", [{"id": {"N": str(100 + i)}, "customer_id": {"N": "1"}} for i in range(40)])
    raw_client().update_item(
        TableName="orders",
        Key={"id": {"N": "139"}},
        UpdateExpression="SET coupon = :c",
        ExpressionAttributeValues={":c": {"S": "WINTER"}},
    )
    described = tool(shop, tmp_path, "describeTable", table="orders")
    assert "coupon" not in {c["name"] for c in described["columns"]}, "past the 50-item sample"
    sampled = tool(shop, tmp_path, "sampleValues", table="orders", column="coupon")
    assert sampled["values"] == [{"value": "WINTER", "count": 1}]
    declared = tool(
        shop, tmp_path, "declareRelationship",
        left="orders", left_on="coupon", right="customers", right_on="name",
    )  # fmt: skip
    assert declared["created"]


def test_items_deleted_with_their_parent_are_not_orphans(
    shop: DynamoDBStore, tmp_path: Path
) -> None:
    area = StagingArea(shop, tmp_path / "staging.sqlite")
    try:
        area.stage("customers", "delete", {"id": 1})
        for order in (3, 6):
            area.stage("orders", "delete", {"id": order})
        relationships = [Relationship("buyer", "orders", "customer_id", "customers", "id")]
        (orders,) = orphaned_by(shop, area.list(), relationships)
    finally:
        area.close()
    assert orders.count == 8, "orders 3 and 6 are deleted too"
    assert {e["id"] for e in orders.examples}.isdisjoint({3, 6})
