"""Keys for what used to need the mouse or shift+tab: a table's filter, chips, tool rows."""

from __future__ import annotations

from textual.widgets import Input

from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui.helpers import SIZE, send, settle
from tui.screens.help import HelpScreen
from tui.widgets.chat_items import AnswerChip, ChipButton, ToolLine
from tui.widgets.table_tab import TableTab


async def test_slash_in_a_table_focuses_its_filter_which_keeps_focus_after_enter(
    make_app,
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await app.open_table("orders")
        await settle(app, pilot)
        tab = app.query_one(TableTab)
        assert tab.view.has_focus
        await pilot.press("slash")
        box = tab.query_one("#filter", Input)
        assert box.has_focus
        await pilot.press(*"quantity >= 5", "enter")
        await settle(app, pilot)
        assert box.has_focus, "Enter applies the filter and leaves the keyboard in the box"
        assert "quantity >= 5" in tab.tab_title


async def test_the_new_keys_are_listed_in_help_and_the_palette(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = {binding_id: keys for keys, _, binding_id in app.screen.rows}
        assert listed["table.filter"] == "/"
        assert listed["focus_chip"] == "ctrl+g" and listed["focus_tool"] == "alt+t"
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Filter the table", "Latest chip", "Latest tool row"} <= titles


async def test_ctrl_g_focuses_the_latest_chip_and_enter_runs_it(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("proposeOpenTable", {"table": "orders"})]),
        Reply(text="Here is a chip."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "show orders")
        await pilot.press("ctrl+g")
        assert isinstance(app.focused, ChipButton)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one(TableTab).table == "orders"


async def test_ctrl_g_focuses_the_first_choice_of_a_question(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("ask", {"question": "Which?", "choices": ["one", "two"]})])
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "pick for me")
        await pilot.press("ctrl+g")
        assert isinstance(app.focused, AnswerChip) and app.focused.choice == "one"


async def test_alt_t_focuses_the_latest_tool_row_and_enter_expands_it(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {})]), Reply(text="Four."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "what tables?")
        await pilot.press("alt+t")
        line = app.query_one(ToolLine)
        assert app.focused is line.query_one("CollapsibleTitle")
        await pilot.press("enter")
        assert not line.collapsed


async def test_alt_t_from_the_composer_focuses_the_tool_row_as_a_terminal_sends_it(
    make_app, scripted_bedrock
) -> None:
    """A terminal sends alt+t as ESC t, which Textual reads as the key alt+t with the
    character "t": the composer typed a "t" and the binding never ran from there."""
    from textual import events

    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {})]), Reply(text="Four."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "what tables?")
        app.chat.composer.focus()
        await pilot.pause()
        app.post_message(events.Key("alt+t", "t"))  # what the driver posts for ESC t
        await pilot.pause()
        assert app.chat.composer.text == ""
        assert app.focused is app.query_one(ToolLine).query_one("CollapsibleTitle")
