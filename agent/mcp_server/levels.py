"""The access levels an MCP client may be served at, weakest first (no MCP SDK import)."""

from __future__ import annotations

import catalog

LEVELS: tuple[str, ...] = tuple(level.value for level in catalog.MCP_LEVEL_ORDER)
