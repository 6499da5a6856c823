"""`tabletalk index build` on a DynamoDB store (moto server): items read by paginated Scan,
then searched and rebuilt incrementally like any store's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent.cli.main import main
from agent.stores.dynamodb import scan_rows
from agent.stores.open import open_store
from agent.vectors import source
from agent.vectors.search import search
from tests.agent.test_dynamodb_store import raw_client
from tests.support.moto_dynamodb import REGION
from tests.support.scripted_bedrock import ScriptedBedrock

DB = f"dynamodb://{REGION}"
WORDS = ["lamp", "blanket", "kettle", "speaker", "earbuds", "mug"]


def make_products(client: Any, count: int) -> None:
    """Products 1..count; only even ids have a description."""
    client.create_table(
        TableName="products",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for start in range(1, count + 1, 25):
        puts = []
        for i in range(start, min(count, start + 24) + 1):
            item = {"id": {"N": str(i)}, "name": {"S": f"{WORDS[i % 6]} model {i}"}}
            if i % 2 == 0:
                item["description"] = {"S": f"a {WORDS[(i + 1) % 6]} for every room"}
            puts.append({"PutRequest": {"Item": item}})
        client.batch_write_item(RequestItems={"products": puts})


def build(*args: str) -> int:
    return main(["index", "build", "products", "--db", DB, "--yes", *args])


def test_index_build_reads_every_item_by_paginated_scan(
    dynamo_endpoint: str,
    scripted_bedrock: ScriptedBedrock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = raw_client()
    make_products(client, 130)
    monkeypatch.setattr(source, "PAGE_ROWS", 40)  # four Scan pages
    pages: list[int] = []
    real_scan = scan_rows.scan_all

    def counted(*args: Any, **kwargs: Any) -> Iterator[list[dict[str, Any]]]:
        for batch in real_scan(*args, **kwargs):
            pages.append(len(batch))
            yield batch

    monkeypatch.setattr(scan_rows, "scan_all", counted)
    assert build("--columns", "name,description") == 0
    texts = [body["inputText"] for _, body in scripted_bedrock.invocations]
    assert len(texts) == 130
    assert "name: kettle model 128\ndescription: a speaker for every room" in texts
    assert "name: blanket model 7" in texts  # no description: the name alone
    capsys.readouterr()
    assert main(["index", "status", "--db", DB, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["indexes"]
    assert entry["rows"] == 130 and entry["columns"] == ["name", "description"]
    assert sum(pages) == 130 and len(pages) >= 4 and max(pages) <= 40

    store = open_store(DB)
    try:
        query = "kettle model 128, a speaker for every room"
        result = search(store, "products", query, limit=3)
    finally:
        store.close()
    assert result["results"][0]["key"] == {"id": 128}
    assert result["results"][0]["row"]["name"] == "kettle model 128"

    client.update_item(
        TableName="products",
        Key={"id": {"N": "5"}},
        UpdateExpression="SET #n = :v",
        ExpressionAttributeNames={"#n": "name"},
        ExpressionAttributeValues={":v": {"S": "heated wool blanket"}},
    )
    client.delete_item(TableName="products", Key={"id": {"N": "6"}})
    capsys.readouterr()
    assert build() == 0
    assert "1 row to embed, 1 to drop, 128 unchanged" in capsys.readouterr().out
    assert scripted_bedrock.invocations[-1][1]["inputText"] == "name: heated wool blanket"
    assert len(scripted_bedrock.invocations) == 130 + 1 + 1  # build, the query, the rebuild


def test_a_search_with_a_condition_finds_the_matching_items(
    dynamo_endpoint: str, scripted_bedrock: ScriptedBedrock
) -> None:
    """`where` is a PartiQL condition on DynamoDB (it was wrapped in SQL the server refused):
    the nearest items that satisfy it come back, with their attributes."""
    make_products(raw_client(), 60)
    assert build("--columns", "name,description") == 0
    store = open_store(DB)
    try:
        query = "kettle model 26, a speaker for every room"
        result = search(store, "products", query, limit=3, where='"id" > 20')
    finally:
        store.close()
    hits = result["results"]
    assert hits and all(hit["key"]["id"] > 20 for hit in hits)
    assert hits[0]["key"] == {"id": 26} and hits[0]["row"]["name"] == "kettle model 26"


def test_an_attribute_missing_from_the_sampled_items_can_be_indexed(
    dynamo_endpoint: str, scripted_bedrock: ScriptedBedrock, capsys: pytest.CaptureFixture[str]
) -> None:
    """DynamoDB's columns are those of a sample of items; `--columns` takes an attribute only
    later items have (it was refused as unknown), and a name that is nowhere embeds nothing."""
    client = raw_client()
    make_products(client, 120)
    client.put_item(
        TableName="products",
        Item={"id": {"N": "121"}, "name": {"S": "desk lamp"}, "notes": {"S": "warm light"}},
    )
    store = open_store(DB)
    try:
        seen = [c.name for c in store.describe_table("products").columns]
    finally:
        store.close()
    assert "notes" not in seen  # the precondition: the sample did not see it
    assert build("--columns", "notes") == 0
    texts = [body["inputText"] for _, body in scripted_bedrock.invocations]
    assert texts == ["notes: warm light"]
    capsys.readouterr()
    assert main(["index", "status", "--db", DB, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["indexes"]
    assert entry["columns"] == ["notes"]
