"""Every tool list the app uses, derived from the catalog rows (never kept by hand)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.rows import (
    ROWS,
    Access,
    Effect,
    McpLevel,
    Requirement,
    Tier,
    ToolRow,
    Visibility,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

MCP_LEVEL_ORDER: tuple[McpLevel, ...] = (McpLevel.READ, McpLevel.STAGE, McpLevel.FULL)


def names(rows: Iterable[ToolRow]) -> tuple[str, ...]:
    """Names of the given rows, in catalog order."""
    return tuple(row.name for row in rows)


def available_rows(
    met: frozenset[Requirement], rows: Iterable[ToolRow] = ROWS
) -> tuple[ToolRow, ...]:
    """Rows whose requirements `met` covers: a tool that cannot work is not offered."""
    return tuple(row for row in rows if row.requires <= met)


def inline_rows(rows: Iterable[ToolRow] = ROWS) -> tuple[ToolRow, ...]:
    """Rows sent to the model from the first step, in catalog order."""
    return tuple(row for row in rows if row.visibility is Visibility.INLINE)


def discoverable_rows(rows: Iterable[ToolRow] = ROWS) -> tuple[ToolRow, ...]:
    """Rows the model reaches only through searchTools, in catalog order."""
    return tuple(row for row in rows if row.visibility is Visibility.DISCOVERABLE)


def silent_names(rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """Tools that run without a permission check."""
    return frozenset(row.name for row in rows if row.tier is Tier.SILENT)


def gated_names(rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """Tools that pass the permission check before running."""
    return frozenset(row.name for row in rows if row.tier is Tier.GATED)


def write_names(rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """Tools that write (always through the staging area or app state)."""
    return frozenset(row.name for row in rows if row.access is Access.WRITE)


def export_names(rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """Tools that write files outside the app."""
    return frozenset(row.name for row in rows if row.access is Access.EXPORT)


def mcp_names(level: McpLevel | str, rows: Iterable[ToolRow] = ROWS) -> tuple[str, ...]:
    """Tools an MCP client at `level` may call: every row whose level is at or below it."""
    level = McpLevel(level)
    if level is McpLevel.NONE:
        return ()
    allowed = set(MCP_LEVEL_ORDER[: MCP_LEVEL_ORDER.index(level) + 1])
    return tuple(row.name for row in rows if row.mcp in allowed)


def effect_names(effect: Effect, rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """Tools whose calls have `effect` on the turn."""
    return frozenset(row.name for row in rows if effect in row.effects)


def loop_names(rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """The agent loop's own tools (find tools, ask): never overridden, never searched for."""
    return frozenset(
        row.name for row in rows if row.effects & {Effect.FINDS_TOOLS, Effect.ENDS_TURN}
    )


def staging_names(rows: Iterable[ToolRow] = ROWS) -> frozenset[str]:
    """Tools that stage changes (a review chip follows a turn that used one)."""
    return effect_names(Effect.STAGES, rows)


def search_description(rows: Iterable[ToolRow] = ROWS) -> str:
    """The searchTools description: what it does plus every discoverable tool by name."""
    rows = tuple(rows)
    finder = next((row for row in rows if Effect.FINDS_TOOLS in row.effects), None)
    return description(finder, rows) if finder is not None else ""


def description(row: ToolRow, rows: Iterable[ToolRow] = ROWS) -> str:
    """What the model reads for `row`: a tool finder's description also lists every
    discoverable tool of `rows` by name."""
    if Effect.FINDS_TOOLS not in row.effects:
        return row.description
    listed = ", ".join(names(discoverable_rows(rows)))
    return (
        f"{row.description} Tools you can find this way: {listed}." if listed else row.description
    )


def row_by_name(rows: Iterable[ToolRow] = ROWS) -> dict[str, ToolRow]:
    """Rows keyed by tool name."""
    return {row.name: row for row in rows}
