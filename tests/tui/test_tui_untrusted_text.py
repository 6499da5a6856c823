"""Text from a table, the model or the staging area never reaches the terminal as control
characters: an escape sequence in a cell, a column name or an answer is shown as `\\u001b`,
not obeyed (a terminal would recolour, move the cursor or retitle the window)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.config import Settings
from agent.stores.sqlite import SQLiteStore
from tests.support.scripted_bedrock import Reply, ToolUse, stage_update
from tests.tui.helpers import send, settle
from tui.app import TabletalkApp
from tui.screens.row_detail import RowDetailScreen
from tui.widgets.table_view import TableView

HOSTILE = "\x1b[31mred\x1b[0m \u202eevil\x07"
"""An SGR colour, a bidi override and a bell: what a cell or an answer must not send raw."""
UNSAFE = ("\x1b", "\u202e", "\x07")


def screen_text(app: TabletalkApp) -> str:
    """Every character the app would write to the terminal for its current screen."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text for strip in strips)


def assert_safe(app: TabletalkApp) -> str:
    text = screen_text(app)
    leaked = [repr(c) for c in UNSAFE if c in text]
    assert not leaked, f"raw control characters on screen: {leaked}"
    return text


@pytest.fixture
def hostile_store(demo_path: Path):
    with sqlite3.connect(demo_path) as db:
        db.execute(f'ALTER TABLE customers ADD COLUMN "note{HOSTILE}" TEXT')
        db.execute(
            f'UPDATE customers SET name = ?, "note{HOSTILE}" = ? WHERE id = 1', (HOSTILE, HOSTILE)
        )
    store = SQLiteStore.open(demo_path)
    yield store
    store.close()


async def test_a_table_tab_and_its_row_detail_show_control_characters_escaped(
    hostile_store,
) -> None:
    app = TabletalkApp(hostile_store, Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=(160, 36)) as pilot:
        await app.open_table("customers")
        await settle(app, pilot)
        view = app.query_one(TableView)
        view.focus()
        await pilot.pause()
        text = assert_safe(app)
        assert "\\u001b[31mred" in text and "\\u202eevil" in text
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        text = assert_safe(app)
        assert "\\u001b[31mred" in text
        assert "note\\u001b[31mred" in text, "the column name is escaped too"


async def test_an_answer_with_an_escape_sequence_is_shown_escaped(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text=f"Here: {HOSTILE} done."))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "hello")
        text = assert_safe(app)
        assert "\\u001b[31mred" in text and "done." in text


async def test_a_question_its_choices_and_the_tool_line_are_shown_escaped(
    make_app, scripted_bedrock
) -> None:
    question = {"question": f"Which {HOSTILE}?", "choices": [f"first {HOSTILE}", "second"]}
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("ask", question)]))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "hello")
        text = assert_safe(app)
        assert "Which \\u001b[31mred" in text and "first \\u001b[31mred" in text


async def test_a_staged_value_with_an_escape_sequence_is_shown_escaped(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(stage_update({"id": 1}, {"status": HOSTILE}), Reply(text="Staged."))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "stage it")
        await app.run_action("open_staging_panel")
        await settle(app, pilot)
        text = assert_safe(app)
        assert "\\u001b[31mred" in text
        await pilot.press("enter")  # the change in full
        await settle(app, pilot)
        text = assert_safe(app)
        assert "\\u001b[31mred" in text
