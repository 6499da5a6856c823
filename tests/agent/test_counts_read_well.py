"""Counts a person reads say "1 change" and "10,000 changes", never "change(s)"."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from agent.text_plural import counted
from tests.agent.test_cli_staged import cli


def test_counted_says_one_thing_or_many_with_separators() -> None:
    assert counted(1, "change") == "1 change"
    assert counted(0, "change") == "0 changes"
    assert counted(10_000, "change") == "10,000 changes"
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(2, "entry", "entries") == "2 entries"


def _orders(path: Path, rows: int) -> StagingArea:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, 'pending')", [(i,) for i in range(rows)])
    return StagingArea(SQLiteStore.open(path))


def test_staged_list_commit_and_commits_say_one_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "one.sqlite"
    area = _orders(db, 1)
    try:
        area.stage("orders", "update", {"id": 0}, {"status": "sent"})
        code, out, _ = cli("staged", "list", "--db", str(db))
        assert code == 0 and out.startswith("1 staged change for ")
        code, out, _ = cli("staged", "commit", "--all", "--db", str(db))
        assert code == 0 and out.startswith("Committed 1 change to "), out
        assert main(["commits", "--db", str(db)]) == 0
        listed = capsys.readouterr().out.splitlines()[0]
        assert "       1 change  orders  by " in listed, listed
    finally:
        area.close()


def test_staged_commit_of_ten_thousand_changes_says_10_000_changes(tmp_path: Path) -> None:
    db = tmp_path / "many.sqlite"
    area = _orders(db, 10_000)
    try:
        area.stage_many("orders", query="SELECT id FROM orders", set={"status": "sent"})
        code, out, _ = cli("staged", "list", "--db", str(db))
        assert code == 0 and out.startswith("10,000 staged changes for ")
        code, out, _ = cli("staged", "commit", "--all", "--db", str(db))
        assert code == 0 and out.startswith("Committed 10,000 changes to "), out
    finally:
        area.close()
