"""The first tab on a store without tables says what to open instead of an empty list."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.widgets import Static

from agent.config import Settings
from agent.stores.sqlite import SQLiteStore
from tests.tui.helpers import SIZE, settle
from tui.app import TabletalkApp
from tui.widgets.home import HomeTab


def screen_text(app: TabletalkApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_database_without_tables_says_what_to_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()
    app = TabletalkApp(SQLiteStore.open(empty), Settings(), staging_poll_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.query_one(HomeTab).tables == []
        hint = app.query_one(".home-empty", Static)
        assert str(hint.render()).startswith(f"{empty.resolve()} has no tables.")
        assert hint.region.height >= 2, "shown on screen"
        text = " ".join(screen_text(app).split())
        assert "Open a SQLite file that has tables" in text
        assert "Enter opens a table" not in text, "no list to open from"


async def test_the_demo_database_shows_no_such_hint(demo_store: SQLiteStore) -> None:
    app = TabletalkApp(demo_store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "customers" in app.query_one(HomeTab).tables
        assert "has no tables" not in screen_text(app)
