"""Resuming a chat from the list (ctrl+l): it continues on the model it used and says so, and
the list marks the chat you are in (choosing it just closes the list)."""

from __future__ import annotations

import json

from agent.conversations import Conversation, ConversationStore
from tests.support.scripted_bedrock import Reply
from tests.tui.helpers import SIZE, send, settle
from tui.screens.picker import PickerScreen

NOVA = "us.amazon.nova-2-lite-v1:0"
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def saved(conversation_id: str, store: str, model: str, text: str = "how many orders?") -> None:
    conversation = Conversation(id=conversation_id, store=store, model=model)
    conversation.append_user([{"text": text}])
    conversation.append_assistant({"content": [{"text": "Twelve."}]})
    ConversationStore().save(conversation)


async def open_list(app, pilot) -> PickerScreen:
    await settle(app, pilot)
    await pilot.press("ctrl+l")
    await pilot.pause()
    assert isinstance(app.screen, PickerScreen)
    return app.screen


async def choose(app, pilot, conversation_id: str) -> None:
    picker = await open_list(app, pilot)
    index = [key for key, _ in picker.options].index(conversation_id)
    await pilot.press(*["down"] * index, "enter")
    await settle(app, pilot)


def model_toasts(app) -> list[str]:
    return [n.message for n in app._notifications if n.title == "Model"]


async def test_a_resumed_chat_continues_on_its_model_and_says_so(
    make_app, demo_store, scripted_bedrock
) -> None:
    saved("c-haiku", demo_store.identity, HAIKU)
    scripted_bedrock.add(Reply(text="Thirteen now."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert app.status.model == NOVA
        await choose(app, pilot, "c-haiku")
        assert app.status.model == HAIKU
        assert model_toasts(app) == [
            f"This chat continues on haiku-4.5 ({HAIKU}), the model it used."
        ]
        await send(app, pilot, "and now?")
        assert scripted_bedrock.requests[-1].model_id == HAIKU
        await pilot.press("ctrl+n")  # a new chat is on the app's model again
        await settle(app, pilot)
        assert app.status.model == NOVA


async def test_a_model_switched_mid_chat_is_the_one_it_resumes_on(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(Reply(text="One."), Reply(text="Two."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "first question")
        await pilot.press("f5")  # the model picker: nova-2-lite, then haiku-4.5
        await pilot.pause()
        await pilot.press("down", "enter")
        await send(app, pilot, "second question")
        assert [r.model_id for r in scripted_bedrock.requests] == [NOVA, HAIKU]
        chat_id = app.session.conversation_id
        await pilot.press("f5")
        await pilot.pause()
        await pilot.press("up", "enter")  # back to nova-2-lite for what comes next
        await settle(app, pilot)
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert app.status.model == NOVA
        await choose(app, pilot, chat_id)
        assert app.status.model == HAIKU
        assert any("haiku-4.5" in text for text in model_toasts(app))


async def test_an_older_file_without_a_model_keeps_the_current_one(
    make_app, demo_store, scripted_bedrock
) -> None:
    """Files from before the model was saved (or with an unusable value) still open, silently on
    the model in use."""
    store = ConversationStore()
    store.legacy_path("old1").parent.mkdir(parents=True, exist_ok=True)
    store.legacy_path("old1").write_text(
        json.dumps(
            {
                "id": "old1",
                "store": demo_store.identity,
                "title": "from an old version",
                "created_at": "2026-01-01T10:00:00+00:00",
                "updated_at": "2026-01-01T10:00:00+00:00",
                "messages": [
                    {"role": "user", "content": [{"text": "from an old version"}]},
                    {"role": "assistant", "content": [{"text": "Hello."}]},
                ],
            }
        )
    )
    saved("junk1", demo_store.identity, "m")
    scripted_bedrock.add(Reply(text="Still here."))
    app = make_app(model="haiku-4.5")
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "old1")
        assert app.session.conversation_id == "old1"
        assert app.status.model == HAIKU and model_toasts(app) == []
        await send(app, pilot, "and now?")
        assert scripted_bedrock.requests[-1].model_id == HAIKU
        await choose(app, pilot, "junk1")
        assert app.session.conversation_id == "junk1"
        assert app.status.model == HAIKU and model_toasts(app) == []


async def test_the_list_marks_the_chat_you_are_in_and_choosing_it_just_closes(
    make_app, demo_store, scripted_bedrock
) -> None:
    saved("older1", demo_store.identity, NOVA, text="an older question")
    scripted_bedrock.add(Reply(text="Twelve."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "the question of now")
        current = app.session.conversation_id
        picker = await open_list(app, pilot)
        labels = dict(picker.options)
        assert labels[current].startswith("● ") and "the question of now" in labels[current]
        assert not labels["older1"].startswith("●")
        assert "● marks the chat you are in." in picker.help_text
        session = app.session
        await pilot.press("escape")
        await choose(app, pilot, current)
        assert not isinstance(app.screen, PickerScreen), "the list closed"
        assert app.session is session, "the chat was not opened again"
        assert model_toasts(app) == []


async def test_a_model_flag_wins_for_the_chat_the_app_opens_with(
    demo_store, scripted_bedrock
) -> None:
    """`tabletalk --conversation ID --model nova-lite` runs that chat on nova-lite; without the
    flag it continues on its own model."""
    from agent.config import Settings
    from tui.app import TabletalkApp

    saved("c-flag", demo_store.identity, HAIKU)
    for given, expected in ((True, "us.amazon.nova-lite-v1:0"), (False, HAIKU)):
        app = TabletalkApp(
            demo_store,
            Settings(mode="manual", model="us.amazon.nova-lite-v1:0"),
            conversation_id="c-flag",
            staging_poll_seconds=0,
            model_given=given,
        )
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert app.session.conversation_id == "c-flag"
            assert app.status.model == expected
