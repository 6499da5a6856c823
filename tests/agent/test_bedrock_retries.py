"""Bedrock's retries are told to the turn (a `Retrying` event before the answer), not silent:
botocore's own retries of throttled or unavailable requests, and the caller's in-stream one.
The scripted endpoint answers over real HTTP, so botocore's standard retry mode really runs."""

from __future__ import annotations

from typing import Any

import pytest

from agent.bedrock.client import make_client
from agent.bedrock.converse import BedrockCaller
from agent.bedrock.errors import BedrockCallError
from agent.bedrock.stream import TextChunk
from agent.events import Retrying
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock

NOVA = "us.amazon.nova-2-lite-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "How many orders?"}]}]
THROTTLED = Error(429, "ThrottlingException", "Too many requests, please wait.")
UNAVAILABLE = Error(503, "ServiceUnavailableException", "Service is temporarily unavailable.")


pytestmark = pytest.mark.usefixtures("no_backoff")


def _step(streaming: bool = True, attempts: int = 4) -> list[Any]:
    caller = BedrockCaller(
        make_client(None, None, max_attempts=attempts), NOVA, streaming=streaming
    )
    caller.stream_retry_delay = 0.0
    return list(caller.step([], MESSAGES, []))


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "converse"])
def test_each_retry_botocore_makes_is_told_before_the_answer(
    scripted_bedrock: ScriptedBedrock, streaming: bool
) -> None:
    scripted_bedrock.add(THROTTLED, UNAVAILABLE, Reply(text="42 orders."))

    events = _step(streaming)

    retries = [e for e in events if isinstance(e, Retrying)]
    assert [r.message for r in retries] == [
        "Bedrock is throttling; retrying (attempt 2 of 4)…",
        "Bedrock is unavailable for the moment; retrying (attempt 3 of 4)…",
    ]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert all(isinstance(e, Retrying) for e in events[:2]) and first_text == 2
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "42 orders."
    assert len(scripted_bedrock.requests) == 3


def test_no_retry_is_announced_past_the_last_attempt_or_for_an_error_never_retried(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    scripted_bedrock.add(THROTTLED, THROTTLED, THROTTLED)
    events: list[Any] = []
    caller = BedrockCaller(make_client(None, None, max_attempts=3), NOVA)
    with pytest.raises(BedrockCallError) as raised:
        events.extend(caller.step([], MESSAGES, []))
    assert raised.value.kind == "throttled"
    assert [(e.attempt, e.max_attempts) for e in events] == [(2, 3), (3, 3)]

    scripted_bedrock.add(Error(400, "ValidationException", "messages must alternate"))
    events.clear()
    with pytest.raises(BedrockCallError):
        events.extend(caller.step([], MESSAGES, []))
    assert events == []


def test_a_throttle_inside_the_stream_is_told_as_the_callers_one_retry(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    early = Error(
        code="ThrottlingException", message="Rate exceeded", in_stream=True, text_before=""
    )
    scripted_bedrock.add(early, Reply(text="42 orders."))

    events = _step()

    assert isinstance(events[0], Retrying)
    assert events[0].message == "Bedrock is throttling; retrying (attempt 2 of 2)…"
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "42 orders."


def test_a_retry_after_a_retry_event_still_retries_the_stream_once(
    scripted_bedrock: ScriptedBedrock,
) -> None:
    """A botocore retry's event comes before any answer: the caller's own in-stream retry
    still counts the step as not started."""
    early = Error(
        code="ThrottlingException", message="Rate exceeded", in_stream=True, text_before=""
    )
    scripted_bedrock.add(THROTTLED, early, Reply(text="Done."))

    events = _step()

    assert [e.attempt for e in events if isinstance(e, Retrying)] == [2, 2]
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Done."
