"""Read tools: the clock, the tables, read-only queries, items, counts, samples and indexes."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent.errors import TabletalkError
from agent.stores.base import MAX_READ_BYTES, NARROWER_QUERY
from agent.text_plural import counted, noun
from agent.tools.base import (
    CUT_NOTE,
    TABLE_FIELD,
    ToolContext,
    ToolFailure,
    ToolImpl,
    ToolInput,
    compact_rows,
    is_select,
    json_value,
    require_attributes,
    require_table,
    strip_where,
)

DEFAULT_QUERY_LIMIT = 50
MAX_QUERY_LIMIT = 500
CONDITION_HELP = (
    "optional SQL condition that filters rows (the part after WHERE), e.g. status = 'pending'"
)


class NoInput(ToolInput):
    """No input."""


class TableInput(ToolInput):
    """One table."""

    table: str = Field(description=TABLE_FIELD)


class QueryInput(ToolInput):
    """A read-only query."""

    query: str = Field(description="one read-only SELECT statement", min_length=1)
    limit: int = Field(
        DEFAULT_QUERY_LIMIT, ge=1, le=MAX_QUERY_LIMIT, description="max rows returned (1-500)"
    )


class GetItemInput(ToolInput):
    """One item by key."""

    table: str = Field(description=TABLE_FIELD)
    key: dict[str, Any] = Field(description='the key columns and values, e.g. {"id": 7}')


class CountInput(ToolInput):
    """A count, optionally filtered."""

    table: str = Field(description=TABLE_FIELD)
    query: str | None = Field(None, description=CONDITION_HELP)


class SampleInput(ToolInput):
    """A column to sample."""

    table: str = Field(description=TABLE_FIELD)
    column: str = Field(description="column name (see describeTable)")
    limit: int = Field(20, ge=1, le=100, description="max distinct values (1-100)")


class VectorInput(ToolInput):
    """A semantic search."""

    table: str = Field(description=TABLE_FIELD)
    query: str = Field(min_length=1, description="what to look for, in plain words")
    limit: int = Field(10, ge=1, le=50, description="max rows (1-50)")
    where: str | None = Field(
        None,
        description="optional condition on the table's columns (SQL; PartiQL on DynamoDB), e.g. price < 50",
    )


def get_current_time(ctx: ToolContext, _: NoInput) -> dict[str, Any]:
    """getCurrentTime: the clock in the user's time zone, with weekday and UTC offset."""
    now = ctx.now()
    if now.tzinfo is None:
        now = now.astimezone()
    offset = now.strftime("%z")
    return {
        "iso": now.isoformat(timespec="seconds"),
        "date": now.date().isoformat(),
        "time": now.strftime("%H:%M:%S"),
        "weekday": now.strftime("%A"),
        "timezone": now.tzname() or "",
        "utcOffset": f"{offset[:3]}:{offset[3:]}" if offset else "+00:00",
    }


def list_tables(ctx: ToolContext, _: NoInput) -> dict[str, Any]:
    """listTables: the store's table names."""
    tables = ctx.store.list_tables()
    return {"store": ctx.store.label, "kind": ctx.store.kind, "tables": tables}


def describe_table(ctx: ToolContext, args: TableInput) -> dict[str, Any]:
    """describeTable: key, columns with types, indexes and row count."""
    return require_table(ctx, args.table).to_dict()


def run_query(ctx: ToolContext, args: QueryInput) -> dict[str, Any]:
    """runQuery: rows of one read-only query, capped at `limit`, long cells cut."""
    result = ctx.store.query(args.query, limit=args.limit)
    rows, cut = compact_rows(result.rows)
    out: dict[str, Any] = {"columns": result.columns, "rows": rows, "rowCount": len(rows)}
    if result.over_budget:
        out["truncated"] = (
            f"Only the first {counted(len(rows), 'row')} {noun(len(rows), 'is', 'are')} shown: the result reached the "
            f"{MAX_READ_BYTES // 2**20} MB limit of one read. {NARROWER_QUERY}"
        )
    elif result.truncated:
        out["truncated"] = (
            f"Only the first {counted(len(rows), 'row')} {noun(len(rows), 'is', 'are')} shown; more matched. "
            "Narrow the query, aggregate it, or raise limit (max 500)."
        )
    if cut:
        out["note"] = CUT_NOTE
    return out


