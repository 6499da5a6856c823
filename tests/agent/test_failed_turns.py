"""A turn that failed before any answer is taken back from the messages (so the saved history
stays one Converse accepts) but leaves a record beside them (`Conversation.failed`): a resumed
chat shows the question and its error where it was sent, and the model never sees it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.cli.main import main
from agent.config import Settings
from agent.conversations import Conversation, ConversationNotFound, ConversationStore
from agent.session import ChatSession
from agent.stores.open import open_store
from agent.transcript import display_items
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock

pytestmark = pytest.mark.usefixtures("no_backoff")

THROTTLED = [Error(429, "ThrottlingException", "Rate exceeded")] * 4
"""Every attempt of one request refused (botocore's standard mode tries four times)."""


def _session(demo_path: Path, conversation_id: str | None = None) -> ChatSession:
    return ChatSession.open(
        Settings(mode="auto"), open_store(str(demo_path)), conversation_id=conversation_id
    )


def _failed_chat(scripted_bedrock: ScriptedBedrock, demo_path: Path) -> ChatSession:
    """An answered question, then one throttled out before any answer."""
    scripted_bedrock.add(Reply(text="Twelve orders."), *THROTTLED)
    session = _session(demo_path)
    assert session.run_turn("how many orders?").reason == "end_turn"
    ended = session.run_turn("and [b]customers[/b]?")
    assert ended.reason == "error" and not session.last_turn_kept
    return session


def test_a_throttled_turn_is_saved_beside_the_messages_and_shown_after_the_answer(
    scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    session = _failed_chat(scripted_bedrock, demo_path)
    loaded = ConversationStore().load(session.conversation_id)
    assert [m["content"][0]["text"] for m in loaded.messages] == [
        "how many orders?",
        "Twelve orders.",
    ], "the history Converse gets is as before"
    [record] = loaded.failed
    assert (record["message"], record["block"], record["text"]) == (2, 0, "and [b]customers[/b]?")
    assert "throttl" in record["error"].lower()
    items = _session(demo_path, session.conversation_id).display_items()
    assert items[:2] == [
        {"role": "user", "text": "how many orders?"},
        {"role": "assistant", "text": "Twelve orders."},
    ]
    assert items[2] == {
        "failed": {"text": "and [b]customers[/b]?", "error": record["error"], "fix": record["fix"]}
    }


def test_the_next_turn_sends_no_trace_of_the_failed_one_app_or_ask(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = _failed_chat(scripted_bedrock, demo_path)
    scripted_bedrock.add(Reply(text="Forty customers."))
    assert main(["ask", "customers?", "--conversation", session.conversation_id]) == 0
    capsys.readouterr()
    sent = scripted_bedrock.requests[-1].body["messages"]
    assert "customers[/b]" not in json.dumps(sent)
    assert [m["content"][0]["text"] for m in sent] == [
        "how many orders?",
        "Twelve orders.",
        "customers?",
    ]
    resumed = _session(demo_path, session.conversation_id).display_items()
    order = [item.get("text") or item["failed"]["text"] for item in resumed]
    assert order == [
        "how many orders?",
        "Twelve orders.",
        "and [b]customers[/b]?",
        "customers?",
        "Forty customers.",
    ]


def test_a_first_turn_that_fails_keeps_nothing(
    scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    scripted_bedrock.add(*THROTTLED)
    session = _session(demo_path)
    assert session.run_turn("hello").reason == "error"
    assert session.conversation.failed == []
    assert ConversationStore().list() == []


def test_a_rewind_before_the_failure_drops_it_one_after_keeps_it(
    scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    session = _failed_chat(scripted_bedrock, demo_path)
    scripted_bedrock.add(Reply(text="Forty customers."))
    session.run_turn("customers?")
    session.rewind(2)  # "customers?", sent after the failure: the failure stays before it
    assert [f["text"] for f in session.conversation.failed] == ["and [b]customers[/b]?"]
    session.rewind(0)
    assert session.conversation.failed == []
    assert ConversationStore().load(session.conversation_id).failed == []


def test_a_failure_after_a_stop_shows_before_the_prompt_merged_after_it() -> None:
    """A turn stopped on tool results leaves a trailing user message the next prompt merges
    into: a failure recorded at its next block shows before that prompt, not after."""
    conversation = Conversation("c", "s", "m")
    conversation.append_user([{"text": "list"}])
    use = {"toolUseId": "t1", "name": "listTables", "input": {}}
    conversation.append_assistant({"content": [{"toolUse": use}]})
    result = {"toolUseId": "t1", "status": "error", "content": [{"text": "cancelled"}]}
    conversation.append_user([{"toolResult": result}])
    mark = conversation.mark()
    conversation.append_user([{"text": "failed one"}])
    assert conversation.unsend(mark)
    assert conversation.record_failure("failed one", "Rate exceeded", None)
    assert conversation.failed[0]["message"] == 2 and conversation.failed[0]["block"] == 1
    conversation.append_user([{"text": "sent later"}])
    items = display_items(conversation.messages, failed=conversation.failed)
    texts = [item.get("text") or item.get("failed", {}).get("text") for item in items]
    assert texts[-2:] == ["failed one", "sent later"]


def _write_snapshot(data: dict[str, Any], **fields: Any) -> Path:
    """Write the conversation `data` as a log of one snapshot line, `fields` changed (a
    hand-edited file)."""
    path = ConversationStore().path(data["id"])
    path.write_text(json.dumps({"log": 1, "snapshot": {**data, **fields}}) + "\n")
    return path


def _saved(conversation_id: str) -> dict[str, Any]:
    return ConversationStore().load(conversation_id).to_dict()


def test_a_file_from_before_failed_records_loads_as_before(
    scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    session = _failed_chat(scripted_bedrock, demo_path)
    data = _saved(session.conversation_id)
    del data["failed"]
    _write_snapshot(data)
    loaded = ConversationStore().load(session.conversation_id)
    assert loaded.failed == [] and len(loaded.messages) == 2
    assert [i.get("text") for i in _session(demo_path, loaded.id).display_items()] == [
        "how many orders?",
        "Twelve orders.",
    ]


@pytest.mark.parametrize(
    ("failed", "named"),
    [
        (5, "failed"),
        ([{"message": "x", "block": 0, "text": "q", "error": "e"}], "failed.0.message"),
        ([{"message": 2, "text": "q", "error": "e"}], "failed.0.block"),
        ([{"message": 2, "block": 0, "text": 3, "error": "e"}], "failed.0.text"),
        ([{"message": 2, "block": 0, "text": "q", "error": None}], "failed.0.error"),
        ([{"message": 2, "block": 0, "text": "q", "error": "e", "fix": 7}], "failed.0.fix"),
    ],
)
def test_a_damaged_failed_field_is_named_as_a_damaged_denied_one_is(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, failed: Any, named: str
) -> None:
    session = _failed_chat(scripted_bedrock, demo_path)
    data = _saved(session.conversation_id)
    _write_snapshot(data, denied=[{"message": "x", "id": "t1"}])  # how a damaged denial reads
    with pytest.raises(ConversationNotFound, match=r"damaged: field 'denied\.0\.message'"):
        _session(demo_path, session.conversation_id)
    assert [b.path.stem for b in ConversationStore().scan()[1]] == [session.conversation_id]
    _write_snapshot(data, failed=failed)
    with pytest.raises(ConversationNotFound, match=rf"damaged: field '{named}'"):
        _session(demo_path, session.conversation_id)
    assert [b.path.stem for b in ConversationStore().scan()[1]] == [session.conversation_id]
