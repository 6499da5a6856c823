"""A whole-table read of DynamoDB items: paginated Scan projecting the wanted attributes, with
no cap (see `Store.scan_rows`): the user asked for every item, e.g. to build an index."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent.stop import reads_should_stop
from agent.stores.base import Item, stopped_error
from agent.stores.dynamodb.client import translate
from agent.stores.dynamodb.types import item_to_plain


def scan_all(
    client: Any, table: str, attributes: Sequence[str], batch_size: int, *, region: str | None
) -> Generator[list[Item], None, None]:
    """Items of `table` with only `attributes`, one Scan page (at most `batch_size`) at a time."""
    names = {f"#a{i}": name for i, name in enumerate(dict.fromkeys(attributes))}
    request: dict[str, Any] = {
        "TableName": table,
        "ProjectionExpression": ", ".join(names),
        "ExpressionAttributeNames": names,
        "Limit": batch_size,
    }
    while True:
        if reads_should_stop():
            raise stopped_error()
        try:
            response = client.scan(**request)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, action="dynamodb:Scan", table=table, region=region) from exc
        yield [item_to_plain(item) for item in response.get("Items", [])]
        start = response.get("LastEvaluatedKey")
        if not start:
            return
        request["ExclusiveStartKey"] = start
