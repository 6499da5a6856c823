"""Commit staged changes with TransactWriteItems: ≤ 100 changes per transaction, each guarded
by its pre-image, each transaction idempotent through a ClientRequestToken from its change ids.

Update: SET the given attributes, REMOVE those given as null, on condition that every
attribute of the pre-image still has its value and the attributes it lacked are still absent.
Delete: the same condition. Create: `attribute_not_exists` on the partition key. A cancelled
transaction's ConditionalCheckFailed reasons carry the current item (ALL_OLD): those are the
conflicts; the commit stops there, earlier transactions stay committed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent.errors import InDoubtError, StoreError
from agent.stores.base import ApplyResult, ChangeToApply, Conflict, Landed
from agent.stores.dynamodb.client import translate
from agent.stores.dynamodb.types import item_to_plain, value_to_wire

if TYPE_CHECKING:
    from agent.stores.dynamodb.store import DynamoDBStore

BATCH = 100


def batches(changes: list[ChangeToApply], size: int = BATCH) -> list[list[ChangeToApply]]:
    """Consecutive transactions of at most `size` changes, in staging order."""
    return [changes[i : i + size] for i in range(0, len(changes), size)]


def request_token(changes: list[ChangeToApply]) -> str:
    """A ClientRequestToken (≤ 36 chars) from the change ids: a retry cannot apply twice."""
    return hashlib.sha256(",".join(c.id for c in changes).encode()).hexdigest()[:36]


class _Expr:
    """Collects #name / :value placeholders for one write."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attr: str) -> str:
        for placeholder, known in self.names.items():
            if known == attr:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attr
        return placeholder

    def value(self, plain: Any, where: str) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value_to_wire(plain, where)
        return placeholder

    def extend(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request


def _same_as_pre_image(expr: _Expr, change: ChangeToApply, keys: tuple[str, ...]) -> str:
    pre = change.pre_image or {}
    parts = [f"{expr.name(k)} = {expr.value(v, k)}" for k, v in pre.items() if k not in keys]
    parts += [
        f"attribute_not_exists({expr.name(k)})"
        for k in change.values
        if k not in pre and k not in keys
    ]
    parts.insert(0, f"attribute_exists({expr.name(keys[0])})")
    return " AND ".join(parts)


def write_of(store: DynamoDBStore, change: ChangeToApply) -> dict[str, Any]:
    """One TransactWriteItems entry for a staged change."""
    keys = store.key_attributes(change.table)
    key = store.wire_key(change.table, change.key)
    expr = _Expr()
    base: dict[str, Any] = {
        "TableName": change.table,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if change.op == "create":
        item = {**change.key, **{k: v for k, v in change.values.items() if v is not None}}
        wire = {k: value_to_wire(v, k) for k, v in item.items()}
        condition = f"attribute_not_exists({expr.name(keys[0])})"
        return {"Put": expr.extend({**base, "Item": wire, "ConditionExpression": condition})}
    condition = _same_as_pre_image(expr, change, keys)
    if change.op == "delete":
        return {"Delete": expr.extend({**base, "Key": key, "ConditionExpression": condition})}
    sets = [
        f"{expr.name(k)} = {expr.value(v, k)}"
        for k, v in change.values.items()
        if v is not None and k not in keys
    ]
    removes = [expr.name(k) for k, v in change.values.items() if v is None and k not in keys]
    update = " ".join(
        part
        for part in (
            f"SET {', '.join(sets)}" if sets else "",
            f"REMOVE {', '.join(removes)}" if removes else "",
        )
        if part
    )
    request = {**base, "Key": key, "ConditionExpression": condition}
    if not update:  # nothing changes: still check the item is as staged
        return {"ConditionCheck": expr.extend(request)}
    return {"Update": expr.extend({**request, "UpdateExpression": update})}


def apply_changes(
    store: DynamoDBStore,
    changes: list[ChangeToApply],
    progress: Callable[[int, int], Any] | None = None,
    landed: Landed | None = None,
) -> ApplyResult:
    """Run the transactions in order; stop at the first one that is cancelled; raise (one
    line) on any other failure: each transaction is all or nothing, and `landed(ids)` has
    already been told of every one that committed (staging drops those at once).
    """
    result = ApplyResult()
    total = len(changes)
    for batch in batches(changes):
        writes = [write_of(store, c) for c in batch]
        try:
            store.client.transact_write_items(
                TransactItems=writes,
                ClientRequestToken=request_token(batch),
                ReturnConsumedCapacity="TOTAL",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "TransactionCanceledException":
                result.conflicts.extend(_conflicts(batch, dict(exc.response)))
                return result
            raise _failure(store, exc, batch, _maybe_applied(exc)) from exc
        except BotoCoreError as exc:
            raise _failure(store, exc, batch, in_doubt=True) from exc
        ids = [c.id for c in batch]
        result.applied.extend(ids)
        if landed is not None:
            landed(ids)
        if progress is not None:
            progress(len(result.applied), total)
    return result


def _maybe_applied(exc: ClientError) -> bool:
    """True when DynamoDB may have applied the transaction although the call failed: a server
    error. A refusal (4xx: throttled, invalid) was not applied; had an earlier attempt landed
    before timing out, the retry's ClientRequestToken would have been answered as a success."""
    meta = exc.response.get("ResponseMetadata", {})
    return int(meta.get("HTTPStatusCode") or 500) >= 500


def _failure(
    store: DynamoDBStore, exc: Exception, batch: list[ChangeToApply], in_doubt: bool
) -> StoreError:
    """One line for a transaction that failed; an InDoubtError naming its changes when it may
    have been applied (connection lost, timeout, server error), so staging settles them."""
    error = translate(exc, action="dynamodb:TransactWriteItems", region=store.region)
    if not in_doubt:
        return error
    return InDoubtError(error.message, fix=error.fix, ids=[c.id for c in batch])


def _conflicts(batch: list[ChangeToApply], response: dict[str, Any]) -> list[Conflict]:
    reasons = response.get("CancellationReasons") or []
    conflicts: list[Conflict] = []
    for change, reason in zip(batch, reasons, strict=False):
        code = reason.get("Code", "None")
        if code in ("None", None):
            continue
        current = item_to_plain(reason["Item"]) if reason.get("Item") else None
        if code == "ConditionalCheckFailed":
            why = (
                "an item with this key already exists"
                if change.op == "create"
                else "the item changed since it was staged"
                if current is not None
                else "the item was deleted since it was staged"
            )
        else:
            why = f"DynamoDB refused it ({code}: {reason.get('Message', '')})"
        conflicts.append(Conflict(change.id, why, current))
    if not conflicts:  # cancelled for a reason DynamoDB did not pin on one change
        message = str(response.get("Error", {}).get("Message", "transaction cancelled"))
        conflicts = [Conflict(c.id, message, None) for c in batch]
    return conflicts
