"""External (MCP-client) tools as a person and a saved conversation see them: the headless
permission prompt names the tool's server, and saved discoveries stay bound to the tool that
was discovered, whatever model-facing name it has after the config changed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agent.cli import ask
from agent.config import McpServerSettings, Settings
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
