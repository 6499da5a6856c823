"""A tool result cannot flood the conversation, and a conversation the model rejects as too
long is made to fit (old tool results become short notes) and sent once more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.cli.main import main
from agent.config import Settings
from agent.conversations import Conversation, ConversationStore
from agent.session import ChatSession
from agent.stores.open import open_store
from agent.tool_results import RESULT_CAP, capped_result
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse

WIDE_QUERY = (
    "SELECT id, printf('%0490d', id) AS a, printf('%0490d', id) AS b, printf('%0490d', id) AS c "
    "FROM orders"
)


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block["toolResult"]
        for message in body["messages"]
        for block in message["content"]
        if "toolResult" in block
    ]


def test_a_huge_query_result_is_cut_to_the_cap_with_how_to_page(
    scripted_bedrock: ScriptedBedrock, demo_path: Path
) -> None:
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("runQuery", {"query": WIDE_QUERY, "limit": 500})]),
        Reply(text="Done."),
    )
    session = ChatSession.open(Settings(mode="auto"), open_store(str(demo_path)))
    ended = session.run_turn("show every order, wide")
    assert ended.reason == "end_turn"
    (result,) = _tool_results(scripted_bedrock.requests[1].body)
    sent = result["content"][0]["json"]
    assert len(json.dumps(sent, ensure_ascii=False)) <= RESULT_CAP
    assert 0 < len(sent["rows"]) < 500
    assert f"only the first {len(sent['rows'])} of 500 rows" in sent["truncated"]
    assert "offset/limit" in sent["truncated"]
    assert sent["columns"] == ["id", "a", "b", "c"]


def test_a_result_without_a_list_is_replaced_by_a_preview() -> None:
    capped = capped_result({"text": "x" * (RESULT_CAP * 2)})
    assert len(json.dumps(capped)) <= RESULT_CAP
    assert "limit for a tool result" in capped["truncated"] and capped["preview"]
    assert capped_result({"rows": [1, 2]}) == {"rows": [1, 2]}


def _saved_with_a_10mb_result(demo_path: Path) -> str:
    """A conversation as one was saved before the cap: a 10 MB runQuery result in it."""
    store = open_store(str(demo_path))
    conversation = Conversation("c-big", store.identity, "us.amazon.nova-2-lite-v1:0")
    big = {"columns": ["a"], "rows": [{"a": "x" * 1000}] * 10_000, "rowCount": 10_000}
    use = {"toolUseId": "t1", "name": "runQuery", "input": {"query": "SELECT a FROM t"}}
    conversation.messages = [
        {"role": "user", "content": [{"text": "show it all"}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": big}]}}],
        },
        {"role": "assistant", "content": [{"text": "Here it is."}]},
    ]
    ConversationStore().save(conversation)
    return conversation.id


def test_ask_on_a_conversation_too_long_for_the_model_drops_old_results_and_says_so(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation_id = _saved_with_a_10mb_result(demo_path)
    scripted_bedrock.max_request_bytes = 1_000_000
    scripted_bedrock.add(Reply(text="Still here."), Reply(text="And again."))

    assert main(["ask", "how many rows was that?", "--conversation", conversation_id]) == 0
    out, err = capsys.readouterr()
    assert "Still here." in out
    assert "too long for the model" in err and "1 earlier tool result" in err
    rejected, accepted = scripted_bedrock.requests
    assert len(json.dumps(rejected.body)) > 10_000_000
    (result,) = _tool_results(accepted.body)
    assert result["toolUseId"] == "t1" and "was removed" in result["content"][0]["text"]

    # The compacted history was saved: the next question goes through at once.
    assert main(["ask", "thanks", "--conversation", conversation_id]) == 0
    assert "And again." in capsys.readouterr().out
    assert len(scripted_bedrock.requests) == 3


def test_a_conversation_still_too_long_after_compaction_ends_with_the_fix(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation_id = _saved_with_a_10mb_result(demo_path)
    scripted_bedrock.max_request_bytes = 100
    assert main(["ask", "and?", "--conversation", conversation_id]) == 1
    err = capsys.readouterr().err
    assert "too long" in err and "Start a new conversation" in err
    assert len(scripted_bedrock.requests) == 2, "compacted once, then gave up"
