"""A small MCP server for tests, written with the `mcp` SDK's MCPServer (FastMCP in v1).

Run as `python tests/support/mcp_echo_server.py [NAME]` for stdio, or serve
`build_server().streamable_http_app()` for streamable HTTP. Tools: `echo` (read-only),
`shout.loud` (read-only, upper-cases), `write_note` (not read-only, records a note), `fail`
(always an error result) and `crash` (exits the process, to simulate a server dying). A server
named `bloated` also has `pick`, whose input schema lists 3,000 choices (about 50,000 chars).
"""

from __future__ import annotations

import os
import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations


def build_server(name: str = "echo") -> MCPServer:
    """A fresh server with the test tools (each server keeps its own notes)."""
    server = MCPServer(name, log_level="ERROR")
    notes: list[str] = []

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Echo the given text back unchanged. Useful for checking that the connection works."""
        return text

    @server.tool(name="shout.loud", annotations=ToolAnnotations(read_only_hint=True))
    def shout(text: str) -> str:
        """Repeat a phrase in capital letters, as if shouting it."""
        return text.upper()

    @server.tool()
    def write_note(note: str) -> dict[str, object]:
        """Save a short note into the server's notebook; returns how many notes are kept."""
        notes.append(note)
        return {"saved": note, "count": len(notes)}

    @server.tool()
    def fail(reason: str = "it always fails") -> str:
        """Fail on purpose with the given reason, to test error results."""
        raise ToolError(reason)

    @server.tool()
    def crash() -> str:
        """Terminate the server process at once, to test a server that dies mid-session."""
        os._exit(3)

    if name == "bloated":

        def pick(choice: str) -> str:
            """Pick one of very many choices."""
            return choice

        choices = tuple(f"choice-number-{n:05d}" for n in range(3000))
        pick.__annotations__ = {"choice": Literal[choices], "return": str}
        server.tool()(pick)

    return server


if __name__ == "__main__":
    build_server(sys.argv[1] if len(sys.argv) > 1 else "echo").run("stdio")
