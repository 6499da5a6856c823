"""Commits that fail or were interrupted: unstorable values, a locked database, crash recovery."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.errors import StagingError, StoreError
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore


@pytest.fixture
def area(demo_store: SQLiteStore, tmp_path: Path) -> StagingArea:
    staging = StagingArea(demo_store, tmp_path / "staging.sqlite")
    yield staging
    staging.close()


def in_progress(area: StagingArea) -> list[tuple[str, str]]:
    conn = sqlite3.connect(area.path)
    rows = conn.execute("SELECT token, ids_json FROM commits_in_progress").fetchall()
    conn.close()
    return rows


def edit_staging_db(area: StagingArea, sql: str, *params: object) -> None:
    """Change the staging database directly (as an older tabletalk or a crash would leave it)."""
    conn = sqlite3.connect(area.path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (2**63, "9223372036854775807"),
        (-(2**63) - 1, "-9223372036854775808"),
        (2**70, "integer range"),
        (float("nan"), "not a finite number"),
        (float("inf"), "not a finite number"),
        (float("-inf"), "not a finite number"),
    ],
)
def test_values_sqlite_cannot_store_are_refused_at_staging(
    area: StagingArea, value: object, needle: str
) -> None:
    with pytest.raises(StagingError) as caught:
        area.stage("orders", "update", {"id": 1}, {"total": value})
    assert caught.value.message.startswith("total:") and needle in caught.value.message
    assert "9223372036854775807" in caught.value.fix  # names the valid range
    with pytest.raises(StagingError, match="total"):
        area.stage_many("orders", keys=[{"id": 1}, {"id": 2}], set={"total": value})
    assert area.count() == 0


def test_the_largest_integers_stage_and_commit(area: StagingArea) -> None:
    area.stage("orders", "update", {"id": 1}, {"quantity": 2**63 - 1})
    area.stage("orders", "update", {"id": 2}, {"quantity": -(2**63)})
    assert area.commit().ok
    assert area.store.get_item("orders", {"id": 1})["quantity"] == 2**63 - 1


def test_a_commit_whose_apply_fails_leaves_no_record_and_keeps_the_change(
    area: StagingArea,
) -> None:
    """A value that slipped past staging (an older version) fails the commit cleanly."""
    before = area.store.get_item("orders", {"id": 1})
    change = area.stage("orders", "update", {"id": 1}, {"total": 1})
    edit_staging_db(
        area,
        "UPDATE staged_changes SET values_json = ? WHERE id = ?",
        f'{{"total":{2**70}}}',
        change.id,
    )
    with pytest.raises(StoreError) as caught:
        area.commit()
    assert "nothing was committed" in caught.value.message and caught.value.fix
    assert area.store.get_item("orders", {"id": 1}) == before
    assert [c.id for c in area.list()] == [change.id]
    assert in_progress(area) == []  # settled, not in doubt
    merged = area.stage("orders", "update", {"id": 1}, {"total": 2})  # not "interrupted"
    assert merged.id == change.id
    assert area.commit().ok


def test_a_locked_database_fails_the_commit_clearly_and_loses_nothing(
    demo_path: Path, tmp_path: Path
) -> None:
    store = SQLiteStore.open(demo_path, busy_timeout_s=0.05)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    change = area.stage("orders", "update", {"id": 1}, {"quantity": 9})
    other = sqlite3.connect(demo_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    with pytest.raises(StoreError) as caught:
        area.commit()
    assert "locked" in caught.value.message and "nothing was committed" in caught.value.message
    assert "Close the other program" in caught.value.fix and "stay staged" in caught.value.fix
    assert [c.id for c in area.list()] == [change.id] and in_progress(area) == []
    other.execute("ROLLBACK")
    other.close()
    assert area.commit().ok
    assert store.get_item("orders", {"id": 1})["quantity"] == 9
    area.close()
    store.close()


def crashed_commit(area: StagingArea, *ids: str) -> None:
    """Leave the record a commit leaves when the process dies inside it."""
    ids_json = "[" + ", ".join(f'"{i}"' for i in ids) + "]"
    edit_staging_db(
        area,
        "INSERT INTO commits_in_progress VALUES ('crashed', ?, ?, 'then')",
        area.store.identity,
        ids_json,
    )


@pytest.fixture
def loose(tmp_path: Path) -> StagingArea:
    """A table with an untyped column (no affinity) and a REAL one."""
    path = tmp_path / "loose.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, u, r REAL);"
        "INSERT INTO t VALUES (1, 1, 5.0), (2, 7, 1.5);"
    )
    conn.commit()
    conn.close()
    store = SQLiteStore.open(path)
    staging = StagingArea(store, tmp_path / "staging.sqlite")
    yield staging
    staging.close()
    store.close()


def test_recovery_does_not_take_text_1_for_integer_1(loose: StagingArea) -> None:
    """The update u: 1 → '1' did not land before the crash; it must still be applied."""
    change = loose.stage("t", "update", {"id": 1}, {"u": "1"})
    crashed_commit(loose, change.id)
    report = loose.commit()
    assert report.ok and report.recovered == [] and report.committed == [change.id]
    assert loose.store.query("SELECT typeof(u) AS t FROM t WHERE id = 1").rows == [{"t": "text"}]


def test_recovery_judges_5_and_5_0_as_sqlite_does(loose: StagingArea) -> None:
    """r: 1.5 → 5 landed (SQLite keeps it as 5.0 in a REAL column) before the crash."""
    change = loose.stage("t", "update", {"id": 2}, {"r": 5})
    crashed_commit(loose, change.id)
    conn = sqlite3.connect(loose.store.path)
    conn.execute("UPDATE t SET r = 5 WHERE id = 2")
    conn.commit()
    conn.close()
    report = loose.commit()
    assert report.ok and report.recovered == [change.id]
    assert loose.count() == 0 and in_progress(loose) == []


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize("bulk", [True, False])
def test_a_database_file_replaced_while_open_is_not_committed_to_blindly(
    tmp_path: Path, journal: str, bulk: bool
) -> None:
    """Another program replaces the database file (a backup restored, a `git pull`, a move and
    copy) while the app has it open. In WAL mode the commit wrote to the replaced file, which
    nobody sees any more, yet said "committed" and dropped the changes from staging; in
    rollback mode it told the user to make a writable file writable."""
    import os
    import shutil

    db = tmp_path / "shop.sqlite"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, 'a')", [(i,) for i in range(1, 10)])
    conn.commit()
    conn.close()
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    if bulk:
        area.stage_many("t", query="SELECT id FROM t WHERE id <= 3", set={"v": "b"})
    else:
        area.stage("t", "update", {"id": 1}, {"v": "b"})
    shutil.copy(db, tmp_path / "restored.sqlite")
    os.replace(tmp_path / "restored.sqlite", db)
    with pytest.raises(StoreError, match="was replaced by") as failed:
        area.commit()
    assert "open it again" in (failed.value.fix or "").lower()
    assert len(area.list()) == (3 if bulk else 1)
    assert area.history() == []
    area.close()
    store.close()
    reopened = SQLiteStore.open(db)
    again = StagingArea(reopened, tmp_path / "staging.sqlite")
    report = again.commit()
    assert len(report.committed) == (3 if bulk else 1)
    check = sqlite3.connect(db)
    assert check.execute("SELECT v FROM t WHERE id = 1").fetchone() == ("b",)
    check.close()
    again.close()
    reopened.close()


FULL_DISK = """
import json, resource, sys
from pathlib import Path
from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore

