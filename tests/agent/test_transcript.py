"""One transcript rule for live and resumed chats; attachments kept as data, not text."""

from __future__ import annotations

from pathlib import Path

from agent.config import Settings
from agent.conversations import Conversation, ConversationStore
from agent.session import ChatSession
from agent.stores.open import open_store
from agent.transcript import ReviewMarker, display_items
from tests.support.replay import ReplayCaller, Step


def _session(
    demo_path: Path, caller: ReplayCaller, conversation_id: str | None = None
) -> ChatSession:
    return ChatSession.open(
        Settings(mode="auto"),
        open_store(str(demo_path)),
        caller=caller,
        conversation_id=conversation_id,
    )


def test_a_file_name_that_looks_like_the_listing_is_shown_as_it_is(
    demo_path: Path, tmp_path: Path
) -> None:
    tricky = tmp_path / "a (id 9, text, 3 bytes); b.txt"
    tricky.write_text("hi")
    session = _session(demo_path, ReplayCaller([Step("Read it.")]))
    session.run_turn("see the file", attachments=[tricky])
    resumed = _session(demo_path, ReplayCaller([]), session.conversation_id).display_items()
    assert resumed[0] == {
        "role": "user",
        "text": "see the file",
        "attachments": ["a (id 9, text, 3 bytes); b.txt"],
    }


def test_rewind_forgets_the_files_of_the_removed_message(demo_path: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    session = _session(demo_path, ReplayCaller([Step("One."), Step("Two."), Step("Three.")]))
    session.run_turn("first")
    session.run_turn("second", attachments=[notes])
    index = session.user_messages()[-1][0]
    session.rewind(index)
    session.run_turn("again")
    users = [item for item in session.display_items() if item.get("role") == "user"]
    assert users[-1] == {"role": "user", "text": "again"}


def test_an_old_conversation_with_the_listing_in_text_still_loads(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    old = Conversation("c-old", store.identity, "m")
    old.messages = [
        {
            "role": "user",
            "content": [
                {"text": "read it"},
                {
                    "text": "[Attached files: n.txt (id a1, text, 2 bytes). Read them with readAttachment.]"
                },
            ],
        },
        {"role": "assistant", "content": [{"text": "Done."}]},
    ]
    ConversationStore().save(old)
    items = _session(demo_path, ReplayCaller([]), "c-old").display_items()
    assert items == [
        {"role": "user", "text": "read it"},
        {"role": "assistant", "text": "Done."},
    ]


def test_the_live_rule_and_the_resumed_rule_agree_on_the_review_chip() -> None:
    use = {"toolUseId": "t1", "name": "stageItem", "input": {}}
    result = {"toolUseId": "t1", "status": "success", "content": [{"json": {"id": "c1"}}]}
    messages = [
        {"role": "user", "content": [{"text": "edit"}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {"role": "user", "content": [{"toolResult": result}]},
        {"role": "assistant", "content": [{"text": "Staged."}]},
    ]
    resumed = display_items(messages)[-1]["chip"]
    live = ReviewMarker()
    live.saw("stageItem", "success")
    assert live.end_turn() == resumed
    live.saw("stageItem", "error")
    live.saw("listTables", "success")
    assert live.end_turn() is None


def test_an_update_that_staged_nothing_gets_no_review_chip_live_or_resumed() -> None:
    unchanged = {"staged": 0, "unchanged": True, "message": "Nothing was staged: ..."}
    use = {"toolUseId": "t1", "name": "stageItem", "input": {}}
    result = {"toolUseId": "t1", "status": "success", "content": [{"json": unchanged}]}
    messages = [
        {"role": "user", "content": [{"text": "mark it shipped"}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {"role": "user", "content": [{"toolResult": result}]},
        {"role": "assistant", "content": [{"text": "It already is."}]},
    ]
    assert not any("chip" in item for item in display_items(messages))
    live = ReviewMarker()
    live.saw("stageItem", "success", unchanged)
    assert live.end_turn() is None


def test_a_conversation_saved_before_denials_were_recorded_loads_with_its_errors(
    demo_path: Path,
) -> None:
    """A file without `denied` (written before it existed) loads; its results keep their
    saved status, a refused call's "error" included."""
    import json

    store = open_store(str(demo_path))
    old = Conversation("c-before-denied", store.identity, "m")
    use = {"toolUseId": "t1", "name": "runQuery", "input": {"query": "SELECT 1"}}
    refused = {"error": "The user denied runQuery.", "fix": "Ask the user."}
    old.messages = [
        {"role": "user", "content": [{"text": "count"}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "status": "error",
                        "content": [{"json": refused}],
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "Denied."}]},
    ]
    conversations = ConversationStore()
    conversations.save(old)
    path = conversations.path("c-before-denied")
    head = json.loads(path.read_text().splitlines()[0])
    del head["snapshot"]["denied"]
    path.write_text(json.dumps(head) + "\n")
    loaded = conversations.load("c-before-denied")
    assert loaded.denied == []
    items = _session(demo_path, ReplayCaller([]), "c-before-denied").display_items()
    assert [item["status"] for item in items if "tool" in item] == ["error"]


def test_a_denied_call_reads_back_as_denied_from_its_record() -> None:
    use = {"toolUseId": "t1", "name": "runQuery", "input": {}}
    result = {"toolUseId": "t1", "status": "error", "content": [{"json": {"error": "no"}}]}
    messages = [
        {"role": "user", "content": [{"text": "q"}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {"role": "user", "content": [{"toolResult": result}]},
    ]
    assert display_items(messages)[1]["status"] == "error"
    assert display_items(messages, denied=[{"message": 1, "id": "t1"}])[1]["status"] == "denied"
    assert display_items(messages, denied=[{"message": 3, "id": "t1"}])[1]["status"] == "error"
