"""Headless output never carries terminal escapes or bidi tricks from tables, titles or errors;
damaged conversation files are named, not fatal; `staged list` cuts long values."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from agent import paths
from agent.cli.main import main
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from agent.text_safety import printable, printable_line
from tests.support.scripted_bedrock import Error, ScriptedBedrock

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\u2066\x85\u200b"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def assert_terminal_safe(text: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in UNSAFE.findall(text)})
    assert found == [], f"unsafe characters reached the terminal: {found}"


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    """A database whose table, column and cell carry escape sequences and bidi overrides."""
    path = tmp_path / "hostile.sqlite"
    conn = sqlite3.connect(path)
    table, column = f"t{HOSTILE}", f"c{HOSTILE}"
    conn.execute(f'CREATE TABLE "{table}" (id INTEGER PRIMARY KEY, "{column}" TEXT)')
    conn.execute(f'INSERT INTO "{table}" VALUES (1, ?)', (f"v{HOSTILE}",))
    conn.commit()
    conn.close()
    store = SQLiteStore.open(path)
    area = StagingArea(store)
    area.stage(table, "update", {"id": 1}, {column: f"new{HOSTILE}\nsecond line"})
    area.close()
    store.close()
    return path


def test_the_sanitiser_escapes_what_a_terminal_would_act_on() -> None:
    assert printable("a\x1b[2Jb\x9bc\u202ed\ud800\n\tok") == (
        "a\\u001b[2Jb\\u009bc\\u202ed\\ud800\n\tok"
    )
    assert printable_line("name\nforged\rline\t") == "name\\u000aforged\\u000dline\\u0009"
    assert printable_line("tag\U000e0041") == "tag\\udb40\\udc41"
    assert printable_line("plain café 表 🙂") == "plain café 表 🙂"
    assert json.loads(printable_line(json.dumps("x\u202ey", ensure_ascii=False))) == "x\u202ey"


@pytest.mark.parametrize(
    "command", [["staged", "list"], ["staged", "diff"], ["staged", "list", "--json"], ["info"]]
)
def test_staged_and_info_output_is_terminal_safe(
    hostile_db: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--db", str(hostile_db)]) == 0
    out, err = capsys.readouterr()
    assert_terminal_safe(out + err)
    assert "\\u001b]0;pwned" in out  # shown as an escape, so the user sees it is there
    if "--json" in command:
        assert json.loads(out)[0]["table"] == f"t{HOSTILE}"  # JSON stays exact


def test_conversation_titles_are_terminal_safe(capsys: pytest.CaptureFixture[str]) -> None:
    folder = paths.conversations_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "c-1.json").write_text(
        json.dumps({"id": "c-1", "title": f"hi{HOSTILE}", "messages": []}), encoding="utf-8"
    )
    assert main(["conversations"]) == 0
    out, err = capsys.readouterr()
    assert_terminal_safe(out + err)
    assert "c-1" in out and "\\u202eevil" in out


def test_bedrock_error_text_is_terminal_safe(
    scripted_bedrock: ScriptedBedrock, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted_bedrock.add(*[Error(400, "ValidationException", f"bad request{HOSTILE}")] * 3)
    assert main(["ask", "hello", "--db", str(demo_path)]) == 1
    out, err = capsys.readouterr()
    assert_terminal_safe(out + err)
    assert "bad request" in err


# -- damaged conversation files --------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("[]", "expected a JSON object, found list"),
        ('{"id": "x", "messages": "nope"}', "field 'messages'"),
        ('{"id": "x", "messages": [{"role": "user", "content": 5}]}', "field 'messages.0.content'"),
        ('{"messages": []}', "field 'id'"),
        ("{not json", "not valid JSON"),
    ],
)
def test_damaged_conversation_files_are_named_and_skipped(
    content: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = paths.conversations_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good.json").write_text(
        json.dumps({"id": "good", "title": "fine", "messages": []}), encoding="utf-8"
    )
    (folder / "bad.json").write_text(content, encoding="utf-8")
    assert main(["conversations"]) == 0
    out, err = capsys.readouterr()
    assert "good" in out and "fine" in out
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "bad.json" in warnings[0] and reason in warnings[0]
    assert "unexpected" not in err
    assert main(["conversations", "--json"]) == 0
    assert [c["id"] for c in json.loads(capsys.readouterr().out)] == ["good"]


def test_resuming_a_damaged_conversation_names_the_file(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = paths.conversations_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bad.json").write_text('{"id": "bad", "messages": "nope"}', encoding="utf-8")
    assert main(["ask", "hello", "--conversation", "bad", "--db", str(demo_path)]) == 2
    err = capsys.readouterr().err
    assert "bad.json is damaged" in err and "field 'messages'" in err
    assert "unexpected" not in err


# -- staged list cuts long values ------------------------------------------------------------


def test_staged_list_cuts_long_values_and_diff_shows_them(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SQLiteStore.open(demo_path)
    area = StagingArea(store)
    change = area.stage("customers", "update", {"id": 1}, {"name": "N" * 5_000_000})
    area.close()
    store.close()
    assert main(["staged", "list", "--db", str(demo_path)]) == 0
    out = capsys.readouterr().out
    assert len(out) < 2_000
    assert '"' + "N" * 80 + "…" in out
    assert f"`tabletalk staged diff ID --db {demo_path}` shows them whole" in out
    assert main(["staged", "diff", change.id, "--db", str(demo_path)]) == 0
    assert "N" * 5_000_000 in capsys.readouterr().out
