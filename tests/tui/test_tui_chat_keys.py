"""Reading the chat back from the message box while an answer streams (PageUp/PageDown,
ctrl+Home/ctrl+End in the composer), and alt+m: the keyboard back to the message box."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from tests.support.scripted_bedrock import Reply, ToolUse
from tests.tui import helpers
from tests.tui.helpers import SIZE, refreshed_until, send, settle, typed
from tui.app import TabletalkApp
from tui.screens.help import HelpScreen
from tui.widgets.chat_items import ToolLine
from tui.widgets.chat_lines import ChatHint
from tui.widgets.chat_log import ChatLog
from tui.widgets.table_tab import TableTab

SMALL = (80, 24)
"""The terminal the person who asked for these keys used."""

LONG = "".join(f"Paragraph {n}: " + "the orders grew steadily. " * 12 + "\n\n" for n in range(300))


async def start_long_answer(app: TabletalkApp, pilot, scripted_bedrock) -> None:
    """Until the answer fills more than a screen of the chat and the rest waits to be shown."""
    await helpers.start_long_answer(app, pilot, scripted_bedrock, LONG)
    log = app.chat.log_view
    assert await refreshed_until(app, lambda: log.max_scroll_y > 2 * _page(log))
    await laid_out(app, log)
    assert await refreshed_until(app, lambda: log.scroll_y == log.max_scroll_y)


def _page(log: ChatLog) -> int:
    return log.scrollable_content_region.height


async def more_text(app: TabletalkApp) -> None:
    """The next batch of the streaming answer, and the layout that makes room for it."""
    log = app.chat.log_view
    before = log.max_scroll_y
    timer = app.chat._render_timer
    if timer is not None:
        timer.stop()
    await app.chat._render_step()
    assert await refreshed_until(app, lambda: log.max_scroll_y > before), "no more text shown"
    await laid_out(app, log)


async def laid_out(app: TabletalkApp, log: ChatLog) -> None:
    """Until a refresh leaves the log's height as it was: new text takes more than one layout
    pass (its height at 6,000 characters went 173 → 247 lines over two refreshes)."""
    for _ in range(20):
        height = log.max_scroll_y
        await app.screen.wait_for_refresh()
        if log.max_scroll_y == height:
            return
    raise AssertionError("the chat's layout did not settle")


async def test_page_up_in_the_composer_scrolls_back_and_the_answer_does_not_pull_it_down(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        log, composer = app.chat.log_view, app.chat.composer
        assert composer.has_focus
        bottom = log.max_scroll_y
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: log.scroll_y < bottom), "PageUp did not scroll"
        assert log.scroll_y == bottom - _page(log), "one page up"
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: log.scroll_y == bottom - 2 * _page(log))
        read_at = log.scroll_y
        assert composer.has_focus and app.chat.busy, "still typing, the answer still streaming"
        for _ in range(3):
            await more_text(app)
            assert log.scroll_y == read_at, "new text pulled the view back to the bottom"
        await pilot.press("escape")
        await settle(app, pilot)


async def test_back_at_the_end_the_chat_follows_the_answer_again(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        log = app.chat.log_view
        await pilot.press("ctrl+home")
        assert await refreshed_until(app, lambda: log.scroll_y == 0), "ctrl+Home: the top"
        await more_text(app)
        assert log.scroll_y == 0
        await pilot.press("ctrl+end")
        assert await refreshed_until(app, lambda: log.scroll_y == log.max_scroll_y)
        await more_text(app)
        assert await refreshed_until(app, lambda: log.scroll_y == log.max_scroll_y), "following"
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: log.scroll_y < log.max_scroll_y)
        # PageDown back to the end, and once more there (a press that moves nothing must not
        # stop the view following)
        for _ in range(2):
            await pilot.press("pagedown")
            assert await refreshed_until(app, lambda: log.scroll_y == log.max_scroll_y)
        await more_text(app)
        assert await refreshed_until(app, lambda: log.scroll_y == log.max_scroll_y), "following"
        await pilot.press("escape")
        await settle(app, pilot)


async def test_scrolled_up_while_an_answer_streams_the_hint_says_more_is_below(
    make_app, scripted_bedrock, one_step_at_a_time
) -> None:
    """Reading back while the answer streamed, nothing said new text was arriving below."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await start_long_answer(app, pilot, scripted_bedrock)
        log, hint = app.chat.log_view, app.chat.query_one(ChatHint)
        assert "more below" not in str(hint.render())
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: log.scroll_y < log.max_scroll_y)
        await pilot.pause()
        assert str(hint.render()).startswith("↓ more"), str(hint.render())
        await more_text(app)
        assert "↓" in str(hint.render()), "still below while the view stays put"
        await pilot.press("ctrl+end")
        assert await refreshed_until(app, lambda: log.scroll_y == log.max_scroll_y)
        await pilot.pause()
        assert "↓" not in str(hint.render()), "at the end again: nothing below"
        await pilot.press("escape")
        await settle(app, pilot)


