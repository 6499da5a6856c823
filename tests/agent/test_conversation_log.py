"""Conversation files as append-only logs: what a step writes, what a crash leaves, old files.

Every saved history must be one Converse accepts, and a step is saved whole or not at all,
wherever a crash cuts the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agent import paths
from agent.cli.main import main
from agent.config import Settings
from agent.conversations import Conversation, ConversationNotFound, ConversationStore
from agent.events import Notice
from agent.session import ChatSession, list_conversations
from agent.stores.open import open_store
from tests.support.replay import ReplayCaller, Step, repeating

ROOT = Path(__file__).resolve().parents[2]


def assert_converse_accepts(messages: list[dict[str, Any]]) -> None:
    """The rules Bedrock enforces on a history: starts with user, roles alternate, every
    toolUse is answered (same ids) in the next user message, no empty message."""
    assert messages and messages[0]["role"] == "user"
    for index, message in enumerate(messages):
        assert message["content"], f"message {index} is empty"
        if index:
            assert message["role"] != messages[index - 1]["role"], f"message {index} repeats"
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if message["role"] == "assistant" and uses:
            assert index + 1 < len(messages), "a toolUse without its results"
            answer = messages[index + 1]["content"]
            results = [b["toolResult"]["toolUseId"] for b in answer if "toolResult" in b]
            assert results == uses, f"message {index + 1} does not answer {uses}"


def session(
    demo_path: Path, caller: ReplayCaller, conversation_id: str | None = None
) -> ChatSession:
    return ChatSession.open(
        Settings(step_limit=50),
        open_store(demo_path),
        conversation_id=conversation_id,
        caller=caller,
    )


def log_path(conversation_id: str) -> Path:
    return paths.conversations_dir() / f"{conversation_id}.jsonl"


def varied_conversation(demo_path: Path) -> ChatSession:
    """Two turns touching every kind of save: text, two tools in one answer, a search that
    discovers tools, an ask ending the turn, and a prompt merged after the ask's result."""
    first = session(
        demo_path,
        ReplayCaller(
            [
                Step("Looking.", [("listTables", {}), ("describeTable", {"table": "orders"})]),
                Step(tool_uses=[("searchTools", {"query": "export to csv"})]),
                Step(tool_uses=[("ask", {"question": "Which table?", "choices": ["a", "b"]})]),
            ]
        ),
    )
    first.run_turn("show me the tables")
    second = session(
        demo_path,
        ReplayCaller([Step(tool_uses=[("getCurrentTime", {})]), Step("It is today.")]),
        first.conversation_id,
    )
    second.run_turn("orders, please")
    return second


def test_a_step_appends_to_the_file_instead_of_rewriting_the_history(demo_path: Path) -> None:
    chat = session(demo_path, repeating(41))
    sizes: list[int] = []
    inodes: set[int] = set()

    def measure(_event: object) -> None:
        path = log_path(chat.conversation_id)
        if path.exists():
            sizes.append(path.stat().st_size)
            inodes.add(path.stat().st_ino)

    chat.run_turn("list the tables, 40 times", on_event=measure)
    assert len(inodes) == 1  # one file, never replaced
    growth = [b - a for a, b in zip(sizes, sizes[1:], strict=False) if b != a]
    assert len(growth) >= 40
    tool_steps = growth[:-1]  # the last save is the final answer
    # the 40th step writes what the 1st did; a step that crosses a second also sets updated_at
    # (seconds resolution, so on a loaded machine some steps do)
    stamp = len(b', "updated_at": "2026-11-30T23:30:00+00:00"')
    assert max(tool_steps) < 1.1 * tool_steps[0] + stamp
    assert sizes[-1] > 30 * max(growth)  # not the history
    loaded = ConversationStore().load(chat.conversation_id)
    assert loaded.messages == chat.conversation.messages
    assert loaded.usage == chat.conversation.usage


