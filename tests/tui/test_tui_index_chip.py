"""The "build a search index" chip: a vectorSearch on a table without an index shows it;
nothing is read or embedded until the person clicks and confirms; the build runs on a worker
and the chat says when it is done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.cli.main import main
from agent.stores.open import open_store
from agent.vectors.index import VectorIndex
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.index_chip import IndexBuildLine
from tui.screens.confirm import ConfirmScreen
from tui.widgets.chat_items import ChipButton


def indexed_rows(db: Path) -> dict[str, int]:
    store = open_store(db)
    index = VectorIndex.open(store)
    try:
        return {entry["table"]: entry["rows"] for entry in index.status()}
    finally:
        index.close()
        store.close()


async def chat_until_the_chip(
    app: Any, pilot: Any, scripted: ScriptedBedrock, db: Path
) -> ChipButton:
    """Index customers (so vectorSearch is offered), then a turn that searches products."""
    assert main(["index", "build", "customers", "--db", str(db), "--columns", "name", "--yes"]) == 0
    scripted.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "semantic similar meaning"})]),
        Reply(tool_uses=[ToolUse("vectorSearch", {"table": "products", "query": "lamp"})]),
        Reply(text="Products have no search index yet."),
    )
    await send(app, pilot, "find products like a lamp")
    (chip,) = [c for c in app.query(ChipButton) if c.chip_action.get("kind") == "buildIndex"]
    assert chip.chip_label == "Build index: products"
    assert chip.chip_action["columns"] == ["name", "category"]
    return chip


async def test_the_chip_estimates_asks_then_builds_with_progress(
    make_app, scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    app = make_app(mode="auto")
    seen: list[Any] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        chip = await chat_until_the_chip(app, pilot, scripted_bedrock, demo_path)
        before = len(scripted_bedrock.invocations)
        assert "products" not in indexed_rows(demo_path)  # nothing until the click

        await pilot.click(chip)
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        question = app.screen.question
        assert "Embed 60 rows of products (columns name, category)" in question
        assert "tokens" in question and "$" in question
        assert len(scripted_bedrock.invocations) == before  # estimated, nothing embedded

        await pilot.press("y")
        await settle(app, pilot)
        line = app.query_one(IndexBuildLine)
        assert "Index of products built: 60 rows" in str(line.render())
        assert line.has_class("-done")
        assert len(scripted_bedrock.invocations) == before + 60
        progress = [m for m in seen if isinstance(m, IndexBuildLine.Progressed)]
        assert progress and (progress[-1].done, progress[-1].total) == (60, 60)
        assert indexed_rows(demo_path)["products"] == 60

        # the next turn's vectorSearch on products works
        scripted_bedrock.add(
            Reply(tool_uses=[ToolUse("vectorSearch", {"table": "products", "query": "lamp"})]),
            Reply(text="Found them."),
        )
        await send(app, pilot, "now search products")
        last = scripted_bedrock.requests[-1].body["messages"][-1]
        result = next(b["toolResult"] for b in last["content"] if "toolResult" in b)
        assert result["status"] == "success"


async def test_declining_builds_nothing_and_names_the_command(
    make_app, scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        chip = await chat_until_the_chip(app, pilot, scripted_bedrock, demo_path)
        before = len(scripted_bedrock.invocations)
        await pilot.click(chip)
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        text = str(app.query_one(IndexBuildLine).render())
        assert "Nothing built" in text
        assert "tabletalk index build products --columns name,category" in text
        assert len(scripted_bedrock.invocations) == before
        assert "products" not in indexed_rows(demo_path)


async def test_a_second_chip_for_a_table_being_built_does_not_build_it_again(
    make_app, scripted_bedrock: ScriptedBedrock, demo_path: Path, monkeypatch
) -> None:
    """Two chips for the same table (two searches, two turns): while the first build runs, the
    second click points at it instead of estimating and embedding everything a second time."""
    import threading

    from agent.vectors import build as build_module

    gate = threading.Event()
    real_run_build = build_module.run_build

    def held(*args: Any, **kwargs: Any) -> int:
        assert gate.wait(60), "the test never opened the gate"
        return real_run_build(*args, **kwargs)

    app = make_app(mode="auto")
    notes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.notify = lambda message, *a, **k: notes.append(str(message))  # type: ignore[method-assign]
        first = await chat_until_the_chip(app, pilot, scripted_bedrock, demo_path)
        monkeypatch.setattr(build_module, "run_build", held)  # the app's builds from here on
        scripted_bedrock.add(
            Reply(tool_uses=[ToolUse("vectorSearch", {"table": "products", "query": "desk"})]),
            Reply(text="Still no index."),
        )
        await send(app, pilot, "and like a desk?")
        chips = [c for c in app.query(ChipButton) if c.chip_action.get("kind") == "buildIndex"]
        second = chips[-1]
        assert second is not first
        before = len(scripted_bedrock.invocations)

        await pilot.click(first)
        await settle(app, pilot)
        await pilot.press("y")  # the build starts and waits on the gate (settle would wait too)
        line = app.query_one(IndexBuildLine)
        for _ in range(1000):
            if "Building the index of products" in str(line.render()):
                break
            await pilot.pause(0.02)
        assert "Building the index of products" in str(line.render())
        await pilot.click(second)
        for _ in range(5):
            await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert len(app.query(IndexBuildLine)) == 1
        assert any("already being built" in note for note in notes)

        gate.set()
        await settle(app, pilot)
        assert "Index of products built: 60 rows" in str(line.render())
        assert len(scripted_bedrock.invocations) == before + 60
