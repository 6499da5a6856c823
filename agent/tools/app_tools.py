"""Tools that act on the app: tabs, chips (propose*), the staging panel, search and ask."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent.errors import FilterError, ReadStopped, TabletalkError
from agent.search.text import MAX_QUERY_CHARS
from agent.tools.base import (
    TABLE_FIELD,
    ToolContext,
    ToolFailure,
    ToolImpl,
    ToolInput,
    require_columns,
    require_table,
)
from agent.tools.read_tools import CONDITION_HELP, NoInput, condition_of

CHIP_MESSAGE = "A chip was shown to the user; nothing opens until they click it."


class OpenTableInput(ToolInput):
    """A table, optionally filtered."""

    table: str = Field(description=TABLE_FIELD)
    query: str | None = Field(None, description=CONDITION_HELP)


class JoinedViewInput(ToolInput):
    """Two tables joined on one column each."""

    left: str = Field(description="first table")
    right: str = Field(description="second table")
    left_on: str = Field(description="column of the first table to match")
    right_on: str = Field(description="column of the second table to match")
    label: str | None = Field(None, description="optional short chip label", max_length=80)


class SearchInput(ToolInput):
    """A capability query."""

    query: str = Field(
        description="one capability in a few words, e.g. 'export to csv'",
        min_length=1,
        max_length=MAX_QUERY_CHARS,
    )
    limit: int = Field(5, ge=1, le=10, description="max tools returned (1-10)")
    schemas: bool = Field(False, description="also return each tool's input schema")


class AskInput(ToolInput):
    """A question for the user."""

    question: str = Field(description="one short clarifying question", min_length=1)
    choices: list[str] | None = Field(
        None, description="optional answers to pick from (2-6)", max_length=6
    )


def checked_filter(ctx: ToolContext, table: str, query: str | None) -> tuple[str | None, int]:
    """The filter condition and its row count, tried once so a chip or tab never opens broken."""
    condition = condition_of(table, query)
    try:
        matching = ctx.store.count(table, condition)
    except ReadStopped:
        raise  # Stop, not a filter that does not work
    except FilterError as exc:  # already about the condition as written, with its fix
        raise ToolFailure(
            exc.message,
            f'{exc.fix} describeTable with {{"table": "{table}"}} lists every column.',
        ) from exc
    except TabletalkError as exc:
        if condition:
            raise ToolFailure(
                f"the filter does not work on {table}: {exc.message}",
                f'fix the condition (call describeTable with {{"table": "{table}"}} '
                "for the column names), e.g. status = 'pending'",
            ) from exc
        raise
    return condition, matching


def open_table(ctx: ToolContext, args: OpenTableInput) -> dict[str, Any]:
    """openTable: open a (filtered) table in a tab at once, through the UI port."""
    info = require_table(ctx, args.table)
    condition, matching = checked_filter(ctx, info.name, args.query)
    return {"message": ctx.ui.open_table(info.name, condition), "matchingRows": matching}


def table_label(table: str, condition: str | None) -> str:
    """The label of an open-table chip."""
    return f"Open {table}" + (f" ({condition})" if condition else "")


def propose_open_table(ctx: ToolContext, args: OpenTableInput) -> dict[str, Any]:
    """proposeOpenTable: a chip that opens a (filtered) table when clicked."""
    info = require_table(ctx, args.table)
    condition, matching = checked_filter(ctx, info.name, args.query)
    action = {"kind": "openTable", "table": info.name, "query": condition}
    return {
        "chip": {"label": table_label(info.name, condition), "action": action},
        "matchingRows": matching,
        "message": CHIP_MESSAGE,
    }


def propose_joined_view(ctx: ToolContext, args: JoinedViewInput) -> dict[str, Any]:
    """proposeJoinedView: a chip that opens two tables joined on one column each."""
    left = require_table(ctx, args.left)
    right = require_table(ctx, args.right)
    (left_on,) = require_columns(left, [args.left_on], "left_on")
    (right_on,) = require_columns(right, [args.right_on], "right_on")
    label = args.label or (
        f"Open {left.name} joined with {right.name} ({left.name}.{left_on} = {right.name}.{right_on})"
    )
    action = {
        "kind": "openJoinedView",
        "left": left.name,
        "right": right.name,
        "left_on": left_on,
        "right_on": right_on,
        "label": label,
    }
    return {"chip": {"label": label, "action": action}, "message": CHIP_MESSAGE}


def list_open_tabs(ctx: ToolContext, _: NoInput) -> dict[str, Any]:
    """listOpenTabs: the app's open tabs."""
    tabs = ctx.ui.list_open_tabs()
    return {"tabs": tabs, "count": len(tabs)}


def open_staging_panel(ctx: ToolContext, _: NoInput) -> dict[str, Any]:
    """openStagingPanel: open the review panel through the UI port."""
    return {"message": ctx.ui.open_staging_panel(), "pending": ctx.staging.count()}


def search_tools(ctx: ToolContext, args: SearchInput) -> dict[str, Any]:
    """searchTools: delegated to the loop's search port (budget and active set live there)."""
    if ctx.search is None:
        raise ToolFailure(
            "tool search is not available in this session",
            "use the tools you already have, or call ask to clarify with the user",
        )
    return ctx.search.search(args.query, args.limit, schemas=args.schemas)


def ask(ctx: ToolContext, args: AskInput) -> dict[str, Any]:
    """ask: hand a question (and choices) to the user; the loop ends the turn on it."""
    choices = [c.strip() for c in args.choices or [] if c.strip()]
    return {"question": args.question.strip(), "choices": choices}


TOOLS = [
    ToolImpl(
        "searchTools",
        SearchInput,
        search_tools,
        {"query": "export query results to csv", "limit": 5},
    ),
    ToolImpl(
        "ask",
        AskInput,
        ask,
        {"question": "Which orders do you mean?", "choices": ["pending", "shipped"]},
    ),
    ToolImpl("listOpenTabs", NoInput, list_open_tabs, {}),
    ToolImpl(
        "openTable", OpenTableInput, open_table, {"table": "orders", "query": "status = 'pending'"}
    ),
    ToolImpl(
        "proposeOpenTable",
        OpenTableInput,
        propose_open_table,
        {"table": "orders", "query": "status = 'pending'"},
    ),
    ToolImpl(
        "proposeJoinedView",
        JoinedViewInput,
        propose_joined_view,
        {"left": "orders", "right": "customers", "left_on": "customer_id", "right_on": "id"},
    ),
    ToolImpl("openStagingPanel", NoInput, open_staging_panel, {}),
]
