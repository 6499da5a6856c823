"""The review flow from the keyboard: the staging panel's commit key, its footer entry and
hint (which follow `[keys]`), and what it says when there is nothing to commit."""

from __future__ import annotations

import sqlite3

from agent.staging import StagingArea
from tests.tui.helpers import SIZE, settle
from tui.screens.confirm import ConfirmScreen
from tui.widgets.footer import KeyFooter
from tui.widgets.staged_change import ChangeCard, ChangeDetailScreen
from tui.widgets.staging_panel import StagingPanel


def _statuses(path, ids) -> dict[int, str]:
    with sqlite3.connect(path) as conn:
        marks = ",".join("?" * len(ids))
        return dict(conn.execute(f"SELECT id, status FROM orders WHERE id IN ({marks})", ids))


def _commit_entry(app):
    """The footer's entry for the panel's commit key, or None when it is not shown."""
    footer = app.query_one(KeyFooter)
    return next((e for e in footer.entries if e.action == "commit_staged"), None)


async def _open_panel(app, pilot) -> StagingPanel:
    await pilot.press("ctrl+s")
    await settle(app, pilot)
    panel = app.query_one(StagingPanel)
    assert app.focused is app.query_one("#staging-list")
    return panel


async def test_c_in_the_panel_asks_then_commits_what_is_staged(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 1}, {"status": "on hold"}, origin="test")
    area.stage("orders", "update", {"id": 2}, {"status": "on hold"}, origin="test")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await _open_panel(app, pilot)
        entry = _commit_entry(app)
        assert entry is not None and entry.enabled and entry.display == "c"
        assert "commit" in entry.description.lower()
        assert "c commits" in str(panel.query_one("#staging-summary").render())
        await pilot.press("c")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "2 staged changes" in app.screen.question
        assert _statuses(demo_path, [1, 2]) != {1: "on hold", 2: "on hold"}, "asks first"
        await pilot.press("y")
        await settle(app, pilot)
        assert _statuses(demo_path, [1, 2]) == {1: "on hold", 2: "on hold"}
        assert area.list() == []
        assert any("Committed 2 changes" in n.message for n in app._notifications)


async def test_no_at_the_question_commits_nothing(make_app, demo_store, demo_path) -> None:
    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 1}, {"status": "on hold"}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open_panel(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        assert len(area.list()) == 1
        assert _statuses(demo_path, [1]) != {1: "on hold"}


async def test_with_nothing_staged_the_key_is_dimmed_and_says_why(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        entry = _commit_entry(app)
        assert entry is not None and not entry.enabled
        await pilot.press("c")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        said = [n.message for n in app._notifications]
        assert any("Nothing is staged" in m for m in said), said


async def test_conflicts_stay_staged_and_the_key_commits_the_others(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        before = _statuses(demo_path, [7, 8])
        panel = await _open_panel(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert len(panel.conflicts) == 1
        assert _statuses(demo_path, [7, 8]) == before, "nothing committed while one conflicts"
        panel.query_one("#staging-list").focus()
        await pilot.press("c")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "1 staged change" in app.screen.question and "conflict" in app.screen.question
        await pilot.press("y")
        await settle(app, pilot)
        assert _statuses(demo_path, [7, 8]) == {7: "lost", 8: "packed"}
        assert len(area.list()) == 1


async def test_the_filter_box_takes_c_as_typing(make_app, demo_store) -> None:
    StagingArea(demo_store).stage("orders", "update", {"id": 1}, {"status": "x"}, origin="t")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        await pilot.press("slash")
        await pilot.press("c")
        await settle(app, pilot)
        assert panel.query_one("#staging-filter").value == "c"
        assert _commit_entry(app) is None, "the footer does not offer a key that types"
        assert not isinstance(app.screen, ConfirmScreen)


async def test_a_remapped_commit_key_is_the_one_the_footer_and_hint_name(
    make_app, demo_store
) -> None:
    StagingArea(demo_store).stage("orders", "update", {"id": 1}, {"status": "x"}, origin="t")
    app = make_app(keys={"staging.commit": "x"})
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        entry = _commit_entry(app)
        assert entry is not None and entry.display == "x"
        summary = str(panel.query_one("#staging-summary").render())
        assert "x commits" in summary and "c commits" not in summary
        await pilot.press("x")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)


def _listed(app) -> list[str]:
    options = app.query_one("#staging-list").options
    return [o.id for o in options if o.id != "staging-empty"]


async def test_once_no_conflict_is_left_the_conflict_filter_lets_new_changes_show(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    stale = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open_panel(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert panel.query_one("#staging-filter").value == "is:conflict"
        area.discard(ids=[stale.id])  # rejected elsewhere (the CLI, another panel)
        fresh = area.stage("orders", "update", {"id": 9}, {"status": "packed"}, origin="test")
        app.staging_watch._check()
        await settle(app, pilot)
        assert panel.conflicts == {}
        assert _listed(app) == [fresh.id], "the new change is hidden by a filter of no conflict"
        assert panel.query_one("#staging-filter").value == ""


async def test_refresh_clears_the_conflict_filter_with_the_conflicts(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    other = area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open_panel(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert other.id not in _listed(app)
        await pilot.click("#refresh")
        await settle(app, pilot)
        assert other.id in _listed(app), "Refresh forgot the conflicts but kept hiding the rest"


async def test_enter_right_after_ctrl_s_opens_the_first_change(make_app, demo_store) -> None:
    change = StagingArea(demo_store).stage(
        "orders", "update", {"id": 1}, {"status": "x"}, origin="t"
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open_panel(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ChangeDetailScreen), (
            "Enter did nothing: no change had the cursor"
        )
        assert app.screen.query_one(ChangeCard).change.id == change.id
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("slash", "x", "enter")  # a filter applied: the list is filled again
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ChangeDetailScreen)


async def test_over_a_modal_the_footer_names_the_modal_keys(make_app, demo_store) -> None:
    StagingArea(demo_store).stage("orders", "update", {"id": 1}, {"status": "x"}, origin="t")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_panel(app, pilot)
        footer = app.query_one(KeyFooter)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ChangeDetailScreen)
        drawn = footer.render().plain
        assert "Commit" not in drawn and "Staged" not in drawn, drawn  # keys that do nothing here
        assert "esc Close" in drawn, drawn
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        drawn = footer.render().plain
        assert "y Yes" in drawn and "Commit" not in drawn, drawn
        await pilot.press("n")
        await settle(app, pilot)
        assert "c Commit" in footer.render().plain, "the panel's keys are back"


async def test_the_commit_hint_keeps_its_key_and_word_on_one_line_at_80_columns(
    make_app, demo_store
) -> None:
    area = StagingArea(demo_store)
    area.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 1500", set={"status": "x"}, origin="t"
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await _open_panel(app, pilot)
        assert "1,500 staged changes" in str(panel.query_one("#staging-summary").render())
        left = [strip.text[:45].rstrip() for strip in app.screen._compositor.render_strips()]
        assert not any(line.endswith("· c") for line in left), left[:6]
        assert any("c commits ·" in line for line in left), left[:6]
