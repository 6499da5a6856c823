"""The staging panel: review a bulk edit, commit it into the SQLite file, see conflicts."""

from __future__ import annotations

import sqlite3

from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.widgets.chat_items import ChipButton
from tui.widgets.staging_panel import ChangeCard, SmallButton, StagingPanel
from tui.widgets.table_tab import TableTab


async def _click_again(app, pilot, selector: str) -> None:
    """Click a button a second time (a Button ignores clicks during its 0.2 s press effect)."""
    button = app.query_one(selector)
    while button.has_class("-active"):
        await pilot.pause(0.05)
    await pilot.click(selector)


def _statuses(path, ids) -> dict[int, str]:
    with sqlite3.connect(path) as conn:
        marks = ",".join("?" * len(ids))
        return dict(conn.execute(f"SELECT id, status FROM orders WHERE id IN ({marks})", ids))


async def test_bulk_edit_reviewed_in_the_panel_and_committed(
    make_app, scripted_bedrock, demo_path
) -> None:
    ids = [1, 2, 3]
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse(
                    "bulkEdit",
                    {
                        "table": "orders",
                        "keys": [{"id": i} for i in ids],
                        "set": {"status": "on hold"},
                    },
                )
            ]
        ),
        Reply(text="Staged 3 changes for your review."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "put orders 1-3 on hold")
        assert app.status.staged == 3
        assert set(_statuses(demo_path, ids).values()) != {"on hold"}, (
            "nothing written before commit"
        )
        review = app.query(ChipButton).last()
        assert review.chip_action == {"kind": "openStagingPanel"}
        await pilot.click(review)
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        cards = list(panel.query(ChangeCard))
        assert len(cards) == 3
        first = str(cards[0].query(".attr").first().render())
        assert "status" in first and "on hold" in first
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert _statuses(demo_path, ids) == {1: "on hold", 2: "on hold", 3: "on hold"}
        assert app.status.staged == 0
        assert not panel.query(ChangeCard)


