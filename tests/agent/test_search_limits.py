"""Tool search refuses an over-long query, naming the limit, wherever the query comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.active_set import ActiveSet
from agent.cli.main import main
from agent.errors import TabletalkError
from agent.search.searcher import ToolSearcher
from agent.search.text import MAX_QUERY_CHARS
from agent.toolset import Toolset
from tests.support.tools import err, make_ctx

LONG = "export to csv " * 8000  # 112,000 characters


def test_search_tools_input_refuses_an_over_long_query(tmp_path: Path, demo_path: Path) -> None:
    ctx = make_ctx(demo_path, tmp_path)
    try:
        failure = err(ctx, "searchTools", query=LONG)
    finally:
        ctx.staging.close()
        ctx.store.close()
    assert "field 'query'" in failure["error"] and "500 characters" in failure["error"]


def test_the_searcher_refuses_it_before_spending_budget() -> None:
    toolset = Toolset.build()
    searcher = ToolSearcher(toolset, ActiveSet(toolset.inline_names()))
    with pytest.raises(TabletalkError) as caught:
        searcher.search(LONG)
    assert f"the limit is {MAX_QUERY_CHARS}" in caught.value.message
    assert searcher.calls_this_turn == 0
    assert searcher.search("export to csv")["tools"]


def test_tools_search_command_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "search", LONG]) == 2
    err_text = capsys.readouterr().err
    assert f"the limit is {MAX_QUERY_CHARS}" in err_text and "fix:" in err_text
