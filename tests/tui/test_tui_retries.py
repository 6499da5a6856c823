"""A throttled request in the app: the chat's wait line says Bedrock is throttling and which
attempt comes next, instead of seconds of what looks like a slow model, and the answer then
replaces it. The scripted endpoint answers over HTTP, so botocore's own retries run."""

from __future__ import annotations

import threading

import pytest

from tests.support.scripted_bedrock import Error, Reply
from tests.tui.helpers import refreshed_until, settle
from tui.widgets.chat_items import AssistantMessage

pytestmark = pytest.mark.usefixtures("no_backoff")


def _wait_text(app) -> str:
    lines = [str(line.render()) for line in app.query("WaitLine")]
    return lines[0] if lines else ""


async def test_the_wait_line_says_bedrock_is_throttling_until_the_answer_streams(
    make_app, scripted_bedrock
) -> None:
    gate = threading.Event()

    def held(_body: dict) -> Reply:  # the retry's answer waits until the test has looked
        gate.wait(30)
        return Reply(text="There are 240 customers.")

    scripted_bedrock.add(
        Error(429, "ThrottlingException", "Too many requests, please wait."),
        Error(503, "ServiceUnavailableException", "Service unavailable."),
        held,
    )
    app = make_app()
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "how many customers?"
        await pilot.press("enter")
        try:
            assert await refreshed_until(app, lambda: "attempt 3" in _wait_text(app), 200), (
                _wait_text(app)
            )
            assert _wait_text(app).startswith(
                "Bedrock is unavailable for the moment; retrying (attempt 3 of 4)…"
            )
        finally:
            gate.set()
        await settle(app, pilot)
        assert not app.query("WaitLine")
        assert app.query(AssistantMessage).last().source == "There are 240 customers."
        assert len(scripted_bedrock.requests) == 3


async def test_a_throttle_inside_the_stream_shows_on_the_wait_line_too(
    make_app, scripted_bedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.bedrock.converse import BedrockCaller

    monkeypatch.setattr(BedrockCaller, "stream_retry_delay", 0.0)
    gate = threading.Event()

    def held(_body: dict) -> Reply:
        gate.wait(30)
        return Reply(text="Done.")

    early = Error(
        code="ThrottlingException", message="Rate exceeded", in_stream=True, text_before=""
    )
    scripted_bedrock.add(early, held)
    app = make_app()
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        app.chat.composer.text = "go"
        await pilot.press("enter")
        try:
            assert await refreshed_until(app, lambda: "throttling" in _wait_text(app), 200)
            assert _wait_text(app).startswith("Bedrock is throttling; retrying (attempt 2 of 2)…")
        finally:
            gate.set()
        await settle(app, pilot)
        assert not app.query("WaitLine")
        assert app.query(AssistantMessage).last().source == "Done."
