"""Items of a DynamoDB table that reference given items (declared relationships), for the
orphan warning before deletes commit: a Query on an index keyed by the referencing attribute
when there is one, else one bounded Scan of the referencing table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent.stores.base import Item, Key
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
        if (
            hash_key["AttributeName"] == attribute
            and index.get("IndexStatus", "ACTIVE") == "ACTIVE"
        ):
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


def referencing_rows(
    store: DynamoDBStore,
    table: str,
    keys: list[Key],
    also: tuple[Reference, ...],
    examples: int,
    deleted: Mapping[str, list[Key]] | None,
) -> list[ReferencingRows]:
    """`Store.referencing_rows` for DynamoDB: per declared relationship pointing at `table`,
    the items that reference these items (those `deleted` names are not counted)."""
    gone = {n.lower(): k for n, k in (deleted or {}).items()}
    name = str(store.describe_raw(table)["TableName"])
    references = [r for r in also if r.target.lower() == name.lower()]
    if not references:
        return []
    items = [i for i in store.get_items(name, keys) if i is not None]
    found = []
    for reference in references:
        child = Reference(
            str(store.describe_raw(reference.table)["TableName"]),
            reference.columns,
            name,
            reference.target_columns,
            reference.via,
        )
        attributes = store.key_attributes(child.table)
        excluded = {
            tuple(store.normalize_key(child.table, k).get(a) for a in attributes)
            for k in gone.get(reference.table.lower(), [])
        }
        rows = referencing(store, child, items, examples, excluded)
        if rows is not None:
            found.append(rows)
    return found
