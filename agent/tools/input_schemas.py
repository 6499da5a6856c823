"""The built-in tools' input schemas as Bedrock reads them, read from input_schemas.json.

Every request carries the inline tools' schemas; generating them from the tools' pydantic
models costs importing pydantic and every tool, most of a one-step turn's start-up, so a turn
reads them from this file and the models load when a tool runs. The file is generated from
the models (`python -m agent.tools.refresh_schemas`) and a test fails when it no longer
matches them; a tool the file does not list gets its schema from its model (see
`agent.tools.registry.input_schema`).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

SCHEMAS_FILE = Path(__file__).with_name("input_schemas.json")


@functools.cache
def _stored() -> dict[str, Any]:
    """Tool name → schema, read once per process; an unreadable file reads as empty."""
    try:
        data = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stored_schema(name: str) -> dict[str, Any] | None:
    """A copy of the tool's stored input schema; None when the file does not list it."""
    schema = _stored().get(name)
    return copy.deepcopy(schema) if isinstance(schema, dict) else None


def render(schemas: dict[str, dict[str, Any]]) -> str:
    """The file's text for `schemas` (key order kept: it is the order requests send)."""
    return json.dumps(schemas, indent=1, ensure_ascii=False) + "\n"


def spec_entry(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The Converse `toolSpec` entry of a tool."""
    return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": schema}}}
