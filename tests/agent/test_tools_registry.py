"""The tool registry: one implementation per catalog row, Bedrock-ready schemas, safe runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import catalog
from agent.tools.base import ToolContext
from agent.tools.registry import TOOLS, default_description, run_tool, tool_spec
from tests.support.tools import make_ctx

BEDROCK_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture
def ctx(tmp_path: Path, demo_path: Path):
    context = make_ctx(demo_path, tmp_path)
    store, staging = context.store, context.staging
    yield context
    staging.close()
    store.close()


def _walk(node: object):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_catalog_row_has_an_implementation_and_back() -> None:
    rows = set(catalog.names(catalog.ROWS))
    assert rows - set(TOOLS) == set(), "catalog rows without an implementation"
    assert set(TOOLS) - rows == set(), "implementations without a catalog row"
    assert list(TOOLS) == list(catalog.names(catalog.ROWS)), "registry keeps catalog order"


@pytest.mark.parametrize("name", list(TOOLS))
def test_tool_spec_is_bedrock_ready(name: str) -> None:
    spec = tool_spec(name, default_description(name))["toolSpec"]
    assert BEDROCK_NAME.match(spec["name"])
    schema = spec["inputSchema"]["json"]
    assert schema["type"] == "object"
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text
    assert all("title" not in node or isinstance(node["title"], dict) for node in _walk(schema))
    for prop in schema["properties"].values():
        assert prop.get("description"), f"{name}: every field tells the model what it is"
    assert len(text) < 1200, f"{name}: schema stays compact"


@pytest.mark.parametrize("name", list(TOOLS))
def test_every_example_input_is_valid(name: str) -> None:
    TOOLS[name].input_model.model_validate(TOOLS[name].example)


def test_search_description_lists_discoverable_tools() -> None:
    description = tool_spec("searchTools")["toolSpec"]["description"]
    assert description == catalog.search_description()
    assert "exportCsv" in description and "vectorSearch" in description
    assert (
        tool_spec("listTables")["toolSpec"]["description"]
        == catalog.row_by_name()["listTables"].description
    )


def test_contract_inputs_have_the_documented_fields() -> None:
    def props(name: str) -> set[str]:
        return set(tool_spec(name)["toolSpec"]["inputSchema"]["json"]["properties"])

    assert props("stageItem") == {"table", "op", "key", "values"}
    assert props("bulkEdit") == {"table", "keys", "query", "set", "delete"}
    assert props("searchTools") == {"query", "limit", "schemas"}
    assert props("runQuery") == {"query", "limit"}
    assert props("getItem") == {"table", "key"}
    assert props("countItems") == {"table", "query"}
    assert props("openTable") == props("proposeOpenTable") == {"table", "query"}
    op = tool_spec("stageItem")["toolSpec"]["inputSchema"]["json"]["properties"]["op"]
    assert op["enum"] == ["create", "update", "delete"]


def test_validation_error_names_the_field_and_shows_a_valid_call(ctx: ToolContext) -> None:
    status, result = run_tool(
        ctx, "stageItem", {"table": "orders", "op": "upsert", "key": {"id": 7}, "values": {"a": 1}}
    )
    assert status == "error"
    assert result["error"] == (
        "invalid input for stageItem: field 'op': Input should be 'create', 'update' or 'delete'"
    )
    assert result["fix"].startswith("call stageItem like {")
    assert json.loads(result["fix"].removeprefix("call stageItem like "))["op"] == "update"


def test_missing_and_misnamed_fields_are_named(ctx: ToolContext) -> None:
    status, result = run_tool(ctx, "countItems", {"table": "orders", "where": "status = 'x'"})
    assert status == "error"
    assert "field 'where'" in result["error"]
    assert '"query"' in result["fix"]
    status, result = run_tool(ctx, "getItem", None)
    assert (
        status == "error"
        and "field 'table'" in result["error"]
        and "field 'key'" in result["error"]
    )


def test_non_object_input_is_rejected_with_an_example(ctx: ToolContext) -> None:
    status, result = run_tool(ctx, "runQuery", ["SELECT 1"])  # type: ignore[arg-type]
    assert status == "error"
    assert "expected a JSON object" in result["error"]
    assert result["fix"].startswith("call runQuery like")


def test_an_input_nested_past_the_recursion_limit_is_an_error_with_a_fix(
    ctx: ToolContext,
) -> None:
    """An MCP client's arguments arrive already parsed, at any depth: never an exception."""
    deep: object = 1
    for _ in range(5000):
        deep = [deep]
    status, result = run_tool(ctx, "getItem", {"table": "orders", "key": {"id": deep}})
    assert status == "error"
    assert "nested too deeply" in result["error"] and result["fix"].startswith("call getItem")


def test_unknown_tool_lists_the_real_ones(ctx: ToolContext) -> None:
    status, result = run_tool(ctx, "dropTable", {})
    assert status == "error"
    assert "unknown tool 'dropTable'" in result["error"] and "listTables" in result["fix"]


def test_store_errors_become_error_results_with_a_fix(ctx: ToolContext) -> None:
    status, result = run_tool(ctx, "runQuery", {"query": "DELETE FROM orders"})
    assert status == "error"
    assert result["error"] and result["fix"]
    assert ctx.store.count("orders") == 2000


def test_a_crashing_tool_becomes_an_internal_error_result(ctx: ToolContext) -> None:
    ctx.store = None  # type: ignore[assignment]
    status, result = run_tool(ctx, "listTables", {})
    assert status == "error"
    assert result["error"].startswith("internal error in listTables: AttributeError")


def test_every_result_is_json_ready(ctx: ToolContext) -> None:
    for name, impl in TOOLS.items():
        if name in {"readAttachment", "openSavedSpec", "searchTools"}:
            continue  # need an attachment, a saved spec or a search port; covered elsewhere
        status, result = run_tool(ctx, name, impl.example)
        json.dumps(result)
        assert isinstance(result, dict), name


def test_objects_sent_as_json_text_are_decoded(ctx: ToolContext) -> None:
    status, result = run_tool(ctx, "getItem", {"table": "orders", "key": '{"id": 7}'})
    assert status == "success" and result["item"]["id"] == 7
    status, result = run_tool(ctx, "getItem", {"table": "orders", "key": "id=7"})
    assert status == "error" and "field 'key'" in result["error"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("getItem", {"table": "orders", "key": {"id": "x" * 3_000_000}}),
        (
            "stageItem",
            {
                "table": "orders",
                "op": "update",
                "key": {"id": 1},
                "values": {f"c{i}": i for i in range(20_000)},
            },
        ),
        ("getItem", {"table": "t" * 1_000_000, "key": {"id": 1}}),
    ],
    ids=["huge-key", "20000-unknown-columns", "huge-table-name"],
)
def test_an_error_about_huge_input_does_not_echo_it_whole(
    ctx: ToolContext, tool: str, arguments: dict
) -> None:
    """What a model or MCP client sent is not sent back whole: the error would cost its size
    again in every later request of the conversation."""
    status, result = run_tool(ctx, tool, arguments)
    assert status == "error"
    assert len(result["error"]) <= 2_100 and len(result.get("fix", "")) <= 2_100
    assert "more characters" in result["error"] + result.get("fix", "")
