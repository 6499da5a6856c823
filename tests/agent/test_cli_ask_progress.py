"""`tabletalk ask`'s status line while the model writes tool calls or Bedrock throttles, as a
user sees it: on a terminal (stderr a pseudo-terminal) and piped, with the scripted endpoint."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agent.cli.status_line import StatusLine
from tests.support.scripted_bedrock import Error, Reply, ScriptedBedrock, ToolUse

CALLS = 12


def _many_reads() -> list[Reply]:
    """A step of CALLS getItem calls, then the answer."""
    reads = [ToolUse("getItem", {"table": "orders", "key": {"id": i}}) for i in range(1, 13)]
    return [Reply(tool_uses=reads, chunk_delay=0.02), Reply(text="Read them all.")]


def _ask(bedrock: ScriptedBedrock, db: Path, *flags: str, tty: bool) -> tuple[int, str, str]:
    """Run `tabletalk ask` with stdout piped and stderr a pseudo-terminal (`tty`) or a pipe:
    exit status, stdout, and stderr as it reached the terminal (raw, `\\r` and all)."""
    command = [sys.executable, "-m", "tui.entry", "ask", "read 12 orders", "--db", str(db)]
    env = {**os.environ, **bedrock.env(), "COLUMNS": "80"}
    if not tty:
        done = subprocess.run(
            [*command, "--mode", "auto", *flags],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        return done.returncode, done.stdout, done.stderr
    import pty

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    try:
        process = subprocess.Popen(
            [*command, "--mode", "auto", *flags],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
        )
        os.close(slave)
        out, _ = process.communicate(timeout=60)
        reader.join(10)
    finally:
        os.close(master)
    return process.returncode, out.decode(), b"".join(chunks).decode()


def _screen(raw: str) -> list[str]:
    """The rows a terminal shows after `raw`: `\\r` goes back to the row's start, later
    characters overwrite earlier ones (what a person sees, not what was written)."""
    rows: list[str] = []
    row: list[str] = []
    column = 0
    for char in raw.replace("\r\n", "\n"):
        if char == "\n":
            rows.append("".join(row).rstrip())
            row, column = [], 0
        elif char == "\r":
            column = 0
        else:
            if column < len(row):
                row[column] = char
            else:
                row.append(char)
            column += 1
    if row:
        rows.append("".join(row).rstrip())
    return rows


def test_ask_on_a_terminal_says_which_call_the_model_writes_and_clears_it(
    db_path: Path,
) -> None:
    """While the model wrote twelve getItem calls, `ask` printed nothing until they were
    done. Now a status line on stderr names the call being written, rewritten in place, and
    is blanked before the tool lines: the screen keeps no trace of it, stdout is unchanged."""
    with ScriptedBedrock(*_many_reads()) as bedrock:
        code, out, err = _ask(bedrock, db_path, tty=True)
    assert code == 0, err
    assert out == "Read them all.\n"  # the answer alone, as without a terminal
    assert "the model is writing getItem…" in err
    assert f"the model is writing getItem (call {CALLS})…" in err
    assert "\x1b" not in err  # spaces and \r, no escape sequences
    screen = _screen(err)
    assert not any("the model is writing" in row for row in screen), screen
    tools = [row for row in screen if row.startswith("  · getItem")]
    assert len(tools) == CALLS and all(row.endswith("[ok]") for row in tools), screen
    assert screen[-1].startswith("-- the model finished its answer; 2 steps;"), screen
    last_status = err.rindex("the model is writing")
    first_tool = err.index("  · getItem")
    cleared = err[last_status:first_tool]
    assert cleared.rstrip(" ").endswith("\r") and " " * 20 in cleared  # blanked, then output


def test_piped_ask_prints_no_status_and_the_same_output(db_path: Path) -> None:
    """Piped (a script, CI), stderr gets no status line: no `\\r` redraws in a log file."""
    with ScriptedBedrock(*_many_reads()) as bedrock:
        code, out, err = _ask(bedrock, db_path, tty=False)
    assert code == 0, err
    assert out == "Read them all.\n"
    assert "the model is writing" not in err and "waiting for" not in err and "\r" not in err
    assert err.count("  · getItem") == CALLS


def test_ask_json_on_a_terminal_keeps_stdout_the_transcript_alone(db_path: Path) -> None:
    with ScriptedBedrock(*_many_reads()) as bedrock:
        code, out, err = _ask(bedrock, db_path, "--json", tty=True)
    assert code == 0, err
    transcript = json.loads(out)  # nothing but the JSON on stdout
    assert transcript["finalText"] == "Read them all."
    assert len(transcript["steps"][0]["toolCalls"]) == CALLS
    assert "the model is writing getItem" in err
    assert not any("the model is writing" in row for row in _screen(err))


def test_the_status_names_a_big_call_by_size_and_makes_a_model_name_safe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent.cli.ask import Waiting

    clock = iter([100.0, 100.0, 103.5])
    monkeypatch.setattr("agent.cli.ask.time.monotonic", lambda: next(clock))
    waiting = Waiting()
    assert waiting.text() == "waiting for the model…"
    waiting.writing("bulk\x1b[2J\rEdit", 0)
    waiting.writing("bulk\x1b[2J\rEdit", 97 * 1024)
    text = waiting.text()
    assert text == "the model is writing bulk\\u001b[2J\\u000dEdit, 97 KB… 3 s"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_status_line_fits_the_terminal_and_blanks_what_it_drew() -> None:
    screen = Terminal()
    line = StatusLine(screen)
    line.show("x" * 200)
    line.show("short")
    line.clear()
    drawn = screen.getvalue()
    assert max(len(part) for part in drawn.split("\r")) <= 79  # never wraps at 80 columns
    assert _screen(drawn) == [""]
    piped = io.StringIO()
    quiet = StatusLine(piped)
    quiet.show("x")
    quiet.follow(lambda: "y")
    quiet.end()
    assert piped.getvalue() == ""


@pytest.fixture
def db_path(demo_path: Path) -> Path:
    return demo_path


def test_ask_on_a_terminal_says_bedrock_is_throttling_while_it_retries(
    scripted_bedrock: ScriptedBedrock,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_backoff: None,
) -> None:
    """A throttled request is retried by botocore for seconds with nothing new on the
    screen: the status line says so, and the answer then takes its place."""
    from agent.cli.main import main

    terminal = Terminal()
    seen: list[str] = []

    def answer(_body: dict) -> Reply:  # the retry's request: what does the terminal show now?
        seen.append(terminal.getvalue())
        return Reply(text="240 customers.")

    scripted_bedrock.add(
        Error(429, "ThrottlingException", "Too many requests, please wait."), answer
    )
    with monkeypatch.context() as patch:  # stderr a terminal, stdout piped
        patch.setattr(sys, "stderr", terminal)
        code = main(["ask", "how many customers?", "--db", str(db_path)])
    out = capsys.readouterr().out
    assert code == 0, terminal.getvalue()
    assert out == "240 customers.\n"
    (while_retrying,) = seen
    assert _screen(while_retrying)[-1] == "Bedrock is throttling; retrying (attempt 2 of 4)…"
    screen = _screen(terminal.getvalue())
    assert not any("throttling" in row for row in screen), screen
    assert screen[-1].startswith("-- the model finished its answer; 1 step;"), screen
