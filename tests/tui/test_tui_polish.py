"""What a user sees when text is long or an action is done: ellipses, done chips, tables in
answers drawn the same live and resumed."""

from __future__ import annotations

import sqlite3

import pytest

from agent.config import Settings
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import send, settle
from tui.app import TabletalkApp
from tui.widgets.chat_items import AssistantMessage, ChipButton, SavedAnswer
from tui.widgets.table_tab import TableTab

TABLE_ANSWER = (
    "Top products:\n\n| name | price |\n|---|---|\n| Deluxe Lamp | 12.5 |\n| Eco Mug | 3 |\n\nDone."
)


def widget_lines(app, widget) -> list[str]:
    """The lines of the screen inside `widget`'s region, as the terminal shows them."""
    region = widget.region
    strips = app.screen._compositor.render_strips()
    return [s.crop(region.x, region.right).text for s in strips[region.y : region.bottom]]


async def test_long_tab_titles_end_with_an_ellipsis(make_app) -> None:
    condition = "status = 'pending' AND quantity > 2 AND customer_id IN (1, 2, 3, 4, 5)"
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.open_table("orders", condition)
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        label = str(app.query_one("#tabs").get_tab(tab.id).label)
        assert label.endswith("…") and len(label) <= 40
        assert tab.tab_title == f"orders ({condition})", "the whole title is kept"


async def test_long_tool_rows_end_with_an_ellipsis(make_app, scripted_bedrock) -> None:
    words = "tools to count the pending orders of every customer by city and by month"
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": words})]), Reply(text="Done.")
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(app, pilot, "pending orders")
        title = app.query_one("ToolLine CollapsibleTitle")
        (line,) = widget_lines(app, title)
        assert "searchTools" in line and line.rstrip().endswith("…"), line


async def test_a_clicked_chip_shows_as_done(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("proposeOpenTable", {"table": "orders"})]),
        Reply(text="Here is a chip."),
    )
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "show orders")
        chip = app.query_one(ChipButton)
        await pilot.click(chip)
        await settle(app, pilot)
        assert app.query_one(TableTab).table == "orders"
        assert chip.disabled and str(chip.label).startswith("✓")


async def test_a_markdown_table_looks_the_same_live_and_resumed(
    make_app, scripted_bedrock, demo_store
) -> None:
    scripted_bedrock.add(Reply(text=TABLE_ANSWER))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await send(app, pilot, "top products")
        live = [line.strip() for line in widget_lines(app, app.query_one(AssistantMessage))]
        conversation_id = app.session.conversation_id
    again = TabletalkApp(
        demo_store, Settings(mode="manual"), conversation_id=conversation_id, staging_poll_seconds=0
    )
    async with again.run_test(size=(120, 36)) as pilot:
        await settle(again, pilot)
        saved = [line.strip() for line in widget_lines(again, again.query_one(SavedAnswer))]

    def rows(lines: list[str]) -> list[list[str]]:
        """Each table row's cells, with the grid characters that frame them."""
        return [
            [cell.strip() for cell in line.strip("│").split("│")]
            for line in lines
            if line.startswith("│")
        ]

    assert rows(live) == [["name", "price"], ["Deluxe Lamp", "12.5"], ["Eco Mug", "3"]]
    assert rows(saved) == rows(live)
    assert any(line.startswith("┌") for line in saved)


async def test_a_staged_change_reads_whole_in_the_panel_and_in_full_at_80_columns(
    make_app, demo_store
) -> None:
    """At 80 columns the panel is ~44 wide: the heading keeps who and when whole (beside it
    or on their own line, never a date cut in two), and a long value wraps under itself."""
    from agent.staging import StagingArea
    from tests.tui.test_tui_staging import open_change

    reason = "cancelled because the customer asked twice by phone and by email"
    area = StagingArea(demo_store)
    change = area.stage("orders", "update", {"id": 1234}, {"status": reason}, origin="chat:x")
    with sqlite3.connect(area.path) as conn:
        conn.execute("UPDATE staged_changes SET created_at = '2026-03-15T09:30:00Z'")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        lines = [line.rstrip() for line in widget_lines(app, app.query_one("#staging-list"))]
        head = next(i for i, line in enumerate(lines) if "UPDATE orders id=1234" in line)
        assert lines[head].strip().startswith("UPDATE orders id=1234")
        who = lines[head] if "chat · " in lines[head] else lines[head + 1]
        assert "chat · 2026-03-15 09:30" in who or "chat · 03-15 09:30" in who, lines[:6]
        arrow = next(i for i, line in enumerate(lines) if "→ " in line)
        assert lines[arrow + 1].startswith("      "), "the new value wraps under itself"
        card = await open_change(app, pilot, change.id)
        await settle(app, pilot)
        shown = [line.rstrip() for line in widget_lines(app, card)]
        assert any("chat · 2026-03-15 09:30" in ln or "chat · 03-15 09:30" in ln for ln in shown)
        arrow = next(i for i, line in enumerate(shown) if "→ " in line)
        assert shown[arrow + 1].index("and by email") > shown[arrow].index("→"), shown


