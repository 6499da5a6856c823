"""Catalog/query files, retrieval metrics and the `tools search` / `tools eval` commands."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

import pytest

from agent.cli import search_cmd as cli
from agent.errors import ConfigError
from agent.search.catalog_file import LabelledQuery, load_catalog, load_queries
from agent.search.evaluate import evaluate
from agent.search.ranker import SearchDoc


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path, monkeypatch):
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


# --- catalog and query files ---------------------------------------------------------------


def test_loads_a_plain_catalog_list(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(
        json.dumps(
            [
                {"name": "exportCsv", "description": "Write rows to CSV.", "keywords": ["excel"]},
                {"name": "ping"},
            ]
        )
    )
    assert load_catalog(path) == [
        SearchDoc("exportCsv", "Write rows to CSV.", ("excel",)),
        SearchDoc("ping", "", ()),
    ]


def test_loads_an_mcp_tools_list_result(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "tools": [
                    {
                        "name": "github__create_issue",
                        "description": "Open an issue.",
                        "inputSchema": {"type": "object", "properties": {}},
                    }
                ]
            }
        )
    )
    assert load_catalog(path) == [SearchDoc("github__create_issue", "Open an issue.")]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "line 1"),
        ('{"tools": 3}', "expected a list"),
        ('[{"description": "no name"}]', "entry[0] field 'name'"),
        ('[{"name": "a", "keywords": "csv"}]', "entry[0] (a) field 'keywords'"),
        ('{"tools": ["x"]}', "tools[0] is not an object"),
    ],
)
def test_bad_catalog_names_the_file_and_the_place(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as caught:
        load_catalog(path)
    assert str(path) in caught.value.message
    assert expected in caught.value.message
    assert caught.value.fix


def test_missing_catalog_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_catalog(tmp_path / "nope.json")


def test_loads_queries_and_skips_blank_lines(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"query": "export", "gold": ["exportCsv"]}\n\n{"query": "weather", "gold": []}\n'
    )
    assert load_queries(path) == [
        LabelledQuery("export", ("exportCsv",)),
        LabelledQuery("weather", ()),
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("nope", "line 2 is not valid JSON"),
        ("[1]", "line 2 is not a JSON object"),
        ('{"gold": []}', "line 2 field 'query'"),
        ('{"query": "x", "gold": "a"}', "line 2 field 'gold'"),
    ],
)
def test_bad_queries_name_the_line(tmp_path, line, expected):
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "ok", "gold": ["a"]}\n' + line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_queries(path)
    assert str(path) in caught.value.message and expected in caught.value.message


# --- metrics --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    name: str
    score: float


class FixedRanker:
    """Returns a fixed ranking per query, so metrics can be computed by hand."""

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table

    def rank(self, query: str, limit: int = 5) -> list[Hit]:
        return [Hit(name, score) for name, score in self.table.get(query, [])][:limit]


def test_metrics_on_a_hand_computed_example():
    ranker = FixedRanker(
        {
            "q1": [("a", 9), ("b", 5)],  # gold a at 1
            "q2": [("x", 9), ("y", 8), ("c", 7)],  # gold c at 3
            "q3": [("x", 9), ("y", 8)],  # gold d missing
            "q4": [("e", 9), ("f", 8)],  # gold {f, z}: first hit at 2
            "none1": [("x", 0.5)],  # below threshold: correct "no tool"
            "none2": [("x", 7.0)],  # confident wrong answer
            "none3": [],  # nothing at all: correct
        }
    )
    queries = [
        LabelledQuery("q1", ("a",)),
        LabelledQuery("q2", ("c",)),
        LabelledQuery("q3", ("d",)),
        LabelledQuery("q4", ("z", "f")),
        LabelledQuery("none1", ()),
        LabelledQuery("none2", ()),
        LabelledQuery("none3", ()),
    ]
    report = evaluate(ranker, queries, limit=5, no_match_threshold=2.0)
    assert report.n == 4
    assert report.recall_at_1 == pytest.approx(1 / 4)
    assert report.recall_at_5 == pytest.approx(3 / 4)
    assert report.mrr == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)
    assert report.n_no_tool == 3
    assert report.no_tool_accuracy == pytest.approx(2 / 3)
    assert report.rankings[1] == ("q2", ["x", "y", "c"])
    assert [query for query, _ in report.rankings] == [item.query for item in queries]


def test_recall_depth_follows_limit():
    ranker = FixedRanker({"q": [("x", 3), ("y", 2), ("gold", 1)]})
    queries = [LabelledQuery("q", ("gold",))]
    assert evaluate(ranker, queries, limit=2).recall_at_5 == 0
    assert evaluate(ranker, queries, limit=3).recall_at_5 == 1


def test_no_labelled_queries_gives_zeros_and_no_no_tool_metric():
    report = evaluate(FixedRanker({}), [])
    assert (report.n, report.recall_at_1, report.mrr, report.no_tool_accuracy) == (0, 0, 0, None)


# --- command line -----------------------------------------------------------------------------


def parse(argv: list[str]) -> argparse.Namespace:
    root = argparse.ArgumentParser(prog="tabletalk")
    commands = root.add_subparsers(dest="command")
    tools = commands.add_parser("tools")
    cli.add_tools_subcommands(tools.add_subparsers(dest="tools_command"))
    return root.parse_args(argv)


@pytest.fixture()
def files(tmp_path):
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            [
                {"name": "exportCsv", "description": "Write query results to a CSV file."},
                {"name": "sendEmail", "description": "Send an email message."},
                {"name": "getWeather", "description": "Current weather for a city."},
            ]
        )
    )
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"query": "exprot csv", "gold": ["exportCsv"]}\n'
        '{"query": "mail someone", "gold": ["sendEmail"]}\n'
        '{"query": "book a flight", "gold": []}\n'
    )
    return catalog, queries


def test_search_prints_mode_and_ranking_of_builtin_catalog(capsys):
    args = parse(["tools", "search", "index stats"])
    assert cli.run_search(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("mode: keyword")
    assert out.splitlines()[1].split()[:2] == ["1.", "getIndexStats"]


def test_search_json_shape(files, capsys):
    catalog, _ = files
    assert (
        cli.run_search(
            parse(
                [
                    "tools",
                    "search",
                    "csv export",
                    "--catalog",
                    str(catalog),
                    "--json",
                    "--limit",
                    "2",
                ]
            )
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "keyword" and data["query"] == "csv export" and data["tools"] == 3
    assert data["results"][0] == {
        "rank": 1,
        "name": "exportCsv",
        "score": data["results"][0]["score"],
        "description": "Write query results to a CSV file.",
    }
    assert data["results"][0]["score"] > 0
    assert len(data["results"]) <= 2


def test_search_without_match_says_so(files, capsys):
    catalog, _ = files
    assert cli.run_search(parse(["tools", "search", "zzzz", "--catalog", str(catalog)])) == 0
    assert "no tool matched" in capsys.readouterr().out


def test_eval_prints_metrics_and_writes_rankings(files, tmp_path, capsys):
    catalog, queries = files
    out_file = tmp_path / "rankings.jsonl"
    argv = ["tools", "eval", "--catalog", str(catalog), "--queries", str(queries)]
    assert cli.run_eval(parse(argv + ["--rankings", str(out_file)])) == 0
    text = capsys.readouterr().out
    assert "recall@1" in text and "recall@5" in text and "MRR" in text and "no-tool" in text
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [line["query"] for line in lines] == ["exprot csv", "mail someone", "book a flight"]
    assert lines[0]["ranked"][0] == "exportCsv"
    assert set(lines[0]) == {"query", "ranked"}


def test_eval_json(files, capsys):
    catalog, queries = files
    argv = ["tools", "eval", "--catalog", str(catalog), "--queries", str(queries), "--json"]
    assert cli.run_eval(parse(argv)) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "keyword" and data["n"] == 2 and data["n_no_tool"] == 1
    assert data["recall@1"] == 1.0  # "mail" → "email" by one edit; "exprot" → "export"
    assert {"recall@5", "mrr", "no_tool_accuracy", "limit", "tools"} <= set(data)


def test_eval_bad_file_raises_typed_error(files, tmp_path):
    catalog, _ = files
    with pytest.raises(ConfigError, match="file not found"):
        cli.run_eval(
            parse(["tools", "eval", "--catalog", str(catalog), "--queries", str(tmp_path / "x")])
        )


def test_eval_unwritable_rankings_path(files, tmp_path):
    catalog, queries = files
    argv = ["tools", "eval", "--catalog", str(catalog), "--queries", str(queries)]
    with pytest.raises(ConfigError, match="cannot write"):
        cli.run_eval(parse(argv + ["--rankings", str(tmp_path / "missing-dir" / "r.jsonl")]))


def test_limit_must_be_positive():
    with pytest.raises(SystemExit):
        parse(["tools", "search", "x", "--limit", "0"])
