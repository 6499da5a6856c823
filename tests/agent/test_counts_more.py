"""More counts a person reads: search, eval cost, DynamoDB read caps, bulk edits, JSON previews
say "1 item", never "1 items", with a thousands separator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.attachments import read_json
from agent.cli.main import main
from agent.evals.cost import Estimate
from agent.staging.checks import too_many
from agent.stores.dynamodb.reads import Limits, ReadReport, stop_note


def test_tools_search_says_1_tool_for_a_catalog_of_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "one.json"
    catalog.write_text(json.dumps([{"name": "exportCsv", "description": "Export rows to CSV."}]))
    assert main(["tools", "search", "export csv", "--catalog", str(catalog)]) == 0
    out = capsys.readouterr().out
    assert "(1 tool)" in out, out


def test_an_eval_estimate_of_one_run_says_so() -> None:
    text = Estimate(runs=1, requests=1, input_tokens=1000, output_tokens=100, dollars=0.01)
    described = text.describe()
    assert described.startswith("1 run, about 1 model request,"), described


def test_a_dynamodb_read_stopped_after_one_item_says_1_item() -> None:
    note = stop_note(ReadReport(read_units=1.0, items_scanned=1), Limits(10, 1.0), "t", "pk")
    assert "1 read unit " in note and "scanning 1 item of t" in note, note


def test_a_bulk_edit_over_the_limit_counts_with_separators() -> None:
    assert "matches 12,345 items;" in too_many(12_345).message


def test_an_attached_json_preview_says_1_item_and_1_key(tmp_path: Path) -> None:
    deep: object = {"k": 1}
    for _ in range(8):
        deep = [deep]
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"a": deep, "b": [[[[[[[{"only": 1}]]]]]]]}))
    text = json.dumps(read_json(path, 0, 10))
    assert "[list of 1 item]" in text and "items]" not in text, text
