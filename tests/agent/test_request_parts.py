"""A step sends the history without validating it all again, and builds toolConfig only when
the active set changes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from agent.bedrock.client import make_client
from agent.bedrock.converse import BedrockCaller
from agent.bedrock.errors import BedrockCallError
from agent.bedrock.stream import ModelEvent
from agent.config import Settings
from agent.session import ChatSession
from agent.stores.open import open_store
from tests.support.replay import ReplayCaller, Step
from tests.support.scripted_bedrock import Reply, ScriptedBedrock

NOVA = "us.amazon.nova-2-lite-v1:0"
SYSTEM = [{"text": "You help people with their tables."}]
TOOLS = [
    {
        "name": "listTables",
        "description": "Tables in the store.",
        "inputSchema": {"json": {"type": "object", "properties": {}}},
    }
]


def exchange(number: int) -> list[dict[str, Any]]:
    use = {"toolUseId": f"t{number}", "name": "listTables", "input": {}}
    result = {"toolUseId": f"t{number}", "content": [{"json": {"tables": ["orders"]}}]}
    return [
        {"role": "assistant", "content": [{"toolUse": use}]},
        {"role": "user", "content": [{"toolResult": result}]},
    ]


@pytest.fixture
def caller(scripted_bedrock: ScriptedBedrock) -> BedrockCaller:
    client = make_client(None, None, max_attempts=1, parameter_validation=False)
    return BedrockCaller(client, NOVA)


def test_a_malformed_new_message_is_refused_before_anything_is_sent(
    caller: BedrockCaller, scripted_bedrock: ScriptedBedrock
) -> None:
    scripted_bedrock.add(Reply(text="ok"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "tables?"}]}]
    list(caller.step(SYSTEM, messages, TOOLS))
    messages += [
        {"role": "assistant", "content": [{"text": "ok"}]},
        {"role": "user", "content": [{"text": 5}]},
    ]
    with pytest.raises(BedrockCallError, match="ParamValidation|Invalid type"):
        list(caller.step(SYSTEM, messages, TOOLS))
    assert len(scripted_bedrock.requests) == 1


def test_what_was_already_sent_is_not_validated_again_until_the_history_shrinks(
    caller: BedrockCaller, scripted_bedrock: ScriptedBedrock
) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "tables?"}]}]
    for number in range(3):
        messages += exchange(number)
    scripted_bedrock.add(Reply(text="one"), Reply(text="two"))
    list(caller.step(SYSTEM, messages, TOOLS))
    messages[0]["content"][0]["text"] = 5  # changed in place after it was checked and sent
    messages += [
        {"role": "assistant", "content": [{"text": "one"}]},
        {"role": "user", "content": [{"text": "and now?"}]},
    ]
    list(caller.step(SYSTEM, messages, TOOLS))
    assert len(scripted_bedrock.requests) == 2  # only the two new messages were checked
    del messages[-2:]  # a rewind: the whole history is checked again
    with pytest.raises(BedrockCallError):
        list(caller.step(SYSTEM, messages, TOOLS))
    assert len(scripted_bedrock.requests) == 2


def test_content_added_to_the_last_checked_message_is_checked(
    caller: BedrockCaller, scripted_bedrock: ScriptedBedrock
) -> None:
    scripted_bedrock.add(Reply(text="ok"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "tables?"}]}]
    messages += exchange(1)
    list(caller.step(SYSTEM, messages, TOOLS))
    messages[-1]["content"].append({"text": ["not", "text"]})  # a prompt merged after results
    with pytest.raises(BedrockCallError):
        list(caller.step(SYSTEM, messages, TOOLS))


class RecordingCaller(ReplayCaller):
    """A replayed model that also keeps the tool list object each step was given."""

    def __init__(self, steps: list[Step]) -> None:
        super().__init__(steps)
        self.tool_lists: list[list[dict[str, Any]]] = []
        self.systems: list[list[dict[str, Any]]] = []

    def step(
        self,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        inline_count: int = 0,
        cancel: threading.Event | None = None,
    ) -> Any:
        self.tool_lists.append(tools)
        self.systems.append(system)
        events: list[ModelEvent] = list(super().step(system, messages, tools, inline_count))
        return iter(events)


def test_tool_config_and_system_are_the_same_objects_until_the_active_set_changes(
    demo_path: Path,
) -> None:
    caller = RecordingCaller(
        [
            Step(tool_uses=[("listTables", {})]),
            Step(tool_uses=[("searchTools", {"query": "export to csv"})]),
            Step(tool_uses=[("listTables", {})]),
            Step("Done."),
            Step(tool_uses=[("listTables", {})]),
            Step("Done again."),
        ]
    )
    session = ChatSession.open(Settings(), open_store(demo_path), caller=caller)
    session.run_turn("first")
    session.run_turn("second")
    lists = caller.tool_lists
    assert lists[0] is lists[1]  # before the search
    assert lists[2] is not lists[1] and len(lists[2]) > len(lists[1])  # the search added tools
    assert all(later is lists[2] for later in lists[3:])  # kept for the rest, across turns
    assert all(system is caller.systems[0] for system in caller.systems)
