"""Opening views: openTable (gated, at once), joined views, saved specs, listOpenTabs; layout keys."""

from __future__ import annotations

from agent.specs import SavedSpec, SpecBook
from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.screens.attach import AttachScreen
from tui.screens.help import HelpScreen
from tui.widgets.chat_items import ToolLine
from tui.widgets.table_tab import TableTab


async def test_open_table_in_auto_mode_opens_a_tab_at_once(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("openTable", {"table": "customers"})]),
        Reply(tool_uses=[ToolUse("listOpenTabs", {})]),
        Reply(text="Opened."),
    )
    app = make_app(mode="auto")
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "open customers")
        assert app.query_one(TableTab).table == "customers"
        tabs_line = app.query(ToolLine).last()
        assert tabs_line.tool_name == "listOpenTabs" and tabs_line.status == "success"
        assert "customers" in str(tabs_line._result_view.render())


async def test_joined_view_chip_opens_both_tables_columns(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.run_chip(
            {
                "kind": "openJoinedView",
                "left": "orders",
                "right": "customers",
                "left_on": "customer_id",
                "right_on": "id",
                "label": "Orders with customers",
            }
        )
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        names = [c.name for c in tab.view.columns]
        assert "status" in names and "customers.name" in names
        assert tab.view.total_rows == 2000


async def test_saved_spec_chip_opens_the_saved_view(make_app, demo_store) -> None:
    SpecBook(None, demo_store.identity).save_spec(
        SavedSpec("pending orders", "status = 'pending'", table="orders")
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.run_chip({"kind": "openSavedSpec", "name": "pending orders"})
        await settle(app, pilot)
        assert app.query_one(TableTab).view.total_rows == 86
        await app.run_chip({"kind": "openSavedSpec", "name": "deleted spec"})
        await pilot.pause()
        assert any("deleted spec" in n.message for n in app._notifications)


async def test_chat_widens_goes_full_width_and_back(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        width = app.chat.outer_size.width
        await pilot.press("alt+left")
        await pilot.pause()
        assert app.chat.outer_size.width == width + 4
        await pilot.press("f2")
        await pilot.pause()
        assert app.chat.outer_size.width == SIZE[0]
        assert not app.query_one("#tabs").display
        await pilot.press("f2")
        await pilot.pause()
        assert app.chat.outer_size.width == width + 4


async def test_help_lists_every_binding_id_and_the_palette_offers_the_actions(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for wanted in ("New chat", "Open table: orders", "Attach file…"):
            assert wanted in titles
        assert any("reject" in t and t.startswith("Staging panel") for t in titles), (
            "the palette found nothing for 'reject'"
        )
        assert any(t.startswith("Switch model") for t in titles)
        assert any(t.startswith("Switch mode") for t in titles)
        assert "Keys" not in titles, "F1 is the one key help"


async def test_attach_key_opens_a_picker_that_adds_the_file(make_app, tmp_path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.open_table("orders")  # the keyboard on a table tab's rows
        await settle(app, pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert isinstance(app.screen, AttachScreen)
        app.screen.query_one("#path").value = str(notes)
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat.attachments.paths == [notes.resolve()]
        # the question about the file is typed next: it lands in the message box
        await pilot.press(*"sum it")
        assert app.chat.composer.text == "sum it"


async def test_the_attach_box_takes_a_path_pasted_with_escapes_or_quotes(
    make_app, tmp_path
) -> None:
    """A dropped file pastes as `my\\ notes.txt` or `'my notes.txt'`: the box refused both as
    files that do not exist."""
    notes = tmp_path / "my notes.txt"
    notes.write_text("hello")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for typed in (str(notes).replace(" ", "\\ "), f"'{notes}'"):
            await pilot.press("ctrl+o")
            await pilot.pause()
            assert isinstance(app.screen, AttachScreen)
            app.screen.query_one("#path").value = typed
            await pilot.press("enter")
            await pilot.pause()
            assert app.chat.attachments.paths == [notes.resolve()], typed


async def test_dragging_the_splitter_resizes_the_chat(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        before = app.chat.outer_size.width
        x = app.query_one("#splitter").region.x
        await pilot.mouse_down("#splitter", offset=(0, 5))
        await pilot.hover(None, offset=(x - 10, 5))
        await pilot.mouse_up(None, offset=(x - 10, 5))
        await pilot.pause()
        assert app.chat.outer_size.width == before + 10


async def test_mode_and_model_switches_apply_to_the_next_turn(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": "SELECT 1 AS one"})]), Reply(text="ok")
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f4")
        assert app.session.mode == "auto" and app.status.mode == "auto"
        app.set_model("haiku-4.5")
        await send(app, pilot, "run it")  # auto mode: the gated read runs without a prompt
        assert app.query_one(ToolLine).status == "success"
        assert {r.model_id for r in scripted_bedrock.requests} == {
            "us.anthropic.claude-haiku-4-5-20251001-v1:0"
        }
        assert "claude-haiku" in app.status.model


async def test_a_model_picked_in_an_eu_region_uses_the_eu_profile(
    make_app, scripted_bedrock, monkeypatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    scripted_bedrock.add(Reply(text="ok"))
    app = make_app(region="eu-central-1")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        app.set_model("haiku-4.5")
        await pilot.pause()
        # the toast leads with the name picked, then the profile it became
        assert [n.message for n in app._notifications] == [
            "Model: haiku-4.5 (eu.anthropic.claude-haiku-4-5-20251001-v1:0)"
        ]
        await send(app, pilot, "hello")
        assert [r.model_id for r in scripted_bedrock.requests] == [
            "eu.anthropic.claude-haiku-4-5-20251001-v1:0"
        ]
