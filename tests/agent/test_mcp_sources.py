"""External MCP servers as tool sources: a real stdio server (tests/support/mcp_echo_server.py)
whose tools join the catalog, are found by search, run proxied and gated like our own."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tests.support` without pythonpath

import catalog  # noqa: E402
from agent.active_set import ActiveSet  # noqa: E402
from agent.config import McpServerSettings, Settings  # noqa: E402
from agent.conversations import Conversation, new_conversation_id  # noqa: E402
from agent.mcp_client.names import bedrock_tool_name, clean_input_schema  # noqa: E402
from agent.mcp_client.sources import McpSources  # noqa: E402
from agent.search.searcher import ToolSearcher  # noqa: E402
from agent.session import ChatSession  # noqa: E402
from agent.stores.demo import build_demo_db  # noqa: E402
from agent.stores.open import open_store  # noqa: E402
from agent.toolset import Toolset  # noqa: E402
from tests.support import scripted_bedrock as support  # noqa: E402
from tests.support.mcp_echo_server import build_server  # noqa: E402
from tests.support.scripted_bedrock import Reply, ScriptedBedrock, ToolUse  # noqa: E402

scripted_bedrock = support.scripted_bedrock
ECHO_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_echo_server.py")
ENV_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def echo_server(name: str = "echo", **settings: object) -> McpServerSettings:
    return McpServerSettings(command=sys.executable, args=[ECHO_SERVER, name], **settings)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSources]:
    """Two copies of the echo server (one trusted), a missing command and a non-MCP program."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        for var in ENV_VARS:
            patch.setenv(var, str(home / var.lower()))
        warnings: list[str] = []
        started = McpSources.start(
            {
                "echo": echo_server(),
                "ghost": McpServerSettings(command="/nonexistent/tabletalk-mcp-ghost"),
                "chatty": McpServerSettings(command=sys.executable, args=["-c", "print('hi')"]),
                "trusted.box": echo_server("trusted", trusted=True),
            },
            warnings.append,
        )
        assert started.warnings == warnings
        yield started
        started.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    build_demo_db(path, today=date(2026, 11, 1))
    return path


def rows(sources: McpSources) -> dict[str, catalog.ToolRow]:
    return {tool.row.name: tool.row for tool in sources.external_tools()}


def test_server_tools_join_the_catalog_as_discoverable_rows(sources: McpSources) -> None:
    by_name = rows(sources)
    assert {"echo__echo", "echo__shout_loud", "echo__write_note", "trusted_box__echo"} <= set(
        by_name
    )
    echo = by_name["echo__echo"]
    assert echo.description == "Echo the given text back unchanged."  # the first sentence
    assert echo.visibility is catalog.Visibility.DISCOVERABLE
    assert echo.mcp is catalog.McpLevel.NONE

    toolset = Toolset.build(external=sources.external_tools())
    assert "echo__shout_loud" in toolset.discoverable_names()
    assert "echo__shout_loud" in toolset.description("searchTools")
    assert not set(by_name) & set(catalog.mcp_names("full", toolset.rows))  # not re-exported
    spec = toolset.spec("echo__shout_loud")["toolSpec"]
    assert spec["inputSchema"]["json"]["properties"]["text"]["type"] == "string"


def test_gated_unless_trusted_and_a_read_only_hint_makes_a_read(sources: McpSources) -> None:
    toolset = Toolset.build(external=sources.external_tools())
    # readOnlyHint is the server's own claim: manual mode still asks, auto mode runs it.
    assert toolset.is_gated("echo__echo")
    assert toolset.row("echo__echo").access is catalog.Access.READ
    assert not toolset.is_gated("trusted_box__echo")
    assert toolset.is_gated("echo__write_note")
    assert toolset.row("echo__write_note").access is catalog.Access.EXPORT  # auto mode asks
    assert not toolset.is_gated("trusted_box__write_note")  # trusted server


