"""Saved conversations and rewind: what is kept, how it is listed, what a rewind drops."""

from __future__ import annotations

from agent.conversations import Conversation, ConversationStore
from agent.session import list_conversations
from tests.support.scripted_bedrock import Error, Reply
from tests.tui.helpers import SIZE, send, settle
from tui.screens.confirm import ConfirmScreen
from tui.screens.picker import PickerScreen
from tui.widgets.chat_items import UserMessage


async def test_a_first_message_that_failed_is_not_kept_as_a_conversation(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(
        Error(400, "ValidationException", "The model id is invalid."),
        Error(400, "ValidationException", "The model id is invalid."),
        Reply(text="Hello."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "hi")
        await send(app, pilot, "hi")
        assert list_conversations() == []
        await send(app, pilot, "hello")
        assert [(s.title, s.message_count) for s in list_conversations()] == [("hello", 2)]


async def test_the_conversation_list_says_1_message(make_app) -> None:
    conversation = Conversation(id="c1", store="demo", model="m")
    conversation.append_user([{"text": "only a question"}])
    ConversationStore().save(conversation)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        label = dict(picker.options)["c1"]
        assert label.endswith("· 1 message")


async def rewind_picker(app, pilot) -> PickerScreen:
    await pilot.press("ctrl+r")
    await pilot.pause()
    assert isinstance(app.screen, PickerScreen)
    return app.screen


async def test_rewind_cursor_stops_at_the_newest_message(make_app, scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="One."), Reply(text="Two."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "first question")
        await send(app, pilot, "second question")
        await rewind_picker(app, pilot)
        await pilot.press("down")  # already on the newest: no wrap to the first
        await pilot.press("enter")
        await settle(app, pilot)
        assert [m.text for m in app.query(UserMessage)] == ["first question"]
        assert app.chat.composer.text == "second question"


async def test_rewinding_over_several_exchanges_asks_first_and_says_how_many(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="One."), Reply(text="Two."), Reply(text="Three."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first question", "second question", "third question"):
            await send(app, pilot, text)
        await rewind_picker(app, pilot)
        await pilot.press("up", "up", "enter")  # the first message: drops all three
        await pilot.pause()
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert "3 exchanges" in confirm.question
        await pilot.press("n")
        await settle(app, pilot)
        assert len(app.query(UserMessage)) == 3, "No keeps the conversation whole"
        assert len(app.session.user_messages()) == 3
        await rewind_picker(app, pilot)
        await pilot.press("up", "enter")
        await pilot.pause()
        assert "2 exchanges" in app.screen.question
        await pilot.press("y")
        await settle(app, pilot)
        assert [m.text for m in app.query(UserMessage)] == ["first question"]
        assert app.chat.composer.text == "second question"


async def test_a_long_title_keeps_its_message_count_on_the_same_line_at_80_columns(
    make_app,
) -> None:
    """The count stayed at the end of a 50-character title and wrapped onto a line of its own."""
    from tests.tui.test_tui_polish import widget_lines

    conversation = Conversation(id="c2", store="demo", model="m")
    words = "which customers in Berlin ordered the most lamps last month and what did they pay"
    conversation.append_user([{"text": words}])
    ConversationStore().save(conversation)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        lines = widget_lines(app, app.screen.query_one("OptionList"))
        line = next(line for line in lines if "which customers" in line)
        assert "· 1 message" in line and "…" in line, lines


async def test_a_long_conversation_keeps_its_count_on_the_title_line_at_80_columns(
    make_app,
) -> None:
    """`· 2000 messages` wrapped onto a line of its own under a long title (the title was cut
    to a fixed width that left room for one-digit counts only)."""
    from tests.tui.test_tui_polish import widget_lines

    conversation = Conversation(id="z3", store="demo", model="m")  # first of equal times
    words = "which customers in Berlin ordered the most lamps last month and what did they pay"
    for turn in range(1000):
        conversation.append_user([{"text": words if turn == 0 else "and then?"}])
        conversation.append_assistant({"content": [{"text": "ok"}]})
    for n in range(30):  # enough to scroll: the list's scrollbar takes two columns
        other = Conversation(id=f"c3-{n}", store="demo", model="m")
        other.append_user([{"text": f"question {n}"}])
        ConversationStore().save(other)
    ConversationStore().save(conversation)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        options = app.screen.query_one("OptionList")
        assert options.virtual_size.height > options.size.height, "the list scrolls"
        lines = widget_lines(app, options)
        line = next(line for line in lines if "which customers" in line)
        assert "· 2,000 messages" in line and "…" in line, lines


async def test_the_list_holds_this_databases_conversations_and_counts_the_others(
    make_app, demo_store, tmp_path
) -> None:
    """ctrl+l listed every database's conversations, and choosing one about another file
    continued it against this one (its history about other tables, its edits staged here)."""
    here = Conversation(id="here1", store=demo_store.identity, model="m")
    here.append_user([{"text": "about the demo"}])
    other = Conversation(id="other1", store=f"sqlite:{tmp_path / 'other.sqlite'}", model="m")
    other.append_user([{"text": "about another file"}])
    for conversation in (here, other):
        ConversationStore().save(conversation)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert [key for key, _ in picker.options][1:] == ["here1"]
        assert "1 conversation about other databases" in picker.help_text
        assert "tabletalk --conversation ID" in picker.help_text
