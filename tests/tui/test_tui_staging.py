"""The staging panel: review a bulk edit, commit it into the SQLite file, see conflicts."""

from __future__ import annotations

import sqlite3

import pytest

from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, press_ready, send, settle
from tui.widgets.chat_items import ChipButton
from tui.widgets.staged_change import ChangeDetailScreen
from tui.widgets.staging_panel import ChangeCard, SmallButton, StagingPanel
from tui.widgets.table_tab import TableTab


def listed(app) -> list[str]:
    """Ids of the staged changes on the panel's current page."""
    options = app.query_one("#staging-list").options
    return [o.id for o in options if o.id != "staging-empty"]


async def open_change(app, pilot, change_id: str) -> ChangeCard:
    """Highlight a change in the list and press Enter: its detail screen, with its card."""
    view = app.query_one("#staging-list")
    view.focus()
    view.highlighted = listed(app).index(change_id)
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, ChangeDetailScreen)
    return app.screen.query_one(ChangeCard)


async def until(app, pilot, condition, rounds: int = 200) -> None:
    """Let workers and messages run until `condition()` holds (waits on the app, not a clock)."""
    for _ in range(rounds):
        if condition():
            return
        await settle(app, pilot)
    assert condition()


def screen_text(app) -> str:
    """What the terminal shows, line by line."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


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
        assert len(listed(app)) == 3
        assert "3 orders: status" in screen_text(app) and "→ on hold" in screen_text(app)
        card = await open_change(app, pilot, listed(app)[0])
        first = str(card.query(".attr").first().render())
        assert "status" in first and "on hold" in first
        await pilot.press("escape")
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert _statuses(demo_path, ids) == {1: "on hold", 2: "on hold", 3: "on hold"}
        assert app.status.staged == 0
        assert listed(app) == []


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
        card = await open_change(app, pilot, kept.id)
        reject_qty = next(b for b in card.query(SmallButton) if b.attribute == "quantity")
        await pilot.click(reject_qty)
        await settle(app, pilot)
        assert area.get(kept.id).values == {"status": "lost"}
        card = await open_change(app, pilot, kept.id)
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
        card = await open_change(app, pilot, change.id)
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
        assert len(listed(app)) == 1
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
        await until(app, pilot, lambda: str(panel.query_one("#commit-all").label) == "Commit 2")
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
        assert listed(app) == [stuck.id], "the conflicts are listed"
        card = await open_change(app, pilot, stuck.id)
        shown = str(card.query_one(".conflict").render())
        assert f"status: staged '{old}' → 'refunded', now 'lost in transit'" in shown
        assert shown.count("lost in transit") == 1
        assert "customer_id" not in shown, "only the conflicting attribute, not the whole row"
        notice = next(n for n in app._notifications if n.title == "Commit conflict")
        assert "Commit the 1 without conflict" in notice.message
        button = app.query_one("#commit-clean")
        assert button.display and str(button.label) == "Commit the 1 without conflict"
        assert not app.query_one("#commit-all").display, "the commit that fails again is gone"
        await pilot.press("escape")
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


async def test_long_values_stay_readable_at_80_and_120_columns(make_app, demo_store) -> None:
    area = StagingArea(demo_store)
    old = demo_store.get_item("customers", {"id": 3})["email"]
    new = "linus.shannon.new.address@example.org"
    area.stage("customers", "update", {"id": 3}, {"email": new}, origin="test")
    created = area.stage(
        "customers",
        "create",
        {"id": 9001},
        {"name": "Ada", "email": "ada@example.org", "city": "Oslo", "created_at": "2026-11-30"},
        origin="test",
    )
    for size in ((80, 24), (120, 36)):
        app = make_app()
        async with app.run_test(size=size) as pilot:
            app.action_toggle_chat() if size == (80, 24) else None
            await app.open_staging_panel()
            await settle(app, pilot)
            if app.screen.has_class("-chat-full"):
                app.action_toggle_chat()
                await settle(app, pilot)
            shown = screen_text(app)
            assert old in shown and new in shown, (size, shown)
            assert "created_at: 2026-11-30" in shown, "a create shows its values"
            card = await open_change(app, pilot, created.id)
            assert "Oslo" in str(card.query(".attr")[3].render())


async def test_a_huge_value_is_cut_in_the_list_and_whole_in_the_detail(
    make_app, demo_store
) -> None:
    area = StagingArea(demo_store)
    note = "word " * 400
    change = area.stage("customers", "update", {"id": 4}, {"city": note}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        prompt = str(app.query_one("#staging-list").get_option(change.id).prompt)
        assert "…" in prompt and len(prompt) < 400
        card = await open_change(app, pilot, change.id)
        assert " ".join(note.split()) in str(card.query(".attr").first().render())


async def test_a_huge_table_or_column_name_is_cut_in_the_list(tmp_path) -> None:
    """A 1 MB column name wrapped into thousands of lines per change in the panel's list."""
    from agent.config import Settings
    from tui.app import TabletalkApp

    db = tmp_path / "odd.sqlite"
    table, column = "t" * 50_000, "c" * 1_000_000
    with sqlite3.connect(db) as conn:
        conn.execute(f'CREATE TABLE "{table}" (id INTEGER PRIMARY KEY, "{column}" TEXT)')
        conn.execute(f"INSERT INTO \"{table}\" VALUES (1, 'a')")
    store = SQLiteStore.open(db)
    change = StagingArea(store).stage(table, "update", {"id": 1}, {column: "b"})
    app = TabletalkApp(store, Settings(), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        prompt = str(app.query_one("#staging-list").get_option(change.id).prompt)
        assert "…" in prompt and len(prompt) < 400 and "→ b" in prompt


async def test_ten_thousand_changes_are_all_reviewable_with_groups_filter_and_pages(
    make_app, tmp_path
) -> None:
    db = tmp_path / "big.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT)")
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?)",
            [(i, "delivered" if i <= 9_000 else "pending") for i in range(1, 10_001)],
        )
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes VALUES (1, 'hello')")
    store = SQLiteStore.open(db)
    area = StagingArea(store)
    area.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 9000", set={"status": "cancelled"}
    )
    area.stage_many("orders", query="SELECT id FROM orders WHERE id > 9000", delete=True)
    single = area.stage("notes", "update", {"id": 1}, {"body": "bye"})
    from agent.config import Settings
    from tui.app import TabletalkApp

    app = TabletalkApp(store, Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        shown = screen_text(app)
        assert "10,001 staged changes (notes 1, orders 10,000)" in shown
        assert "9,000 orders: status delivered → cancelled" in shown
        assert "1,000 orders: delete" in shown
        assert str(panel.query_one("#commit-all").label) == "Commit 10,001"
        # every change can be reached: page to the last one
        while not panel.query_one("#page-next").disabled:
            panel._next()
            await settle(app, pilot)
        assert listed(app)[-1] == single.id
        # a bulk group is one decision: choose it, reject exactly its 1,000 changes
        groups = app.query_one("#staging-groups")
        groups.focus()
        groups.highlighted = 1
        await pilot.press("enter")
        await settle(app, pilot)
        assert panel.snapshot.matching == 1_000
        assert "1–50 of 1,000" in screen_text(app) and "Reject 1,000" in screen_text(app)
        await pilot.click("#reject-matching")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert area.review().count() == 9_001
        assert not [c for c in area.list() if c.op == "delete"]
        # the filter: table, op, attribute and text
        panel.set_filter("table:notes")
        await settle(app, pilot)
        assert listed(app) == [single.id]
        panel.set_filter("op:update attr:status 8999")
        await settle(app, pilot)
        assert len(listed(app)) == 1 and area.get(listed(app)[0]).key == {"id": 8999}
        panel.set_filter("op:bogus")
        await settle(app, pilot)
        assert any("unknown op" in n.message for n in app._notifications)
    area.close()
    store.close()


async def test_a_delete_that_orphans_rows_is_shown_and_the_commit_asks_again(
    make_app, demo_store, demo_path
) -> None:
    from tui.screens.confirm import ConfirmScreen

    with sqlite3.connect(demo_path) as conn:
        (referencing,) = conn.execute("SELECT count(*) FROM orders WHERE product_id = 5").fetchone()
    assert referencing > 0
    area = StagingArea(demo_store)
    area.stage("products", "delete", {"id": 5}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        shown = " ".join(screen_text(app).split())
        assert "Deletes leave" in shown and f"{referencing} in orders" in shown
        await pilot.click("#commit-all")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert f"{referencing} rows of orders still point at 1 deleted item" in (
            app.screen.question
        )
        assert "orders.product_id → products.id" in app.screen.question
        await pilot.press("n")
        await settle(app, pilot)
        assert demo_store.get_item("products", {"id": 5}) is not None, "No keeps the item"
        assert len(area.list()) == 1
        await _click_again(app, pilot, "#commit-all")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert demo_store.get_item("products", {"id": 5}) is None


async def test_a_table_orphaned_twice_is_named_with_its_columns(
    make_app, demo_store, demo_path
) -> None:
    """Deleting a customer and a product said "11 in orders, 62 in orders": which rows were
    which, and the total counted a row pointing at both twice."""
    with sqlite3.connect(demo_path) as conn:
        (by_customer,) = conn.execute(
            "SELECT count(*) FROM orders WHERE customer_id = 5"
        ).fetchone()
        (by_product,) = conn.execute("SELECT count(*) FROM orders WHERE product_id = 5").fetchone()
    assert by_customer and by_product
    area = StagingArea(demo_store)
    area.stage("customers", "delete", {"id": 5}, origin="test")
    area.stage("products", "delete", {"id": 5}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        shown = " ".join(screen_text(app).split())
        assert f"{by_customer} in orders.customer_id" in shown, shown
        assert f"{by_product} in orders.product_id" in shown, shown
        assert "Deletes leave rows pointing at nothing" in shown, shown


async def test_declared_relationships_count_as_references(make_app, demo_store) -> None:
    from agent.specs import Relationship, SpecBook

    SpecBook(None, demo_store.identity).declare_relationship(
        Relationship("stock of product", "products", "id", "stock_levels", "product_id")
    )
    area = StagingArea(demo_store)
    area.stage("customers", "delete", {"id": 2}, origin="test")
    from agent.staging.orphans import orphaned_by

    found = orphaned_by(
        demo_store,
        area.list(),
        [Relationship("buyer", "orders", "customer_id", "customers", "id")],
    )
    assert [r.reference.table for r in found] == ["orders"]  # FK and relationship: one entry
    mine = [Relationship("cities", "customers", "city", "customers", "city")]
    assert orphaned_by(demo_store, area.list(), mine)[0].reference.table == "orders"


async def test_only_conflicts_left_hides_the_commit_of_none(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'elsewhere' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        assert "Commit the 0" not in screen_text(app)
        assert not app.query_one("#commit-clean").display
        assert not app.query_one("#commit-all").display
        assert app.query_one("#reject-all").display


@pytest.mark.parametrize(
    ("staged", "words"),
    [(2, "2 staged changes are kept; review them"), (1, "1 staged change is kept; review it")],
)
async def test_quitting_with_staged_changes_says_they_are_kept(
    make_app, demo_store, staged: int, words: str
) -> None:
    area = StagingArea(demo_store)
    for i in range(1, staged + 1):
        area.stage("orders", "update", {"id": i}, {"status": "x"}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+q")
        said = " ".join(str(r) for r in app._exit_renderables)  # printed when the app ends
    assert words in said
    assert "ctrl+s" in said and "tabletalk staged list" in said


async def test_the_command_named_at_quit_lists_the_kept_changes_of_this_file(
    make_app, demo_store, capsys
) -> None:
    """Quitting named `tabletalk staged list`, which opens the demo database: for any other
    file it said "No staged changes"; the command names the file the app was on."""
    import shlex

    from agent.cli.main import main as cli_main

    area = StagingArea(demo_store)
    for i in (1, 2):
        area.stage("orders", "update", {"id": i}, {"status": "x"}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+q")
        said = " ".join(str(r) for r in app._exit_renderables)
    command = said.split("`")[1]
    assert command.startswith("tabletalk staged list --db "), said
    capsys.readouterr()
    assert cli_main(shlex.split(command)[1:]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("2 staged changes for demo.sqlite"), listed


async def test_take_current_restages_a_conflict_and_it_commits(
    make_app, demo_store, demo_path
) -> None:
    area = StagingArea(demo_store)
    change = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost in transit' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        card = await open_change(app, pilot, change.id)
        take = next(b for b in card.query(SmallButton) if b.action_name == "take_current")
        await pilot.click(take)
        await settle(app, pilot)
        assert area.get(change.id).pre_image["status"] == "lost in transit"
        assert app.query_one("#commit-all").display, "no conflict left: Commit all is back"
        await _click_again(app, pilot, "#commit-all")
        await settle(app, pilot)
        assert _statuses(demo_path, [7]) == {7: "refunded"}


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


async def test_paging_keeps_the_summaries_and_commit_ready(make_app, demo_store) -> None:
    """Turning pages reads only the page: the bulk group stays listed and Commit stays enabled
    (the groups and orphan check are read again only when the staged set moves)."""
    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders LIMIT 120", set={"status": "held"})
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one(StagingPanel)
        commit_all = panel.query_one("#commit-all")
        assert not commit_all.disabled
        toggled: list[bool] = []

        def disabled_changed(disabled: bool) -> None:
            toggled.append(disabled)

        panel.watch(commit_all, "disabled", disabled_changed, init=False)
        first = listed(app)
        for _ in range(2):
            await press_ready(pilot, panel.query_one("#page-next"))
            await pilot.click("#page-next")
            await settle(app, pilot)
        assert listed(app) != first and "101–120 of 120" in screen_text(app)
        assert "120 orders: status" in screen_text(app), "the bulk group stays listed"
        assert toggled == [], "Commit was never disabled while paging"
        area.stage("orders", "update", {"id": 500}, {"status": "x"})
        panel._refresh()
        await settle(app, pilot)
        assert "121 staged changes" in screen_text(app)


async def test_the_keyboard_turns_pages_past_either_end_of_the_list(make_app, demo_store) -> None:
    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders LIMIT 120", set={"status": "held"})
    order = [c.id for c in area.list()]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        view = app.query_one("#staging-list")
        view.focus()
        await pilot.press("end", "down")
        await settle(app, pilot)
        assert "51–100 of 120" in screen_text(app)
        assert listed(app)[view.highlighted] == order[50], "the next page opens on its first"
        await pilot.press("up")
        await settle(app, pilot)
        assert "1–50 of 120" in screen_text(app)
        assert listed(app)[view.highlighted] == order[49], "the previous page opens on its last"
        for _ in range(2):  # to page 2, then page 3 (101–120)
            await pilot.press("end", "pagedown")
            await settle(app, pilot)
        assert "101–120 of 120" in screen_text(app)
        await pilot.press("end", "down")  # the last change: nothing further
        await settle(app, pilot)
        assert "101–120 of 120" in screen_text(app)
        assert listed(app)[view.highlighted] == order[-1]
        await pilot.press("slash")
        assert app.focused is app.query_one("#staging-filter"), "/ goes to the filter box"
        await pilot.press(*"op:delete", "enter")
        await settle(app, pilot)
        empty = str(view.get_option("staging-empty").prompt)
        assert "No staged change matches the filter (of 120 staged)" in empty, empty
        assert "empty it and press enter to list them all" in empty, "how to get back to all"
        shown = screen_text(app)
        await pilot.press("slash")  # typed into the focused filter box, then erased with it
        await pilot.press(*["backspace"] * 10, "enter")
        await settle(app, pilot)
        assert "1–50 of 120" in screen_text(app), "an empty filter lists every change again"
        assert "Commit 0" not in shown and "Reject 0" not in shown, "no buttons for nothing"


async def test_the_keyboard_stays_in_the_panel_after_committing_what_the_filter_matches(
    make_app, demo_store
) -> None:
    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders LIMIT 30", set={"status": "held"})
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.press("slash", *"id", "enter")  # every change matches "id"
        await settle(app, pilot)
        app.query_one("#commit-matching").focus()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert area.review().count() == 0
        assert app.focused is not None and app.query_one(StagingPanel) in app.focused.ancestors
        await pilot.press("slash")
        assert app.focused is app.query_one("#staging-filter"), "/ still reaches the filter"


async def test_esc_in_the_filter_box_gives_the_keys_back_to_the_list(make_app, demo_store) -> None:
    """After clearing the filter, `c` (commit) typed a "c" into the box: nothing said the
    keyboard was still there, and Esc did not leave it."""
    area = StagingArea(demo_store)
    area.stage_many("orders", query="SELECT id FROM orders LIMIT 3", set={"status": "held"})
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.press("slash", *"id", "enter")
        await settle(app, pilot)
        box = app.query_one("#staging-filter")
        box.value = ""
        await pilot.press("enter", "escape")
        await settle(app, pilot)
        assert app.focused is app.query_one("#staging-list")
        await pilot.press("c")
        await settle(app, pilot)
        assert box.value == ""
        from tui.screens.confirm import ConfirmScreen

        assert isinstance(app.screen, ConfirmScreen), "c asks to commit, as the header says"


async def test_the_list_gets_the_keyboard_when_its_first_page_arrives_late(
    make_app, demo_store, monkeypatch
) -> None:
    """Opened while the page is still being read (a loaded machine), the panel first has
    nothing but Refresh to focus; once the page arrives the keyboard moves to the changes."""
    import threading

    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 1}, {"status": "on hold"})
    area.close()
    gate = threading.Event()
    listing = StagingArea.list

    def slow_list(self, *args, **kwargs):
        gate.wait(30)
        return listing(self, *args, **kwargs)

    monkeypatch.setattr(StagingArea, "list", slow_list)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        panel = app.query_one(StagingPanel)
        refresh = app.query_one("#refresh")
        # Focus moves after the next refresh; on a loaded machine one pause can return first
        # (Textual's idle wait gives up after 1 s). The list's worker is held, so `settle`
        # (which waits for workers) cannot be used: pause until the focus moves.
        for _ in range(200):
            if app.focused is refresh:
                break
            await pilot.pause()
        assert not panel.changes and app.focused is refresh
        gate.set()
        await until(app, pilot, lambda: bool(panel.changes))
        await settle(app, pilot)
        assert app.focused is app.query_one("#staging-list")


async def test_the_commit_button_shows_its_whole_count_after_it_grows(make_app, demo_path) -> None:
    """Opened with nothing staged ("Commit 0"), the button then reads "Commit 1,400" whole (it
    kept the width of its first label and showed only "Commit")."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        other = SQLiteStore.open(demo_path)
        StagingArea(other).stage_many(
            "orders", query="SELECT id FROM orders WHERE id <= 1400", set={"status": "x"}
        )
        other.close()
        app.staging_watch._check()
        await settle(app, pilot)
        assert app.status.staged == 1400
        assert "Commit 1,400" in screen_text(app)


async def test_a_long_origin_is_cut_in_the_list_and_whole_in_the_detail(
    make_app, demo_store
) -> None:
    """The list cuts a long MCP client name so the change's time stays on its heading line at
    120 columns; the change in full names the whole client."""
    change = StagingArea(demo_store).stage(
        "products", "update", {"id": 1}, {"price": 9.99}, origin="mcp:nightly-reconciliation-agent"
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        (heading,) = [line for line in screen_text(app).splitlines() if "UPDATE products" in line]
        assert "mcp nightly-reconciliat… ·" in heading
        assert change.created_at[:10] in heading, heading
        card = await open_change(app, pilot, change.id)
        assert "mcp nightly-reconciliation-agent" in str(card.query_one(".card-head").render())


async def test_a_damaged_saved_specs_file_does_not_stop_the_panel(make_app, demo_store) -> None:
    """The panel reads declared relationships to warn about orphans; a damaged specs.sqlite
    must not keep it from listing (and committing) the staged changes."""
    from agent import paths

    (paths.data_dir() / "specs.sqlite").parent.mkdir(parents=True, exist_ok=True)
    (paths.data_dir() / "specs.sqlite").write_bytes(b"\x00not a database" * 500)
    area = StagingArea(demo_store)
    doomed = area.stage("customers", "delete", {"id": 7}, origin="test")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        assert listed(app) == [doomed.id]
        assert app.query_one(StagingPanel).snapshot.complete


async def test_what_opening_staging_settled_is_told_in_the_app(
    make_app, demo_store, demo_path
) -> None:
    """A commit was killed after the table took its change. Opening staging settles it and has
    a sentence for the user (as `tabletalk staged` prints it); the app never showed it, so
    a change left the panel without a word (likewise a damaged staging file moved aside)."""
    import json

    area = StagingArea(demo_store)
    change = area.stage("customers", "update", {"id": 8}, {"city": "Turin"})
    with area._conn:
        area._conn.execute(
            "INSERT INTO commits_in_progress (token, store, ids_json, started_at) "
            "VALUES ('dead1', ?, ?, 'x')",
            (demo_store.identity, json.dumps([change.id])),
        )
    area.close()
    table = sqlite3.connect(demo_path)
    table.execute("UPDATE customers SET city = 'Turin' WHERE id = 8")
    table.commit()
    table.close()
    app = make_app()
    notified: list[str] = []
    notify = app.notify

    def record(message: str, **kwargs: object) -> None:
        notified.append(message)
        notify(message, **kwargs)

    app.notify = record  # recorded, not read from toasts that may expire under load
    async with app.run_test(size=SIZE) as pilot:
        told = lambda: [m for m in notified if "interrupted commit" in m]  # noqa: E731
        await until(app, pilot, told)
        assert "1 change had already landed" in told()[0]


async def test_an_update_that_changes_nothing_is_not_offered_for_review(
    make_app, scripted_bedrock, demo_path
) -> None:
    """stageItem setting an order's status to the one it has stages nothing: no pending change,
    no review chip, and the model reads that nothing changed."""
    (status,) = _statuses(demo_path, [7]).values()
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse(
                    "stageItem",
                    {
                        "table": "orders",
                        "op": "update",
                        "key": {"id": 7},
                        "values": {"status": status},
                    },
                )
            ]
        ),
        Reply(text="Order 7 already has that status."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, f"mark order 7 {status}")
        assert app.status.staged == 0
        store = SQLiteStore.open(demo_path)
        area = StagingArea(store)
        assert area.count() == 0
        area.close()
        store.close()
        review = {"kind": "openStagingPanel"}
        assert not [b for b in app.query(ChipButton) if b.chip_action == review]
        result = scripted_bedrock.requests[-1].body["messages"][-1]["content"][0]["toolResult"]
        answer = result["content"][0]["json"]
        assert result["status"] == "success"
        assert answer["staged"] == 0 and answer["unchanged"] is True
        assert "Nothing was staged" in answer["message"]
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert listed(app) == []
