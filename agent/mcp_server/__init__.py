"""`tabletalk mcp`: the catalog's tools served over MCP (stdio) at a chosen access level."""

from __future__ import annotations

from agent.mcp_server.offer import LEVELS, offered_names, refusal
from agent.mcp_server.server import McpBackend, build_server, serve_stdio

__all__ = ["LEVELS", "McpBackend", "build_server", "offered_names", "refusal", "serve_stdio"]
