"""The tools' stored input schemas (agent/tools/input_schemas.json) are what their models say."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.tools import input_schemas
from agent.tools.input_schemas import SCHEMAS_FILE, render
from agent.tools.registry import input_schema, model_schemas
from agent.toolset import Toolset


@pytest.fixture
def stored_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A stand-in for input_schemas.json that a test writes; the real one is read again after."""
    path = tmp_path / "input_schemas.json"
    monkeypatch.setattr(input_schemas, "SCHEMAS_FILE", path)
    input_schemas._stored.cache_clear()
    yield path
    input_schemas._stored.cache_clear()


def test_the_stored_schemas_are_what_the_tools_models_generate() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == render(model_schemas()), (
        "agent/tools/input_schemas.json is out of date with the tools' input models; "
        "run `.venv/bin/python -m agent.tools.refresh_schemas` and commit the file"
    )


def test_a_turns_tool_specs_carry_the_models_schemas_in_the_same_order() -> None:
    toolset = Toolset.build()
    names = toolset.inline_names() + toolset.discoverable_names()
    generated = model_schemas()
    for spec in toolset.specs(names):
        name = spec["toolSpec"]["name"]
        sent = spec["toolSpec"]["inputSchema"]["json"]
        assert json.dumps(sent) == json.dumps(generated[name]), name  # same keys, same order


def test_a_tool_the_stored_file_does_not_list_gets_its_schema_from_its_model(
    stored_file: Path,
) -> None:
    stored_file.write_text(render({"listTables": model_schemas()["listTables"]}))
    assert input_schema("describeTable") == model_schemas()["describeTable"]
    assert input_schema("listTables") == model_schemas()["listTables"]


def test_an_unreadable_stored_file_falls_back_to_the_models(stored_file: Path) -> None:
    stored_file.write_text("{not json")
    assert input_schema("describeTable") == model_schemas()["describeTable"]


def test_a_changed_copy_does_not_change_the_next_request(stored_file: Path) -> None:
    stored_file.write_text(render(model_schemas()))
    input_schema("describeTable")["properties"].clear()
    assert input_schema("describeTable") == model_schemas()["describeTable"]
