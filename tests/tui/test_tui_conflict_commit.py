"""Committing what the staging panel's filter matches leaves out the changes already known to
conflict: they would only fail again."""

from __future__ import annotations

import sqlite3

from agent.staging import StagingArea
from tests.tui.helpers import settle
from tui.screens.confirm import ConfirmScreen
from tui.widgets.staging_panel import StagingPanel


def _stage_with_a_conflict(demo_store, demo_path):
    area = StagingArea(demo_store)
    stale = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    fine = area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 7")
    return area, stale, fine


def _status(path, key: int) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT status FROM orders WHERE id = ?", (key,)).fetchone()[0]


def _conflict_notices(app) -> int:
    return sum(n.title == "Commit conflict" for n in app._notifications)


async def test_under_is_conflict_the_panel_offers_no_commit_of_the_conflicts(
    make_app, demo_store, demo_path
) -> None:
    area, stale, _ = _stage_with_a_conflict(demo_store, demo_path)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert panel.query_one("#staging-filter").value == "is:conflict"
        button = panel.query_one("#commit-matching")
        assert not button.display, f"offers {button.label} for changes known to conflict"
        assert panel.query_one("#reject-matching").display, "rejecting them is still offered"
        panel.act_on_matching("commit")  # reached anyway (a stale press): it says why not
        await settle(app, pilot)
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("y")
            await settle(app, pilot)
        assert any("nothing was committed" in n.message for n in app._notifications)
        assert _conflict_notices(app) == 1, "it tried the conflicts again"
        assert stale.id in panel.conflicts and len(area.list()) == 2


async def test_committing_what_a_filter_matches_skips_the_known_conflicts(
    make_app, demo_store, demo_path
) -> None:
    area, stale, fine = _stage_with_a_conflict(demo_store, demo_path)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        panel.set_filter("table:orders")  # matches both, the conflict among them
        await settle(app, pilot)
        button = panel.query_one("#commit-matching")
        assert button.display and str(button.label) == "Commit 1", button.label
        panel.act_on_matching("commit")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        question = app.screen.question
        assert "1 staged change " in question and "in conflict stays staged" in question
        await pilot.press("y")
        await settle(app, pilot)
        assert _status(demo_path, 8) == "packed"
        assert [c.id for c in area.list()] == [stale.id]
        assert _conflict_notices(app) == 1, "it tried the conflict again"
