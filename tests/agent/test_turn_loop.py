"""The turn loop end to end: real boto3 against the scripted endpoint, a real demo database."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from datetime import date
from pathlib import Path

import pytest

from agent.config import Settings
from agent.errors import StoreError
from agent.events import (
    AskUser,
    ChipProposed,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallWriting,
)
from agent.session import ChatSession
from agent.stop import StopSignal, reads_stop_when
from agent.stores.demo import build_demo_db
from agent.stores.open import open_store
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock, ToolUse, stage_update

BUDGET_JSON = {
    "error": "search-budget-exhausted",
    "message": "search budget exhausted, call ask() to clarify with the user or use a "
    "previously-discovered tool",
    "budgetCap": 3,
}


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    build_demo_db(path, today=date(2026, 11, 1))
    return path


@pytest.fixture(params=[True, False], ids=["stream", "converse"])
def streaming(request: pytest.FixtureRequest) -> bool:
    return request.param


def session_for(db_path: Path, *, streaming: bool = True, **settings: object) -> ChatSession:
    config = Settings(streaming=streaming, **settings)  # type: ignore[arg-type]
    return ChatSession.open(config, open_store(db_path))


def tool_names(request_body: dict) -> list[str]:
    return [t["toolSpec"]["name"] for t in request_body["toolConfig"]["tools"] if "toolSpec" in t]


def tool_results(request_body: dict) -> list[dict]:
    """The toolResult blocks of the last user message of a request."""
    last = request_body["messages"][-1]
    assert last["role"] == "user"
    return [block["toolResult"] for block in last["content"] if "toolResult" in block]


def test_plain_answer_streams_and_ends_the_turn(
    scripted_bedrock: ScriptedBedrock, db_path: Path, streaming: bool
) -> None:
    scripted_bedrock.add(Reply(text="There are four statuses in orders."))
    session = session_for(db_path, streaming=streaming)
    events: list = []
    ended = session.run_turn("what statuses exist?", on_event=events.append)
    assert ended.reason == "end_turn"
    assert ended.text == "There are four statuses in orders."
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(deltas) == ended.text
    if streaming:
        assert len(deltas) > 1, "streamed text should arrive in pieces"
    request = scripted_bedrock.requests[0]
    assert request.stream is streaming
    assert tool_names(request.body) == list(session.active.inline)
    assert ended.usage.input > 0


def test_discovered_tool_joins_the_next_request(
    scripted_bedrock: ScriptedBedrock, db_path: Path, streaming: bool
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "export query results to csv"})]),
        Reply(text="Found it."),
    )
    session = session_for(db_path, streaming=streaming)
    session.run_turn("export pending orders to a csv file")
    first, second = (r.body for r in scripted_bedrock.requests)
    assert "exportCsv" not in tool_names(first)
    assert "exportCsv" in tool_names(second)
    # inline first, then discovered, in discovery order
    assert tool_names(second)[: len(session.active.inline)] == list(session.active.inline)
    result = tool_results(second)[0]["content"][0]["json"]
    assert result["mode"] == "keyword"
    assert "exportCsv" in result["joined"]
    assert session.conversation.discovered[0] == "exportCsv"


def test_discovered_tools_stay_for_the_conversation(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "index statistics"})]),
        Reply(text="ok"),
        Reply(text="next turn"),
    )
    session = session_for(db_path)
    session.run_turn("index stats?")
    resumed = ChatSession.open(
        Settings(), open_store(db_path), conversation_id=session.conversation_id
    )
    resumed.run_turn("and again")
    assert "getIndexStats" in tool_names(scripted_bedrock.requests[-1].body)


def test_unavailable_tool_gets_the_exact_text_and_the_turn_goes_on(
    scripted_bedrock: ScriptedBedrock, db_path: Path, streaming: bool
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("exportCsv", {"query": "SELECT 1", "path": "x.csv"})]),
        Reply(text="Sorry."),
    )
    session = session_for(db_path, streaming=streaming)
    ended = session.run_turn("export")
    assert ended.reason == "end_turn"
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "error"
    expected = (
        "Model tried to call unavailable tool 'exportCsv'. Available tools: "
        + ", ".join(session.active.names())
        + "."
    )
    assert result["content"] == [{"text": expected}]


def test_fourth_search_returns_the_exact_budget_json_without_running(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    searches = [ToolUse("searchTools", {"query": q}) for q in ("csv", "json", "index", "vector")]
    scripted_bedrock.add(Reply(tool_uses=searches), Reply(text="done"))
    session = session_for(db_path)
    session.run_turn("find tools")
    results = tool_results(scripted_bedrock.requests[1].body)
    assert [r["status"] for r in results] == ["success", "success", "success", "error"]
    assert results[3]["content"] == [{"json": BUDGET_JSON}]
    assert "vectorSearch" not in session.active


def test_budget_resets_each_turn(scripted_bedrock: ScriptedBedrock, db_path: Path) -> None:
    three = [ToolUse("searchTools", {"query": q}) for q in ("csv", "json", "index")]
    scripted_bedrock.add(
        Reply(tool_uses=three),
        Reply(text="a"),
        Reply(tool_uses=[ToolUse("searchTools", {"query": "vector"})]),
        Reply(text="b"),
    )
    session = session_for(db_path)
    session.run_turn("one")
    session.run_turn("two")
    result = tool_results(scripted_bedrock.requests[3].body)[0]
    assert result["status"] == "success"


def test_invalid_input_names_the_field_and_a_valid_call(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[ToolUse("stageItem", {"table": "orders", "op": "upsert", "key": {"id": 1}})]
        ),
        Reply(text="fixed"),
    )
    session = session_for(db_path)
    session.run_turn("change order 1")
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "error"
    body = result["content"][0]["json"]
    assert "op" in body["error"]
    assert "stageItem" in body["fix"] and "{" in body["fix"]


def test_malformed_tool_json_is_an_error_result_not_a_crash(
    scripted_bedrock: ScriptedBedrock, db_path: Path, streaming: bool
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("listTables", raw_tool_input='{"oops": ')]),
        Reply(text="retrying"),
    )
    ended = session_for(db_path, streaming=streaming).run_turn("tables?")
    assert ended.reason == "end_turn"
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "error"
    assert "not valid JSON" in result["content"][0]["json"]["error"]


@pytest.mark.parametrize("depth", [100, 940, 5000])
def test_tool_json_nested_too_deep_is_an_error_result_and_the_chat_resumes(
    scripted_bedrock: ScriptedBedrock, db_path: Path, depth: int, streaming: bool
) -> None:
    """A hostile model nests a tool input past Python's recursion limit, or just under it (940
    levels parsed, then failed every later request in botocore's validation): the turn answers
    with an error result, and the saved conversation still loads and continues."""
    nested = "[" * depth + "]" * depth
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("getItem", raw_tool_input=f'{{"table": "x", "key": {nested}}}')]),
        Reply(text="retrying"),
    )
    session = session_for(db_path, streaming=streaming)
    ended = session.run_turn("item?")
    assert ended.reason == "end_turn"
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "error" and result["content"][0]["json"]["fix"]
    scripted_bedrock.add(Reply(text="again"))
    resumed = ChatSession.open(
        Settings(), open_store(db_path), conversation_id=session.conversation.id
    )
    assert resumed.run_turn("and now?").reason == "end_turn"


def test_step_limit_ends_the_turn_and_says_so(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    for _ in range(3):
        scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {})]))
    session = session_for(db_path, step_limit=3)
    ended = session.run_turn("loop forever")
    assert ended.reason == "step_limit"
    assert "3" in (ended.detail or "")
    assert len(scripted_bedrock.requests) == 3
    # the saved history is valid: the last toolUse was answered
    last = session.conversation.messages[-1]
    assert last["role"] == "user" and "toolResult" in last["content"][0]


def test_manual_mode_without_terminal_denies_gated_calls_and_audits(
    scripted_bedrock: ScriptedBedrock, db_path: Path, tmp_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": "SELECT count(*) AS n FROM orders"})]),
        Reply(text="I could not run it."),
    )
    session = session_for(db_path, mode="manual")
    session.run_turn("count orders")
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "error"
    body = result["content"][0]["json"]
    assert "Permission denied" in body["error"]
    assert "--mode auto" in body["fix"]
    from agent import paths

    entries = [json.loads(line) for line in paths.audit_log_path().read_text().splitlines()]
    assert entries[-1]["tool"] == "runQuery"
    assert entries[-1]["decision"] == "deny"
    assert entries[-1]["decided_by"] == "no-terminal"
    assert entries[-1]["conversation"] == session.conversation_id
    assert entries[-1]["input_digest"].startswith("sha256:")


def test_prompter_decisions_allow_once_and_for_the_conversation(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    answers = iter(["allow_once", "allow_conversation"])
    asked: list[str] = []

    def prompter(request):  # noqa: ANN001, ANN202
        asked.append(request.tool)
        return next(answers)

    query = {"query": "SELECT count(*) AS n FROM orders"}
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", query)]),
        Reply(tool_uses=[ToolUse("runQuery", query)]),
        Reply(tool_uses=[ToolUse("runQuery", query)]),
        Reply(text="done"),
    )
    session = ChatSession.open(Settings(mode="manual"), open_store(db_path), prompter=prompter)
    session.run_turn("count thrice")
    assert asked == ["runQuery", "runQuery"]  # the third call uses the conversation grant
    statuses = [tool_results(r.body)[0]["status"] for r in scripted_bedrock.requests[1:]]
    assert statuses == ["success", "success", "success"]


def test_a_gated_call_with_invalid_input_fails_before_anyone_is_asked(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    """Allowing a call that then fails on its own input is a question for nothing."""
    asked: list[str] = []

    def prompter(request):  # noqa: ANN001, ANN202
        asked.append(request.tool)
        return "allow_once"

    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"sql": "SELECT count(*) FROM orders"})]),
        Reply(text="fixed"),
    )
    session = ChatSession.open(Settings(mode="manual"), open_store(db_path), prompter=prompter)
    session.run_turn("count the orders")
    assert asked == []
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "error"
    body = result["content"][0]["json"]
    assert "query" in body["error"] and "runQuery" in body["fix"]


def test_auto_mode_runs_reads_but_asks_for_exports(
    scripted_bedrock: ScriptedBedrock, db_path: Path, tmp_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "export csv"})]),
        Reply(
            tool_uses=[
                ToolUse("countItems", {"table": "orders"}),
                ToolUse(
                    "exportCsv", {"query": "SELECT id FROM orders", "path": str(tmp_path / "o.csv")}
                ),
            ]
        ),
        Reply(text="ok"),
    )
    session = session_for(db_path, mode="auto")
    session.run_turn("count and export")
    count, export = tool_results(scripted_bedrock.requests[2].body)
    assert count["status"] == "success"
    assert export["status"] == "error"
    assert not (tmp_path / "o.csv").exists()


def test_bulk_edit_stages_35_rows_in_one_call_and_writes_nothing(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    query = "SELECT id FROM orders WHERE status = 'pending' ORDER BY id LIMIT 35"
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse(
                    "bulkEdit", {"table": "orders", "query": query, "set": {"status": "shipped"}}
                )
            ]
        ),
        Reply(text="Staged 35 orders."),
    )
    with sqlite3.connect(db_path) as conn:
        ids = [r[0] for r in conn.execute(query)]
    assert len(ids) == 35
    session = session_for(db_path)
    session.run_turn("ship the 35 oldest pending orders")
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "success"
    staged = session.staging.list("orders")
    assert len(staged) == 35
    assert sorted(c.key["id"] for c in staged) == sorted(ids)
    assert all(
        c.values == {"status": "shipped"} and c.pre_image["status"] == "pending" for c in staged
    )
    with sqlite3.connect(db_path) as conn:
        still = conn.execute(
            f"SELECT count(*) FROM orders WHERE status = 'pending' AND id IN ({','.join(map(str, ids))})"
        ).fetchone()[0]
    assert still == 35, "nothing is written before a person commits"


def test_propose_tool_emits_a_chip_and_opens_nothing(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse("proposeOpenTable", {"table": "orders", "query": "status = 'pending'"})
            ]
        ),
        Reply(text="Click the chip."),
    )
    session = session_for(db_path)
    events: list = []
    session.run_turn("show pending orders", on_event=events.append)
    chips = [e.chip for e in events if isinstance(e, ChipProposed)]
    assert len(chips) == 1
    assert chips[0].action["kind"] == "openTable" and chips[0].action["table"] == "orders"
    assert session.ui.opened == []  # type: ignore[attr-defined]
    assert any(item.get("chip") for item in session.display_items())


def test_ask_ends_the_turn_with_the_question(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse("ask", {"question": "Which table?", "choices": ["orders", "customers"]})
            ]
        ),
    )
    events: list = []
    ended = session_for(db_path).run_turn("show me the data", on_event=events.append)
    assert ended.reason == "ask"
    asks = [e for e in events if isinstance(e, AskUser)]
    assert asks and asks[0].choices == ("orders", "customers")
    assert len(scripted_bedrock.requests) == 1


def test_attachment_is_listed_to_the_model_and_readable(
    scripted_bedrock: ScriptedBedrock, db_path: Path, tmp_path: Path
) -> None:
    csv_file = tmp_path / "prices.csv"
    csv_file.write_text("sku,price\nA-1,9.5\nB-2,12\n")
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("readAttachment", {"attachment": "prices.csv"})]),
        Reply(text="Two prices."),
    )
    session = session_for(db_path)
    session.run_turn("what is in the file?", attachments=[csv_file])
    first = scripted_bedrock.requests[0].body
    user_text = " ".join(b.get("text", "") for b in first["messages"][-1]["content"])
    assert "prices.csv" in user_text
    result = tool_results(scripted_bedrock.requests[1].body)[0]
    assert result["status"] == "success"
    assert "A-1" in json.dumps(result["content"][0]["json"])


def test_usage_sums_per_turn_and_per_conversation(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    from agent.events import Usage

    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("listTables", {})], usage=Usage(100, 10, 50, 5)),
        Reply(text="a", usage=Usage(120, 20, 60, 0)),
        Reply(text="b", usage=Usage(130, 5, 0, 0)),
    )
    session = session_for(db_path)
    first = session.run_turn("one")
    assert first.usage == Usage(220, 30, 110, 5)
    session.run_turn("two")
    assert session.usage == Usage(350, 35, 110, 5)
    reopened = ChatSession.open(
        Settings(), open_store(db_path), conversation_id=session.conversation_id
    )
    assert reopened.usage == Usage(350, 35, 110, 5)


@pytest.mark.parametrize(
    ("model", "system_cache", "tools_cache", "message_cache"),
    [
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", True, True, False),
        ("us.amazon.nova-2-lite-v1:0", True, False, True),
    ],
)
def test_cache_points_per_model_family(
    scripted_bedrock: ScriptedBedrock,
    db_path: Path,
    model: str,
    system_cache: bool,
    tools_cache: bool,
    message_cache: bool,
) -> None:
    scripted_bedrock.add(Reply(text="hi"))
    session_for(db_path, model=model).run_turn("hello")
    body = scripted_bedrock.requests[0].body
    assert any("cachePoint" in b for b in body["system"]) is system_cache
    assert any("cachePoint" in t for t in body["toolConfig"]["tools"]) is tools_cache
    assert any("cachePoint" in b for b in body["messages"][-1]["content"]) is message_cache
    if tools_cache:
        tools = body["toolConfig"]["tools"]
        position = next(i for i, t in enumerate(tools) if "cachePoint" in t)
        assert position == len([t for t in tools if "toolSpec" in t])  # after the inline tools


def test_bedrock_error_ends_the_turn_saves_the_conversation_and_keeps_staged(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    scripted_bedrock.add(
        stage_update({"id": 1}, {"status": "cancelled"}),
        *[Error(429, "ThrottlingException", "Too many requests") for _ in range(10)],
    )
    session = session_for(db_path)
    ended = session.run_turn("cancel order 1")
    assert ended.reason == "error"
    assert "throttl" in (ended.error or "").lower()
    assert len(session.staging.list()) == 1
    saved = ChatSession.open(
        Settings(), open_store(db_path), conversation_id=session.conversation_id
    )
    assert [m["role"] for m in saved.conversation.messages] == ["user", "assistant", "user"]


def test_steps_report_active_tools(scripted_bedrock: ScriptedBedrock, db_path: Path) -> None:
    scripted_bedrock.add(Reply(text="hi"))
    events: list = []
    session = session_for(db_path)
    session.run_turn("hello", on_event=events.append)
    steps = [e for e in events if isinstance(e, StepStarted)]
    assert steps[0].active_tools == session.active.names()
    assert any(isinstance(e, ToolCallFinished) for e in events) is False


def test_rewind_reaches_a_prompt_sent_after_a_step_limit(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    scripted_bedrock.add(Reply(tool_uses=[ToolUse("listTables", {})]), Reply(text="answer two"))
    session = session_for(db_path, step_limit=1)
    session.run_turn("first")
    session.run_turn("second")
    prompts = session.user_messages()
    assert [text for _, text in prompts] == ["first", "second"]
    text = session.rewind(prompts[1][0])
    assert text == "second"
    messages = session.conversation.messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert all("toolResult" in block for block in messages[-1]["content"])


def test_display_items_show_attachment_names_and_a_review_chip_after_staging(
    scripted_bedrock: ScriptedBedrock, db_path: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes; v2.txt"
    notes.write_text("ship order 1")
    scripted_bedrock.add(
        stage_update({"id": 1}, {"quantity": 4}),
        Reply(text="Staged."),
        Reply(text="Hello."),
    )
    session = session_for(db_path)
    session.run_turn("do what the file says", attachments=[notes])
    session.run_turn("thanks")
    items = ChatSession.open(
        Settings(), open_store(db_path), conversation_id=session.conversation_id
    ).display_items()
    users = [item for item in items if item.get("role") == "user"]
    assert users[0] == {
        "role": "user",
        "text": "do what the file says",
        "attachments": ["notes; v2.txt"],
    }
    assert users[1] == {"role": "user", "text": "thanks"}
    chips = [index for index, item in enumerate(items) if item.get("chip")]
    assert len(chips) == 1
    assert items[chips[0]]["chip"]["action"] == {"kind": "openStagingPanel"}
    assert chips[0] < items.index(users[1])


def test_a_turn_that_failed_before_any_answer_is_not_kept(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    from agent.session import list_conversations

    scripted_bedrock.add(Error(400, "ValidationException", "The model id is invalid."))
    session = session_for(db_path)
    assert session.run_turn("hi").reason == "error"
    assert list_conversations() == []
    assert session.conversation.messages == [] and session.conversation.title == ""
    scripted_bedrock.add(
        Reply(text="Hello."), Error(400, "ValidationException", "The model id is invalid.")
    )
    session.run_turn("hello")
    assert session.run_turn("and again").reason == "error"
    saved = ChatSession.open(
        Settings(), open_store(db_path), conversation_id=session.conversation_id
    )
    assert [m["role"] for m in saved.conversation.messages] == ["user", "assistant"]
    assert [s.message_count for s in list_conversations()] == [2]


RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_stop_while_the_turn_start_waits_for_the_store_ends_the_turn_at_once(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    """A turn starts (its system prompt lists the tables) while another part of the app holds
    the store's read connection with a long read: Stop ends the turn at once, before any
    model request, keeps the message as any stopped turn does, and leaves the other read."""
    scripted_bedrock.add(Reply(text="never sent"))
    session = session_for(db_path, mode="auto")
    reader = session.store._reader  # type: ignore[attr-defined]
    other_stop, other_failed = threading.Event(), []

    def other_read() -> None:
        with reads_stop_when(other_stop.is_set):
            try:
                session.store.query(RUNAWAY)
            except StoreError as exc:
                other_failed.append(exc.message)

    other = threading.Thread(target=other_read)
    cancel, ended = StopSignal(), []
    turn = threading.Thread(
        target=lambda: ended.append(session.run_turn("how many orders?", cancel=cancel))
    )
    try:
        other.start()
        while not reader._lock.locked():
            time.sleep(0.01)
        turn.start()
        time.sleep(0.2)  # the turn waits for the connection to list the tables
        assert turn.is_alive()
        cancel.set()
        turn.join(5)
        assert not turn.is_alive() and ended[0].reason == "stopped"
        assert scripted_bedrock.requests == []
        assert session.user_messages()[-1][1] == "how many orders?"
        assert other.is_alive() and not other_failed
    finally:
        other_stop.set()
        other.join(10)
        turn.join(10)


def test_stop_while_a_tool_waits_for_the_store_stops_that_tool_and_not_the_other_read(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    """Stop lands before the tool's query has started (another part of the app holds the
    store's read connection with a long read): the tool's query never runs, the turn ends at
    once, and the other read is left alone."""
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": "SELECT count(*) AS n FROM orders"})]),
        Reply(text="There are many orders."),
    )
    session = session_for(db_path, mode="auto")
    reader = session.store._reader  # type: ignore[attr-defined]
    other_stop, other_failed = threading.Event(), []

    def other_read() -> None:
        with reads_stop_when(other_stop.is_set):
            try:
                session.store.query(RUNAWAY)
            except StoreError as exc:
                other_failed.append(exc.message)

    other = threading.Thread(target=other_read)
    cancel, started, finished, ended = StopSignal(), threading.Event(), [], []

    def on_event(event: object) -> None:
        if isinstance(event, ToolCallStarted):  # on the turn's thread, before the tool runs
            other.start()
            while not reader._lock.locked():  # the other read holds the connection
                time.sleep(0.01)
            started.set()
        if isinstance(event, ToolCallFinished):
            finished.append(event)

    def run_turn() -> None:
        ended.append(session.run_turn("how many orders?", on_event=on_event, cancel=cancel))

    turn = threading.Thread(target=run_turn)
    try:
        turn.start()
        assert started.wait(10)
        time.sleep(0.2)  # the tool waits for the connection
        cancel.set()
        turn.join(10)
        assert not turn.is_alive() and ended[0].reason == "stopped"
        (call,) = finished
        assert call.status == "error" and "the query was stopped" in json.dumps(call.result)
        assert other.is_alive() and not other_failed  # the chat's Stop is not the other read's
        assert len(scripted_bedrock.requests) == 1
    finally:
        other_stop.set()
        if other.is_alive():
            other.join(10)
        turn.join(10)
    assert other_failed == ["the query was stopped"]


def test_stop_while_the_model_writes_a_big_tool_call_counts_what_it_wrote(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    """Stop while a bulkEdit of 1,000 keys streams in: nothing runs, and the input written so
    far (billed, though Converse never reports that step's usage) is in the estimate."""
    keys = [{"id": i} for i in range(1, 1001)]
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("bulkEdit", {"table": "orders", "keys": keys})], chunk_delay=0.2)
    )
    session = session_for(db_path, mode="auto")
    cancel, seen = StopSignal(), []

    def on_event(event: object) -> None:
        seen.append(event)
        if isinstance(event, ToolCallWriting) and event.characters:
            cancel.set()  # on the turn's thread: the stream stops at its next event

    ended = session.run_turn("ship them all", on_event=on_event, cancel=cancel)
    assert ended.reason == "stopped"
    assert not any(isinstance(e, ToolCallStarted) for e in seen) and session.staging.count() == 0
    written = max(e.characters for e in seen if isinstance(e, ToolCallWriting))
    assert ended.usage.estimated_output >= written // 4 > 0


