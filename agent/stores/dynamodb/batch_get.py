"""Many items by key in BatchGetItem calls, and whether an item holds given values."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agent.stop import reads_should_stop
from agent.stores.base import Item, Key, stopped_error
from agent.stores.dynamodb.types import item_to_plain, same_value

if TYPE_CHECKING:
    from agent.stores.dynamodb.store import DynamoDBStore

BATCH_KEYS = 100
"""BatchGetItem's limit of keys per call."""


def get_items(store: DynamoDBStore, table: str, keys: list[Key]) -> list[Item | None]:
    """The item for each key (None where none exists): consistent reads, 100 keys a call,
    unprocessed keys asked again; each distinct key is read once. A Stop of this thread
    (`agent.stop.reads_stop_when`) ends it before its next call."""
    name, attrs, _ = store._key_shape(table)  # noqa: SLF001 - the store's own helper module
    normalized = [store.normalize_key(name, k) for k in keys]

    def signature(key: Key) -> tuple[Any, ...]:  # binary keys are dicts: compared as JSON
        values = (key.get(a) for a in attrs)
        return tuple(json.dumps(v, sort_keys=True) if isinstance(v, dict) else v for v in values)

    found: dict[tuple[Any, ...], Item] = {}
    unique = list({signature(k): k for k in normalized}.values())
    for start in range(0, len(unique), BATCH_KEYS):
        pending: dict[str, Any] = {
            name: {
                "Keys": [store.wire_key(name, k) for k in unique[start : start + BATCH_KEYS]],
                "ConsistentRead": True,
            }
        }
        while pending:
            if reads_should_stop():  # Stop: no further call is made
                raise stopped_error()
            response = store._call(  # noqa: SLF001
                "batch_get_item",
                "dynamodb:BatchGetItem",
                name,
                RequestItems=pending,
                ReturnConsumedCapacity="TOTAL",
            )
            report = store._report()  # noqa: SLF001
            report.add({"ConsumedCapacity": response.get("ConsumedCapacity")})
            for raw in response.get("Responses", {}).get(name, []):
                item = store._ordered(name, item_to_plain(raw))  # noqa: SLF001
                report.items_scanned += 1
                found[signature(item)] = item
            pending = response.get("UnprocessedKeys") or {}
    return [found.get(signature(k)) for k in normalized]


def holds_item(item: Item | None, values: Item, whole: bool) -> bool:
    """Whether `item` holds `values` (null: no such attribute); `whole`: and nothing else.
    Values compare as DynamoDB compares them (`same_value`: typed, numbers by value). An
    attribute of type NULL reads as None yet is there: null (REMOVE) would change it."""
    if item is None:
        return False
    wanted = {k: v for k, v in values.items() if v is not None}
    if any(k in item for k, v in values.items() if v is None):
        return False
    if whole and item.keys() != wanted.keys():
        return False
    return all(k in item and same_value(item[k], v) for k, v in wanted.items())
