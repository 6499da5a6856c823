"""A turn throttled out before any answer, in a chat that already had one: after quitting and
resuming the chat (ctrl+l) it still shows the question and the error under it, after the
earlier answer, as the live chat did; the model never sees the failed question."""

from __future__ import annotations

import json

import pytest
from textual.widget import Widget

from tests.support.scripted_bedrock import Error, Reply
from tests.tui.helpers import SIZE, send, settle
from tui.screens.picker import PickerScreen
from tui.widgets.chat_items import SavedAnswer, UserMessage
from tui.widgets.chat_lines import NoteLine

pytestmark = pytest.mark.usefixtures("no_backoff")

FAILED = "and [b]customers[/b]?"
"""Markup-like text: shown as typed, never as Textual markup."""


def _notes(widgets: list[Widget]) -> list[str]:
    """The error and what-to-do notes among `widgets`, as they read."""
    return [
        str(w.render())
        for w in widgets
        if isinstance(w, NoteLine) and (w.has_class("-error") or w.has_class("-fix"))
    ]


async def _resume(app, pilot, conversation_id: str) -> None:
    """Choose the conversation from the list (ctrl+l), as a person resumes it."""
    await settle(app, pilot)
    await pilot.press("ctrl+l")
    await pilot.pause()
    picker = app.screen
    assert isinstance(picker, PickerScreen)
    index = [key for key, _ in picker.options].index(conversation_id)
    await pilot.press(*["down"] * index, "enter")
    await settle(app, pilot)


async def test_a_failed_turn_reads_the_same_after_resuming_and_is_never_sent(
    make_app, scripted_bedrock
) -> None:
    scripted_bedrock.add(
        Reply(text="Twelve orders."), *[Error(429, "ThrottlingException", "Rate exceeded")] * 4
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "how many orders?")
        await send(app, pilot, FAILED)
        live = _notes(list(app.chat.log_view.children))
        assert live and "throttl" in live[0].lower(), live
        conversation_id = app.session.conversation_id
    scripted_bedrock.add(Reply(text="Forty customers."))
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await _resume(again, pilot, conversation_id)
        shown = list(again.chat.log_view.query("UserMessage, SavedAnswer, NoteLine"))
        kinds = [type(w).__name__ for w in shown if not w.has_class("chat-intro")]
        assert kinds == ["UserMessage", "SavedAnswer", "UserMessage", "NoteLine", "NoteLine"]
        first, answer, question = shown[:3]
        assert isinstance(first, UserMessage) and first.text == "how many orders?"
        assert isinstance(answer, SavedAnswer)
        assert isinstance(question, UserMessage) and question.text == FAILED
        assert str(question.render()) == FAILED, "shown as typed, not as markup"
        assert _notes(shown[3:]) == live, "resumed, the failed turn reads as it did live"
        await send(again, pilot, "customers?")
        sent = scripted_bedrock.requests[-1].body["messages"]
        assert "customers[/b]" not in json.dumps(sent)
        assert [m["content"][0]["text"] for m in sent] == [
            "how many orders?",
            "Twelve orders.",
            "customers?",
        ]
