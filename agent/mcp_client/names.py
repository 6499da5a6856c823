"""Catalog identity of an external MCP tool: a Bedrock-valid unique name, a one-sentence
description, a Bedrock-ready input schema, and the row (tier and access) it gets."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from catalog import Access, McpLevel, Tier, ToolRow, Visibility

MAX_NAME = 64
HASH_CHARS = 8
MAX_DESCRIPTION = 300
_INVALID = re.compile(r"[^a-zA-Z0-9_-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_DROPPED_SCHEMA_KEYS = ("$schema", "$id")


def bedrock_tool_name(server: str, tool: str, taken: Collection[str] = ()) -> str:
    """`SERVER__tool` as 1–64 chars of `[a-zA-Z0-9_-]`, not in `taken`.

    Invalid characters become `_`; a name that is too long or already taken is cut and gets
    `_` plus a short hash of the original `server`/`tool` pair, so it stays stable across runs.
    """
    wanted = f"{_INVALID.sub('_', server) or 'mcp'}__{_INVALID.sub('_', tool) or 'tool'}"
    if len(wanted) <= MAX_NAME and wanted not in taken:
        return wanted
    salt = 0
    while True:
        digest = hashlib.sha256(f"{server}\0{tool}\0{salt}".encode()).hexdigest()[:HASH_CHARS]
        candidate = f"{wanted[: MAX_NAME - HASH_CHARS - 1]}_{digest}"
        if candidate not in taken:
            return candidate
        salt += 1


def server_fingerprint(
    command: str | None, args: Sequence[str], env: Mapping[str, str], url: str | None
) -> str:
    """A short digest of how a server is reached (command, arguments, environment or URL): a
    server renamed in place, pointed elsewhere or given other arguments gets another one. A
    digest, so the keys these settings may hold never reach a conversation file."""
    canonical = json.dumps([command, list(args), sorted(env.items()), url], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def tool_identity(server: str, tool: str, fingerprint: str) -> str:
    """What an external tool is, whatever model-facing name it gets (`bedrock_tool_name` may
    give the same name to another server's tool once servers are added): the server's config
    name, the tool's own name and `server_fingerprint`. Permission grants are bound to it."""
    return json.dumps(["mcp", server, tool, fingerprint], ensure_ascii=False)


def first_sentence(text: str | None, fallback: str) -> str:
    """The first sentence of `text` on one line (at most MAX_DESCRIPTION chars), else `fallback`."""
    flat = " ".join((text or "").split())
    if not flat:
        return fallback
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(sentence) > MAX_DESCRIPTION:
        sentence = sentence[: MAX_DESCRIPTION - 1].rstrip() + "…"
    return sentence


def clean_input_schema(schema: Any) -> dict[str, Any]:
    """The MCP input schema as a Bedrock accepts it: an object schema with `properties`."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    cleaned = {key: value for key, value in schema.items() if key not in _DROPPED_SCHEMA_KEYS}
    cleaned["type"] = "object"
    if not isinstance(cleaned.get("properties"), dict):
        cleaned["properties"] = {}
    return cleaned


def external_row(
    name: str,
    server: str,
    tool: str,
    description: str | None,
    *,
    read_only: bool,
    trusted: bool,
    title: str | None = None,
) -> ToolRow:
    """The catalog row of an MCP tool: discoverable, never re-exported over our MCP server.

    Tools of a `trusted` server run silently. Otherwise every tool is gated: a readOnlyHint
    is the server's own claim (the MCP spec says not to rely on it from an untrusted server),
    so it only makes the tool `read` (auto mode runs it; manual mode asks). Others change
    something outside the app, so they are `export`: auto mode still asks.
    """
    words = (server, tool.replace("_", " ").replace(".", " "), title or "")
    keywords = tuple(dict.fromkeys(word for word in words if word))
    return ToolRow(
        name,
        first_sentence(description, f"Tool {tool} of the MCP server {server}."),
        Visibility.DISCOVERABLE,
        Tier.SILENT if trusted else Tier.GATED,
        Access.READ if read_only else Access.EXPORT,
        McpLevel.NONE,
        keywords,
    )