def test_each_permission_request_knows_its_place_among_the_steps_gated_calls(
    scripted_bedrock: ScriptedBedrock, db_path: Path
) -> None:
    """Three gated calls and a silent one in one step: the prompter is told call 1, 2 and 3
    of 3; the denied ones are recorded (the model got "error") and a rewind drops them."""
    from agent.permissions import PermissionRequest, call_position

    asked: list[PermissionRequest] = []

    def prompter(request: PermissionRequest) -> str:
        asked.append(request)
        return "allow_once" if len(asked) == 1 else "deny"

    uses = [
        ToolUse("runQuery", {"query": "SELECT 1 AS one"}),
        ToolUse("listTables", {}),
        ToolUse("countItems", {"table": "orders"}),
        ToolUse("runQuery", {"query": "SELECT 2 AS two"}),
    ]
    scripted_bedrock.add(Reply(tool_uses=uses), Reply(text="Partly."))
    session = ChatSession.open(
        Settings(mode="manual"),
        open_store(db_path),
        prompter=prompter,  # type: ignore[arg-type]
    )
    events: list = []
    session.run_turn("several", on_event=events.append)
    assert [call_position(r) for r in asked] == ["call 1 of 3", "call 2 of 3", "call 3 of 3"]
    finished = [e.status for e in events if isinstance(e, ToolCallFinished)]
    assert finished == ["success", "success", "denied", "denied"]
    sent = [r["status"] for r in tool_results(scripted_bedrock.requests[-1].body)]
    assert sent == ["success", "success", "error", "error"]
    assert [item.get("status") for item in session.display_items() if "tool" in item] == finished
    session.rewind(session.user_messages()[-1][0])
    assert session.conversation.denied == []
