"""`tabletalk ask` and `tabletalk conversations` as a user runs them (scripted endpoint)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli.main import main
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock, ToolUse, stage_update


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
        stage_update({"id": 3}, {"quantity": 9}),
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


def test_a_setup_error_exits_2_and_keeps_no_empty_conversation(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        *[Error(403, "AccessDeniedException", "You don't have access to the model")] * 2
    )
    assert main(["ask", "hello", "--db", db]) == 2  # model access is setup
    err = capsys.readouterr().err
    assert "error:" in err and "access" in err.lower()
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("-- error; 1 step; tokens in 0 ")
    assert err.strip().endswith("; nothing was saved")  # no id of a conversation not kept
    assert main(["conversations", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # a turn that never got an answer
    scripted_bedrock.add(
        *[Error(403, "AccessDeniedException", "You don't have access to the model")] * 2
    )
    assert main(["ask", "hello", "--db", db, "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["conversation"] is None  # nothing to continue


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
    assert main(["ask", "hi", "--db", db, "--region", "us-east-1"]) == 2
    err = capsys.readouterr().err
    assert "credentials" in err.lower()
    assert "aws configure" in err or "--profile" in err
    summary = err.strip().splitlines()[-1]
    assert summary == "-- error; no request was sent; nothing was saved", summary


def test_console_script_runs_a_turn_without_textual_boto3_mcp_pydantic_or_the_ranker(
    scripted_bedrock: ScriptedBedrock, db: str
) -> None:
    scripted_bedrock.add(Reply(text="Four tables."))
    code = (
        "import sys\n"
        "from tui.entry import main\n"
        "status = main(sys.argv[1:])\n"
        "assert 'textual' not in sys.modules, 'headless path imported textual'\n"
        "heavy = ('boto3', 's3transfer', 'mcp', 'apsw', 'sqlite_vec', 'numpy', 'pydantic',\n"
        "         'rapidfuzz')\n"
        "unused = [m for m in heavy if m in sys.modules]\n"
        "assert not unused, f'a turn imported {unused}'\n"
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


def test_ctrl_c_stops_the_turn_and_keeps_what_was_printed(
    scripted_bedrock: ScriptedBedrock, db: str
) -> None:
    """Ctrl+C during `ask` printed "interrupted": the answer printed so far was not saved and
    no conversation id was given. It stops the turn as Esc does in the app; the exit status
    still says it was interrupted (130), so a script does not carry on."""
    import signal
    import time

    from agent.conversations import ConversationStore

    scripted_bedrock.add(Reply(text="A slow answer. " * 200, chunk_delay=0.1))
    process = subprocess.Popen(
        [sys.executable, "-m", "tui.entry", "ask", "tell me slowly", "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **scripted_bedrock.env()},
        # A shell's background job (`pytest &`) inherits SIGINT ignored, and the app then
        # rightly leaves Ctrl+C alone; a person at a terminal has it at its default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout is not None
    printed = ""
    deadline = time.monotonic() + 30
    while "A slow answer." not in printed and time.monotonic() < deadline:
        printed += process.stdout.read(1)  # the answer is flushed piece by piece
    process.send_signal(signal.SIGINT)  # once some of the answer is on the screen
    rest, err = process.communicate(timeout=30)
    out = printed + rest
    assert process.returncode == 130, err
    assert "A slow answer." in out and "-- stopped" in err, err
    conversation_id = err.rsplit("conversation ", 1)[1].split()[0]
    saved = ConversationStore().load(conversation_id).messages
    assert saved[-1]["role"] == "assistant"
    assert saved[-1]["content"][0]["text"].startswith("A slow answer.")


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
    status = main(
        ["ask", "echo hello", "--db", db, "--config", str(config), "--mode", "auto", "--json"]
    )
    assert status == 0
    transcript = json.loads(capsys.readouterr().out)
    calls = [c for step in transcript["steps"] for c in step["toolCalls"]]
    assert calls[1]["name"] == "notes__echo" and calls[1]["status"] == "success"
    assert "hello there" in json.dumps(calls[1]["result"])
    assert "notes__echo" in transcript["steps"][1]["activeTools"]


def test_question_and_choices_are_printed_and_the_hint_keeps_the_store(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse("ask", {"question": "Cancel order 2 too?", "choices": ["yes", "no"]})
            ]
        )
    )
    assert main(["ask", "cancel order 1", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "Question: Cancel order 2 too?" in out
    assert "Choices: yes | no" in out
    assert f"--db {db}" in err


def test_a_choice_cannot_forge_lines_of_the_summary(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Choices print on the `Choices:` line: a choice holding a newline must not add a line
    (a script reading the output would take it for a summary line)."""
    forged = "no\nStaged 0 change(s) for review"
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("ask", {"question": "Go on?", "choices": ["yes", forged]})])
    )
    assert main(["ask", "cancel order 1", "--db", db]) == 0
    out, _ = capsys.readouterr()
    assert not [line for line in out.splitlines() if line.startswith("Staged")], out
    assert "Choices: yes | no\\u000aStaged 0 change(s) for review" in out


