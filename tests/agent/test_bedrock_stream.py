"""The event consumer against the real boto3 stack and a scripted endpoint, streaming and not."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import botocore.exceptions
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

from agent.bedrock.client import make_client  # noqa: E402
from agent.bedrock.stream import (  # noqa: E402
    PROGRESS_EVERY,
    StepCancelled,
    StepEnd,
    TextChunk,
    ToolInputProgress,
    ToolUseBlock,
    converse_events,
)
from agent.stop import StopSignal  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import Error, Reply, ToolUse, Usage  # noqa: E402

scripted_bedrock = support.scripted_bedrock

NOVA = "us.amazon.nova-2-lite-v1:0"
QUESTION = [{"role": "user", "content": [{"text": "How many open orders are there?"}]}]


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))


def run(stream: bool, cancel: threading.Event | None = None) -> list:
    client = make_client(None, None, max_attempts=2)
    request = {"modelId": NOVA, "messages": QUESTION}
    return list(converse_events(client, request, stream=stream, cancel=cancel))


both_modes = pytest.mark.parametrize("stream", [True, False], ids=["stream", "converse"])


@both_modes
def test_answer_text_arrives_and_ends_the_step(scripted_bedrock, stream: bool) -> None:
    answer = "There are 42 open orders, most of them from last week."
    scripted_bedrock.add(Reply(text=answer))

    events = run(stream)

    chunks = [event.text for event in events if isinstance(event, TextChunk)]
    assert "".join(chunks) == answer
    if stream:
        assert len(chunks) > 5  # really streamed in pieces
    end = events[-1]
    assert isinstance(end, StepEnd)
    assert end.stop_reason == "end_turn"
    assert end.message == {"role": "assistant", "content": [{"text": answer}]}
    assert scripted_bedrock.requests[0].stream is stream
    assert scripted_bedrock.requests[0].model_id == NOVA


@both_modes
def test_tool_calls_are_reassembled_in_order(scripted_bedrock, stream: bool) -> None:
    count_input = {"table": "orders", "query": {"status": "open", "note": "ünïcode ✓"}}
    scripted_bedrock.add(
        Reply(
            text="Let me count them.",
            tool_uses=[
                ToolUse("countItems", count_input, id="tool-1"),
                ToolUse("listTables", {}, id="tool-2"),
            ],
        )
    )

    events = run(stream)

    tools = [event for event in events if isinstance(event, ToolUseBlock)]
    assert [(t.tool_use_id, t.name, t.input, t.error) for t in tools] == [
        ("tool-1", "countItems", count_input, None),
        ("tool-2", "listTables", {}, None),
    ]
    end = events[-1]
    assert end.stop_reason == "tool_use"
    assert end.message["content"] == [
        {"text": "Let me count them."},
        {"toolUse": {"toolUseId": "tool-1", "name": "countItems", "input": count_input}},
        {"toolUse": {"toolUseId": "tool-2", "name": "listTables", "input": {}}},
    ]


def test_a_tool_call_being_written_is_announced_then_its_progress(scripted_bedrock) -> None:
    """While a big input streams in, the front end hears of the call at once and then about
    every PROGRESS_EVERY characters, before the call itself arrives whole."""
    keys = [{"id": i} for i in range(1, 1001)]  # some 11,000 characters of JSON
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("listTables", {}), ToolUse("bulkEdit", {"keys": keys})])
    )

    events = run(stream=True)

    progress = [e for e in events if isinstance(e, ToolInputProgress)]
    assert progress[:2] == [ToolInputProgress("listTables", 0), ToolInputProgress("bulkEdit", 0)]
    sizes = [e.characters for e in progress[2:]]
    assert sizes == sorted(sizes) and len(sizes) >= 2 and all(n >= PROGRESS_EVERY for n in sizes)
    block = next(e for e in events if isinstance(e, ToolUseBlock) and e.name == "bulkEdit")
    assert events.index(progress[-1]) < events.index(block)
    assert sizes[-1] <= len(block.raw)


@both_modes
def test_malformed_tool_json_becomes_an_error_not_a_crash(scripted_bedrock, stream: bool) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("getItem", id="bad", raw_tool_input='{"table": "ord')])
    )

    events = run(stream)

    (tool,) = [event for event in events if isinstance(event, ToolUseBlock)]
    assert tool.input is None
    assert "not valid JSON" in tool.error
    assert tool.raw == '{"table": "ord'
    # The history message stays valid for Bedrock: the toolUse carries an object.
    assert events[-1].message["content"] == [
        {"toolUse": {"toolUseId": "bad", "name": "getItem", "input": {}}}
    ]


def test_empty_streamed_tool_input_means_no_arguments(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", raw_tool_input="")]))

    (tool,) = [event for event in run(True) if isinstance(event, ToolUseBlock)]

    assert tool.input == {} and tool.error is None


@both_modes
def test_usage_includes_cache_tokens(scripted_bedrock, stream: bool) -> None:
    scripted_bedrock.add(
        Reply(text="ok", usage=Usage(input=1200, output=35, cache_read=900, cache_write=150))
    )

    end = run(stream)[-1]

    assert end.usage == Usage(input=1200, output=35, cache_read=900, cache_write=150)


@both_modes
def test_unknown_stop_reason_is_passed_through(scripted_bedrock, stream: bool) -> None:
    scripted_bedrock.add(Reply(text="partial", stop_reason="model_context_window_exceeded"))

    assert run(stream)[-1].stop_reason == "model_context_window_exceeded"


def test_empty_answer_still_gives_a_valid_history_message(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="", stop_reason="max_tokens"))

    end = run(True)[-1]

    assert end.stop_reason == "max_tokens"
    assert end.message == {"role": "assistant", "content": [{"text": "(no answer)"}]}


STOP_KINDS = pytest.mark.parametrize(
    "stop_kind", [threading.Event, StopSignal], ids=["event", "stop-signal"]
)


@STOP_KINDS
def test_stop_mid_stream_ends_promptly(scripted_bedrock, stop_kind: type[threading.Event]) -> None:
    scripted_bedrock.add(Reply(text="word " * 100, chunk_delay=0.05))  # ~6 s if read to the end
    client = make_client(None, None, max_attempts=1)
    cancel = stop_kind()
    received: list[str] = []

    started = time.monotonic()
    with pytest.raises(StepCancelled):
        for event in converse_events(
            client, {"modelId": NOVA, "messages": QUESTION}, stream=True, cancel=cancel
        ):
            received.append(event.text)
            cancel.set()  # the user pressed Stop after the first piece

    assert time.monotonic() - started < 1.0
    assert received == ["word"]


@STOP_KINDS
def test_stop_while_the_model_is_silent_ends_promptly(
    scripted_bedrock, stop_kind: type[threading.Event]
) -> None:
    scripted_bedrock.add(Reply(text="late answer", chunk_delay=10.0))  # stalls after messageStart
    client = make_client(None, None, max_attempts=1)
    cancel = stop_kind()
    timer = threading.Timer(0.2, cancel.set)

    started = time.monotonic()
    timer.start()
    with pytest.raises(StepCancelled):
        list(
            converse_events(
                client, {"modelId": NOVA, "messages": QUESTION}, stream=True, cancel=cancel
            )
        )

    assert time.monotonic() - started < 2.0


def test_already_cancelled_step_sends_nothing(scripted_bedrock) -> None:
    cancel = threading.Event()
    cancel.set()

    with pytest.raises(StepCancelled):
        run(True, cancel)

    assert scripted_bedrock.requests == []


def test_exception_inside_the_stream_raises_after_the_text(scripted_bedrock) -> None:
    scripted_bedrock.add(Error(code="ThrottlingException", in_stream=True, text_before="Counting"))
    client = make_client(None, None, max_attempts=1)
    received: list[str] = []

    with pytest.raises(botocore.exceptions.EventStreamError) as raised:
        for event in converse_events(client, {"modelId": NOVA, "messages": QUESTION}, stream=True):
            received.append(event.text)

    assert "".join(received) == "Counting"
    assert raised.value.response["Error"]["Code"] == "throttlingException"


def test_requests_are_signed_by_boto3(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="ok"))

    run(True)

    headers = scripted_bedrock.requests[0].headers
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=")
    assert "tabletalk" in headers["User-Agent"]
    assert scripted_bedrock.requests[0].body["messages"] == QUESTION


@STOP_KINDS
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "converse"])
def test_stop_before_the_answer_starts_ends_promptly(
    scripted_bedrock, stream: bool, stop_kind: type[threading.Event]
) -> None:
    scripted_bedrock.add(Reply(text="slow answer", delay=5.0))
    client = make_client(None, None, max_attempts=1)
    cancel = stop_kind()
    timer = threading.Timer(0.2, cancel.set)

    started = time.monotonic()
    timer.start()
    with pytest.raises(StepCancelled):
        list(
            converse_events(
                client, {"modelId": NOVA, "messages": QUESTION}, stream=stream, cancel=cancel
            )
        )

    assert time.monotonic() - started < 2.0
