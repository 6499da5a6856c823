"""What DescribeTable (and a small sample) says about a DynamoDB table, as the Store reports
it: the schema, the extra facts of describeTable, index statistics and size labels."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agent.stores.base import Column, IndexInfo, TableInfo
from agent.stores.dynamodb.partiql_guard import quote_name
from agent.text_plural import counted

KEY_TYPE_NAMES = {"S": "string", "N": "number", "B": "binary"}
"""A key attribute's DynamoDB type letter → the word schemas and errors use."""


@dataclass(frozen=True)
class DynamoTableInfo(TableInfo):
    """TableInfo with DynamoDB's own facts (indexes with projections, billing, approximations)."""

    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; counts are labelled approximate."""
        out = super().to_dict()
        out.pop("rowCount", None)
        out.update(self.extra)
        return out


def _indexes(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return list(raw.get("GlobalSecondaryIndexes", [])) + list(raw.get("LocalSecondaryIndexes", []))


def table_info(
    raw: dict[str, Any],
    keys: tuple[str, ...],
    types: dict[str, str],
    seen: dict[str, Counter[str]],
    sampled: int,
    *,
    with_extra: bool,
) -> DynamoTableInfo:
    """The table's schema from DescribeTable's `raw` answer, its key attributes and their
    types, and the attribute types `seen` in a sample of `sampled` items (keys first)."""
    columns = [
        Column(k, KEY_TYPE_NAMES.get(types.get(k, ""), "string"), key_position=i + 1, not_null=True)
        for i, k in enumerate(keys)
    ]
    columns += [Column(a, "/".join(sorted(c))) for a, c in sorted(seen.items()) if a not in keys]
    indexes = [
        IndexInfo(str(i["IndexName"]), tuple(k["AttributeName"] for k in i["KeySchema"]))
        for i in _indexes(raw)
    ]
    extra = _extra(raw, sampled) if with_extra else {}
    count = int(raw.get("ItemCount", 0))
    return DynamoTableInfo(
        raw["TableName"], keys, tuple(columns), tuple(indexes), count, extra=extra
    )


def _extra(raw: dict[str, Any], sampled: int) -> dict[str, Any]:
    def index(i: dict[str, Any], kind: str) -> dict[str, Any]:
        projection = i.get("Projection", {})
        return {
            "name": i["IndexName"],
            "kind": kind,
            "key": [f"{k['AttributeName']} ({k['KeyType']})" for k in i["KeySchema"]],
            "projection": projection.get("ProjectionType", "ALL"),
            **(
                {"projected": projection["NonKeyAttributes"]}
                if projection.get("NonKeyAttributes")
                else {}
            ),
        }

    billing = raw.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    return {
        "keySchema": [f"{k['AttributeName']} ({k['KeyType']})" for k in raw["KeySchema"]],
        "indexes": [index(i, "GSI") for i in raw.get("GlobalSecondaryIndexes", [])]
        + [index(i, "LSI") for i in raw.get("LocalSecondaryIndexes", [])],
        "billingMode": billing,
        "approximateItemCount": int(raw.get("ItemCount", 0)),
        "approximateSizeBytes": int(raw.get("TableSizeBytes", 0)),
        "note": "Counts and size are DynamoDB's approximations (updated about every 6 hours); "
        f"attribute types are those seen in a sample of {counted(sampled, 'item')}: other items may "
        "have other attributes.",
    }


def index_stats(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Each GSI/LSI with key schema, projection, status and approximate item count."""
    out = []
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for i in raw.get(kind, []):
            out.append(
                {
                    "name": i["IndexName"],
                    "kind": "GSI" if kind.startswith("Global") else "LSI",
                    "columns": [k["AttributeName"] for k in i["KeySchema"]],
                    "projection": i.get("Projection", {}).get("ProjectionType", "ALL"),
                    "status": i.get("IndexStatus", "ACTIVE"),
                    "approximateItemCount": int(i.get("ItemCount", 0)),
                }
            )
    return out


def narrowing_hint(table: str, keys: tuple[str, ...], raw: dict[str, Any]) -> str:
    """How to narrow a read of `table` that a cap stopped: its key, or one of its indexes."""
    indexes = [
        f"{i['IndexName']} ({', '.join(k['AttributeName'] for k in i['KeySchema'])})"
        for i in _indexes(raw)
    ]
    text = f"the key ({', '.join(keys)}), e.g. WHERE {quote_name(keys[0])} = ..."
    if indexes:
        text += f', or query an index: {", ".join(indexes)} (FROM "{table}"."INDEX")'
    return text


def size_label(keys: tuple[str, ...], raw: dict[str, Any]) -> str:
    """Key schema and DynamoDB's approximate item count (no scan)."""
    count = int(raw.get("ItemCount", 0))
    items = f"~{count:,} item{'' if count == 1 else 's'}"
    return f"key ({', '.join(keys)})  {items}"
