"""MCP tool results as the JSON result dicts our loop sends back to the model."""

from __future__ import annotations

from typing import Any, Literal

from mcp import types

MAX_TEXT = 20_000
ERROR_FIX = (
    "Check the arguments against the tool's description and input schema and retry once; "
    "if it fails again, tell the user and try another way."
)


def _truncate(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"… [truncated: {len(text) - MAX_TEXT} more characters]"


def _block_summary(block: Any) -> dict[str, Any] | None:
    """A non-text content block as a short JSON note (binary data is never sent on)."""
    if isinstance(block, types.TextContent):
        return None
    if isinstance(block, types.ImageContent | types.AudioContent):
        return {"type": block.type, "mimeType": block.mime_type, "note": "binary data not shown"}
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        text = getattr(resource, "text", None)
        entry: dict[str, Any] = {"type": "resource", "uri": str(resource.uri)}
        if text is not None:
            entry["text"] = _truncate(text)
        else:
            entry["note"] = "binary data not shown"
        return entry
    if isinstance(block, types.ResourceLink):
        return {"type": "resource_link", "uri": str(block.uri), "name": block.name}
    return {"type": str(getattr(block, "type", "unknown"))}


def convert_result(
    server: str, tool: str, result: types.CallToolResult
) -> tuple[Literal["success", "error"], dict[str, Any]]:
    """(status, result dict): structured content if any, else the text; isError → error + fix."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    others = [entry for block in result.content if (entry := _block_summary(block)) is not None]
    text = _truncate("\n".join(texts))
    if result.is_error:
        detail = text or "no details given"
        return "error", {
            "error": f"{tool} (MCP server {server}) failed: {detail}",
            "fix": ERROR_FIX,
        }
    structured = result.structured_content
    if isinstance(structured, dict):
        data: dict[str, Any] = dict(structured)
    elif structured is not None:
        data = {"result": structured}
    else:
        data = {"text": text}
    if others:
        data["mcpContent" if "content" in data else "content"] = others
    return "success", data
