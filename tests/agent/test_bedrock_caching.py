"""Cache points per model family, and the one retry without them when Bedrock refuses one."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

from agent.bedrock.caching import CachePointMemory, place_cache_points  # noqa: E402
from agent.bedrock.client import make_client  # noqa: E402
from agent.bedrock.converse import BedrockCaller  # noqa: E402
from agent.bedrock.errors import BedrockCallError  # noqa: E402
from agent.bedrock.stream import StepEnd, TextChunk  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.scripted_bedrock import Error, Reply  # noqa: E402

scripted_bedrock = support.scripted_bedrock

NOVA = "us.amazon.nova-2-lite-v1:0"
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
LLAMA = "us.meta.llama3-3-70b-instruct-v1:0"
CACHE_POINT = {"cachePoint": {"type": "default"}}
SYSTEM = [{"text": "You help people with their tables."}]
MESSAGES = [
    {"role": "user", "content": [{"text": "How many orders?"}]},
    {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "t1", "name": "countItems", "input": {"table": "orders"}}}
        ],
    },
    {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"count": 42}}]}}],
    },
]


def spec(name: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"table": {"type": "string"}}}
    return {"name": name, "description": f"The {name} tool.", "inputSchema": {"json": schema}}


TOOLS = [spec("listTables"), spec("countItems"), spec("exportTable")]  # two inline, one discovered


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))


def step(caller: BedrockCaller) -> list:
    return list(caller.step(SYSTEM, MESSAGES, TOOLS, inline_count=2))


def caller_for(model: str, **kwargs: Any) -> BedrockCaller:
    return BedrockCaller(make_client(None, None, max_attempts=1), model, **kwargs)


def count_cache_points(value: Any) -> int:
    if isinstance(value, dict):
        return (value == CACHE_POINT) + sum(count_cache_points(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_cache_points(v) for v in value)
    return 0


def test_claude_caches_system_and_the_inline_tools(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="42 orders."))

    step(caller_for(HAIKU))

    body = scripted_bedrock.requests[0].body
    assert body["system"] == [*SYSTEM, CACHE_POINT]
    tools = body["toolConfig"]["tools"]
    assert tools[2] == CACHE_POINT  # right after the two inline tools
    assert [t["toolSpec"]["name"] for t in tools if "toolSpec" in t] == [
        "listTables",
        "countItems",
        "exportTable",
    ]
    assert count_cache_points(body["messages"]) == 0
    assert "temperature" not in body["inferenceConfig"]
    assert body["toolConfig"]["toolChoice"] == {"auto": {}}


def test_nova_caches_system_and_last_user_message_never_tools(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="42 orders."))

    step(caller_for(NOVA))

    body = scripted_bedrock.requests[0].body
    assert body["system"] == [*SYSTEM, CACHE_POINT]
    assert body["messages"][-1]["content"][-1] == CACHE_POINT
    assert count_cache_points(body["messages"]) == 1
    assert count_cache_points(body["toolConfig"]) == 0
    assert body["inferenceConfig"] == {"maxTokens": 4096, "temperature": 0}


def test_other_families_and_disabled_caching_send_no_cache_points(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="a"), Reply(text="b"))

    step(caller_for(LLAMA))
    step(caller_for(HAIKU, cache_points=False))

    assert [count_cache_points(r.body) for r in scripted_bedrock.requests] == [0, 0]


def test_placing_cache_points_leaves_the_history_untouched() -> None:
    request = {
        "modelId": NOVA,
        "system": SYSTEM,
        "messages": MESSAGES,
        "toolConfig": {"tools": TOOLS},
    }
    before = copy.deepcopy(request)

    placed = place_cache_points(request, "nova", inline_count=2, disabled=False)

    assert request == before
    assert count_cache_points(placed) == 2


def test_rejected_cache_point_is_retried_once_without_and_remembered(
    scripted_bedrock, tmp_path: Path
) -> None:
    scripted_bedrock.add(
        Error(
            400,
            "ValidationException",
            "The model returned: extraneous key [cachePoint] is not permitted",
        ),
        Reply(text="42 orders."),
        Reply(text="Still 42."),
    )
    memory_file = tmp_path / "cache_points.json"
    notices: list[str] = []
    caller = caller_for(NOVA, memory=CachePointMemory(memory_file), notice=notices.append)

    first = step(caller)
    second = step(caller)

    assert "".join(e.text for e in first if isinstance(e, TextChunk)) == "42 orders."
    assert isinstance(second[-1], StepEnd)
    assert [count_cache_points(r.body) for r in scripted_bedrock.requests] == [2, 0, 0]
    assert len(notices) == 1 and NOVA in notices[0] and "cache" in notices[0]
    # A later run (new memory from the same file) does not send cache points to this model.
    assert CachePointMemory(memory_file).is_rejected(NOVA)
    assert not CachePointMemory(memory_file).is_rejected(HAIKU)


def test_a_second_rejection_is_not_retried_again(scripted_bedrock) -> None:
    rejection = Error(400, "ValidationException", "extraneous key [cachePoint] is not permitted")
    scripted_bedrock.add(rejection, rejection)

    with pytest.raises(BedrockCallError) as raised:
        step(caller_for(NOVA))

    assert raised.value.kind == "validation"
    assert len(scripted_bedrock.requests) == 2


def test_other_validation_errors_are_not_retried(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Error(
            400,
            "ValidationException",
            "A conversation must alternate between user and assistant roles.",
        )
    )
    memory = CachePointMemory()

    with pytest.raises(BedrockCallError) as raised:
        step(caller_for(NOVA, memory=memory))

    assert raised.value.kind == "validation"
    assert "alternate between user and assistant" in raised.value.message
    assert len(scripted_bedrock.requests) == 1
    assert not memory.is_rejected(NOVA)


def test_model_that_cannot_stream_tools_falls_back_to_converse(scripted_bedrock) -> None:
    scripted_bedrock.add(
        Error(400, "ValidationException", "This model doesn't support tool use in streaming mode."),
        Reply(text="42 orders."),
    )
    notices: list[str] = []
    caller = caller_for(NOVA, notice=notices.append)

    events = step(caller)

    assert events[-1].message["content"] == [{"text": "42 orders."}]
    assert [r.stream for r in scripted_bedrock.requests] == [True, False]
    assert caller.streaming is False and len(notices) == 1


def test_bare_and_wrapped_tool_specs_are_both_accepted(scripted_bedrock) -> None:
    scripted_bedrock.add(Reply(text="ok"))
    caller = caller_for(LLAMA)

    list(caller.step("Be brief.", MESSAGES, [TOOLS[0], {"toolSpec": TOOLS[1]}], inline_count=2))

    body = scripted_bedrock.requests[0].body
    assert body["system"] == [{"text": "Be brief."}]
    assert body["toolConfig"]["tools"] == [{"toolSpec": TOOLS[0]}, {"toolSpec": TOOLS[1]}]


@pytest.mark.parametrize(
    "content",
    [b'{"rejected": 5}', b'{"rejected": "nova"}', b"[1, 2]", b"\xff", b"[" * 50_000],
    ids=["number", "string", "list", "not-utf8", "deep"],
)
def test_a_damaged_cache_point_memory_starts_empty_and_is_written_again(
    tmp_path: Path, content: bytes
) -> None:
    """A damaged memory file used to stop the session from starting (`{"rejected": 5}` raised
    TypeError); now nothing counts as refused and the next refusal writes the file anew."""
    (tmp_path / "state").mkdir()
    memory_file = tmp_path / "state" / "cache_points.json"
    memory_file.write_bytes(content)
    memory = CachePointMemory(memory_file)
    assert not memory.is_rejected("n") and not memory.is_rejected("nova")
    memory.reject(NOVA)
    assert CachePointMemory(memory_file).is_rejected(NOVA)
    assert [p.name for p in memory_file.parent.iterdir()] == ["cache_points.json"]  # no temp
