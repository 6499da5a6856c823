"""What tools exist: the catalog rows and every list derived from them.

Standard library only (typing, enum, dataclasses): every front end loads this package.
"""

from __future__ import annotations

from catalog.derived import (
    MCP_LEVEL_ORDER,
    available_rows,
    description,
    discoverable_rows,
    effect_names,
    export_names,
    gated_names,
    inline_rows,
    loop_names,
    mcp_names,
    names,
    row_by_name,
    search_description,
    silent_names,
    staging_names,
    write_names,
)
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

__all__ = [
    "MCP_LEVEL_ORDER",
    "ROWS",
    "Access",
    "Effect",
    "McpLevel",
    "Requirement",
    "Tier",
    "ToolRow",
    "Visibility",
    "available_rows",
    "description",
    "discoverable_rows",
    "effect_names",
    "export_names",
    "gated_names",
    "inline_rows",
    "loop_names",
    "mcp_names",
    "names",
    "row_by_name",
    "search_description",
    "silent_names",
    "staging_names",
    "write_names",
]