def test_servers_that_cannot_start_warn_and_the_others_keep_working(
    sources: McpSources,
) -> None:
    ghost, chatty = sources.warnings
    assert "ghost" in ghost and "command not found: /nonexistent/tabletalk-mcp-ghost" in ghost
    assert "[mcp_servers.ghost]" in ghost
    assert "chatty" in chatty and "not an MCP server" in chatty and "mcp-chatty.log" in chatty
    assert not any(name.startswith(("ghost__", "chatty__")) for name in rows(sources))
    states = {entry["name"]: (entry["state"], entry["tools"]) for entry in sources.status()}
    assert states["ghost"] == ("stopped", 0) and states["echo"] == ("running", 5)
    assert sources.call("echo", "echo", {"text": "still here"}) == (
        "success",
        {"result": "still here"},
    )


def test_search_finds_server_tools_and_the_toolset_proxies_calls(sources: McpSources) -> None:
    toolset = Toolset.build(external=sources.external_tools())
    active = ActiveSet(toolset.inline_names())
    found = ToolSearcher(toolset, active).search("shout a phrase in capital letters")
    assert found["tools"][0]["name"] in {"echo__shout_loud", "trusted_box__shout_loud"}
    assert found["tools"][0]["name"] in found["joined"]

    assert toolset.run(None, "echo__shout_loud", {"text": "hello"}) == (
        "success",
        {"result": "HELLO"},
    )
    status, result = toolset.run(None, "echo__write_note", {"note": "buy milk"})
    assert status == "success" and result["saved"] == "buy milk"
    status, result = toolset.run(None, "echo__fail", {"reason": "the disk is full"})
    assert status == "error"
    assert "the disk is full" in result["error"] and result["fix"]


@pytest.mark.parametrize(("mode", "read_only_runs"), [("auto", True), ("manual", False)])
def test_gating_applies_in_a_turn(
    sources: McpSources,
    scripted_bedrock: ScriptedBedrock,
    db_path: Path,
    mode: str,
    read_only_runs: bool,
) -> None:
    """Without a terminal to ask: the writing tool is denied in either mode; the read-only-hinted
    one runs in auto mode and is denied in manual mode (the hint is the server's own claim)."""
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "save a note in the notebook"})]),
        Reply(
            tool_uses=[
                ToolUse("echo__write_note", {"note": "x"}),
                ToolUse("echo__echo", {"text": "ping"}),
            ]
        ),
        Reply(text="Done."),
    )
    toolset = Toolset.build(external=sources.external_tools())
    store = open_store(db_path)
    conversation = Conversation(new_conversation_id(), store.identity, "us.amazon.nova-2-lite-v1:0")
    session = ChatSession(Settings(mode=mode), store, conversation, toolset=toolset)
    session.active.add("echo__echo")
    ended = session.run_turn("save a note")

    assert ended.reason == "end_turn"
    last = scripted_bedrock.requests[-1].body["messages"][-1]["content"]
    results = [block["toolResult"] for block in last if "toolResult" in block]
    assert results[0]["status"] == "error"
    assert "Permission denied" in results[0]["content"][0]["json"]["error"]
    if read_only_runs:
        assert results[1]["status"] == "success"
        assert results[1]["content"][0]["json"] == {"result": "ping"}
    else:
        assert results[1]["status"] == "error"
        assert "Permission denied" in results[1]["content"][0]["json"]["error"]


def test_a_server_that_dies_mid_session_gives_a_clear_error_result() -> None:
    with McpSources.start({"echo": echo_server()}) as solo:
        toolset = Toolset.build(external=solo.external_tools())
        assert toolset.run(None, "echo__echo", {"text": "alive"})[0] == "success"
        status, result = toolset.run(None, "echo__crash", {})
        assert status == "error" and "server echo is not running" in result["error"]
        status, result = toolset.run(None, "echo__echo", {"text": "anyone?"})
        assert status == "error"
        assert result["error"].startswith("server echo is not running: ")
        assert result["fix"]
        (entry,) = solo.status()
        assert entry["state"] == "stopped" and "exited" in entry["reason"]