def test_a_file_cut_at_any_byte_loads_a_whole_number_of_steps(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    path = log_path(chat.conversation_id)
    data = path.read_bytes()
    first_line = data.index(b"\n") + 1  # written whole (temp file + rename), never cut
    saves = {}
    for end in range(first_line, len(data) + 1):
        path.write_bytes(data[:end])
        loaded = ConversationStore().load(chat.conversation_id)
        assert_converse_accepts(loaded.messages)
        complete = data.rindex(b"\n", 0, end) + 1  # the last save that was written whole
        saves.setdefault(complete, loaded.messages)
        assert loaded.messages == saves[complete], f"cut at byte {end}"
    assert len(saves) == data.count(b"\n")  # every save is its own loadable state
    assert saves[len(data)] == chat.conversation.messages
    assert ConversationStore().load(chat.conversation_id).discovered == list(chat.active.discovered)


def test_a_cut_save_is_dropped_and_the_next_turn_continues_cleanly(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    path = log_path(chat.conversation_id)
    data = path.read_bytes()
    cut = len(data) - 7  # inside the last save
    path.write_bytes(data[:cut])
    before = ConversationStore().load(chat.conversation_id).messages
    assert before != chat.conversation.messages

    more = session(demo_path, ReplayCaller([Step("Hello again.")]), chat.conversation_id)
    more.run_turn("one more")
    loaded = ConversationStore().load(chat.conversation_id)
    assert_converse_accepts(loaded.messages)
    assert loaded.messages == more.conversation.messages
    kept = len(before) - 1  # the cut dropped the last answer: "one more" joins its results
    assert loaded.messages[:kept] == before[:kept]
    assert loaded.messages[kept]["content"][:-1] == before[kept]["content"]
    assert loaded.messages[-1] == {"role": "assistant", "content": [{"text": "Hello again."}]}


def test_a_damaged_line_before_the_end_is_reported_not_skipped(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    path = log_path(chat.conversation_id)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"at": "nonsense"}'
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ConversationNotFound, match="damaged: line 3"):
        ConversationStore().load(chat.conversation_id)
    summaries, broken = ConversationStore().scan()
    assert summaries == [] and [b.path for b in broken] == [path]


def test_a_killed_process_leaves_a_history_converse_accepts(
    demo_path: Path, tmp_path: Path
) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from agent.config import Settings
        from agent.session import ChatSession
        from agent.stores.open import open_store
        from tests.support.replay import repeating

        chat = ChatSession.open(
            Settings(step_limit=100), open_store({str(demo_path)!r}), caller=repeating(100)
        )
        print(chat.conversation_id, flush=True)
        while True:
            chat.run_turn("again")
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        assert child.stdout is not None
        conversation_id = child.stdout.readline().strip()
        path = log_path(conversation_id)
        while not path.exists() or path.read_bytes().count(b"\n") < 60:
            assert child.poll() is None, "the child ended early"
            time.sleep(0.01)  # polling the file, not timing anything
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    loaded = ConversationStore().load(conversation_id)
    assert len(loaded.messages) >= 60
    assert_converse_accepts(loaded.messages)
    after = session(demo_path, ReplayCaller([Step("Still here.")]), conversation_id)
    assert after.run_turn("are you there?").reason == "end_turn"
    reloaded = ConversationStore().load(conversation_id)
    assert_converse_accepts(reloaded.messages)
    assert reloaded.messages == after.conversation.messages


OLD_FILE = {
    "id": "20260101-120000-abcdef",
    "store": "",
    "model": "us.amazon.nova-2-lite-v1:0",
    "created_at": "2026-01-01T12:00:00+00:00",
    "updated_at": "2026-01-01T12:05:00+00:00",
    "title": "what tables are there",
    "messages": [
        {"role": "user", "content": [{"text": "what tables are there"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "listTables", "input": {}}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "content": [{"json": {"tables": ["customers"]}}],
                        "status": "success",
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "customers, orders, products."}]},
    ],
    "discovered": ["exportCsv"],
    "attachments": [],
    "attached": [],
    "granted": ["runQuery"],
    "usage": {
        "inputTokens": 100,
        "outputTokens": 20,
        "cacheReadInputTokens": 0,
        "cacheWriteInputTokens": 0,
    },
}