area = StagingArea(SQLiteStore.open(Path(sys.argv[1])), Path(sys.argv[2]))
area.stage("orders", "update", {"id": 1}, {"status": "cancelled"})
resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))  # no file may grow
said = {}
for name, run in [
    ("stage_many", lambda: area.stage_many(
        "orders", keys=[{"id": i} for i in range(2, 300)], set={"status": "cancelled"})),
    ("commit", area.commit),
]:
    try:
        run()
        said[name] = None
    except Exception as exc:
        said[name] = [type(exc).__name__, str(exc), getattr(exc, "fix", None)]
print(json.dumps(said))
"""


def test_a_full_disk_is_a_clear_error_and_loses_nothing(demo_path: Path, tmp_path: Path) -> None:
    """No file may grow (a full disk; RLIMIT_FSIZE in a child process). Staging and committing
    said "cannot rollback - no transaction is active" (the rollback of a transaction SQLite had
    already ended hid the real error) and "unexpected OSError" (the commit lock's pid)."""
    import json
    import subprocess
    import sys

    staging = tmp_path / "staging.sqlite"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(demo_path), str(staging)],
        capture_output=True, text=True, cwd=root, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    for name in ("stage_many", "commit"):
        kind, _message, fix = said[name]
        assert kind in ("StagingError", "StoreError"), said[name]
        assert "disk" in (fix or "").lower(), said[name]
    store = SQLiteStore.open(demo_path)
    area = StagingArea(store, staging)
    assert [c.key for c in area.list()] == [{"id": 1}]
    assert store.get_item("orders", {"id": 1}) == area.list()[0].pre_image
    area.close()
    store.close()


def test_a_database_on_a_full_disk_says_to_free_space(
    demo_store: SQLiteStore, area: StagingArea
) -> None:
    """The store's disk is full (SQLite's SQLITE_FULL, made real by capping the file's pages):
    the commit said "retry, or discard the change that causes it", a fix that cannot help."""
    area.stage_many("orders", query="SELECT id FROM orders", set={"status": "x" * 400})
    (pages,) = demo_store._conn.execute("PRAGMA page_count").fetchone()
    demo_store._conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StoreError, match="disk is full") as failed:
        area.commit()
    assert "free disk space" in (failed.value.fix or "").lower()
    assert len(area.list()) == demo_store.count("orders")
    assert demo_store.get_item("orders", {"id": 1})["status"] != "x" * 400


@pytest.mark.parametrize(("collation", "now"), [("NOCASE", "Ada"), ("RTRIM", "ada ")])
def test_a_change_the_column_collation_calls_equal_is_still_a_conflict(
    tmp_path: Path, collation: str, now: str
) -> None:
    """Another program changed the name's case (or trailing space) after the staging: the
    commit's own check compared under the column's collation, found 'Ada' = 'ada', and wrote
    the staged row over the change without a conflict."""
    path = tmp_path / "people.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        f"CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT COLLATE {collation}, age INT)"
    )
    conn.execute("INSERT INTO people VALUES (1, 'ada', 36)")
    conn.commit()
    store = SQLiteStore.open(path)
    staging = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        change = staging.stage("people", "update", {"id": 1}, {"age": 37})
        conn.execute("UPDATE people SET name = ? WHERE id = 1", (now,))
        conn.commit()
        report = staging.commit()
        assert [c.change_id for c in report.conflicts] == [change.id]
        assert report.conflicts[0].current["name"] == now
        assert conn.execute("SELECT name, age FROM people").fetchone() == (now, 36)
    finally:
        staging.close()
        store.close()
        conn.close()