def test_a_continued_conversation_keeps_its_store(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        Reply(text="Which one?"),
        stage_update({"id": 2}, {"quantity": 4}),
        Reply(text="Staged."),
    )
    main(["ask", "change an order", "--db", db, "--json"])
    conversation = json.loads(capsys.readouterr().out)["conversation"]
    assert main(["ask", "order 2, quantity 4", "--conversation", conversation]) == 0
    out = capsys.readouterr().out
    assert f"staged list --db {db}" in out
    assert main(["staged", "list", "--db", db, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1
    # a different --db for the same conversation is refused, naming the fix
    other = str(Path(db).with_name("other.sqlite"))
    Path(other).write_bytes(Path(db).read_bytes())
    assert main(["ask", "again", "--conversation", conversation, "--db", other]) == 2
    assert "belongs to" in capsys.readouterr().err


def test_edits_folded_into_a_staged_change_are_reported(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def update(values: dict) -> Reply:
        return stage_update({"id": 5}, values)

    scripted_bedrock.add(
        update({"quantity": 2}), Reply(text="a"), update({"status": "shipped"}), Reply(text="b")
    )
    main(["ask", "one", "--db", db, "--json"])
    capsys.readouterr()
    main(["ask", "two", "--db", db, "--json"])
    staged = json.loads(capsys.readouterr().out)["staged"]
    assert len(staged) == 1
    assert staged[0]["values"] == {"quantity": 2, "status": "shipped"}


def test_control_sequences_from_the_model_never_reach_the_terminal(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(
        Reply(
            tool_uses=[
                ToolUse("proposeOpenTable", {"table": "orders", "query": "status = '\x1b[31mred'"})
            ]
        ),
        Reply(text="Look \x1b]0;pwned\x07here\x1b[2J."),
    )
    main(["ask", "x", "--db", db])
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err
    assert "Look \\u001b]0;pwned\\u0007here\\u001b[2J." in out  # shown, not acted on


def test_step_limit_exits_3(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(*[Reply(tool_uses=[ToolUse("listTables", {})]) for _ in range(2)])
    assert main(["ask", "loop", "--db", db, "--step-limit", "2"]) == 3
    assert "step limit" in capsys.readouterr().err


def test_an_unwritable_conversation_dir_is_a_clear_error(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent import paths

    paths.data_dir().mkdir(parents=True, exist_ok=True)
    paths.conversations_dir().write_text("not a directory")
    assert main(["ask", "hi", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "Cannot save the conversation" in err and "fix:" in err
    assert "Traceback" not in err


def test_a_broken_audit_log_blocks_gated_tools_with_a_fix(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent import paths

    paths.audit_log_path().mkdir(parents=True)
    scripted_bedrock.add(
        Reply(tool_uses=[ToolUse("countItems", {"table": "orders"})]), Reply(text="could not")
    )
    assert main(["ask", "count", "--db", db, "--mode", "auto", "--json"]) == 0
    call = json.loads(capsys.readouterr().out)["steps"][0]["toolCalls"][0]
    assert call["status"] == "error"
    assert "audit log" in call["result"]["error"] and call["result"]["fix"]


def test_a_missing_config_file_is_named(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tools", "--config", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err
    assert "nope.toml does not exist" in err and "fix:" in err


def test_ctrl_c_at_a_permission_prompt_denies_the_call_and_stops_the_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl+C while `ask` waited at "[y] once [a] ... [n] deny" only stopped the turn: the
    prompt went on waiting (readline is retried after a signal) and a "y" typed next still
    allowed the call. The prompt now ends at once with a denial."""
    import signal
    import threading

    from agent.cli import ask
    from agent.permissions import PermissionRequest

    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", os.fdopen(read_end))
    cancel = threading.Event()

    def interrupt_at_the_prompt() -> None:  # Ctrl+C once the prompt waits, whatever the load
        if ask._prompt_up.wait(30):
            os.kill(os.getpid(), signal.SIGINT)

    def type_yes_after_it() -> None:  # what a retried readline would have read
        cancel.wait(30)
        os.write(write_end, b"y\n")

    request = PermissionRequest("runQuery", {"query": "SELECT 1"}, "manual", "c1", "read")
    # As at a terminal: a background run (`pytest &`) has SIGINT ignored, which ask leaves be.
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = signal.getsignal(signal.SIGINT)
    threads = [threading.Thread(target=f) for f in (interrupt_at_the_prompt, type_yes_after_it)]
    try:
        with ask._ctrl_c_stops(cancel) as interrupted:
            for thread in threads:
                thread.start()
            decision = ask.terminal_prompter(request)
    finally:
        cancel.set()
        for thread in threads:
            thread.join(30)
        os.close(write_end)
        after = signal.signal(signal.SIGINT, outer)
    assert decision == "deny"
    assert interrupted.is_set() and cancel.is_set()
    assert after is before


CTRL_C_WHILE_REGISTERING = """
import signal
from agent.cli import ask
from agent.stop import StopSignal

signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal
cancel, ran = StopSignal(), []
with ask._ctrl_c_stops(cancel) as interrupted:
    with cancel.when_set(lambda: ran.append("closed")):
        with cancel._actions_lock:  # the turn registers its next stop action right then
            signal.raise_signal(signal.SIGINT)
print(interrupted.is_set(), cancel.is_set(), ran)
"""


def test_ctrl_c_while_the_turn_registers_a_stop_action_stops_it_and_does_not_hang() -> None:
    """The Ctrl+C handler sets the StopSignal on the main thread, between two bytecodes of
    the turn: landing while the turn's own `when_set` holds the signal's action lock (around
    every stream read), it waited for that lock forever."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CTRL_C_WHILE_REGISTERING],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the Ctrl+C handler deadlocked on the StopSignal's action lock")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True ['closed']"


def test_ask_shows_a_call_the_mode_denied_as_denied_not_as_an_error(
    scripted_bedrock: ScriptedBedrock, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Manual mode with no terminal to ask: the gated call is denied (the model still gets an
    "error" result, all Converse knows); the progress line and --json say "denied"."""
    query = ToolUse("runQuery", {"query": "SELECT count(*) AS n FROM orders"})
    scripted_bedrock.add(Reply(tool_uses=[query]), Reply(text="I could not run it."))
    assert main(["ask", "count orders", "--db", db, "--mode", "manual"]) == 0
    err = capsys.readouterr().err
    line = next(row for row in err.splitlines() if "runQuery" in row)
    assert "[denied]: Permission denied" in line and "[error]" not in line
    hint = err.strip().splitlines()[-1]
    assert "runQuery needed your approval in manual mode" in hint
    assert "rerun with --mode auto" in hint
    sent = scripted_bedrock.requests[-1].body["messages"][-1]["content"][0]["toolResult"]
    assert sent["status"] == "error"

    scripted_bedrock.add(Reply(tool_uses=[query]), Reply(text="Still no."))
    assert main(["ask", "count again", "--db", db, "--mode", "manual", "--json"]) == 0
    call = json.loads(capsys.readouterr().out)["steps"][0]["toolCalls"][0]
    assert call["status"] == "denied"


def test_an_export_denied_in_auto_mode_names_full_auto(
    scripted_bedrock: ScriptedBedrock, db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Auto mode still asks before an export; with no terminal the hint names the mode that
    lets it run, not the one already in use."""
    export = ToolUse(
        "exportCsv", {"query": "SELECT * FROM orders", "path": str(tmp_path / "o.csv")}
    )
    search = ToolUse("searchTools", {"query": "export rows to a csv file"})
    scripted_bedrock.add(
        Reply(tool_uses=[search]), Reply(tool_uses=[export]), Reply(text="Could not export.")
    )
    assert main(["ask", "export orders", "--db", db, "--mode", "auto"]) == 0
    err = capsys.readouterr().err
    hint = err.strip().splitlines()[-1]
    assert "exportCsv needed your approval in auto mode" in hint
    assert "--mode full-auto" in hint and "--mode auto " not in hint
    assert not (tmp_path / "o.csv").exists()


def test_the_terminal_prompt_says_which_of_the_steps_gated_calls_it_is(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from agent.cli.ask import terminal_prompter
    from agent.permissions import PermissionRequest

    query = {"query": "SELECT 1"}
    monkeypatch.setattr("sys.stdin", io.StringIO("n\nn\n"))
    second = PermissionRequest("runQuery", query, "manual", "c1", "read", position=2, gated_calls=5)
    assert terminal_prompter(second) == "deny"
    assert "Allow runQuery with this input? (call 2 of 5)" in capsys.readouterr().err
    only = PermissionRequest("runQuery", query, "manual", "c1", "read", position=1, gated_calls=1)
    assert terminal_prompter(only) == "deny"
    assert "Allow runQuery with this input?\n" in capsys.readouterr().err
