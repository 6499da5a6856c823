"""Checks on what is being staged, and the errors they raise (each names the way out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agent.errors import BadKeyError, StagingError, TabletalkError, UnknownColumnError
from agent.staging.model import StagedChange
from agent.stores.base import INT_MAX, INT_MIN, Column, Item, Key, Op, Store, unstorable
from agent.text_plural import counted

MAX_ITEMS_PER_CALL = 10_000


class TableShape(Protocol):
    """What staging needs to know of a table: its name, columns and key (a TableInfo has it)."""

    @property
    def name(self) -> str: ...

    @property
    def columns(self) -> Sequence[Column]: ...

    @property
    def key_columns(self) -> tuple[str, ...]: ...


def validate_values(
    info: TableShape,
    op: Op,
    values: Item | None,
    *,
    check_value: Callable[[str, Any], None] | None = None,
) -> Item:
    """Check op and attribute names against the table; return values with canonical names.

    `check_value` is given for a store whose items take any attribute (DynamoDB): unknown names
    are then allowed and each value is judged by it instead of the scalar checks.
    """
    if op not in ("create", "update", "delete"):
        raise StagingError(f"unknown op {op!r}", fix="Use op create, update or delete.")
    values = values or {}
    if not isinstance(values, dict):
        raise StagingError(
            "values must be an object of column: value", fix='Pass values like {"status": "x"}.'
        )
    if op == "delete" and values:
        raise StagingError("a delete takes no values", fix="Leave values out for op delete.")
    if op == "update" and not values:
        raise StagingError(
            "an update needs at least one attribute to change",
            fix='Pass values like {"status": "shipped"}, or use op delete.',
        )
    names = {c.name.lower(): c.name for c in info.columns}
    clean: Item = {}
    for given, value in values.items():
        name = names.get(str(given).lower())
        if check_value is not None:
            name = name or str(given)
            check_value(name, value)
        elif name is None:
            raise UnknownColumnError(
                f"table {info.name!r} has no column {given!r}",
                fix=f"Valid columns of {info.name}: {', '.join(c.name for c in info.columns)}.",
            )
        elif isinstance(value, dict | list | bytes):
            raise StagingError(
                f"{name} must be a text, number, boolean or null value, not {type(value).__name__}",
                fix=f"Give {name} a scalar value (serialize structured data to text first).",
            )
        reason = unstorable(value) if check_value is None else None
        if reason is not None:
            raise StagingError(
                f"{name}: {reason}",
                fix=f"Give {name} an integer from {INT_MIN} to {INT_MAX}, a finite number, text "
                "or null (a larger number can be stored as text).",
            )
        if name in info.key_columns and op == "update":
            raise BadKeyError(
                f"{name} is a key column of {info.name}; an update cannot change the key",
                fix="Stage a delete of the old item and a create of the new one instead.",
            )
        if name not in info.key_columns:
            clean[name] = value
    return clean


def too_many(count: int | None) -> StagingError:
    """The error for a bulk edit above the per-call limit."""
    found = f"more than {MAX_ITEMS_PER_CALL:,} items" if count is None else counted(count, "item")
    return StagingError(
        f"the selection matches {found}; bulkEdit stages at most "
        f"{MAX_ITEMS_PER_CALL:,} per call, so nothing was staged",
        fix="Narrow the query (add a WHERE condition, or a key range) and stage in several calls.",
    )


PRE_IMAGE_NAMES_BUDGET = 64 * 2**20
"""Bytes of column names one bulk edit may copy into its pre-images (each pre-image names every
column): a table with a megabyte-long column name made 300 pre-images take 300 MB."""


def check_pre_image_names(shape: TableShape, rows: int) -> None:
    """Refuse a bulk edit of `rows` items whose pre-images would repeat more than
    `PRE_IMAGE_NAMES_BUDGET` bytes of column names, before anything is read or written."""
    per_row = sum(len(c.name.encode("utf-8", "surrogatepass")) + 4 for c in shape.columns)
    if per_row * rows <= PRE_IMAGE_NAMES_BUDGET:
        return
    fit = PRE_IMAGE_NAMES_BUDGET // per_row
    raise StagingError(
        f"the table's column names take {per_row:,} bytes, and each of the {rows:,} "
        f"staged changes keeps them in its pre-image ({per_row * rows / 2**20:,.0f} MB, over "
        f"the {PRE_IMAGE_NAMES_BUDGET // 2**20} MB limit), so nothing was staged",
        fix=f"Stage at most {fit:,} items per call on this table (or give its columns "
        "shorter names).",
    )


def in_commit_error(change_id: str) -> StagingError:
    """The error for staging onto an item whose change a running or interrupted commit holds."""
    return StagingError(
        f"change {change_id} on this item is part of a commit that is running",
        fix="Wait for that commit to finish, then stage again; nothing was staged.",
    )


def others_change_error(table: str, key: Key, existing: StagedChange, origin: str) -> StagingError:
    """The error for staging onto an item whose staged change another origin made, when the
    caller may change only its own (an MCP client below `full`)."""
    shown = ", ".join(f"{k}={v!r}" for k, v in key.items())
    return StagingError(
        f"the item with key {shown} in {table} already has change {existing.id}, staged by "
        f"{existing.origin}; nothing was staged",
        fix=f"At this MCP level you may change only the changes you staged (origin {origin}): "
        "leave this item out, or ask the user to commit or discard that change first.",
    )


def summarize(errors: list[TabletalkError], total: int) -> TabletalkError:
    """One error standing for several items that cannot be staged."""
    first = "; ".join(e.message for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    kind = type(errors[0]) if all(type(e) is type(errors[0]) for e in errors) else StagingError
    return kind(
        f"{len(errors):,} of {counted(total, 'item')} cannot be staged, so nothing was staged: {first}{more}",
        fix=errors[0].fix,
    )


def check_key_values(store: Store, info: TableShape, key: Key, values: Item) -> None:
    """A create may repeat key columns in its values, but only with the key's own values."""
    names = {c.name.lower(): c.name for c in info.columns}
    for given, value in values.items():
        name = names.get(str(given).lower())
        if name in key and store.normalize_key(info.name, {**key, name: value}) != key:
            raise BadKeyError(
                f"values give key column {name} the value {value!r}, but the key says "
                f"{key[name]!r}",
                fix="Put key columns only in the key (or give the same value in both).",
            )


