"""Escape sequences in a cell, a name, a model answer or a staged value never reach the
terminal: what the app would write shows them as pictures (␛) instead."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from agent.config import Settings
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from tests.tui.helpers import SIZE, settle
from tui.app import TabletalkApp
from tui.screens.row_detail import RowDetailScreen
from tui.widgets.chat_items import AssistantMessage
from tui.widgets.chat_lines import NoteLine

TITLE = "\x1b]2;PWNED\x1b\\"
"""Sets the terminal window's title (OSC 2); OSC 52 would write the clipboard the same way."""
CLEAR = "\x1b[2J"
C1_CSI = "\x9b2J"


def terminal_output(app: TabletalkApp) -> str:
    """Exactly what the app would write to a real terminal for the whole screen now."""
    update = app.screen._compositor.render_update(full=True)
    return update.render_segments(app.console)


def assert_inert(output: str) -> None:
    for sequence in (TITLE[:4], CLEAR, C1_CSI):
        assert sequence not in output, f"{sequence!r} reached the terminal"


def hostile_db(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(f'CREATE TABLE notes (id INTEGER PRIMARY KEY, "body{CLEAR}" TEXT)')
        conn.execute("INSERT INTO notes VALUES (1, ?)", (f"hello {TITLE} world {CLEAR}{C1_CSI}",))
    return path


async def test_a_hostile_cell_and_column_name_are_drawn_not_obeyed(tmp_path: Path) -> None:
    store = SQLiteStore.open(hostile_db(tmp_path))
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("notes")
        await settle(app, pilot)
        output = terminal_output(app)
        assert_inert(output)
        assert "hello ␛]2;PWNED␛\\ world" in output
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RowDetailScreen)
        output = terminal_output(app)
        assert_inert(output)
        assert "␛]2;PWNED" in output
    store.close()


async def test_a_hostile_answer_note_and_staged_value_are_drawn_not_obeyed(
    tmp_path: Path,
) -> None:
    store = SQLiteStore.open(hostile_db(tmp_path))
    staging = StagingArea(store)
    staging.stage(
        "notes", "update", {"id": 1}, {f"body{CLEAR}": f"bye {TITLE}{C1_CSI}"}, origin="mcp:evil"
    )
    staging.close()
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.chat.mount(AssistantMessage(f"**answer** {TITLE} {CLEAR}{C1_CSI}"))
        await app.chat.mount(NoteLine(f"note {TITLE}"))
        await settle(app, pilot)
        assert_inert(terminal_output(app))
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        output = terminal_output(app)
        assert_inert(output)
        assert "bye ␛]2;PWNED" in output
    store.close()


async def test_table_names_that_look_like_markup_show_as_written_in_the_palette(
    tmp_path: Path,
) -> None:
    """A SQLite table named `notes[/]` crashed the app when ctrl+p listed "Open table: …"
    (the palette reads its entries as markup); `[b red]loud` would have been styled."""
    path = tmp_path / "names.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute('CREATE TABLE "notes[/]" (id INTEGER PRIMARY KEY)')
        conn.execute('CREATE TABLE "[b red]loud" (id INTEGER PRIMARY KEY)')
    store = SQLiteStore.open(path)
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await pilot.press(*"open table")
        await settle(app, pilot)
        shown = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", terminal_output(app))  # styles, moves
        assert "Open table: notes[/]" in shown and "Open table: [b red]loud" in shown
        assert "Open notes[/] in a tab" in shown
    store.close()