async def test_page_down_from_the_top_of_the_chat_moves_down_a_page(
    make_app, scripted_bedrock
) -> None:
    """At the top, PageDown did nothing (the guard for PageUp there held it too): only
    ctrl+End got out."""
    scripted_bedrock.add(Reply(text="\n\n".join(f"Paragraph {n} of an answer." for n in range(60))))
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await send(app, pilot, "tell me everything")
        log = app.chat.log_view
        await pilot.press("ctrl+home")
        assert await refreshed_until(app, lambda: log.scroll_y == 0)
        await pilot.press("pagedown")
        assert await refreshed_until(app, lambda: log.scroll_y > 0), "PageDown moved"
        assert log.scroll_y < log.max_scroll_y, "one page, not the end"
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: log.scroll_y == 0), "and back up"


async def test_a_message_taller_than_the_box_keeps_page_up_for_itself(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="\n\n".join(f"Paragraph {n} of an answer." for n in range(60))))
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await send(app, pilot, "tell me everything")
        log, composer = app.chat.log_view, app.chat.composer
        composer.focus()
        composer.text = "\n".join(f"line {n}" for n in range(30))
        composer.move_cursor(composer.document.end)
        await laid_out(app, log)  # the box grew to its 12 lines, the chat shrank
        assert composer.max_scroll_y > 0 and log.max_scroll_y > 0
        assert log.scroll_y == log.max_scroll_y
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: composer.cursor_location[0] < 29)
        assert log.scroll_y == log.max_scroll_y, "PageUp paged through the message, not the chat"
        composer.text = "a short question"
        await laid_out(app, log)
        assert log.scroll_y == log.max_scroll_y
        await pilot.press("pageup")
        assert await refreshed_until(app, lambda: log.scroll_y < log.max_scroll_y), "the chat"
        assert composer.has_focus


async def test_alt_m_brings_the_keyboard_back_to_the_message_box(
    make_app, scripted_bedrock
) -> None:
    """From an expanded tool row, a click in the chat, a table's filter box: one key, and the
    hint under the box names it while the keyboard is elsewhere."""
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {})]), Reply(text="Four."))
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await send(app, pilot, "what tables?")
        composer, hint = app.chat.composer, app.chat.query_one(ChatHint)
        await pilot.press("alt+t", "enter")
        line = app.query_one(ToolLine)
        assert not line.collapsed and app.focused is line.query_one("CollapsibleTitle")
        assert await refreshed_until(app, lambda: "alt+m" in str(hint.render()))
        await pilot.press("alt+m")
        assert composer.has_focus
        assert await refreshed_until(app, lambda: "⏎ send" in str(hint.render()))

        await pilot.click(ChatLog, offset=(4, 1))
        assert isinstance(app.focused, ChatLog), app.focused
        composer.text = "draft"
        app.post_message(events.Key("alt+m", "m"))  # what the driver posts for ESC m
        await pilot.pause()
        assert composer.has_focus and composer.text == "draft", "focused, nothing typed"

        await app.open_table("orders")
        await settle(app, pilot)
        await pilot.press("slash", *"id")
        box = app.query_one(TableTab).query_one("#filter", Input)
        assert box.has_focus
        app.post_message(events.Key("alt+m", "m"))
        await pilot.pause()
        assert composer.has_focus and box.value == "id", "the filter box typed no m"


