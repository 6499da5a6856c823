"""Commit history (F9): a bulk edit's commit reverted from the app restores every row."""

from __future__ import annotations

import sqlite3
import time

from tests.tui.helpers import SIZE, settle
from tui.screens.confirm import ConfirmScreen
from tui.screens.history import HistoryScreen
from tui.widgets.staging_panel import StagingPanel


def statuses(path, ids):
    connection = sqlite3.connect(path)
    try:
        marks = ",".join("?" * len(ids))
        rows = connection.execute(f"SELECT id, status FROM orders WHERE id IN ({marks})", ids)
        return dict(rows.fetchall())
    finally:
        connection.close()


async def test_a_bulk_edit_commit_reverted_from_the_history_view_restores_every_row(
    make_app, demo_path
) -> None:
    ids = list(range(1, 36))
    before = statuses(demo_path, ids)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = app.staging_watch.area
        area.stage_many("orders", keys=[{"id": i} for i in ids], set={"status": "cancelled"})
        area.commit()
        assert set(statuses(demo_path, ids).values()) == {"cancelled"}
        await pilot.press("f9")
        await settle(app, pilot)
        assert isinstance(app.screen, HistoryScreen)
        assert app.screen.query_one("#commits").row_count == 1
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "1 commit. Enter shows a commit" in shown, shown
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "35 changes" in app.screen.question
        await pilot.press("y")
        await settle(app, pilot)
        assert app.status.staged == 35
        assert set(statuses(demo_path, ids).values()) == {"cancelled"}  # staged, not written
        panel = app.query_one(StagingPanel)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert statuses(demo_path, ids) == before
        assert app.status.staged == 0
        assert len(panel.app.staging_watch.area.history()) == 2


