"""Items of a DynamoDB table that reference given items (declared relationships), for the
orphan warning before deletes commit: a Query on an index keyed by the referencing attribute
when there is one, else one bounded Scan of the referencing table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.stores.base import Item
from agent.stores.dynamodb.reads import scan_pages
from agent.stores.dynamodb.types import item_to_plain, value_to_wire
from agent.stores.references import Reference, ReferencingRows

if TYPE_CHECKING:
    from agent.stores.dynamodb.store import DynamoDBStore

QUERY_TARGETS = 100
"""Up to this many referenced values are looked up with one index Query each; more: a Scan."""


def _index_on(store: DynamoDBStore, table: str, attribute: str) -> str | None:
    """A global index of `table` whose partition key is `attribute` (None: no such index)."""
    for index in store.describe_raw(table).get("GlobalSecondaryIndexes", []):
        hash_key = next(k for k in index["KeySchema"] if k["KeyType"] == "HASH")
        if hash_key["AttributeName"] == attribute and index.get("IndexStatus", "ACTIVE") == "ACTIVE":
            return str(index["IndexName"])
    return None


def referencing(
    store: DynamoDBStore,
    reference: Reference,
    items: list[Item],
    examples: int,
    excluded: set[tuple[Any, ...]] | None = None,
) -> ReferencingRows | None:
    """How many items of `reference.table` hold the target values of `items` (None: none),
    not counting the items whose key is in `excluded` (they are being deleted too)."""
    targets = {tuple(item.get(c) for c in reference.target_columns) for item in items}
    targets = {t for t in targets if None not in t}
    if not targets:
        return None
    child = reference.table
    keys = store.key_attributes(child)
    names = {f"#a{i}": a for i, a in enumerate(dict.fromkeys([*keys, *reference.columns]))}
    index = _index_on(store, child, reference.columns[0]) if len(reference.columns) == 1 else None
    matches: list[tuple[tuple[Any, ...], Item]] = []
    action = "dynamodb:Query" if index and len(targets) <= QUERY_TARGETS else "dynamodb:Scan"
    with store.bounded(child, action) as report:
        if action == "dynamodb:Query":
            for target in sorted(targets, key=repr):
                request: dict[str, Any] = {
                    "TableName": child,
                    "IndexName": index,
                    "KeyConditionExpression": "#k = :v",
                    "ExpressionAttributeNames": {"#k": reference.columns[0], **names},
                    "ExpressionAttributeValues": {":v": value_to_wire(target[0])},
                    "ProjectionExpression": ", ".join(names),
                }
                for response in scan_pages(store.client, request, report, store.limits, "query"):
                    matches += [(target, item_to_plain(i)) for i in response.get("Items", [])]
        else:
            request = {
                "TableName": child,
                "ProjectionExpression": ", ".join(names),
                "ExpressionAttributeNames": names,
            }
            for response in scan_pages(store.client, request, report, store.limits):
                for raw in response.get("Items", []):
                    item = item_to_plain(raw)
                    held = tuple(item.get(c) for c in reference.columns)
                    if held in targets:
                        matches.append((held, item))
    if excluded:
        matches = [(t, i) for t, i in matches if tuple(i.get(k) for k in keys) not in excluded]
    if not matches:
        return None
    found = [{k: item.get(k) for k in keys} for _, item in matches[:examples]]
    return ReferencingRows(reference, len(matches), len({t for t, _ in matches}), found)