async def test_the_focused_chat_looks_focused_and_alt_m_is_listed(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        log = app.chat.log_view
        corner = log.region.bottom_right - (3, 2)  # an empty cell of the chat

        def background() -> object:
            return app.screen.get_style_at(*corner).bgcolor

        unfocused = background()
        log.focus()
        assert await refreshed_until(app, lambda: background() != unfocused), "looks focused"
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        listed = {binding_id: keys for keys, _, binding_id in app.screen.rows}
        assert listed["focus_composer"] == "alt+m"
        await pilot.press("alt+m")
        assert isinstance(app.screen, HelpScreen), "under a modal the key does nothing"
        await pilot.press("escape")
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert "Message box" in titles


async def _in_a_table_filter(app: TabletalkApp, pilot) -> Input:
    """The orders tab open and the keyboard in its filter box (away from the message box)."""
    await settle(app, pilot)
    await app.open_table("orders")
    await settle(app, pilot)
    await pilot.press("slash")
    box = app.query_one(TableTab).query_one("#filter", Input)
    assert box.has_focus
    return box


async def test_keys_typed_right_after_alt_m_land_in_the_message_box(make_app) -> None:
    """A terminal delivers `alt+m` and the words typed after it in one read (tmux, a fast
    typist, a paste): those keys follow alt+m into the box instead of the widget it left."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        box = await _in_a_table_filter(app, pilot)
        composer = app.chat.composer
        for key in (events.Key("alt+m", "m"), events.Key("h", "h"), events.Key("i", "i")):
            app.post_message(key)  # queued together, as the driver posts one read's keys
        await pilot.pause()
        assert composer.has_focus
        assert composer.text == "hi" and box.value == "", (composer.text, box.value)


async def test_alt_m_with_a_whole_message_behind_it_sends_that_message(
    make_app, scripted_bedrock
) -> None:
    """ESC m and a message in one read (tmux send-keys M-m '…' Enter): the terminal parser
    gave up on ESC m as an escape sequence and typed it as `^m`, so the model got
    `^mbigbulk mark delivered returned` and alt+m never ran."""
    scripted_bedrock.add(Reply(text="Done."))
    message = "bigbulk mark delivered returned"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        box = await _in_a_table_filter(app, pilot)
        typed(app, "\x1bm" + message + "\r")
        await settle(app, pilot)
        assert box.value == "", "the keys followed alt+m to the message box"
        sent = scripted_bedrock.requests[-1].body["messages"][-1]["content"][0]["text"]
        assert sent == message
        assert app.chat.composer.has_focus


async def test_typing_on_the_focused_chat_goes_to_the_message_box(
    make_app, scripted_bedrock
) -> None:
    """Tab from a table focuses the chat log, where typed words were dropped: they go to the
    message box (focused from the first key). On a tool line, Enter still expands it."""
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {})]), Reply(text="Four."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "which tables?")
        await app.open_table("orders")
        await settle(app, pilot)
        app.query_one(TableTab).query_one("#table-view").focus()
        await pilot.pause()
        await pilot.press("tab")
        assert isinstance(app.focused, ChatLog), app.focused
        composer = app.chat.composer
        for key in (events.Key("h", "h"), events.Key("i", "i"), events.Key("question_mark", "?")):
            app.post_message(key)  # one terminal read
        await pilot.pause()
        assert composer.has_focus and composer.text == "hi?", composer.text
        line = app.query_one(ToolLine)
        line.query_one("CollapsibleTitle").focus()
        await pilot.press("enter")
        assert not line.collapsed and line.query_one("CollapsibleTitle").has_focus
        await pilot.press("x")
        assert composer.has_focus and composer.text.endswith("x")
