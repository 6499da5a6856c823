"""vectorSearch as the model and MCP clients meet it: offered only where an index exists,
and a scripted chat that finds products by meaning (issue 14's acceptance)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.config import Settings
from agent.session import ChatSession
from agent.stores.demo import build_demo_db
from agent.stores.open import open_store
from agent.tools.base import ToolContext
from tests.agent.test_mcp_server import Served, xdg_env
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse
from tests.support.tools import err, ok, opened_ctx


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    build_demo_db(path, today=date(2026, 11, 1))
    return path


def build_index(db: Path) -> None:
    args = ["index", "build", "products", "--db", str(db), "--columns", "name,category", "--yes"]
    assert main(args) == 0


def first_request_tools(scripted: ScriptedBedrock, db: Path) -> str:
    scripted.add(Reply(text="hello"))
    session = ChatSession.open(Settings(streaming=False), open_store(db))
    try:
        session.run_turn("hi")
    finally:
        session.store.close()
    return json.dumps(scripted.requests[-1].body["toolConfig"])


def test_offered_to_the_model_and_search_only_with_an_index(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    assert "vectorSearch" not in first_request_tools(scripted_bedrock, db_path)
    session = ChatSession.open(Settings(streaming=False), open_store(db_path))
    hits = session.searcher.search("semantic search by meaning similar", 5)
    assert "vectorSearch" not in json.dumps(hits)
    session.store.close()

    build_index(db_path)
    assert "vectorSearch" in first_request_tools(scripted_bedrock, db_path)
    session = ChatSession.open(Settings(streaming=False), open_store(db_path))
    hits = session.searcher.search("semantic search by meaning similar", 5)
    assert "vectorSearch" in json.dumps(hits)
    session.store.close()


def test_scripted_chat_finds_the_nearest_products(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    build_index(db_path)
    conn = sqlite3.connect(db_path)
    target_id, target_name = conn.execute("SELECT id, name FROM products WHERE id = 17").fetchone()
    conn.close()
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "semantic similar products"})]),
        Reply(
            tool_uses=[
                ToolUse("vectorSearch", {"table": "products", "query": target_name, "limit": 3})
            ]
        ),
        Reply(text="Here are the closest products."),
    )
    session = ChatSession.open(Settings(streaming=False, mode="auto"), open_store(db_path))
    try:
        ended = session.run_turn(f"find products like '{target_name}'")
    finally:
        session.store.close()
    assert ended.reason == "end_turn"
    last = scripted_bedrock.requests[-1].body["messages"][-1]
    result = next(b["toolResult"] for b in last["content"] if "toolResult" in b)
    assert result["status"] == "success", result
    found = result["content"][0]["json"]["results"]
    assert found[0]["key"] == {"id": target_id} and found[0]["row"]["name"] == target_name
    assert len(found) == 3 and found[0]["distance"] <= found[1]["distance"]


@pytest.fixture
def ctx(tmp_path: Path, db_path: Path):
    with opened_ctx(db_path, tmp_path) as context:
        yield context


def test_missing_index_names_the_command(ctx: ToolContext) -> None:
    failure = err(ctx, "vectorSearch", table="products", query="warm lamp")
    assert "no embedding index" in failure["error"]
    assert "tabletalk index build products --columns" in failure["fix"]
    assert "unknown table" in err(ctx, "vectorSearch", table="nope", query="x")["error"]


def test_where_filters_through_the_read_only_path(
    scripted_bedrock: ScriptedBedrock, ctx: ToolContext, db_path: Path
) -> None:
    build_index(db_path)
    result = ok(ctx, "vectorSearch", table="products", query="lamp", limit=5, where="price < 50")
    assert result["results"] and all(h["row"]["price"] < 50 for h in result["results"])
    cheap = ctx.store.count("products", "price < 50")
    assert len(result["results"]) == min(5, cheap)
    refused = err(
        ctx, "vectorSearch", table="products", query="lamp", where="1; DELETE FROM products"
    )
    assert "condition" in refused["error"] or "condition" in refused["fix"]
    assert ctx.store.count("products") == 60
    assert (
        "a condition"
        in err(ctx, "vectorSearch", table="products", query="x", where="SELECT * FROM products")[
            "error"
        ]
    )


def test_mcp_lists_vector_search_only_with_an_index(
    scripted_bedrock: ScriptedBedrock,
    demo_template: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "plain").mkdir()
    plain = Served("read", tmp_path / "plain", demo_template)
    try:
        assert "vectorSearch" not in [t.name for t in plain.session.tools()]
    finally:
        plain.close()
    root = tmp_path / "indexed"
    root.mkdir()
    for name, value in xdg_env(root / "home").items():
        if name.startswith("XDG_"):
            monkeypatch.setenv(name, value)
    build_index(Path(shutil.copy(demo_template, root / "demo.sqlite")))
    served = Served("read", root, demo_template)
    try:
        assert "vectorSearch" in [t.name for t in served.session.tools()]
        answer = served.session.call("vectorSearch", {"table": "products", "query": "lamp"})
        assert not answer.is_error
    finally:
        served.close()


def _tool_result(scripted: ScriptedBedrock) -> dict:
    last = scripted.requests[-1].body["messages"][-1]
    return next(b["toolResult"] for b in last["content"] if "toolResult" in b)


def test_an_index_built_or_dropped_mid_session_changes_the_next_turn(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    session = ChatSession.open(Settings(streaming=False, mode="auto"), open_store(db_path))
    try:
        scripted_bedrock.add(Reply(text="hello"))
        session.run_turn("hi")
        assert "vectorSearch" not in json.dumps(scripted_bedrock.requests[-1].body["toolConfig"])
        build_index(db_path)  # another process builds it while the session is open
        scripted_bedrock.add(
            Reply(tool_uses=[ToolUse("searchTools", {"query": "semantic similar products"})]),
            Reply(
                tool_uses=[
                    ToolUse("vectorSearch", {"table": "products", "query": "lamp", "limit": 2})
                ]
            ),
            Reply(text="Here they are."),
        )
        session.run_turn("find products like a lamp")
        # searchTools' description names it, search finds it, and the call works
        assert "vectorSearch" in json.dumps(scripted_bedrock.requests[-3].body["toolConfig"])
        found = _tool_result(scripted_bedrock)
        assert found["status"] == "success" and len(found["content"][0]["json"]["results"]) == 2
        assert main(["index", "drop", "products", "--db", str(db_path)]) == 0
        scripted_bedrock.add(Reply(text="ok"))
        session.run_turn("thanks")
        assert "vectorSearch" not in json.dumps(scripted_bedrock.requests[-1].body["toolConfig"])
        assert "vectorSearch" not in session.active
    finally:
        session.store.close()


def test_a_running_mcp_server_lists_vector_search_once_an_index_exists(
    scripted_bedrock: ScriptedBedrock,
    demo_template: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = Served("read", tmp_path, demo_template)
    try:
        assert "vectorSearch" not in [t.name for t in served.session.tools()]
        for name, value in served.env.items():
            if name.startswith("XDG_"):
                monkeypatch.setenv(name, value)
        build_index(served.db)
        assert "vectorSearch" in [t.name for t in served.session.tools()]
        answer = served.session.call("vectorSearch", {"table": "products", "query": "lamp"})
        assert not answer.is_error
    finally:
        served.close()


def test_a_table_without_an_index_gets_a_build_chip_in_chat_only(
    scripted_bedrock: ScriptedBedrock, db_path: Path, ctx: ToolContext
) -> None:
    assert (
        main(["index", "build", "customers", "--db", str(db_path), "--columns", "name", "--yes"])
        == 0
    )
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "semantic similar meaning"})]),
        Reply(tool_uses=[ToolUse("vectorSearch", {"table": "products", "query": "lamp"})]),
        Reply(text="No index yet."),
    )
    chips: list = []
    session = ChatSession.open(Settings(streaming=False, mode="auto"), open_store(db_path))
    try:
        session.run_turn("products like a lamp", on_event=chips.append)
        shown = [e.chip for e in chips if type(e).__name__ == "ChipProposed"]
        action = {"kind": "buildIndex", "table": "products", "columns": ["name", "category"]}
        assert [c.action for c in shown] == [action]
        result = _tool_result(scripted_bedrock)
        assert result["status"] == "error"
        assert "no embedding index" in result["content"][0]["json"]["error"]
        assert "nothing happens until they click" in result["content"][0]["json"]["message"]
        # a resumed conversation shows the same chip
        assert {"chip": {"label": shown[0].label, "action": action}} in session.display_items()
    finally:
        session.store.close()
    # an MCP client (no chat to show it in) gets the error and the command, no chip
    ctx.origin = "mcp:read"
    failure = err(ctx, "vectorSearch", table="products", query="lamp")
    assert "chip" not in failure and "tabletalk index build products" in failure["fix"]