def get_item(ctx: ToolContext, args: GetItemInput) -> dict[str, Any]:
    """getItem: one item by key; a missing item is an answer, not an error."""
    info = require_table(ctx, args.table)
    key = ctx.store.normalize_key(info.name, args.key)
    item = ctx.store.get_item(info.name, key)
    if item is None:
        return {
            "table": info.name,
            "key": key,
            "item": None,
            "message": f"No item in {info.name} has this key; use runQuery to search by other columns.",
        }
    rows, cut = compact_rows([item])
    out = {"table": info.name, "key": key, "item": rows[0]}
    if cut:
        out["note"] = CUT_NOTE
    return out


def condition_of(table: str, query: str | None) -> str | None:
    """The filter condition of a count/open call; a full SELECT is refused with the right form."""
    condition = strip_where(query)
    if condition and is_select(condition):
        raise ToolFailure(
            "query must be only a condition (the part after WHERE), not a SELECT statement",
            f'call it like {{"table": "{table}", "query": "status = \'pending\'"}}; '
            "for a custom SELECT use runQuery",
        )
    return condition


def count_items(ctx: ToolContext, args: CountInput) -> dict[str, Any]:
    """countItems: how many items, optionally matching a condition."""
    info = require_table(ctx, args.table)
    condition = condition_of(info.name, args.query)
    count = ctx.store.count(info.name, condition)
    out: dict[str, Any] = {"table": info.name, "count": count}
    if condition:
        out["condition"] = condition
    return out


def sample_values(ctx: ToolContext, args: SampleInput) -> dict[str, Any]:
    """sampleValues: distinct values of a column with their counts."""
    info = require_table(ctx, args.table)
    (column,) = require_attributes(ctx, info, [args.column], "column")
    values = ctx.store.sample_values(info.name, column, args.limit)
    clean, _ = json_value(values)
    return {"table": info.name, "column": column, "values": clean}


def get_index_stats(ctx: ToolContext, args: TableInput) -> dict[str, Any]:
    """getIndexStats: the table's indexes with sizes and key usage."""
    info = require_table(ctx, args.table)
    stats, _ = json_value(ctx.store.index_stats(info.name))
    return {"table": info.name, "key": list(info.key_columns), "indexes": stats}


def vector_search(ctx: ToolContext, args: VectorInput) -> dict[str, Any]:
    """vectorSearch: the rows nearest in meaning to the query, through the table's index."""
    from agent.vectors.build import build_chip  # apsw and sqlite-vec load only when used
    from agent.vectors.index import MissingIndex
    from agent.vectors.search import search

    info = require_table(ctx, args.table)
    where = strip_where(args.where)
    if where is not None and is_select(where):
        raise ToolFailure(
            "`where` takes a condition, not a query",
            "pass only the condition, e.g. price < 50 AND category = 'audio'",
        )
    try:
        result = search(
            ctx.store,
            info.name,
            args.query,
            args.limit,
            where,
            profile=ctx.aws_profile,
            region=ctx.aws_region,
        )
    except MissingIndex as exc:
        raise ToolFailure(exc.message, exc.fix or "", build_chip(info)) from exc
    except TabletalkError as exc:
        raise ToolFailure(exc.message, exc.fix or "see `tabletalk index status`") from exc
    rows, cut = compact_rows([hit.pop("row") or {} for hit in result["results"]])
    for hit, row in zip(result["results"], rows, strict=True):
        hit["row"] = row
    if cut:
        result["note"] = CUT_NOTE
    return result


TOOLS = [
    ToolImpl("getCurrentTime", NoInput, get_current_time, {}),
    ToolImpl("listTables", NoInput, list_tables, {}),
    ToolImpl("describeTable", TableInput, describe_table, {"table": "orders"}),
    ToolImpl(
        "runQuery",
        QueryInput,
        run_query,
        {"query": "SELECT id, status FROM orders WHERE status = 'pending'", "limit": 50},
    ),
    ToolImpl("getItem", GetItemInput, get_item, {"table": "orders", "key": {"id": 7}}),
    ToolImpl(
        "countItems", CountInput, count_items, {"table": "orders", "query": "status = 'pending'"}
    ),
    ToolImpl(
        "sampleValues",
        SampleInput,
        sample_values,
        {"table": "orders", "column": "status", "limit": 20},
    ),
    ToolImpl("getIndexStats", TableInput, get_index_stats, {"table": "orders"}),
    ToolImpl(
        "vectorSearch",
        VectorInput,
        vector_search,
        {"table": "products", "query": "warm blanket", "limit": 10},
    ),
]