async def test_help_at_80_columns_gives_the_descriptions_most_of_the_width(make_app) -> None:
    """A long key list wraps in its own column instead of squeezing what each key does into
    a column of a few words (which made F1 three screens long)."""
    from agent.paths import config_file
    from tui.screens.help import HelpScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        lines = widget_lines(app, app.screen.query_one("VerticalScroll"))
        chip = next(line for line in lines if "ctrl+g" in line)
        assert "Focus the newest chip or answer" in chip, lines
        texts = [str(static.render()) for static in app.screen.query("Static")]
        where = f"Remap any key in {config_file()} under [keys]"  # "config.toml" said not where
        assert any(where in text for text in texts), texts


async def test_after_a_conflict_every_staging_button_is_on_screen_at_80_columns(
    make_app, demo_store, demo_path
) -> None:
    """The buttons after a conflict (Commit the N without conflict, Take current for N, Reject
    all, Refresh) do not fit one line of a 44-column panel: the bar wraps instead of cutting
    them off."""
    from agent.staging import StagingArea

    area = StagingArea(demo_store)
    area.stage("orders", "update", {"id": 7}, {"status": "refunded"}, origin="test")
    area.stage("orders", "update", {"id": 8}, {"status": "packed"}, origin="test")
    with sqlite3.connect(demo_path) as conn:
        conn.execute("UPDATE orders SET status = 'lost in transit' WHERE id = 7")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_staging_panel()
        await settle(app, pilot)
        await pilot.click("#commit-all")
        await settle(app, pilot)
        panel = app.query_one("#staging")
        text = "\n".join(widget_lines(app, panel))
        for name in ("#commit-clean", "#take-current", "#reject-all", "#refresh"):
            button = app.query_one(name)
            assert button.display and panel.region.contains_region(button.region), name
            assert str(button.label) in text, f"{button.label} is cut off"


async def test_a_table_tabs_filter_hint_shows_its_example_at_80_columns(make_app) -> None:
    """The hint leads with the example condition: at 80 columns the tab is ~44 wide, and a hint
    cut before its example ("filter: a SQL condition such as") tells nothing."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.open_table("customers")
        await settle(app, pilot)
        (line,) = widget_lines(app, app.query_one(TableTab).query_one("#filter"))
        assert "name LIKE 'A%'" in line, line


async def test_keys_that_cannot_act_say_why(make_app) -> None:
    """ctrl+w on the Tables tab and r in an empty commit history did nothing, silently."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        said: list[str] = []
        app.notify = lambda message, *a, **k: said.append(str(message))  # type: ignore[method-assign]
        await app.run_action("close_tab")
        assert said and "Tables tab stays open" in said[-1]
        await pilot.press("f9")
        await settle(app, pilot)
        await pilot.press("r")
        assert "No commit to revert yet." in said


async def test_the_permission_prompt_keeps_its_buttons_on_screen_at_24_rows(
    make_app, scripted_bedrock
) -> None:
    """A long input scrolls inside its box; the choices below it stay visible and clickable
    (at 24 rows they were cut off below the modal)."""
    from tests.tui.test_tui_permission import _send_until_prompt

    columns = ", ".join(f"id AS col_{i}" for i in range(80))
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": f"SELECT {columns} FROM orders"})]),
        Reply(text="Done."),
    )
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _send_until_prompt(app, pilot, "run it")
        await pilot.pause()
        box = screen.query_one("Vertical")
        text = "\n".join(widget_lines(app, box))
        for name in ("#allow_once", "#allow_conversation", "#deny"):
            button = screen.query_one(name)
            assert box.region.contains_region(button.region), name
        assert "3 Deny (esc)" in text and "Permission mode" in text
        await pilot.click("#deny")
        await settle(app, pilot)


