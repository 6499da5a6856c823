"""'Allow for this conversation' grants: they go with the messages they were given in (rewind),
are bound to what was granted (an external tool's server, own name and config, not its
model-facing name), and older conversation files still load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent import paths
from agent.config import McpServerSettings, Settings
from agent.conversation_files import write_whole
from agent.conversations import ConversationStore
from agent.mcp_client.sources import McpSources
from agent.permissions import Decision, PermissionRequest
from agent.session import ChatSession
from agent.stores.open import open_store
from agent.toolset import Toolset
from tests.support.replay import ReplayCaller, Step

ECHO_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_echo_server.py")
MODEL = "us.amazon.nova-2-lite-v1:0"
COUNT = ("countItems", {"table": "orders"})
QUERY = ("runQuery", {"query": "SELECT 1 AS one"})


class Person:
    """A prompter that says 'allow for this conversation' and records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request.tool)
        return "allow_conversation"


def chat(
    demo_path: Path,
    steps: list[Step],
    person: Person,
    conversation_id: str | None = None,
    toolset: Toolset | None = None,
) -> ChatSession:
    return ChatSession.open(
        Settings(mode="manual"),
        open_store(demo_path),
        conversation_id=conversation_id,
        prompter=person,
        caller=ReplayCaller(steps),
        toolset=toolset,
    )


def test_a_rewind_drops_the_grants_given_after_its_point_and_keeps_older_ones(
    demo_path: Path,
) -> None:
    person = Person()
    session = chat(
        demo_path,
        [
            Step(tool_uses=[QUERY]),
            Step("One."),
            Step(tool_uses=[COUNT]),
            Step("Many."),
            Step("Three."),
            Step(tool_uses=[QUERY, COUNT]),
            Step("Again."),
        ],  # fmt: skip
        person,
    )
    session.run_turn("first")
    session.run_turn("second")
    session.run_turn("third")
    assert person.asked == ["runQuery", "countItems"]
    second = session.user_messages()[1][0]

    assert session.rewind(second) == "second"
    session.run_turn("second, again")
    assert person.asked == ["runQuery", "countItems", "countItems"], (
        "the grant given in the removed turn is asked for again; the older one still holds"
    )

    # What the file keeps after the rewind: the same, when the conversation is resumed.
    resumed = chat(demo_path, [Step("Fine.")], Person(), session.conversation_id)
    grants = [(g.identity, g.message) for g in resumed.gate.grants]
    assert grants == [("runQuery", 1), ("countItems", second + 1)]
    resumed.rewind(second)
    again = chat(demo_path, [], Person(), session.conversation_id)
    assert [g.identity for g in again.gate.grants] == ["runQuery"]


def test_a_grant_from_an_older_file_holds_until_a_rewind_and_an_external_one_is_asked_again(
    demo_path: Path,
) -> None:
    """Older files kept plain names: a built-in name still covers that tool (until any rewind,
    as when it was given is unknown); an external name covered whatever tool had that name then,
    so it covers nothing now."""
    store = open_store(demo_path)
    conversation_id = "20260101-120000-abcdef"
    old = {
        "id": conversation_id,
        "store": store.identity,
        "model": MODEL,
        "title": "count",
        "messages": [
            {"role": "user", "content": [{"text": "hello"}]},
            {"role": "assistant", "content": [{"text": "Hi."}]},
        ],
        "granted": ["runQuery", "countItems", "notes__write_note"],
    }
    path = paths.conversations_dir() / f"{conversation_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, old)
    person = Person()
    session = chat(
        demo_path,
        [Step(tool_uses=[QUERY]), Step("One."), Step(tool_uses=[QUERY]), Step("Again.")],
        person,
        conversation_id,
    )
    assert [g.message for g in session.gate.grants] == [2, 2, 2]
    session.run_turn("query")
    assert person.asked == []
    session.rewind(session.user_messages()[-1][0])
    session.run_turn("query again")
    assert person.asked == ["runQuery"]
    saved = ConversationStore().load(conversation_id).granted
    assert saved == [{"tool": "runQuery", "identity": "runQuery", "message": 3}]


def echo_server(name: str) -> McpServerSettings:
    return McpServerSettings(command=sys.executable, args=[ECHO_SERVER, name])


def test_an_external_grant_never_covers_another_servers_tool_after_the_config_changes(
    demo_path: Path,
) -> None:
    """`notes.box` and `notes_box` both want the name `notes_box__write_note`; whichever comes
    first in the config gets it. A grant given when only `notes_box` was configured must not
    cover `notes.box`'s tool once that server is added before it; the granted tool, under its
    new name, is still granted."""
    name = "notes_box__write_note"
    person = Person()
    with McpSources.start({"notes_box": echo_server("one")}) as first:
        toolset = Toolset.build(external=first.external_tools())
        session = chat(
            demo_path,
            [Step(tool_uses=[(name, {"note": "a"})]), Step("Saved.")],
            person,
            toolset=toolset,
        )
        session.active.add(name)
        session.run_turn("save a note")
    assert person.asked == [name]

    added = {"notes.box": echo_server("two"), "notes_box": echo_server("one")}
    with McpSources.start(added) as second:
        toolset = Toolset.build(external=second.external_tools())
        renamed = next(
            tool.row.name
            for tool in second.external_tools()
            if tool.row.name.startswith("notes_box__write_note_")
        )
        asked_again = Person()
        resumed = chat(
            demo_path,
            [
                Step(tool_uses=[(name, {"note": "b"})]),
                Step("Saved there."),
                Step(tool_uses=[(renamed, {"note": "c"})]),
                Step("Saved here."),
            ],  # fmt: skip
            asked_again,
            session.conversation_id,
            toolset,
        )
        resumed.active.add(name)  # found again: the saved discovery was the other tool
        resumed.active.add(renamed)
        resumed.run_turn("save another note")
        assert asked_again.asked == [name], "the other server's tool is asked for"
        resumed.run_turn("and one more in the first notebook")
        assert asked_again.asked == [name], "the tool that was granted is, under its new name"


def test_an_external_grant_does_not_cover_a_server_reconfigured_under_the_same_name(
    demo_path: Path,
) -> None:
    name = "notes__write_note"
    person = Person()
    with McpSources.start({"notes": echo_server("one")}) as first:
        toolset = Toolset.build(external=first.external_tools())
        session = chat(
            demo_path,
            [Step(tool_uses=[(name, {"note": "a"})]), Step("Saved.")],
            person,
            toolset=toolset,
        )
        session.active.add(name)
        session.run_turn("save a note")
    saved = json.loads(json.dumps(ConversationStore().load(session.conversation_id).granted))
    assert [g["tool"] for g in saved] == [name] and "notes" in saved[0]["identity"]
    assert ECHO_SERVER not in saved[0]["identity"], "the server's settings are kept as a digest"

    with McpSources.start({"notes": echo_server("elsewhere")}) as second:
        toolset = Toolset.build(external=second.external_tools())
        asked_again = Person()
        resumed = chat(
            demo_path,
            [Step(tool_uses=[(name, {"note": "b"})]), Step("Saved.")],
            asked_again,
            session.conversation_id,
            toolset,
        )
        resumed.active.add(name)  # found again: the saved discovery was another server's
        resumed.run_turn("save another note")
        assert asked_again.asked == [name]
