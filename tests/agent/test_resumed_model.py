"""`ask --conversation ID` continues on the model the conversation used (saying so), unless
--model is given; a profile the region cannot call becomes the same model's profile there."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.cli.main import main
from agent.conversations import Conversation, ConversationStore
from tests.support.scripted_bedrock import Reply, ScriptedBedrock

NOVA = "us.amazon.nova-2-lite-v1:0"
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def saved(store: str, model: str, conversation_id: str = "20260101-120000-abcdef") -> str:
    conversation = Conversation(id=conversation_id, store=store, model=model)
    conversation.append_user([{"text": "how many orders?"}])
    conversation.append_assistant({"content": [{"text": "Twelve."}]})
    ConversationStore().save(conversation)
    return conversation_id


def ask(demo_path: Path, conversation_id: str, *extra: str) -> list[str]:
    return ["ask", "and now?", "--db", str(demo_path), "--conversation", conversation_id, *extra]


def test_ask_continues_a_conversation_on_its_model_and_says_so(
    scripted_bedrock: ScriptedBedrock,
    demo_store,
    demo_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    conversation_id = saved(demo_store.identity, HAIKU)
    scripted_bedrock.add(Reply(text="Thirteen."))
    assert main(ask(demo_path, conversation_id)) == 0
    err = capsys.readouterr().err
    assert f"note: This chat continues on haiku-4.5 ({HAIKU}), the model it used." in err
    assert scripted_bedrock.requests[-1].model_id == HAIKU


def test_a_model_given_for_the_turn_wins_and_is_what_the_chat_then_continues_on(
    scripted_bedrock: ScriptedBedrock,
    demo_store,
    demo_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    conversation_id = saved(demo_store.identity, HAIKU)
    scripted_bedrock.add(Reply(text="Thirteen."), Reply(text="Fourteen."))
    assert main(ask(demo_path, conversation_id, "--model", "nova-lite")) == 0
    assert "continues on" not in capsys.readouterr().err
    assert scripted_bedrock.requests[-1].model_id == "us.amazon.nova-lite-v1:0"
    assert main(ask(demo_path, conversation_id)) == 0
    assert "continues on nova-lite (us.amazon.nova-lite-v1:0)" in capsys.readouterr().err
    assert scripted_bedrock.requests[-1].model_id == "us.amazon.nova-lite-v1:0"


def test_a_profile_the_region_cannot_call_becomes_that_models_profile_here(
    scripted_bedrock: ScriptedBedrock,
    demo_store,
    demo_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A chat held in eu-west-1 and continued from us-east-1 keeps its model, not its profile;
    a model we cannot map stays behind, and the note says which one the chat goes on with."""
    known = saved(demo_store.identity, "eu.anthropic.claude-haiku-4-5-20251001-v1:0", "c-eu")
    unknown = saved(demo_store.identity, "eu.example.model-x-v1:0", "c-other")
    scripted_bedrock.add(Reply(text="Thirteen."), Reply(text="Fourteen."))
    assert main(ask(demo_path, known)) == 0
    assert f"continues on haiku-4.5 ({HAIKU})" in capsys.readouterr().err
    assert scripted_bedrock.requests[-1].model_id == HAIKU
    assert main(ask(demo_path, unknown)) == 0
    err = capsys.readouterr().err
    assert "This chat used eu.example.model-x-v1:0, which us-east-1 cannot call" in err
    assert f"it continues on nova-2-lite ({NOVA})" in err
    assert scripted_bedrock.requests[-1].model_id == NOVA


def test_ask_names_the_tools_a_resumed_chat_still_allows_without_asking(
    scripted_bedrock: ScriptedBedrock,
    demo_store,
    demo_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A grant saved with the chat let `ask --conversation` run runQuery without a prompt and
    without a word (the app says so in a toast)."""
    conversation_id = saved(demo_store.identity, NOVA)
    conversation = ConversationStore().load(conversation_id)
    conversation.granted = [{"tool": "runQuery", "identity": "runQuery", "message": 1}]
    ConversationStore().save(conversation)
    scripted_bedrock.add(Reply(text="Thirteen."), Reply(text="Fourteen."))
    assert main([*ask(demo_path, conversation_id), "--mode", "manual"]) == 0
    note = "note: runQuery runs without asking (allowed earlier in this chat)."
    assert note in capsys.readouterr().err
    assert main([*ask(demo_path, conversation_id), "--mode", "full-auto"]) == 0
    assert "allowed earlier" not in capsys.readouterr().err, "nothing asks in full-auto"
