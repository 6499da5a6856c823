"""What a new user meets at 80x24: the composer's hint and the staging panel's filter hint fit
and say what they mean, the staged list keeps most of the height, the change detail offers no
commit of a known conflict and wraps conflict values under themselves, and a long question
keeps its buttons on screen."""

from __future__ import annotations

from tests.tui.helpers import settle
from tui.widgets.chat_lines import ChatHint

SMALL = (80, 24)


def _hint(app) -> tuple[str, int]:
    hint = app.chat.query_one(ChatHint)
    return hint.render().plain, hint.content_region.width


async def test_the_composer_hint_at_80_columns_says_what_each_key_does(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        text, width = _hint(app)
        assert len(text) <= width, (text, width)
        assert "⏎ send" in text and "^j newline" in text, text
        app.chat.query_one(ChatHint).show_busy(True)  # while a turn runs, Enter does not send
        await pilot.pause()
        text, width = _hint(app)
        assert len(text) <= width and text.startswith("esc stop"), text


async def test_the_composer_hint_follows_remapped_keys_at_80_columns(make_app) -> None:
    app = make_app(keys={"newline": "ctrl+n", "stop": "ctrl+c", "new_chat": "f12"})
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        assert "^n newline" in _hint(app)[0]
        app.chat.query_one(ChatHint).show_busy(True)
        await pilot.pause()
        assert _hint(app)[0].startswith("^c stop")


async def test_the_composer_hint_is_whole_at_120_columns(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert _hint(app)[0] == "⏎ send · ^j new line · ^o attach", "stop only while busy"
        app.chat.query_one(ChatHint).show_busy(True)
        await pilot.pause()
        assert _hint(app)[0] == "⏎ send · ^j new line · esc stop"


async def test_the_staging_filter_hint_fits_and_keeps_enter_applies(make_app) -> None:
    for size, whole in ((SMALL, False), ((120, 36), True)):
        app = make_app()
        async with app.run_test(size=size) as pilot:
            await app.open_staging_panel()
            await settle(app, pilot)
            box = app.query_one("#staging-filter")
            shown = str(box.placeholder)
            assert len(shown) < box.content_region.width, (size, shown, box.content_region)
            assert shown.endswith("enter applies") and "table:" in shown, shown
            assert ("table:NAME op:OP attr:COLUMN words" in shown) is whole, (size, shown)


def _stage_a_review(demo_store) -> None:
    """What the tmux pass had: a bulk group of order updates and deletes that orphan orders."""
    from agent.staging import StagingArea

    area = StagingArea(demo_store)
    for key in range(1, 13):
        area.stage("orders", "update", {"id": key}, {"status": "cancelled"}, origin="test")
    for key in (5, 6):
        area.stage("customers", "delete", {"id": key}, {}, origin="test")


async def test_at_80x24_the_staged_list_keeps_most_of_the_panel(make_app, demo_store) -> None:
    _stage_a_review(demo_store)
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one("#staging")
        assert "pointing at nothing" in str(panel.query_one("#staging-orphans").render())
        listed = panel.query_one("#staging-list").region.height
        assert listed >= 12, f"the list has {listed} of the panel's {panel.region.height} rows"


async def test_at_120x36_the_panel_header_keeps_everything(make_app, demo_store) -> None:
    _stage_a_review(demo_store)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        panel = app.query_one("#staging")
        groups = panel.query_one("#staging-groups")
        whole = " ".join(str(groups.get_option_at_index(0).prompt).split())
        assert whole.startswith("▸ 12 orders: status") and "→ cancelled" in whole, whole
        assert "1–14 of 14" in str(panel.query_one("#staging-showing").render())
        assert panel.query_one("#staging-pager").display


async def _open_a_long_conflict(app, pilot, demo_store, demo_path):
    """A change whose commit conflicted, with long values, opened in its detail at 80x24."""
    import sqlite3

    from agent.staging import StagingArea
    from tests.tui.test_tui_staging import open_change

    area = StagingArea(demo_store)
    change = area.stage("orders", "update", {"id": 7}, {"status": "staged " * 30}, origin="t")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = ? WHERE id = 7", ("[b]now[/b] " * 30,))
    await app.open_staging_panel()
    await settle(app, pilot)
    await pilot.click("#commit-all")
    await settle(app, pilot)
    assert change.id in app.query_one("#staging").conflicts
    return await open_change(app, pilot, change.id)


async def test_the_detail_of_a_known_conflict_offers_no_commit(
    make_app, demo_store, demo_path
) -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        card = await _open_a_long_conflict(app, pilot, demo_store, demo_path)
        labels = [str(b.label) for b in card.query("SmallButton")]
        assert "Commit this" not in labels, labels
        assert "Take current" in labels and "Reject" in labels


async def test_conflict_values_in_the_detail_wrap_under_themselves(
    make_app, demo_store, demo_path
) -> None:
    from textual.geometry import Region

    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        card = await _open_a_long_conflict(app, pilot, demo_store, demo_path)
        conflict = card.query_one(".conflict")
        width, height = conflict.size
        rows = [s.text.rstrip() for s in conflict.render_lines(Region(0, 0, width, height))]
        rows = [row for row in rows if row]
        assert rows[0].startswith("⚠ conflict"), rows
        status = next(i for i, row in enumerate(rows) if row.startswith("  status: staged"))
        assert len(rows) > status + 3, rows
        assert all(row.startswith("  ") for row in rows[1:status]), rows
        assert all(row.startswith("    ") for row in rows[status + 1 :]), rows
        assert "[b]now[/b]" in "".join(rows), "the table's value is shown as text, not markup"
