"""Listing conversations (`tabletalk conversations`, the app's Chats list) reads a large log's
head and tail only, and lists it exactly as reading it whole would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agent.conversation_read as conversation_read
import agent.conversations as conversations
from agent.cli.main import main
from agent.conversations import Conversation, ConversationStore, ConversationSummary

LARGE = 300_000
"""Bytes of a large conversation log (past what is read whole to list it)."""


@pytest.fixture(autouse=True)
def ticking_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A save a second: each sets `updated_at`, as saves a turn apart do."""
    ticks = iter(range(10**6))

    def now() -> str:
        n = next(ticks)
        return f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}+00:00"

    monkeypatch.setattr(conversations, "_now", now)


def long_conversation(store: ConversationStore, number: int, title: str = "") -> Conversation:
    """A conversation saved turn by turn (one appended line per save) past WHOLE_BELOW."""
    chat = Conversation(f"20260101-00000{number}-abcde{number}", "sqlite:/tmp/shop.sqlite", "m")
    turn = 0
    while not chat.saved or chat.saved.size < LARGE:
        chat.append_user([{"text": title if turn == 0 and title else f"question {turn}"}])
        store.save(chat)
        chat.append_assistant({"content": [{"text": f"answer {turn} " + "x" * 5_000}]})
        store.save(chat)
        turn += 1
    store.flush()
    return chat


def whole_summary(store: ConversationStore, conversation_id: str) -> ConversationSummary:
    chat = store.load(conversation_id)
    return ConversationSummary(chat.id, chat.title, chat.updated_at, len(chat.messages), chat.store)


def never_read_whole(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Fail a whole read; return the list of save lines parsed (filled as they are)."""

    def refuse(path: Path) -> object:
        raise AssertionError(f"{path.name} was read whole to list it")

    monkeypatch.setattr(conversation_read, "read_any", refuse)
    parsed: list[bytes] = []
    parse = getattr(conversation_read, "parse_record", None)
    if parse is not None:

        def counted(line: bytes) -> object:
            parsed.append(line)
            return parse(line)

        monkeypatch.setattr(conversation_read, "parse_record", counted)
    return parsed


def test_listing_large_conversations_reads_only_what_it_shows(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every file was read whole: 500 conversations of 1,000 turns took 11 s to list (the
    app's Chats list froze as long); their head and tail hold everything the list shows."""
    store = ConversationStore()
    chats = [long_conversation(store, n, title=f"Orders report {n}") for n in range(3)]
    expected = sorted(
        (whole_summary(store, chat.id) for chat in chats),
        key=lambda s: (s.updated_at, s.id),
        reverse=True,
    )
    parsed = never_read_whole(monkeypatch)
    assert store.list() == expected
    assert len(parsed) == len(chats), "one save line each: the last"
    assert main(["conversations", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [item["title"] for item in listed] == [s.title for s in expected]
    assert all(item["message_count"] > 60 for item in listed)


def test_an_unfinished_last_save_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    store = ConversationStore()
    chat = long_conversation(store, 1, title="Orders")
    expected = whole_summary(store, chat.id)
    with store.path(chat.id).open("ab") as handle:
        handle.write(b'{"at": [999, 1], "messages": [{"role": "user", "cont')
    never_read_whole(monkeypatch)
    assert store.list() == [expected]


def test_a_title_set_in_the_middle_of_a_log_is_listed(tmp_path: Path) -> None:
    """A conversation whose first message had no text gets its title from a later save: the
    tail may not hold it, so such a file is read whole rather than listed untitled."""
    store = ConversationStore()
    chat = Conversation("20260101-000001-abcdef", "sqlite:/tmp/shop.sqlite", "m")
    chat.append_user([{"toolResult": {"toolUseId": "t", "content": [{"text": "x"}]}}])
    store.save(chat)
    chat.append_assistant({"content": [{"text": "ok"}]})
    chat.append_user([{"text": "Late title"}])
    store.save(chat)
    for turn in range(60):
        chat.append_assistant({"content": [{"text": f"answer {turn} " + "x" * 5_000}]})
        chat.append_user([{"text": f"question {turn}"}])
        store.save(chat)
    store.flush()
    assert store.path(chat.id).stat().st_size > LARGE
    assert [s.title for s in store.list()] == ["Late title"]
    assert store.list() == [whole_summary(store, chat.id)]


def test_the_list_says_1_msg_and_keeps_counts_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    """`  1 msgs` for a one-message chat, and a 2,000-message one pushed its title out of line."""
    store = ConversationStore()
    small = Conversation("20260101-000001-aaaaaa", "sqlite:/tmp/shop.sqlite", "m")
    small.append_user([{"text": "only a question"}])
    store.save(small)
    big = Conversation("20260101-000002-bbbbbb", "sqlite:/tmp/shop.sqlite", "m")
    for turn in range(1000):
        big.append_user([{"text": "long chat" if turn == 0 else "more"}])
        big.append_assistant({"content": [{"text": "ok"}]})
    store.save(big)
    assert main(["conversations"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "msg" in line]
    assert any(" 1 msg " in line for line in lines), lines
    assert any(" 2,000 msgs " in line for line in lines), lines
    assert len({line.index("msg") for line in lines}) == 1, lines