def test_a_server_that_never_answers_times_out_with_a_warning() -> None:
    silent = McpServerSettings(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"])
    with McpSources.start({"mute": silent}, timeout=1) as started:
        (warning,) = started.warnings
        assert "mute" in warning and "did not start within 1 s" in warning
        assert started.external_tools() == []


def test_a_streamable_http_server_is_a_tool_source_too() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # bound first: no race with the client
    port = listener.getsockname()[1]
    app = build_server("web").streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    thread = threading.Thread(target=web.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        url = McpServerSettings(url=f"http://127.0.0.1:{port}/mcp")
        with McpSources.start({"web": url}) as started:
            assert started.warnings == []
            toolset = Toolset.build(external=started.external_tools())
            assert toolset.run(None, "web__shout_loud", {"text": "over http"}) == (
                "success",
                {"result": "OVER HTTP"},
            )
    finally:
        web.should_exit = True
        thread.join(10)


def test_names_are_valid_for_bedrock_and_unique() -> None:
    assert bedrock_tool_name("my server", "files.read") == "my_server__files_read"
    long_name = bedrock_tool_name("s" * 40, "t" * 40)
    assert len(long_name) == 64 and long_name == bedrock_tool_name("s" * 40, "t" * 40)
    clash = bedrock_tool_name("a.b", "c", taken={"a_b__c"})
    assert clash != "a_b__c" and clash.startswith("a_b__c_") and len(clash) <= 64
    assert all(ch.isalnum() or ch in "_-" for ch in long_name + clash)
    assert clean_input_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert clean_input_schema({"$schema": "x", "type": "object"}) == {
        "type": "object",
        "properties": {},
    }


SECRET = "sk-live-0123456789"


def test_a_secret_in_a_server_url_or_args_is_never_shown_nor_sent_to_the_model() -> None:
    """Hosted MCP servers often carry their key in the URL (path, query or user info): a
    warning, a dead server's error result (which the model reads and the conversation keeps)
    and the status show the server's origin only; a command's arguments are not shown."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    app = build_server("web").streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    thread = threading.Thread(target=web.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens there
    servers = {
        "web": McpServerSettings(url=f"http://user:{SECRET}@127.0.0.1:{port}/mcp?key={SECRET}"),
        "gone": McpServerSettings(url=f"http://127.0.0.1:{closed_port}/{SECRET}/mcp"),
        "tool": McpServerSettings(command="/nonexistent/mcp-tool", args=["--api-key", SECRET]),
    }
    seen: list[str] = []
    try:
        with McpSources.start(servers, timeout=20) as started:
            seen += started.warnings
            assert len(started.warnings) == 2 and f"127.0.0.1:{closed_port}" in seen[0] + seen[1]
            toolset = Toolset.build(external=started.external_tools())
            assert toolset.run(None, "web__shout_loud", {"text": "hi"})[0] == "success"
            web.should_exit = True
            thread.join(10)
            for _ in range(2):
                status, result = toolset.run(None, "web__shout_loud", {"text": "anyone?"})
                assert status == "error"
                seen.append(str(result))
            seen.append(str(started.status()))
    finally:
        web.should_exit = True
        thread.join(10)
    assert not [text for text in seen if SECRET in text], seen


def test_a_server_with_both_a_command_and_a_url_is_not_guessed_at() -> None:
    """Either could be the one meant; starting one of them quietly would leave the person
    debugging the other."""
    both = echo_server(url="http://127.0.0.1:9/mcp")
    with McpSources.start({"twice": both}, timeout=5) as started:
        (warning,) = started.warnings
        assert "both `command` and `url`; keep the one to use" in warning
        assert "[mcp_servers.twice]" in warning
        assert started.external_tools() == []


def test_a_tool_whose_schema_would_bloat_every_request_is_left_out_with_a_warning() -> None:
    with McpSources.start({"bloated": echo_server("bloated")}, timeout=30) as started:
        (warning,) = started.warnings
        assert "tool 'pick' is left out" in warning and "at most 32,000" in warning
        names = {tool.server_tool for tool in started.external_tools()}
        assert "pick" not in names and "echo" in names, names
