"""Characters that reorder or hide text never reach the terminal raw: a bidi override in a cell,
a column name, an answer, a question or a staged value (it makes `exe.txt` read as `txt.exe`),
a zero-width space, or a lone surrogate (the driver writes it as `\\ud800`: six cells where one
was laid out) show as `�`.
Escape sequences are covered by test_tui_terminal_text.py."""

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

HOSTILE = "\u202eevil\u200bx"
"""A right-to-left override and a zero-width space: what a cell or an answer must not send raw."""
SHOWN = "\ufffdevil\ufffdx"
UNSAFE = ("\u202e", "\u200b")


def terminal_output(app: TabletalkApp) -> str:
    """Exactly what the app would write to a real terminal for the whole screen now."""
    update = app.screen._compositor.render_update(full=True)
    return update.render_segments(app.console)


def assert_safe(app: TabletalkApp) -> str:
    text = terminal_output(app)
    leaked = [repr(c) for c in UNSAFE if c in text]
    assert not leaked, f"raw characters on screen: {leaked}"
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


async def test_a_table_tab_and_its_row_detail_show_bidi_controls_as_pictures(
    hostile_store,
) -> None:
    app = TabletalkApp(hostile_store, Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=(160, 36)) as pilot:
        await app.open_table("customers")
        await settle(app, pilot)
        app.query_one(TableView).focus()
        await pilot.pause()
        assert SHOWN in assert_safe(app)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        text = assert_safe(app)
        assert f"note{SHOWN}" in text, "the column name too"


async def test_an_answer_with_a_bidi_override_or_a_lone_surrogate_is_drawn(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text=f"Here: {HOSTILE} and \ud800 done."))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "hello")
        text = assert_safe(app)
        assert SHOWN in text and "and \ufffd done." in text


async def test_a_question_and_its_choices_show_bidi_controls_as_pictures(
    make_app, scripted_bedrock
) -> None:
    question = {"question": f"Which {HOSTILE}?", "choices": [f"first {HOSTILE}", "second"]}
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("ask", question)]))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "hello")
        text = assert_safe(app)
        assert f"Which {SHOWN}" in text and f"first {SHOWN}" in text


async def test_a_staged_value_shows_bidi_controls_as_pictures(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(stage_update({"id": 1}, {"status": HOSTILE}), Reply(text="Staged."))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "stage it")
        await app.run_action("open_staging_panel")
        await settle(app, pilot)
        assert SHOWN in assert_safe(app)
        await pilot.press("enter")  # the change in full
        await settle(app, pilot)
        assert SHOWN in assert_safe(app)
