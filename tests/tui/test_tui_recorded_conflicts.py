"""Conflicts a commit of another process found (`tabletalk staged commit`) show in the panel
without a commit there: when the app opens, and in an app already open; taking current or
rejecting in the panel forgets them for every process."""

from __future__ import annotations

import json
import sqlite3

from agent.staging import StagingArea
from tests.agent.test_cli_staged import cli
from tests.tui.helpers import SIZE, settle
from tests.tui.test_tui_staging import listed, open_change
from tui.widgets.staged_change import SmallButton
from tui.widgets.staging_panel import StagingPanel


def _stage_two(demo_store, demo_path):
    area = StagingArea(demo_store)
    stale = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    fine = area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost in transit' WHERE id = 7")
    return area, stale, fine


def _cli_commit_finds_the_conflict(demo_path, stale) -> None:
    code, out, _ = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 1 and f"conflict {stale.id}" in out, out


def _marked_by_the_cli(demo_path) -> set[str]:
    out = cli("staged", "list", "--json", "--db", str(demo_path))[1]
    return {entry["id"] for entry in json.loads(out) if "conflict" in entry}


def _summary(panel: StagingPanel) -> str:
    return str(panel.query_one("#staging-summary").render())


async def _open_panel(app, pilot) -> StagingPanel:
    await pilot.press("ctrl+s")
    await settle(app, pilot)
    return app.query_one(StagingPanel)


async def test_a_conflict_the_cli_commit_found_shows_when_the_app_opens(
    make_app, demo_store, demo_path
) -> None:
    _, stale, fine = _stage_two(demo_store, demo_path)
    _cli_commit_finds_the_conflict(demo_path, stale)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        assert list(panel.conflicts) == [stale.id]
        assert "1 in conflict (filter is:conflict)" in _summary(panel)
        clean = panel.query_one("#commit-clean")
        assert clean.display and str(clean.label) == "Commit the 1 without conflict"
        take = panel.query_one("#take-current")
        assert take.display and str(take.label) == "Take current for 1"
        assert not panel.query_one("#commit-all").display
        panel.set_filter("is:conflict")
        await settle(app, pilot)
        assert listed(app) == [stale.id]
        card = await open_change(app, pilot, stale.id)
        assert card.has_class("-conflict")
        shown = str(card.query_one(".conflict").render())
        assert "now 'lost in transit'" in shown
        assert "found by the commit at " in shown, "the value is as that commit read it"
        assert not any(n.title == "Commit conflict" for n in app._notifications), "no commit ran"
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.click("#commit-clean")
        await settle(app, pilot)
        assert [c.id for c in StagingArea(demo_store).list()] == [stale.id]
        assert fine.id not in _marked_by_the_cli(demo_path)


async def test_an_open_panel_shows_a_conflict_another_process_found(
    make_app, demo_store, demo_path
) -> None:
    _, stale, _ = _stage_two(demo_store, demo_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        assert panel.conflicts == {}
        _cli_commit_finds_the_conflict(demo_path, stale)  # the staged count stays the same
        app.staging_watch._ticks = 1  # not a tick that re-reads everything anyway
        app.staging_watch._check()
        await settle(app, pilot)
        assert list(panel.conflicts) == [stale.id]
        assert panel.query_one("#take-current").display


async def test_taking_current_in_the_panel_forgets_the_conflict_for_every_process(
    make_app, demo_store, demo_path
) -> None:
    area, stale, _ = _stage_two(demo_store, demo_path)
    _cli_commit_finds_the_conflict(demo_path, stale)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        assert panel.query_one("#take-current").display
        await pilot.click("#take-current")
        await settle(app, pilot)
        assert panel.conflicts == {}
        assert area.get(stale.id).pre_image["status"] == "lost in transit"
    assert _marked_by_the_cli(demo_path) == set()
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        panel = await _open_panel(again, pilot)
        assert panel.conflicts == {} and panel.query_one("#commit-all").display


async def test_rejecting_the_change_in_the_panel_forgets_its_conflict(
    make_app, demo_store, demo_path
) -> None:
    _, stale, fine = _stage_two(demo_store, demo_path)
    _cli_commit_finds_the_conflict(demo_path, stale)
    assert _marked_by_the_cli(demo_path) == {stale.id}
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        assert list(panel.conflicts) == [stale.id]
        card = await open_change(app, pilot, stale.id)
        assert card.has_class("-conflict")
        reject = next(b for b in card.query(SmallButton) if b.action_name == "reject")
        await pilot.click(reject)
        await settle(app, pilot)
        assert panel.conflicts == {}
        assert listed(app) == [fine.id]
    assert _marked_by_the_cli(demo_path) == set()


async def test_the_palette_offers_the_panel_buttons_shown_and_presses_them_from_any_tab(
    make_app, demo_store, demo_path
) -> None:
    """ctrl+p "take current" from the Tables tab: the panel comes forward and takes current,
    as its button would; only the buttons the panel shows now are offered."""
    area, stale, _ = _stage_two(demo_store, demo_path)
    _cli_commit_finds_the_conflict(demo_path, stale)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {
            "Staging: Commit the 1 without conflict",
            "Staging: Take current for 1",
            "Staging: Reject all",
        } <= titles, titles
        assert "Staging: Commit all" not in titles, "hidden while a change conflicts"
        assert not any(t.startswith("Staging: ◀") for t in titles)
        tabs = app.query_one("#tabs")
        tabs.active = "home"
        await settle(app, pilot)
        await pilot.press("ctrl+p", *"take current")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert tabs.active == "staging"
        assert panel.conflicts == {}
        assert area.get(stale.id).pre_image["status"] == "lost in transit"
