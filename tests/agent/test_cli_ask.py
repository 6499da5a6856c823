"""`tabletalk ask` and `tabletalk conversations` as a user runs them (scripted endpoint)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli.main import main
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock, ToolUse


@pytest.fixture
def db(demo_path: Path) -> str:
    return str(demo_path)


def test_ask_streams_the_answer_and_reports_why_it_stopped(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse("proposeOpenTable", {"table": "orders", "query": "status = 'pending'"})
            ]
        ),
        Reply(text="Here are the pending orders."),
    )
    assert main(["ask", "show pending orders", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "Here are the pending orders." in out
    assert "[chip] Open orders" in out
    assert "proposeOpenTable" in err
    assert "the model finished its answer" in err


def test_ask_json_transcript(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse(
                    "stageItem",
                    {
                        "table": "orders",
                        "op": "update",
                        "key": {"id": 3},
                        "values": {"quantity": 9},
                    },
                )
            ]
        ),
        Reply(text="Staged."),
    )
    assert main(["--db", db, "ask", "set order 3 quantity to 9", "--json", "--no-stream"]) == 0
    transcript = json.loads(capsys.readouterr().out)
    assert transcript["stopReason"] == "end_turn"
    assert transcript["finalText"] == "Staged."
    first, second = transcript["steps"]
    assert "stageItem" in first["activeTools"]
    call = first["toolCalls"][0]
    assert call["name"] == "stageItem" and call["status"] == "success"
    assert call["input"]["key"] == {"id": 3}
    assert transcript["staged"][0]["values"] == {"quantity": 9}
    assert transcript["usage"]["inputTokens"] > 0
    assert not scripted_bedrock.requests[0].stream


def test_ask_error_exits_nonzero_and_keeps_the_conversation(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        *[Error(403, "AccessDeniedException", "You don't have access to the model")] * 2
    )
    assert main(["ask", "hello", "--db", db]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "access" in err.lower()
    assert "Traceback" not in err
    assert main(["conversations", "--json"]) == 0
    saved = json.loads(capsys.readouterr().out)
    assert saved[0]["title"] == "hello"


def test_ask_continues_a_conversation(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(Reply(text="first"), Reply(text="second"))
    main(["ask", "one", "--db", db, "--json"])
    conversation = json.loads(capsys.readouterr().out)["conversation"]
    main(["ask", "two", "--db", db, "--conversation", conversation])
    messages = scripted_bedrock.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][0]["text"] == "one"


def test_unknown_conversation_is_a_clear_error(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "x", "--db", db, "--conversation", "nope"]) == 2
    err = capsys.readouterr().err
    assert "No conversation 'nope'" in err and "tabletalk conversations" in err


def test_no_credentials_reads_well(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:9")
    assert main(["ask", "hi", "--db", db, "--region", "us-east-1"]) == 1
    err = capsys.readouterr().err
    assert "credentials" in err.lower()
    assert "aws configure" in err or "--profile" in err


def test_console_script_runs_headless_without_textual(
    scripted_bedrock: ScriptedBedrock, db: str
) -> None:
    scripted_bedrock.add(Reply(text="Four tables."))
    code = (
        "import sys\n"
        "from tui.entry import main\n"
        "status = main(sys.argv[1:])\n"
        "assert 'textual' not in sys.modules, 'headless path imported textual'\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "ask", "how many tables?", "--db", db],
        capture_output=True,
        text=True,
        env={**os.environ, **scripted_bedrock.env()},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Four tables." in done.stdout


def test_configured_mcp_server_tools_are_found_and_called(
    scripted_bedrock: ScriptedBedrock, db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = Path(__file__).resolve().parents[1] / "support" / "mcp_echo_server.py"
    config = tmp_path / "config.toml"
    config.write_text(
        f"[mcp_servers.notes]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(server))}, 'notes']\n"
    )
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("searchTools", {"query": "echo text back"})]),
        Reply(tool_uses=[ToolUse("notes__echo", {"text": "hello there"})]),
        Reply(text="It said hello."),
    )
    status = main(["ask", "echo hello", "--db", db, "--config", str(config), "--json"])
    assert status == 0
    transcript = json.loads(capsys.readouterr().out)
    calls = [c for step in transcript["steps"] for c in step["toolCalls"]]
    assert calls[1]["name"] == "notes__echo" and calls[1]["status"] == "success"
    assert "hello there" in json.dumps(calls[1]["result"])
    assert "notes__echo" in transcript["steps"][1]["activeTools"]
