"""Every tool implementation by catalog name, its Bedrock toolSpec, and the one safe way to run it."""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from pydantic import ValidationError

import catalog
from agent.errors import TabletalkError
from agent.tools import app_tools, file_tools, read_tools, spec_tools, write_tools
from agent.tools.base import ToolContext, ToolFailure, ToolImpl
from agent.tools.input_schemas import spec_entry, stored_schema
from agent.tools.schema import bedrock_schema

log = logging.getLogger(__name__)

Status = Literal["success", "error"]

_ALL: list[ToolImpl] = [
    *app_tools.TOOLS,
    *read_tools.TOOLS,
    *file_tools.TOOLS,
    *write_tools.TOOLS,
    *spec_tools.TOOLS,
]
_ORDER = {row.name: index for index, row in enumerate(catalog.ROWS)}

TOOLS: dict[str, ToolImpl] = {
    impl.name: impl for impl in sorted(_ALL, key=lambda i: _ORDER.get(i.name, len(_ORDER)))
}
"""Tool implementations keyed by name, in catalog order."""


def default_description(name: str) -> str:
    """The description the model reads: the catalog row's (searchTools lists discoverable tools)."""
    return catalog.description(catalog.row_by_name()[name])


def input_schema(name: str) -> dict[str, Any]:
    """The tool's input JSON schema, compact and Bedrock-ready (stored, else from its model)."""
    stored = stored_schema(name)
    return stored if stored is not None else bedrock_schema(TOOLS[name].input_model)


def model_schemas() -> dict[str, dict[str, Any]]:
    """Every tool's input schema generated from its pydantic model, in catalog order (what
    input_schemas.json must hold)."""
    return {name: bedrock_schema(impl.input_model) for name, impl in TOOLS.items()}


def tool_spec(row_name: str, description: str | None = None) -> dict[str, Any]:
    """The Converse `toolSpec` entry for one tool (description defaults to the catalog's)."""
    if description is None:
        description = default_description(row_name)
    return spec_entry(row_name, description, input_schema(row_name))


def example_call(name: str) -> str:
    """A valid call of the tool, as the fix of a rejected one."""
    return f"call {name} like {json.dumps(TOOLS[name].example, ensure_ascii=False)}"


def _validation_message(name: str, exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error.get("loc", ()))
        message = str(error.get("msg", "invalid"))
        message = message.removeprefix("Value error, ")
        parts.append(f"field '{where}': {message}" if where else message)
    more = len(exc.errors()) - 3
    suffix = f" (and {more} more)" if more > 0 else ""
    return f"invalid input for {name}: " + "; ".join(parts) + suffix


CHIP_SHOWN = "A chip that does this was shown to the user; nothing happens until they click it."


ERROR_TEXT_CAP = 2_000
"""Characters of an error's message or fix: one quoting a huge input (a 3 MB key, 20,000
unknown column names) would cost its size again in every later request of the conversation."""


def _error(message: str, fix: str | None) -> dict[str, Any]:
    message = _cut(message)
    return {"error": message, "fix": _cut(fix)} if fix else {"error": message}


def _cut(text: str) -> str:
    """`text` within ERROR_TEXT_CAP: its start and end, saying how much was left out."""
    if len(text) <= ERROR_TEXT_CAP:
        return text
    head, tail = ERROR_TEXT_CAP * 3 // 4, ERROR_TEXT_CAP // 5
    left_out = len(text) - head - tail
    return f"{text[:head]} … ({left_out:,} more characters) … {text[-tail:]}"


def input_problem(name: str, raw_input: dict[str, Any] | None) -> dict[str, Any] | None:
    """The error result `run_tool` would give for input that does not validate, or None: a
    gated call is refused with it before anyone is asked to allow a call that cannot run."""
    impl = TOOLS.get(name)
    if impl is None or not isinstance(raw_input, dict | None):
        return None  # run_tool answers these
    try:
        impl.input_model.model_validate(raw_input or {})
    except ValidationError as exc:
        return _error(_validation_message(name, exc), example_call(name))
    except RecursionError:
        return None  # run_tool answers it
    return None


def run_tool(
    ctx: ToolContext, name: str, raw_input: dict[str, Any] | None
) -> tuple[Status, dict[str, Any]]:
    """Validate and run one tool call; every failure becomes an error result, never an exception."""
    impl = TOOLS.get(name)
    if impl is None:
        return "error", _error(f"unknown tool '{name}'", f"use one of: {', '.join(TOOLS)}")
    if raw_input is None:
        raw_input = {}
    if not isinstance(raw_input, dict):
        return "error", _error(
            f"invalid input for {name}: expected a JSON object, got {type(raw_input).__name__}",
            example_call(name),
        )
    try:
        args = impl.input_model.model_validate(raw_input)
    except ValidationError as exc:
        return "error", _error(_validation_message(name, exc), example_call(name))
    except RecursionError:  # checking a value nested past the recursion limit
        return "error", _error(
            f"invalid input for {name}: it is nested too deeply", example_call(name)
        )
    try:
        result = impl.run(ctx, args)
    except ToolFailure as exc:
        failed = _error(exc.message, exc.fix)
        if exc.chip is not None and ctx.origin.startswith("chat:"):  # MCP clients have no chat
            failed.update(chip=exc.chip, message=CHIP_SHOWN)
        return "error", _with_cost(ctx, failed)
    except TabletalkError as exc:
        return "error", _with_cost(ctx, _error(exc.message, exc.fix))
    except Exception as exc:  # a tool bug must not end the turn
        log.exception("tool %s failed", name)
        return "error", _error(
            f"internal error in {name}: {type(exc).__name__}: {exc}",
            "try a different approach, or tell the user this tool failed",
        )
    return "success", _with_cost(ctx, result)


def _with_cost(ctx: ToolContext, result: dict[str, Any]) -> dict[str, Any]:
    """Add what the call's reads cost (read units, items scanned, an early stop) when the store
    counts it (DynamoDB)."""
    report = ctx.store.take_read_report()
    if report is None or not isinstance(result, dict):
        return result
    return {**result, "capacity": report}