async def test_reject_one_attribute_and_commit_just_one_change(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    kept = area.stage(
        "orders", "update", {"id": 5}, {"status": "lost", "quantity": 9}, origin="test"
    )
    other = area.stage("orders", "update", {"id": 6}, {"status": "lost"}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await app.open_staging_panel()
        await settle(app, pilot)
        card = app.query_one(f"#change-{kept.id}", ChangeCard)
        reject_qty = next(b for b in card.query(SmallButton) if b.attribute == "quantity")
        await pilot.click(reject_qty)
        await settle(app, pilot)
        assert area.get(kept.id).values == {"status": "lost"}
        card = app.query_one(f"#change-{kept.id}", ChangeCard)
        commit_this = next(b for b in card.query(SmallButton) if b.action_name == "commit")
        await pilot.click(commit_this)
        await settle(app, pilot)
        with sqlite3.connect(demo_path) as conn:
            row5 = conn.execute("SELECT status, quantity FROM orders WHERE id = 5").fetchone()
        assert row5[0] == "lost" and row5[1] != 9
        assert [c.id for c in area.list()] == [other.id]
        view = app.query_one(TableTab).view
        values, staged = view.row_at(4)
        assert values[0] == 5 and values[5] == "lost" and staged is None, "the tab shows the commit"


async def test_conflict_is_shown_and_the_change_stays_staged(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    change = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    with sqlite3.connect(demo_path) as conn:  # someone else edits the row after it was staged
        conn.execute("UPDATE orders SET status = 'changed elsewhere' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        card = app.query_one(f"#change-{change.id}", ChangeCard)
        assert card.has_class("-conflict")
        assert "changed elsewhere" in str(card.query_one(".conflict").render())
        assert [c.id for c in area.list()] == [change.id]


async def test_changes_staged_by_another_process_appear_and_tint_the_table(
    make_app, demo_path
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_table("orders")
        await app.open_staging_panel()
        await settle(app, pilot)
        assert app.status.staged == 0
        other = SQLiteStore.open(demo_path)  # another process: its own store and staging area
        StagingArea(other).stage("orders", "delete", {"id": 2}, origin="mcp:test")
        app.staging_watch._check()
        await settle(app, pilot)
        assert app.status.staged == 1
        assert len(app.query(ChangeCard)) == 1
        view = app.query_one(TableTab).view
        values, staged = view.row_at(1)
        assert values[0] == 2 and staged.op == "delete"
        other.close()


async def test_commit_n_commits_what_the_panel_shows_and_refreshes_when_the_set_moved(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    seen = area.stage("orders", "update", {"id": 11}, {"status": "seen"}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        assert str(panel.query_one("#commit-all").label) == "Commit 1"
        late = area.stage("orders", "update", {"id": 12}, {"status": "unseen"}, origin="mcp:x")
        await pilot.click("#commit-all")  # the panel has not shown `late` yet
        await settle(app, pilot)
        assert _statuses(demo_path, [11, 12]) != {11: "seen", 12: "unseen"}
        assert {c.id for c in area.list()} == {seen.id, late.id}, "nothing committed unseen"
        assert any("changed since" in n.message for n in app._notifications)
        assert str(panel.query_one("#commit-all").label) == "Commit 2", "refreshed"
        await _click_again(app, pilot, "#commit-all")
        await settle(app, pilot)
        assert _statuses(demo_path, [11, 12]) == {11: "seen", 12: "unseen"}, [
            n.message for n in app._notifications
        ]
        assert area.list() == []


async def test_a_conflict_shows_only_what_conflicts_and_the_others_can_be_committed(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    stuck = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    fine = area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        old = conn.execute("SELECT status FROM orders WHERE id = 7").fetchone()[0]
        conn.execute("UPDATE orders SET status = 'lost in transit' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        card = app.query_one(f"#change-{stuck.id}", ChangeCard)
        shown = str(card.query_one(".conflict").render())
        assert f"status: staged {old} → refunded, now 'lost in transit'" in shown
        assert shown.count("lost in transit") == 1
        assert "customer_id" not in shown, "only the conflicting attribute, not the whole row"
        notice = next(n for n in app._notifications if n.title == "Commit conflict")
        assert "Commit the 1 without conflict" in notice.message
        button = app.query_one("#commit-clean")
        assert button.display and str(button.label) == "Commit the 1 without conflict"
        assert not app.query_one("#commit-all").display, "the commit that fails again is gone"
        await pilot.click("#commit-clean")
        await settle(app, pilot)
        assert _statuses(demo_path, [7, 8]) == {7: "lost in transit", 8: "packed"}
        assert [c.id for c in area.list()] == [stuck.id]
        assert fine.id not in {c.id for c in area.list()}


async def test_reject_all_asks_first(make_app, demo_store) -> None:
    from tui.screens.confirm import ConfirmScreen

    area = StagingArea(demo_store)
    for i in (21, 22):
        area.stage("orders", "update", {"id": i}, {"status": "x"}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#reject-all")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Discard 2 staged changes?" in app.screen.question
        await pilot.press("n")
        await settle(app, pilot)
        assert len(area.list()) == 2, "No keeps everything"
        await _click_again(app, pilot, "#reject-all")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert area.list() == []
        assert app.status.staged == 0


async def test_a_long_commit_shows_its_progress(make_app, demo_store, demo_path) -> None:
    from tui.widgets.staging_panel import CommitProgress

    area = StagingArea(demo_store)
    ids = list(range(100, 400))
    for i in ids:
        area.stage("orders", "update", {"id": i}, {"status": "archived"}, origin="test")
    seen: list[tuple[int, int]] = []

    def hook(message) -> None:
        if isinstance(message, CommitProgress):
            seen.append((message.done, message.total))

    app = make_app()
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert seen and seen[-1] == (len(ids), len(ids))
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
        assert not panel.has_class("-committing")
        assert panel._progress.progress == len(ids)
        assert set(_statuses(demo_path, ids).values()) == {"archived"}


async def test_the_staging_panel_keeps_textual_reactive_watching(make_app) -> None:
    """The panel is a normal Textual node: `watch` (and so `data_bind`) still works on it."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        seen: list[str] = []

        def changed(theme: str) -> None:
            seen.append(theme)

        panel.watch(app, "theme", changed, init=False)
        app.theme = "textual-light"
        await pilot.pause()
        assert seen == ["textual-light"]