def keys_from_query(store: Store, info: TableShape, query: str) -> list[Key]:
    """The keys a bulk edit's query selects (at most MAX_ITEMS_PER_CALL of them)."""
    result = store.query(query, limit=MAX_ITEMS_PER_CALL + 1)
    if result.truncated or len(result.rows) > MAX_ITEMS_PER_CALL:
        raise too_many(None)
    by_lower = {c.lower(): c for c in result.columns}
    missing = [k for k in info.key_columns if k.lower() not in by_lower]
    if missing:
        key_list = ", ".join(info.key_columns)
        raise StagingError(
            f"the query must return the key columns of {info.name} ({key_list}); "
            f"it returned: {', '.join(result.columns) or 'no columns'}",
            fix=f"Select the key columns, e.g. SELECT {key_list} FROM {info.name} WHERE ...",
        )
    pairs = [(k, by_lower[k.lower()]) for k in info.key_columns]
    if len(pairs) == 1:
        ((name, column),) = pairs
        return [{name: row[column]} for row in result.rows]
    return [{k: row[c] for k, c in pairs} for row in result.rows]


def bulk_op(keys: object, query: object, values: Item | None, delete: bool) -> Op:
    """The op of a bulk edit given exactly one of keys/query and one of set/delete; a
    StagingError naming the fix otherwise."""
    if (keys is None) == (query is None):
        raise StagingError(
            "give exactly one of keys or query",
            fix="Pass keys: [{...}, ...] or query: 'SELECT <key columns> FROM ... WHERE ...'.",
        )
    if bool(values) == bool(delete):
        raise StagingError(
            "give exactly one of set (attributes to change) or delete: true",
            fix="Pass set: {column: value} to update the items, or delete: true.",
        )
    return "delete" if delete else "update"
