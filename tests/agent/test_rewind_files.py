"""What a rewind gives back with the message's text: exactly the files that were sent with it
(not a file of a turn that was never answered, not another file of the same name, not a file
that is gone), and a turn whose saving failed takes its message back."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from agent.config import Settings
from agent.errors import StoreError
from agent.session import ChatSession
from agent.stores.demo import build_demo_db
from agent.stores.open import open_store
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock


@pytest.fixture
def session(tmp_path: Path) -> ChatSession:
    path = tmp_path / "shop.sqlite"
    build_demo_db(path, today=date(2026, 11, 1))
    return ChatSession.open(Settings(), open_store(path))


def last_user_index(session: ChatSession) -> int:
    return session.user_messages()[-1][0]


def file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_file_of_a_turn_that_was_never_answered_is_not_given_back(
    scripted_bedrock: ScriptedBedrock, session: ChatSession, tmp_path: Path
) -> None:
    """The user attached private.csv, the request failed, they took the file off and sent
    chosen.csv: rewinding gave back both (the failed turn's record stayed on the index the next
    message took), so Enter would have sent private.csv to the model."""
    private = file(tmp_path / "private.csv", "secret\n1\n")
    chosen = file(tmp_path / "chosen.csv", "sku\nA1\n")
    scripted_bedrock.add(Error(400, "ValidationException", "The model id is invalid."))
    assert session.run_turn("read it", attachments=[private]).reason == "error"
    assert session.last_turn_kept is False
    scripted_bedrock.add(Reply(text="Read it."))
    session.run_turn("read it", attachments=[chosen])
    assert session.last_turn_kept is True
    assert session.files_sent_with(last_user_index(session)) == [chosen.resolve()]
    assert [entry["names"] for entry in session.conversation.attached] == [["chosen.csv"]]


def test_two_files_of_one_name_are_told_apart(
    scripted_bedrock: ScriptedBedrock, session: ChatSession, tmp_path: Path
) -> None:
    """a/data.csv then b/data.csv: rewinding to the second message gave back a/data.csv."""
    first = file(tmp_path / "a" / "data.csv", "x\n1\n")
    second = file(tmp_path / "b" / "data.csv", "x\n2\n")
    scripted_bedrock.add(Reply(text="A."), Reply(text="B."))
    session.run_turn("read a", attachments=[first])
    session.run_turn("read b", attachments=[second])
    indexes = [index for index, _ in session.user_messages()]
    assert session.files_sent_with(indexes[1]) == [second.resolve()]
    assert session.files_sent_with(indexes[0]) == [first.resolve()]


def test_a_record_without_ids_does_not_guess_between_two_files_of_one_name(
    scripted_bedrock: ScriptedBedrock, session: ChatSession, tmp_path: Path
) -> None:
    """A conversation saved before ids were recorded names its files only: a name two
    attachments share gives nothing back rather than maybe the wrong file."""
    first = file(tmp_path / "a" / "data.csv", "x\n1\n")
    second = file(tmp_path / "b" / "data.csv", "x\n2\n")
    scripted_bedrock.add(Reply(text="A."), Reply(text="B."))
    session.run_turn("read a", attachments=[first])
    session.run_turn("read b", attachments=[second])
    for entry in session.conversation.attached:
        del entry["ids"]
    assert session.files_sent_with(last_user_index(session)) == []


def test_a_file_that_is_gone_is_not_given_back(
    scripted_bedrock: ScriptedBedrock, session: ChatSession, tmp_path: Path
) -> None:
    kept = file(tmp_path / "kept.csv", "x\n1\n")
    gone = file(tmp_path / "gone.csv", "x\n2\n")
    scripted_bedrock.add(Reply(text="Both."))
    session.run_turn("read both", attachments=[kept, gone])
    gone.unlink()
    assert session.files_sent_with(last_user_index(session)) == [kept.resolve()]


def test_a_turn_whose_saving_fails_takes_its_message_back(
    scripted_bedrock: ScriptedBedrock, session: ChatSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saving the prompt failed (a full disk, a locked file): the conversation kept the
    message while the app gave the text back, so sending it again sent it twice."""
    save = session.conversations.save
    calls = {"n": 0}

    def failing_once(conversation):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            raise StoreError("the disk is full", fix="Free some space.")
        return save(conversation)

    monkeypatch.setattr(session.conversations, "save", failing_once)
    with pytest.raises(StoreError):
        session.run_turn("how many orders?")
    assert session.last_turn_kept is False and session.conversation.messages == []
    scripted_bedrock.add(Reply(text="2,000."))
    session.run_turn("how many orders?")
    sent = scripted_bedrock.requests[-1].body["messages"]
    assert len(sent) == 1, "the first attempt's message is not in the history"
    assert [block["text"] for block in sent[0]["content"] if "text" in block] == [
        "how many orders?"
    ]