async def test_an_empty_history_says_how_commits_get_there(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f9")
        await settle(app, pilot)
        assert "No commits yet" in str(app.screen.query_one("#summary").render())
        assert app.screen.query_one("#revert").disabled


async def test_a_revert_runs_beside_the_app_not_in_its_way(make_app, demo_path) -> None:
    """Staging the revert of a large commit took the app's own thread (50,000 changes: ~12 s
    with no key answered); it runs on a worker, so keys work meanwhile."""
    import threading

    from tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = app.staging_watch.area
        area.stage_many("orders", keys=[{"id": i} for i in (1, 2, 3)], set={"status": "x"})
        area.commit()
        release, finished = threading.Event(), threading.Event()
        real_revert = area.revert

        def slow_revert(commit_id: str, *args, **kwargs):
            release.wait(20)  # a large commit; never reached by the assert below
            try:
                return real_revert(commit_id, *args, **kwargs)
            finally:
                finished.set()

        area.revert = slow_revert
        await pilot.press("f9")
        await settle(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.press("y")
        await pilot.press("f1")
        await pilot.pause()
        answered_while_reverting = isinstance(app.screen, HelpScreen) and not finished.is_set()
        release.set()
        await settle(app, pilot)
        assert answered_while_reverting
        assert app.status.staged == 3
        assert statuses(demo_path, [1, 2, 3]) == {1: "x", 2: "x", 3: "x"}


async def test_enter_or_a_click_on_a_commit_shows_its_changes_and_esc_goes_back(
    make_app,
) -> None:
    """Enter on a commit did nothing: only `tabletalk commits show ID` told what it changed.
    Its changes now open in a modal (values escaped and cut), over the history."""
    from textual.widgets import Static

    from tui.screens.commit_detail import DETAIL_VALUE_LIMIT, CommitDetailScreen

    long_value = "[bold red]boom[/] " + "x" * 500
    huge_value = "y" * 3000
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = app.staging_watch.area
        area.stage_many("orders", keys=[{"id": 1}], set={"status": long_value})
        area.stage_many("orders", keys=[{"id": 4}], set={"status": huge_value})
        area.commit()
        area.stage_many("orders", keys=[{"id": 2}, {"id": 3}], set={"status": "returned"})
        area.commit()
        await pilot.press("f9")
        await settle(app, pilot)
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await pilot.press("enter")  # the newest commit
        await settle(app, pilot)
        assert isinstance(app.screen, CommitDetailScreen)
        shown = "\n".join(str(static.render()) for static in app.screen.query(Static))
        assert "2 changes" in shown
        assert "UPDATE orders id=2" in shown and "UPDATE orders id=3" in shown
        assert "→ returned" in shown.replace("\n    ", " ")
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is history
        await pilot.click("#commits", offset=(4, 2))  # the older commit's row, not highlighted
        await settle(app, pilot)
        assert isinstance(app.screen, CommitDetailScreen)
        assert app.screen.entry.id == history.entries[1].id
        shown = "\n".join(str(static.render()) for static in app.screen.query(Static))
        assert "UPDATE orders id=1" in shown
        assert "[bold red]boom[/] xxx" in shown, "markup in a value is shown as typed"
        assert long_value in shown.replace("\n", ""), "a long value is shown whole"
        assert "y" * (DETAIL_VALUE_LIMIT - 1) + "…" in shown.replace("\n", "")
        assert "y" * DETAIL_VALUE_LIMIT not in shown.replace("\n", ""), "a huge one is cut"
        more = str(app.screen.query_one("#commit-more", Static).render())
        assert "Values longer than 2,000 characters end in …" in more
        assert "`tabletalk commits show " in more and "prints them whole" in more
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is history


async def test_a_big_commits_detail_names_the_command_for_the_rest_on_this_store(
    make_app, demo_path
) -> None:
    """`tabletalk commits show ID` for the changes past the first 200 went to the demo
    database when pasted ("no commit … in this store's history"): it names this store."""
    from textual.widgets import Static

    from tui.screens.commit_detail import CHANGES_SHOWN

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = app.staging_watch.area
        keys = [{"id": i} for i in range(1, CHANGES_SHOWN + 6)]
        area.stage_many("orders", keys=keys, set={"status": "returned"})
        area.commit()
        await pilot.press("f9")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        shown = "\n".join(str(static.render()) for static in app.screen.query(Static))
        entry = app.screen.entry
        assert f"`tabletalk commits show {entry.id} --db {demo_path}` lists them all" in " ".join(
            shown.split()
        ), shown[-400:]


async def test_a_revert_and_the_commit_it_undid_are_marked_at_80_columns(make_app) -> None:
    """Two look-alike rows hid which commit undid which, or that a commit was already undone
    (reverting it again would only conflict)."""
    from textual.widgets import Static

    from tui.screens.commit_detail import CommitDetailScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        area = app.staging_watch.area
        area.stage_many("orders", keys=[{"id": 1}], set={"status": "returned"})
        area.commit()
        first = area.history()[0].id
        area.revert(first)
        area.commit()
        undo = area.history()[0].id
        await pilot.press("f9")
        await settle(app, pilot)
        assert isinstance(app.screen, HistoryScreen)
        rows = [s.text for s in app.screen._compositor.render_strips()]
        assert any(undo in r and f"undoes {first[:8]}" in r for r in rows), rows
        assert any(r.find(first) < r.find(f"undone by {undo[:8]}") for r in rows if first in r)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, CommitDetailScreen)
        summary = str(app.screen.query_one("#commit-summary", Static).render())
        assert summary.endswith(f"1 change · reverts {first}"), summary
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("down", "r")  # revert the commit already undone
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question.startswith(f"Commit {first} was already undone by {undo}.")


async def test_long_table_and_committer_names_are_cut_with_an_ellipsis_not_lost_off_the_edge(
    make_app,
) -> None:
    """At 80 columns the by column ran off the box with no sign it was cut; a wider terminal
    shows more of it."""
    person = "maria.gonzalez-fernandez@accounts.example.com"
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        area = app.staging_watch.area
        area.stage_many("orders", keys=[{"id": 1}], set={"status": "returned"})
        area.stage_many("customers", keys=[{"id": 1}], set={"name": "Ann"})
        area.commit(by=person)
        await pilot.press("f9")
        await settle(app, pilot)
        row = next(s.text for s in app.screen._compositor.render_strips() if "maria" in s.text)
        by = row[row.index("maria") :].split()[0]
        assert by.endswith("…") and person.startswith(by[:-1]), row
        assert "customers…" in row or "customers, orders" in row, row
        await pilot.resize_terminal(120, 36)
        await settle(app, pilot)
        wide = next(s.text for s in app.screen._compositor.render_strips() if "maria" in s.text)
        assert "customers, orders" in wide, wide
        longer = wide[wide.index("maria") :].split()[0]
        assert len(longer) > len(by) and person.startswith(longer.rstrip("…")), wide


async def test_a_dialog_opening_clears_the_toasts_shown_before_it(make_app) -> None:
    """The commit toast sat over F9's columns; a toast raised with the dialog stays."""
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(app, pilot)
        app.notify("Committed 87 changes.", timeout=60)  # only the dialog can take it away
        await pilot.pause()
        for shown in app._notifications:
            shown.raised_at -= 2  # up for a while (read), not yet timed out
        await pilot.press("f9")
        await settle(app, pilot)
        assert isinstance(app.screen, HistoryScreen)
        assert not list(app._notifications)
        rows = "\n".join(s.text for s in app.screen._compositor.render_strips())
        assert "Committed 87" not in rows
        await pilot.press("escape")
        await settle(app, pilot)
        app.notify("About the dialog", timeout=60)
        for shown in app._notifications:  # raised as the dialog opens, however slow the press
            shown.raised_at = time.time() + 30
        await pilot.press("f9")
        await settle(app, pilot)
        assert [n.message for n in app._notifications] == ["About the dialog"]
