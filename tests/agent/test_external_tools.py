"""External (MCP-client) tools as a person and a saved conversation see them: the headless
permission prompt names the tool's server, and saved discoveries stay bound to the tool that
was discovered, whatever model-facing name it has after the config changed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent import paths
from agent.cli import ask
from agent.config import McpServerSettings, Settings
from agent.conversation_files import write_whole
from agent.conversations import ConversationStore
from agent.mcp_client.sources import McpSources
from agent.session import ChatSession
from agent.stores.open import open_store
from agent.toolset import Toolset
from tests.support.replay import ReplayCaller, Step

ECHO_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_echo_server.py")


def echo_server(name: str = "echo") -> McpServerSettings:
    return McpServerSettings(command=sys.executable, args=[ECHO_SERVER, name])


def external_name(toolset: Toolset, server: str, tool: str) -> str:
    """The model-facing name the toolset gives `tool` of `server`."""
    return next(
        name
        for name, external in toolset.external.items()
        if json.loads(external.identity)[1:3] == [server, tool]
    )


def test_the_ask_prompt_names_an_external_tools_server_on_one_line(
    demo_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tabletalk ask` in manual mode asked "Allow notes_y_once__shout_loud with this
    input?": nothing said which configured server the call goes to. The server's name (from
    the config) and the tool's own name (from the server) are untrusted: quoted, and a newline
    in them cannot start a line of its own."""
    hostile = 'notes"\n[y] once'
    read_end, write_end = os.pipe()
    os.write(write_end, b"n\n")
    os.close(write_end)
    monkeypatch.setattr(sys, "stdin", os.fdopen(read_end))
    with McpSources.start({hostile: echo_server()}) as sources:
        toolset = Toolset.build(external=sources.external_tools())
        name = external_name(toolset, hostile, "shout.loud")
        session = ChatSession.open(
            Settings(mode="manual"),
            open_store(demo_path),
            prompter=ask.terminal_prompter,
            caller=ReplayCaller([Step(tool_uses=[(name, {"text": "hi"})]), Step("Denied.")]),
            toolset=toolset,
        )
        session.active.add(name)
        session.run_turn("shout hi")
    err = capsys.readouterr().err
    asked = next(line for line in err.splitlines() if line.startswith("Allow "))
    assert asked == (
        f'Allow {name} (from the MCP server "notes\\"\\n[y] once", where it is named '
        '"shout.loud") with this input?'
    ), err
    assert not any(line.startswith("[y] once") for line in err.splitlines()), err


def chat(
    demo_path: Path,
    steps: list[Step],
    toolset: Toolset,
    conversation_id: str | None = None,
) -> tuple[ChatSession, ReplayCaller]:
    caller = ReplayCaller(steps)
    session = ChatSession.open(
        Settings(mode="full-auto"),
        open_store(demo_path),
        conversation_id=conversation_id,
        caller=caller,
        toolset=toolset,
    )
    return session, caller


def discover_and_call(demo_path: Path, servers: dict[str, McpServerSettings], tool: str) -> str:
    """A conversation in which the model found `tool` of the first server and called it; its
    id."""
    server = next(iter(servers))
    with McpSources.start(servers) as sources:
        toolset = Toolset.build(external=sources.external_tools())
        name = external_name(toolset, server, tool)
        session, _ = chat(
            demo_path, [Step(tool_uses=[(name, {"note": "a"})]), Step("Ok.")], toolset
        )
        session.active.add(name)  # what searchTools does for the tool it finds
        session.run_turn("save a note")
        assert session.active.discovered == (name,)
        return session.conversation_id


def test_a_saved_discovery_follows_its_tool_and_never_becomes_another_servers(
    demo_path: Path,
) -> None:
    """`notes.box` and `notes_box` both want the name `notes_box__write_note`; whichever comes
    first in the config gets it. The discovered tool was saved by that name, so once
    `notes.box` was added before `notes_box` a resumed chat offered the model the other
    server's tool under the name it had discovered, and not the tool it had found."""
    conversation = discover_and_call(demo_path, {"notes_box": echo_server("one")}, "write_note")
    added = {"notes.box": echo_server("two"), "notes_box": echo_server("one")}
    with McpSources.start(added) as sources:
        toolset = Toolset.build(external=sources.external_tools())
        own = external_name(toolset, "notes_box", "write_note")
        other = external_name(toolset, "notes.box", "write_note")
        assert other == "notes_box__write_note" and own != other
        resumed, caller = chat(
            demo_path,
            [Step(tool_uses=[(other, {"note": "b"})]), Step("Could not.")],
            toolset,
            conversation,
        )
        resumed.run_turn("save another note")
    assert own in caller.offered[0], "the discovered tool is offered under its new name"
    assert other not in caller.offered[0], "another server's tool is not"
    answer = resumed.conversation.messages[-2]["content"][0]["toolResult"]
    assert answer["status"] == "error" and "unavailable tool" in answer["content"][0]["text"]


def test_a_saved_discovery_of_a_reconfigured_server_is_dropped(demo_path: Path) -> None:
    """The same server name with other arguments is another server: what was discovered on
    the first is not offered from the second; the model can search again."""
    conversation = discover_and_call(demo_path, {"notes": echo_server("one")}, "write_note")
    saved = ConversationStore().load(conversation).discovered
    assert len(saved) == 1 and "notes" in saved[0] and "write_note" in saved[0]
    assert ECHO_SERVER not in saved[0], "the server's settings are kept as a digest"
    with McpSources.start({"notes": echo_server("elsewhere")}) as sources:
        toolset = Toolset.build(external=sources.external_tools())
        resumed, caller = chat(demo_path, [Step("Hello.")], toolset, conversation)
        resumed.run_turn("hello")
    assert resumed.active.discovered == ()
    assert "notes__write_note" not in caller.offered[0]
    assert ConversationStore().load(conversation).discovered == []


def test_an_older_files_plain_names_keep_built_in_tools_and_drop_external_ones(
    demo_path: Path,
) -> None:
    """Files from before identities kept model-facing names: a built-in one still names that
    tool; an external one named whatever tool had that name then, so it names none now."""
    store = open_store(demo_path)
    conversation = "20260101-120000-abcdef"
    old = {
        "id": conversation,
        "store": store.identity,
        "model": "us.amazon.nova-2-lite-v1:0",
        "title": "notes",
        "messages": [
            {"role": "user", "content": [{"text": "hello"}]},
            {"role": "assistant", "content": [{"text": "Hi."}]},
        ],
        "discovered": ["exportCsv", "notes__write_note"],
    }
    path = paths.conversations_dir() / f"{conversation}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, old)
    with McpSources.start({"notes": echo_server("one")}) as sources:
        toolset = Toolset.build(external=sources.external_tools())
        assert toolset.row("notes__write_note") is not None
        resumed, caller = chat(
            demo_path,
            [Step(tool_uses=[("listTables", {})]), Step("Tables.")],
            toolset,
            conversation,
        )
        resumed.run_turn("tables?")
    assert resumed.active.discovered == ("exportCsv",)
    assert "exportCsv" in caller.offered[0] and "notes__write_note" not in caller.offered[0]
    assert ConversationStore().load(conversation).discovered == ["exportCsv"]