def test_a_conversation_saved_in_the_old_format_lists_resumes_and_continues(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = paths.conversations_dir()
    folder.mkdir(parents=True)
    conversation_id = OLD_FILE["id"]
    store = open_store(demo_path)
    old = dict(OLD_FILE, store=store.identity)
    (folder / f"{conversation_id}.json").write_text(json.dumps(old, indent=1), encoding="utf-8")

    assert main(["conversations", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(c["id"], c["title"], c["message_count"]) for c in listed] == [
        (conversation_id, "what tables are there", 4)
    ]

    chat = session(demo_path, ReplayCaller([Step("Three tables.")]), conversation_id)
    assert chat.conversation.messages == old["messages"]
    assert "exportCsv" in chat.active.names()
    assert [(g.identity, g.message) for g in chat.gate.grants] == [("runQuery", 4)]
    assert chat.usage.input == 100
    chat.run_turn("and again?")

    assert not (folder / f"{conversation_id}.json").exists()
    loaded = ConversationStore().load(conversation_id)
    assert loaded.messages[:4] == old["messages"] and len(loaded.messages) == 6
    assert loaded.discovered == ["exportCsv"]
    assert loaded.granted == [{"tool": "runQuery", "identity": "runQuery", "message": 4}]
    assert loaded.created_at == old["created_at"] and loaded.title == old["title"]
    assert [(s.id, s.message_count) for s in list_conversations()] == [(conversation_id, 6)]


def test_an_old_file_left_beside_its_log_lists_once_and_loads_the_log(demo_path: Path) -> None:
    chat = session(demo_path, ReplayCaller([Step("Hi.")]))
    chat.run_turn("hello")
    stale = dict(OLD_FILE, id=chat.conversation_id, title="stale")
    folder = paths.conversations_dir()
    (folder / f"{chat.conversation_id}.json").write_text(json.dumps(stale), encoding="utf-8")
    assert [(s.id, s.title) for s in list_conversations()] == [(chat.conversation_id, "hello")]
    assert ConversationStore().load(chat.conversation_id).title == "hello"
    ConversationStore().delete(chat.conversation_id)
    assert list(folder.iterdir()) == []


def test_rewind_and_compaction_rewrite_the_file_to_what_is_kept(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    store = ConversationStore()
    first_text = chat.user_messages()[-1][0]
    chat.rewind(first_text)
    assert store.load(chat.conversation_id).messages == chat.conversation.messages
    assert chat.conversation.compact_tool_results() >= 1
    store.save(chat.conversation)
    loaded = store.load(chat.conversation_id)
    assert loaded.messages == chat.conversation.messages
    assert "was removed" in json.dumps(loaded.messages[2])
    assert log_path(chat.conversation_id).read_bytes().count(b"\n") == 1


def test_two_processes_on_one_conversation_lose_no_turn_and_are_told(demo_path: Path) -> None:
    """The app and `ask --conversation` on one chat: the one saving second goes on as a copy
    under a new id (and says so) instead of writing over the other's turn."""
    chat = session(demo_path, ReplayCaller([Step("One.")]))
    chat.run_turn("first")
    original = chat.conversation_id
    here = session(demo_path, ReplayCaller([Step("Here."), Step("Again.")]), original)
    there = session(demo_path, ReplayCaller([Step("There.")]), original)
    here.run_turn("from here")
    events: list[Any] = []
    there.run_turn("from there", on_event=events.append)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert there.conversation_id != original
    assert notices and original in notices[0] and there.conversation_id in notices[0]
    here.run_turn("here again")
    assert here.conversation_id == original
    store = ConversationStore()
    for chat_ in (here, there):
        loaded = store.load(chat_.conversation_id)
        assert_converse_accepts(loaded.messages)
        assert loaded.messages == chat_.conversation.messages
    texts = json.dumps(store.load(original).messages)
    assert "from here" in texts and "here again" in texts and "from there" not in texts
    assert "from there" in json.dumps(store.load(there.conversation_id).messages)
    assert {s.id for s in list_conversations()} >= {original, there.conversation_id}


def test_a_conversation_object_saved_twice_under_new_ids_keeps_both(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    conversation = Conversation("a", "demo", "m")
    conversation.append_user([{"text": "hi"}])
    store.save(conversation)
    conversation.id = "b"
    conversation.append_assistant({"content": [{"text": "hello"}]})
    store.save(conversation)
    assert len(store.load("a").messages) == 1 and len(store.load("b").messages) == 2


READ_IN_A_CLEAN_PROCESS = """
import json, sys
from agent.conversations import ConversationStore
conversation = ConversationStore().load(sys.argv[1])
print(json.dumps({"pydantic": "pydantic" in sys.modules, "dict": conversation.to_dict()}))
"""


def test_a_saved_conversation_reads_back_without_pydantic_as_its_models_read_it(
    demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = varied_conversation(demo_path)
    done = subprocess.run(
        [sys.executable, "-c", READ_IN_A_CLEAN_PROCESS, chat.conversation_id],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    assert read["pydantic"] is False
    from agent import conversation_read

    monkeypatch.setattr(conversation_read, "_plain_conversation", lambda data: None)
    monkeypatch.setattr(conversation_read, "_plain_record", lambda value: None)
    by_the_models = ConversationStore().load(chat.conversation_id).to_dict()
    assert read["dict"] == json.loads(json.dumps(by_the_models))
    assert read["dict"]["messages"] == json.loads(json.dumps(chat.conversation.messages))


def test_values_the_models_coerce_still_load_as_before(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    path = log_path(chat.conversation_id)
    lines = path.read_bytes().split(b"\n")
    head = json.loads(lines[0])
    head["snapshot"]["usage"] = {"inputTokens": 1.0}  # a float where an int is expected
    head["snapshot"]["messages"][0]["note"] = "extra"  # a key the message model ignores
    lines[0] = json.dumps(head).encode()
    record = json.loads(lines[1])
    record["at"] = [float(n) for n in record["at"]]
    lines[1] = json.dumps(record).encode()
    path.write_bytes(b"\n".join(lines))
    loaded = ConversationStore().load(chat.conversation_id)
    assert loaded.messages == chat.conversation.messages
    assert "note" not in loaded.messages[0]


def edit_snapshot(conversation_id: str, **fields: Any) -> None:
    """Rewrite a log as one snapshot line with `fields` replaced (a hand-edited file)."""
    path = log_path(conversation_id)
    lines = path.read_bytes().split(b"\n")[:-1]
    head = json.loads(lines[0])
    snapshot = head["snapshot"]
    for line in lines[1:]:
        record = json.loads(line)
        if record.get("extend"):
            snapshot["messages"][-1]["content"].extend(record["extend"])
        snapshot["messages"].extend(record.get("messages", []))
        snapshot.update(record.get("set", {}))
    snapshot.update(fields)
    path.write_bytes(json.dumps(head).encode() + b"\n")


def test_a_count_the_models_coerce_is_continued_as_a_number(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    edit_snapshot(chat.conversation_id, usage={"inputTokens": "12", "outputTokens": True})
    loaded = ConversationStore().load(chat.conversation_id)
    assert (loaded.usage.input, loaded.usage.output) == (12, 1)
    more = session(demo_path, ReplayCaller([Step("Still here.")]), chat.conversation_id)
    more.run_turn("and now?")  # adds this turn's usage to the loaded one
    assert more.conversation.usage.input > 12


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"attached": 5}, "attached"),
        ({"attached": [{"message": "x", "block": 0, "names": ["a.csv"]}]}, "attached.0.message"),
        ({"attached": [{"message": 1, "block": 0, "names": 3}]}, "attached.0.names"),
        ({"attachments": [{"name": "a.csv"}]}, "attachments.0.id"),
        (
            {"attachments": [{"id": "1", "name": "a", "path": "/a", "size": 1, "kind": "exe"}]},
            "attachments.0.kind",
        ),
    ],
)
def test_a_hand_edited_file_with_wrong_attachment_records_is_named_damaged(
    demo_path: Path, fields: dict[str, Any], named: str
) -> None:
    """Continuing it (or opening it in the app) would otherwise fail on a TypeError or
    KeyError deep inside; the file is reported as damaged, naming the field."""
    chat = varied_conversation(demo_path)
    edit_snapshot(chat.conversation_id, **fields)
    with pytest.raises(ConversationNotFound, match=f"damaged: field '{named}'"):
        more = session(demo_path, ReplayCaller([Step("Still here.")]), chat.conversation_id)
        more.display_items()


def test_a_file_without_messages_whose_counts_are_coerced_loads_empty(demo_path: Path) -> None:
    chat = varied_conversation(demo_path)
    path = log_path(chat.conversation_id)
    path.write_text(
        json.dumps(
            {"log": 1, "snapshot": {"id": chat.conversation_id, "usage": {"inputTokens": "3"}}}
        )
        + "\n"
    )
    loaded = ConversationStore().load(chat.conversation_id)
    assert loaded.messages == [] and loaded.usage.input == 3


def _edit_block(snapshot: dict[str, Any], where: str, block: dict[str, Any]) -> None:
    role = "user" if where == "user" else "assistant"
    message = next(m for m in snapshot["messages"] if m["role"] == role)
    message["content"].insert(0, block)


def _chip_result(chip: dict[str, Any]) -> dict[str, Any]:
    """A proposeOpenTable result carrying `chip` (the app draws it as a button)."""
    return {"toolResult": {"toolUseId": "t9", "content": [{"json": {"chip": chip}}]}}


@pytest.mark.parametrize(
    ("where", "block", "named"),
    [
        ("user", {"text": 5}, "text"),
        ("assistant", {"text": ["a"]}, "text"),
        ("assistant", {"toolUse": "listTables"}, "toolUse"),
        ("assistant", {"toolUse": {"toolUseId": "t9", "input": {}}}, "toolUse"),
        ("user", {"toolResult": {"toolUseId": 3, "content": []}}, "toolResult"),
        ("user", {"toolResult": {"toolUseId": "t9", "content": ["ok"]}}, "toolResult"),
        ("user", {"toolResult": {"toolUseId": "t9", "content": [{"json": [1]}]}}, "toolResult"),
        ("user", {"toolResult": {"toolUseId": "t9", "content": [{"text": None}]}}, "toolResult"),
        ("user", {"toolResult": {"toolUseId": "t9", "content": [], "status": 1}}, "toolResult"),
        ("user", _chip_result({"label": "Open", "action": "openTable"}), "toolResult"),
        ("user", _chip_result({"label": "Open", "action": {"kind": 1}}), "toolResult"),
        (
            "user",
            _chip_result(
                {"label": "Open", "action": {"kind": "openTable", "table": "orders", "query": 5}}
            ),
            "toolResult",
        ),
    ],
)
def test_a_hand_edited_content_block_the_chat_cannot_show_is_named_damaged(
    demo_path: Path, where: str, block: dict[str, Any], named: str
) -> None:
    """Opening it in the app (its transcript) failed on an AttributeError/TypeError deep
    inside, and continuing it sent Bedrock a request it refuses with advice to retry."""
    chat = varied_conversation(demo_path)
    path = log_path(chat.conversation_id)
    edit_snapshot(chat.conversation_id)
    head = json.loads(path.read_bytes())
    _edit_block(head["snapshot"], where, block)
    path.write_bytes(json.dumps(head).encode() + b"\n")
    with pytest.raises(
        ConversationNotFound, match=rf"damaged: field 'messages\.\d+\.content\.0\.{named}"
    ):
        more = session(demo_path, ReplayCaller([Step("Still here.")]), chat.conversation_id)
        more.display_items()


def test_a_conversation_with_chips_reloads_with_its_chips(demo_path: Path) -> None:
    first = session(
        demo_path,
        ReplayCaller(
            [
                Step(
                    tool_uses=[
                        ("proposeOpenTable", {"table": "orders", "query": "status = 'pending'"}),
                        (
                            "proposeJoinedView",
                            {
                                "left": "orders",
                                "right": "customers",
                                "left_on": "customer_id",
                                "right_on": "id",
                            },
                        ),
                    ]
                ),
                Step("Two chips."),
            ]
        ),
    )
    first.run_turn("chips please")
    again = session(demo_path, ReplayCaller([]), first.conversation_id)
    kinds = [item["chip"]["action"]["kind"] for item in again.display_items() if "chip" in item]
    assert kinds == ["openTable", "openJoinedView"]


def test_a_file_nested_too_deep_is_listed_as_damaged_not_a_crash(demo_path: Path) -> None:
    """json.loads raises RecursionError (not ValueError) past Python's recursion limit: the
    conversation list (`tabletalk conversations`, the app's list) crashed on such a file."""
    chat = varied_conversation(demo_path)
    bad = paths.conversations_dir() / "20260101-000000-abcdef.jsonl"
    bad.write_text('{"log": 1, "snapshot": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    summaries, broken = ConversationStore().scan()
    assert [s.id for s in summaries] == [chat.conversation_id]
    assert [b.path for b in broken] == [bad] and "nested too deeply" in broken[0].reason
    with pytest.raises(ConversationNotFound, match="nested too deeply"):
        ConversationStore().load("20260101-000000-abcdef")


def test_a_conversation_id_is_a_file_name_in_the_conversations_folder(tmp_path: Path) -> None:
    """A file whose id field was edited to a path (or `--conversation ../x`) must not make a
    save write outside the folder."""
    folder = tmp_path / "conversations"
    store = ConversationStore(folder)
    planted = Conversation("20260101-000000-aaaaaa", "demo", "m")
    planted.append_user([{"text": "hi"}])
    store.save(planted)
    text = (folder / "20260101-000000-aaaaaa.jsonl").read_text()
    (folder / "20260101-000000-aaaaaa.jsonl").write_text(
        text.replace("20260101-000000-aaaaaa", "../escaped")
    )
    with pytest.raises(ConversationNotFound) as refused:
        loaded = store.load("20260101-000000-aaaaaa")
        loaded.append_assistant({"content": [{"text": "hello"}]})
        store.save(loaded)
    assert "tabletalk conversations" in (refused.value.fix or "")
    with pytest.raises(ConversationNotFound):
        store.load("../conversations/20260101-000000-aaaaaa")
    assert not (tmp_path / "escaped.jsonl").exists()


FULL_DISK_SAVE = """
import json, resource, sys
from pathlib import Path
from agent.conversations import Conversation, ConversationStore

store = ConversationStore(Path(sys.argv[1]))
conversation = Conversation("full", "demo", "m")
conversation.append_user([{"text": "first"}])
store.save(conversation)
store.flush()
resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))  # the disk is full
conversation.append_assistant({"content": [{"text": "x" * 5000}]})
try:
    store.save(conversation)
    store.flush()
    print(json.dumps(None))
except Exception as exc:
    print(json.dumps([type(exc).__name__, str(exc), getattr(exc, "fix", None)]))
"""


def test_a_save_on_a_full_disk_says_to_free_space_and_keeps_what_was_saved(
    tmp_path: Path,
) -> None:
    """A full disk (RLIMIT_FSIZE in a child) failed the save with "No space left" or "File too
    large" and the fix "Make the folder a writable directory", which it already is."""
    folder = tmp_path / "conversations"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK_SAVE, str(folder)],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kind, _message, fix = json.loads(done.stdout)
    assert kind == "TabletalkError" and "free disk space" in fix.lower(), fix
    store = ConversationStore(folder)
    kept = store.load("full")
    assert [m["content"][0]["text"] for m in kept.messages] == ["first"]
    kept.append_assistant({"content": [{"text": "later"}]})
    store.save(kept)
    assert len(ConversationStore(folder).load("full").messages) == 2
