"""The composer: keys arriving in one burst, Tab, `@table.column` completion, input history."""

from __future__ import annotations

from textual import events

from tests.support.scripted_bedrock import Reply
from tests.tui.helpers import SIZE, send, settle, typed


def burst(app, keys: list[str]) -> None:
    """Queue keys at once, as a terminal (or tmux send-keys) delivers them in one read."""
    for key in keys:
        if len(key) == 1:
            app.post_message(events.Key("space" if key == " " else key, key))
        else:
            app.post_message(events.Key(key, None))


async def test_ctrl_j_in_a_burst_with_text_keeps_the_typed_order(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        await pilot.pause()
        burst(app, [*"gamma one", "ctrl+j", *"gamma two"])
        await settle(app, pilot)
        assert app.chat.composer.text == "gamma one\ngamma two"


async def test_tab_with_nothing_to_complete_keeps_focus_and_the_next_key(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        await pilot.press("tab")
        assert composer.has_focus
        await pilot.press("h", "i")
        assert composer.text == "hi"


async def test_tab_completes_the_columns_of_a_named_table(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        await pilot.press(*"@customers.e")
        await pilot.press("tab")
        assert composer.text == "customers.email "
        assert composer.has_focus


async def test_tab_right_after_typing_in_a_burst_completes_what_was_typed(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        await pilot.pause()
        burst(app, [*"@stock_", "tab"])
        await settle(app, pilot)
        assert app.chat.composer.text == "stock_levels "


async def test_text_typed_right_after_ctrl_u_in_an_empty_box_stays(make_app) -> None:
    """`tmux send-keys C-u x1`: ctrl+u ran once the x1 behind it was typed, and deleted it."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        await pilot.pause()
        typed(app, "\x15x1")
        await settle(app, pilot)
        assert app.chat.composer.text == "x1"


async def test_editing_keys_in_a_burst_act_where_they_were_typed(make_app) -> None:
    """Backspace and the arrows act on the text typed before them, not after what follows."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        await pilot.pause()
        typed(app, "abc\x7fd\x1b[D\x1b[DX")  # backspace, then left twice
        await settle(app, pilot)
        assert app.chat.composer.text == "aXbd"


async def test_ctrl_u_then_a_new_message_sends_the_new_message_whole(
    make_app, scripted_bedrock
) -> None:
    """ctrl+u clears what the box holds and the words typed behind it are sent whole: they
    reached the model as "cust now" (ctrl+u had deleted the "del" typed after it)."""
    scripted_bedrock.add(Reply(text="Done."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        composer.text = "bigbulk mark delivered returned"
        composer.move_cursor(composer.document.end)
        await pilot.pause()
        typed(app, "\x15delcust now\r")
        await settle(app, pilot)
        sent = scripted_bedrock.requests[-1].body["messages"][-1]["content"][0]["text"]
        assert sent == "delcust now"


async def test_words_typed_right_after_enter_stay_in_the_box(make_app, scripted_bedrock) -> None:
    """A message, Enter and the next words in one read: the message is sent and the next
    words wait in the box (emptying the box after sending had wiped them too)."""
    scripted_bedrock.add(Reply(text="Done."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.chat.composer.focus()
        await pilot.pause()
        typed(app, "first\rsecond")
        await settle(app, pilot)
        sent = scripted_bedrock.requests[-1].body["messages"][-1]["content"][0]["text"]
        assert sent == "first"
        assert app.chat.composer.text == "second"


async def test_up_in_an_empty_composer_brings_back_earlier_messages(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="One."), Reply(text="Two."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "first question")
        await send(app, pilot, "second question")
        composer = app.chat.composer
        composer.focus()
        await pilot.press("up")
        assert composer.text == "second question"
        await pilot.press("up")
        assert composer.text == "first question"
        await pilot.press("down")
        assert composer.text == "second question"
        await pilot.press("down")
        assert composer.text == ""


async def test_a_failed_message_comes_back_with_up_after_a_restart(
    make_app, scripted_bedrock
) -> None:
    from tests.support.scripted_bedrock import Error

    scripted_bedrock.add(Error(status=400, code="ValidationException", message="bad model"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "the question that failed")
    app = make_app()  # a new session of the app, same state dir
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        await pilot.press("up")
        assert composer.text == "the question that failed"


async def test_up_inside_a_multiline_message_moves_the_cursor(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        composer = app.chat.composer
        composer.focus()
        composer.text = "line one\nline two"
        composer.move_cursor((1, 3))
        await pilot.press("up")
        assert composer.text == "line one\nline two"
        assert composer.cursor_location[0] == 0
