"""User overrides of the inline/discoverable split (`[tools] always_loaded` / `discoverable`):
the inline list, the first request's toolConfig, the search tool, search results, and
`tabletalk tools --json` all follow them."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

import catalog  # noqa: E402
from agent.active_set import ActiveSet  # noqa: E402
from agent.cli.main import main as cli_main  # noqa: E402
from agent.config import load_settings  # noqa: E402
from agent.search.searcher import ToolSearcher  # noqa: E402
from agent.session import ChatSession  # noqa: E402
from agent.stores.demo import build_demo_db  # noqa: E402
from agent.stores.open import open_store  # noqa: E402
from agent.toolset import Toolset  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse  # noqa: E402

scripted_bedrock = support.scripted_bedrock

CONFIG = """
[tools]
always_loaded = ["exportCsv", "getIndex*"]
discoverable = ["countItems", "propose*", "searchTools"]
"""
PROMOTED = {"exportCsv", "getIndexStats"}
DEMOTED = {"countItems", "proposeOpenTable", "proposeJoinedView"}


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    build_demo_db(path, today=date(2026, 11, 1))
    return path


def overridden_toolset(config_path: Path) -> Toolset:
    settings = load_settings(config_path)
    return Toolset.build(settings.tools.always_loaded, settings.tools.discoverable)


def request_tool_names(body: dict) -> list[str]:
    return [tool["toolSpec"]["name"] for tool in body["toolConfig"]["tools"] if "toolSpec" in tool]


def test_overrides_move_tools_between_the_lists(config_path: Path) -> None:
    toolset = overridden_toolset(config_path)
    inline = set(toolset.inline_names())
    assert PROMOTED <= inline and not DEMOTED & inline
    assert DEMOTED <= set(toolset.discoverable_names())
    assert {"searchTools", "ask"} <= inline  # the loop's own tools cannot be demoted
    assert toolset.inline_names() == tuple(  # still in catalog order
        row.name for row in catalog.ROWS if row.name in inline
    )
    description = toolset.description("searchTools")
    assert "countItems" in description and "proposeOpenTable" in description
    assert "exportCsv" not in description and "getIndexStats" not in description


def test_always_loaded_wins_over_discoverable() -> None:
    toolset = Toolset.build(always_loaded=["exportCsv"], discoverable=["export*"])
    assert "exportCsv" in toolset.inline_names()
    assert "exportJson" in toolset.discoverable_names()


def test_always_loaded_tools_are_never_searched_for(config_path: Path) -> None:
    toolset = overridden_toolset(config_path)
    searcher = ToolSearcher(toolset, ActiveSet(toolset.inline_names()))
    names = [tool["name"] for tool in searcher.search("export to a csv file", limit=10)["tools"]]
    assert "exportCsv" not in names and "exportJson" in names
    stats = [tool["name"] for tool in searcher.search("index statistics", limit=10)["tools"]]
    assert "getIndexStats" not in stats
    demoted = [tool["name"] for tool in searcher.search("count items", limit=10)["tools"]]
    assert "countItems" in demoted


def test_the_first_request_carries_the_overridden_inline_set(
    config_path: Path, db_path: Path, scripted_bedrock: ScriptedBedrock
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "export to a csv file"})]),
        Reply(text="Use exportCsv, it is already available."),
    )
    settings = load_settings(config_path)
    session = ChatSession.open(settings, open_store(db_path))
    ended = session.run_turn("export the orders to csv")
    assert ended.reason == "end_turn"

    first = scripted_bedrock.requests[0].body
    names = request_tool_names(first)
    assert names == list(session.toolset.inline_names())
    assert PROMOTED <= set(names) and not DEMOTED & set(names)
    search_spec = next(
        tool["toolSpec"]
        for tool in first["toolConfig"]["tools"]
        if tool.get("toolSpec", {}).get("name") == "searchTools"
    )
    assert "countItems" in search_spec["description"]
    assert "exportCsv" not in search_spec["description"]
    search_result = session.last_record.steps[0]["toolCalls"][0]["result"]
    assert "exportCsv" not in [tool["name"] for tool in search_result["tools"]]


def test_tools_json_lists_the_overridden_rows(
    config_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["tools", "--json", "--config", str(config_path)]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert all(rows[name]["visibility"] == "inline" for name in PROMOTED)
    assert all(rows[name]["visibility"] == "discoverable" for name in DEMOTED)
    assert rows["searchTools"]["visibility"] == "inline"
    assert "countItems" in rows["searchTools"]["description"]
    assert "exportCsv" not in rows["searchTools"]["description"]