async def test_a_new_mcp_token_is_brought_into_view_at_24_rows(make_app) -> None:
    """The token is shown only once, in a box at the bottom of the F8 panel: creating one
    scrolls it (and Copy) into view instead of leaving it below the fold."""
    from textual.widgets import Input

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("f8")
        await settle(app, pilot)
        panel = app.screen
        panel.query_one("#name", Input).value = "desktop"
        await pilot.click("#create")
        await settle(app, pilot)
        scroll = panel.query_one("VerticalScroll")
        for name in ("#snippet", "#copy"):
            widget = panel.query_one(name)
            assert scroll.region.contains_region(widget.region), name
        assert app.focused is panel.query_one("#copy")
        assert "token for desktop" in "\n".join(widget_lines(app, scroll))


async def test_every_attachment_shows_and_can_be_removed_at_80_columns(make_app, tmp_path) -> None:
    """Three attached files, one with a long name: each chip is on screen (the bar wraps, a
    long name ends in …), so each can be seen and removed; before, only the first showed."""
    names = ["quarterly-report-for-the-board-2026-final.csv", "notes.txt", "x.json"]
    for name in names:
        (tmp_path / name).write_text("a,b\n1,2\n" if name.endswith(".csv") else "{}")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        for name in names:
            assert app.chat.attach(tmp_path / name)
        await settle(app, pilot)
        bar = app.chat.attachments
        text = "\n".join(widget_lines(app, bar))
        assert "notes.txt" in text and "x.json" in text and "quarterly-report" in text
        for chip in bar.query("AttachmentChip"):
            assert bar.region.contains_region(chip.region), chip.path.name
        await pilot.click(bar.query("AttachmentChip").last())
        await settle(app, pilot)
        assert [p.name for p in bar.paths] == names[:2]


async def test_a_long_mcp_client_name_leaves_every_column_on_screen_at_80_columns(
    make_app,
) -> None:
    """A 64-character client name (the longest allowed) pushed created, last call and calls
    off the F8 panel at 80 columns; the name is cut with an ellipsis, and Revoke still acts
    on the whole name."""
    from textual.widgets import DataTable

    long_name = "a-very-long-client-name-for-the-claude-desktop-app-on-my-laptop-"
    assert len(long_name) == 64
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.mcp_serving.create_token(long_name, "stage")
        await pilot.press("f8")
        await settle(app, pilot)
        table = app.screen.query_one("#clients", DataTable)
        shown = "\n".join(widget_lines(app, table))
        for label in ("name", "level", "created", "last call", "calls"):
            assert label in shown, label
        assert "never" in shown and "…" in shown
        assert str(table.coordinate_to_cell_key((0, 0)).row_key.value) == long_name


@pytest.mark.parametrize(
    ("column", "kind", "matches"), [("first name", "TEXT", 1), ("unit price", "REAL", 1)]
)
async def test_the_filter_example_works_as_typed_on_a_column_name_with_a_space(
    tmp_path, column, kind, matches
) -> None:
    """The hint said `first name LIKE 'A%'`, which is an SQL error when typed: a name that is
    not a plain word is quoted in the example."""
    from agent.stores.sqlite import SQLiteStore
    from tests.support.sqlite_files import make_db

    path = make_db(
        tmp_path / "people.sqlite",
        f'CREATE TABLE people (id INTEGER PRIMARY KEY, "{column}" {kind});'
        f"INSERT INTO people VALUES (1, 'Ann'), (2, 'Bob');"
        if kind == "TEXT"
        else f'CREATE TABLE people (id INTEGER PRIMARY KEY, "{column}" {kind});'
        "INSERT INTO people VALUES (1, 250), (2, 5);",
    )
    app = TabletalkApp(SQLiteStore.open(path), Settings(mode="manual"), staging_poll_seconds=0)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.open_table("people")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        box = tab.query_one("#filter")
        example = box.placeholder.removeprefix("/ filter, e.g. ").split("  (")[0]
        box.focus()
        box.value = example
        await pilot.press("enter")
        await settle(app, pilot)
        errors = [n for n in app._notifications if n.severity == "error"]
        assert not errors, [n.message for n in errors]
        assert tab.view.row_count == matches, example
