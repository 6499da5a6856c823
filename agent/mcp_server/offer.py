"""Which tools an MCP client at a level is offered, as MCP tool specs built from catalog rows.

The list is `catalog.mcp_names(level)`, plus `commitStagedChanges` at `full`: DESIGN keeps
commit out of chat (only a person commits), but an MCP client at `full` access is the user's
explicit choice to let that client commit, so the server adds it outside the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mcp_types as types

import catalog
from agent.tools.registry import default_description, input_schema
from catalog.rows import Access, McpLevel, ToolRow

COMMIT_TOOL = "commitStagedChanges"
COMMIT_LEVEL = McpLevel.FULL
COMMIT_DESCRIPTION = (
    "Commit staged changes to the store (all of them, or only the given ids) in one "
    "transaction; an update/delete commits only if its item still matches what was staged, "
    "otherwise nothing is applied and the conflicts are returned."
)
COMMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "staged change ids to commit (see listStagedChanges); omit for all",
        }
    },
}


def offered_names(level: str, rows: Iterable[ToolRow] = catalog.ROWS) -> tuple[str, ...]:
    """Tool names a client at `level` sees, in catalog order (commitStagedChanges last);
    `rows` are the rows offered against the store (see agent.availability)."""
    names = catalog.mcp_names(level, rows)
    if _rank(level) >= _rank(COMMIT_LEVEL):
        names = (*names, COMMIT_TOOL)
    return names


def required_level(name: str) -> str | None:
    """The lowest level that may call `name`; None when MCP never offers it."""
    if name == COMMIT_TOOL:
        return COMMIT_LEVEL.value
    row = catalog.row_by_name().get(name)
    if row is None or row.mcp is McpLevel.NONE:
        return None
    return row.mcp.value


def refusal(name: str, level: str, *, token: bool = False) -> tuple[str, str] | None:
    """(error, fix) when a client at `level` may not call `name`; None when it may.

    `token` words the advice for an HTTP client, whose level comes with its token.
    """
    needed = required_level(name)
    if needed is None:
        known = catalog.row_by_name().get(name) is not None
        error = (
            f"{name} is not offered over MCP (it needs the tabletalk app)"
            if known
            else f"unknown tool '{name}'"
        )
        return error, f"use one of: {', '.join(offered_names(level))}"
    if _rank(needed) > _rank(level) and token:
        return (
            f"{name} needs level {needed} (this client's token has level {level})",
            f"ask the user for a token at level {needed} "
            f"(`tabletalk mcp token create NAME --level {needed}`), or use one of: "
            f"{', '.join(offered_names(level))}",
        )
    if _rank(needed) > _rank(level):
        return (
            f"{name} needs --level {needed} (this server runs at --level {level})",
            f"restart the server with `tabletalk mcp --level {needed}`, or use one of: "
            f"{', '.join(offered_names(level))}",
        )
    return None


def tool_specs(level: str, rows: Iterable[ToolRow] = catalog.ROWS) -> list[types.Tool]:
    """The MCP tool list for `level`: catalog names, descriptions and input schemas."""
    specs = [_catalog_tool(name) for name in catalog.mcp_names(level, rows)]
    if COMMIT_TOOL in offered_names(level):
        specs.append(
            types.Tool(
                name=COMMIT_TOOL,
                description=COMMIT_DESCRIPTION,
                input_schema=COMMIT_SCHEMA,
                annotations=types.ToolAnnotations(
                    read_only_hint=False, destructive_hint=True, open_world_hint=False
                ),
            )
        )
    return specs


def _catalog_tool(name: str) -> types.Tool:
    row = catalog.row_by_name()[name]
    return types.Tool(
        name=name,
        description=default_description(name),
        input_schema=input_schema(name),
        annotations=_annotations(row.access),
    )


def _annotations(access: Access) -> types.ToolAnnotations:
    """Hints for clients: reads are read-only; staging writes destroy nothing until a commit."""
    if access is Access.READ:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    if access is Access.WRITE:
        return types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, open_world_hint=False
        )
    # exports only add files: over MCP they never replace an existing one
    return types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, open_world_hint=False
    )


def _rank(level: str | McpLevel) -> int:
    return catalog.MCP_LEVEL_ORDER.index(McpLevel(level))
