"""`tabletalk demo dynamodb`: the SQLite demo's tables and rows as DynamoDB tables (orders with
GSIs on status and on customer), created on the current endpoint; existing tables are refused."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.errors import StoreError
from agent.stores.demo import build_demo_db
from agent.stores.dynamodb.client import call
from agent.stores.dynamodb.types import item_to_wire

INDEXES = {"orders": [("status-index", "status", "S"), ("customer-index", "customer_id", "N")]}


def _tables(conn: sqlite3.Connection) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each demo table with its key columns and their DynamoDB types, in key order."""
    names = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
    ]
    out = []
    for name in names:
        info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
        keys = sorted((r for r in info if r[5]), key=lambda r: r[5])
        out.append((name, [(r[1], "N" if "INT" in r[2].upper() else "S") for r in keys]))
    return out


def create_demo_tables(client: Any, region: str, prefix: str = "") -> list[str]:
    """Create and fill the demo tables; refuses (changing nothing) when any already exists."""
    existing = set(
        call(client.list_tables, "dynamodb:ListTables", None, region).get("TableNames", [])
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = build_demo_db(Path(tmp) / "demo.sqlite")
        conn = sqlite3.connect(path)
        try:
            tables = _tables(conn)
            clash = [prefix + name for name, _ in tables if prefix + name in existing]
            if clash:
                raise StoreError(
                    f"these tables already exist: {', '.join(clash)}; nothing was changed",
                    fix="Use another endpoint or region, or delete those tables yourself first.",
                )
            for name, keys in tables:
                _create(client, region, prefix + name, keys, INDEXES.get(name, []))
            for name, _keys in tables:
                cursor = conn.execute(f'SELECT * FROM "{name}"')
                columns = [d[0] for d in cursor.description]
                items = [
                    {c: v for c, v in zip(columns, row, strict=True) if v is not None}
                    for row in cursor.fetchall()
                ]
                _fill(client, region, prefix + name, items)
        finally:
            conn.close()
    return [prefix + name for name, _ in tables]


def _create(
    client: Any,
    region: str,
    table: str,
    keys: list[tuple[str, str]],
    gsis: list[tuple[str, str, str]],
) -> None:
    attributes = dict(keys) | {attr: kind for _, attr, kind in gsis}
    request: dict[str, Any] = {
        "TableName": table,
        "KeySchema": [
            {"AttributeName": k, "KeyType": "HASH" if i == 0 else "RANGE"}
            for i, (k, _) in enumerate(keys)
        ],
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": t} for a, t in attributes.items()
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if gsis:
        request["GlobalSecondaryIndexes"] = [
            {
                "IndexName": index,
                "KeySchema": [{"AttributeName": attr, "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index, attr, _ in gsis
        ]
    call(client.create_table, "dynamodb:CreateTable", table, region, **request)
    for _ in range(120):
        status = client.describe_table(TableName=table)["Table"]["TableStatus"]
        if status == "ACTIVE":
            return
        time.sleep(0.5)


def _fill(client: Any, region: str, table: str, items: list[dict[str, Any]]) -> None:
    """BatchWriteItem in chunks of 25, resending unprocessed items."""
    for start in range(0, len(items), 25):
        pending = {
            table: [{"PutRequest": {"Item": item_to_wire(i)}} for i in items[start : start + 25]]
        }
        while pending:
            response = call(
                client.batch_write_item,
                "dynamodb:BatchWriteItem",
                table,
                region,
                RequestItems=pending,
            )
            pending = response.get("UnprocessedItems") or {}
