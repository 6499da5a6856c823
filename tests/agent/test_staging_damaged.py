"""A staging database held by another process, or damaged on disk: a truthful message, and
never advice that throws pending work away."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.errors import StagingError
from agent.staging import StagingArea, bulk
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_cli_staged import cli

ROOT = Path(__file__).resolve().parents[2]

HOLD_WRITE_LOCK = """
import sqlite3, sys
from pathlib import Path
from agent.staging.lock import CommitLock
if sys.argv[2] == "committing":
    assert CommitLock(Path(sys.argv[1])).try_acquire()
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


@pytest.fixture
def store(demo_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore.open(demo_path)
    yield opened
    opened.close()


def hold(path: Path, mode: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITE_LOCK, str(path), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


@pytest.mark.parametrize("mode", ["plain", "committing"])
def test_a_locked_staging_database_says_who_holds_it_and_to_retry(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    path = tmp_path / "staging.sqlite"
    first = StagingArea(store, path)
    first.stage("orders", "update", {"id": 1}, {"quantity": 5})
    first.close()
    monkeypatch.setattr("agent.staging.db.BUSY_TIMEOUT_S", 0.2, raising=False)
    child = hold(path, mode)
    try:
        area = StagingArea(store, path)  # reading still works while another process writes
        assert [c.key for c in area.list()] == [{"id": 1}]
        with pytest.raises(StagingError) as caught:
            area.stage("orders", "update", {"id": 2}, {"quantity": 6})
        area.close()
    finally:
        child.communicate("", timeout=30)
    who = f"a tabletalk commit (pid {child.pid})" if mode == "committing" else "another"
    assert caught.value.message.startswith(f"the staging database {path} is busy: {who}")
    assert "try again" in (caught.value.fix or "")
    assert "moving" not in caught.value.render() and "empty" not in caught.value.render()


def damage(path: Path) -> None:
    """Overwrite the middle of a few pages in the middle of the file with junk."""
    size = path.stat().st_size
    page = 4096
    with path.open("r+b") as f:
        for number in range(size // page // 2, size // page // 2 + 2):
            f.seek(number * page + 100)
            f.write(b"\xa5\x5a" * 900)


def test_a_damaged_staging_file_is_kept_and_what_can_be_read_is_recovered(
    store: SQLiteStore, demo_path: Path, isolated_dirs: Path
) -> None:
    area = StagingArea(store)
    path = area.path
    changes = list(  # every change read now (stage_many reads the later ones when asked)
        area.stage_many(
            "orders", query="SELECT id FROM orders WHERE id <= 400", set={"status": "x" * 40}
        )
    )
    area.review()  # as staged rows (a compact bulk edit: see the test after this one)
    area.close()
    damage(path)
    damaged_bytes = path.read_bytes()
    with pytest.raises(sqlite3.DatabaseError):
        conn = sqlite3.connect(path)
        try:
            conn.execute("SELECT * FROM staged_changes").fetchall()
        finally:
            conn.close()
    code, out, err = cli("staged", "list", "--json", "--db", str(demo_path))
    assert code == 0
    [aside] = list(path.parent.glob("staging.sqlite.damaged-*[0-9]Z"))
    assert aside.read_bytes() == damaged_bytes  # kept, byte for byte
    assert f"it is kept as {aside}" in err and "could be read and were recovered" in err
    assert "discard" not in err and "empty" not in err
    recovered = StagingArea(store)
    try:
        listed = {c.id: c for c in recovered.list()}
        assert 0 < len(listed) < len(changes)  # the damaged pages' rows are lost, no more
        originals = {c.id: c for c in changes}
        assert all(listed[i] == originals[i] for i in listed)
        assert recovered.commit().ok
    finally:
        recovered.close()


def test_recovering_a_damaged_staging_file_keeps_the_commit_history(
    store: SQLiteStore, demo_path: Path, isolated_dirs: Path
) -> None:
    """Recovery copied the staged changes and commit records into the fresh file but not the
    history: `tabletalk commits` came back empty and no earlier commit could be reverted."""
    area = StagingArea(store)
    path = area.path
    area.stage("customers", "update", {"id": 3}, {"city": "Turin"})
    area.stage("products", "delete", {"id": 7})
    assert area.commit().ok
    [before] = area.history()
    area.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 400", set={"status": "x" * 40}
    )
    area.review()  # as staged rows, which fill the pages `damage` hits
    area.close()
    damage(path)
    recovered = StagingArea(store)
    try:
        assert any("recovered" in n for n in recovered.take_notices())
        assert recovered.history() == [before]
        _entry, changes = recovered.commit_entry(before.id)
        assert sorted(c.op for c in changes) == ["delete", "update"]
        assert len(recovered.revert(before.id)) == 2
    finally:
        recovered.close()


def test_tabletalk_commits_says_what_opening_the_staging_file_recovered(
    store: SQLiteStore, demo_path: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tabletalk staged` told of a recovered (or settled, or replaced) staging file on stderr;
    `tabletalk commits` recovered it without a word, and the history it listed then seemed to
    have lost the staged changes."""
    area = StagingArea(store)
    path = area.path
    area.stage("customers", "update", {"id": 3}, {"city": "Turin"})
    assert area.commit().ok
    area.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 400", set={"status": "x" * 40}
    )
    area.review()  # as staged rows, which fill the pages `damage` hits
    area.close()
    damage(path)
    capsys.readouterr()
    assert main(["commits", "--db", str(demo_path)]) == 0
    shown = capsys.readouterr()
    assert "could be read and were recovered" in shown.err
    assert "customers" in shown.out


def test_an_mcp_server_says_on_stderr_what_opening_the_staging_file_recovered(
    store: SQLiteStore, demo_path: Path, isolated_dirs: Path
) -> None:
    """`tabletalk mcp serve` recovered a damaged staging file in silence (stdout is the
    protocol's; the person who started the server reads stderr)."""
    area = StagingArea(store)
    path = area.path
    area.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 400", set={"status": "x" * 40}
    )
    area.review()  # as staged rows, which fill the pages `damage` hits
    area.close()
    damage(path)
    served = subprocess.run(
        [sys.executable, "-m", "agent", "mcp", "--level", "read", "--db", str(demo_path)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "could be read and were recovered" in served.stderr
    assert served.stdout == ""


def _damage_pages_of(path: Path, table: str) -> None:
    """Junk the middle of the middle leaf page of `table` (its cell pointers among them)."""
    conn = sqlite3.connect(path)
    try:
        pages = [
            r[0] for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
                (table,),
            )
        ]  # fmt: skip
    finally:
        conn.close()
    with path.open("r+b") as f:
        f.seek((pages[len(pages) // 2] - 1) * 4096 + 100)
        f.write(b"\xa5\x5a" * 900)


def test_a_damaged_compact_bulk_edit_is_recovered_as_far_as_it_can_be_read(
    store: SQLiteStore, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk edit staged set-based keeps its items in a table of its own: when a page of it is
    damaged, the readable changes come back (exactly as staged) and the rest are lost, no
    more; a bulk edit already committed keeps its history."""
    monkeypatch.setattr(bulk, "COMPACT_MIN", 1)  # these edits of 300 and 400 stay compact
    area = StagingArea(store)
    path = area.path
    landed = list(
        area.stage_many(
            "orders", query="SELECT id FROM orders WHERE id <= 300", set={"quantity": 9}
        )
    )
    assert area.commit().ok
    [entry] = area.history()
    changes = list(
        area.stage_many(
            "orders", query="SELECT id FROM orders WHERE id <= 400", set={"status": "x" * 40}
        )
    )
    area.close()
    _damage_pages_of(path, "staged_batch_2")
    recovered = StagingArea(store)
    try:
        assert any("could be read and were recovered" in n for n in recovered.take_notices())
        listed = {c.id: c for c in recovered.list()}
        assert 0 < len(listed) < len(changes)
        originals = {c.id: c for c in changes}
        assert all(listed[i] == originals[i] for i in listed)
        assert recovered.history() == [entry]
        _entry, logged = recovered.commit_entry(entry.id)
        assert [(c.key, c.pre_image) for c in logged] == [(c.key, c.pre_image) for c in landed]
        assert recovered.commit().ok and recovered.count() == 0
    finally:
        recovered.close()
