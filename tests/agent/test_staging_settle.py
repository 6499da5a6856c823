"""An interrupted commit is settled before anything else, and one commit runs at a time."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.errors import StagingError
from agent.staging import StagingArea
from agent.staging.lock import CommitLock
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_cli_staged import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def area(demo_path: Path) -> Iterator[StagingArea]:
    """The staging area the CLI uses for demo_path (default path, in the test's XDG dirs)."""
    staging = StagingArea(SQLiteStore.open(demo_path))
    yield staging
    staging.close()
    staging.store.close()


def killed_after_the_store_committed(area: StagingArea) -> list[str]:
    """Leave what a commit killed between the store's COMMIT and clearing staging leaves:
    its record naming the changes, the changes in the table, and still in staging."""
    changes = area.list()
    ids = [c.id for c in changes]
    conn = sqlite3.connect(area.path)
    with conn:
        conn.execute(
            "INSERT INTO commits_in_progress VALUES ('killed', ?, ?, 'then')",
            (area.store.identity, json.dumps(ids)),
        )
    conn.close()
    assert area.store.apply([c.to_apply() for c in changes]).applied == ids
    return ids


def stage_four(area: StagingArea) -> list[str]:
    return [
        area.stage("orders", "update", {"id": i}, {"quantity": 100 + i}).id for i in range(1, 5)
    ]


def other_program(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql)
    conn.close()


def test_a_fresh_list_diff_or_discard_never_shows_a_change_already_in_the_table(
    area: StagingArea, demo_path: Path
) -> None:
    stage_four(area)
    killed_after_the_store_committed(area)
    code, out, err = cli("staged", "list", "--db", str(demo_path))
    assert code == 0 and out.startswith("No staged changes")
    assert "4 changes had already landed in the table and left staging" in err
    assert cli("staged", "diff", "--db", str(demo_path))[1].startswith("No staged changes")
    assert cli("staged", "discard", "--all", "--db", str(demo_path))[1].startswith(
        "Discarded 0 staged changes"
    )
    assert area.store.get_item("orders", {"id": 3})["quantity"] == 103


def test_the_clean_up_commit_counts_what_really_happened(
    area: StagingArea, demo_path: Path
) -> None:
    """The issue's case: the commit landed, then one row changed before anyone looked."""
    ids = stage_four(area)
    killed_after_the_store_committed(area)
    other_program(demo_path, "UPDATE orders SET quantity = 7 WHERE id = 4")
    code, out, err = cli("staged", "commit", "--all", "--db", str(demo_path))
    assert code == 1
    assert "3 changes had already landed in the table and left staging; 1 had not" in err
    assert out.startswith("Nothing was committed: 1 conflict; 1 change is still staged.")
    assert f"conflict {ids[3]}" in out and "tabletalk staged rebase" in out
    assert [c.id for c in area.list()] == [ids[3]]


def test_a_commit_settles_first_and_reports_the_recovered_changes(area: StagingArea) -> None:
    ids = stage_four(area)
    killed_after_the_store_committed(area)
    fresh = area.stage("orders", "update", {"id": 9}, {"quantity": 9})  # settles the four
    assert area.take_notices()[0].startswith("An interrupted commit was settled: 4 changes")
    other = StagingArea(area.store, area.path)
    try:
        report = other.commit()
    finally:
        other.close()
    assert report.ok and report.committed == [fresh.id] and report.recovered == []
    assert not set(ids) & {c.id for c in area.list()}


def test_a_second_commit_waits_for_the_first_and_tells_the_truth(area: StagingArea) -> None:
    """Deterministic form of two commits started together: the second starts while the first
    is inside the store's transaction. It must not read the same changes and then report the
    first one's writes as conflicts; it says another commit is running, and once that one is
    done there is nothing left to commit."""
    stage_four(area)
    second = StagingArea(area.store.__class__.open(area.store.path), area.path)
    seen: list[str] = []

    def start_second(done: int, total: int) -> None:
        if seen:
            return
        with pytest.raises(StagingError) as caught:
            second.commit(wait_s=0)
        seen.append(caught.value.message)

    try:
        first = area.commit(progress=start_second)
        assert first.ok and len(first.committed) == 4
        assert seen == [f"another commit is running on this staging area (pid {os.getpid()})"]
        late = second.commit()
        assert late.ok and late.committed == [] and late.conflicts == []
    finally:
        second.close()
        second.store.close()


def test_the_cli_says_another_commit_is_running(
    area: StagingArea, demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stage_four(area)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_COMMIT_LOCK, str(area.path)],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        lock = CommitLock(area.path)
        assert lock.holder() == holder.pid
        monkeypatch.setattr("agent.staging.lock.WAIT_S", 0.1)  # the holder never lets go
        code, _, err = cli("staged", "commit", "--all", "--db", str(demo_path))
    finally:
        holder.communicate("", timeout=30)
    assert code == 2
    assert f"another commit is running on this staging area (pid {holder.pid})" in err
    assert "stay staged" in err
    assert area.count() == 4


HOLD_COMMIT_LOCK = """
import sys
from pathlib import Path
from agent.staging.lock import CommitLock
lock = CommitLock(Path(sys.argv[1]))
assert lock.try_acquire()
print("held", flush=True)
sys.stdin.read()
"""


def test_two_commit_processes_started_together_both_tell_the_truth(
    area: StagingArea, demo_path: Path
) -> None:
    """The issue's race with real processes: whichever order they run in, one commits every
    change and the other reports a running commit or nothing left, never conflicts."""
    area.stage_many("orders", query="SELECT id FROM orders", set={"status": "raced"})
    total = area.count()
    command = [sys.executable, "-m", "agent", "staged", "commit", "--all", "--db", str(demo_path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=300) for child in children]
    codes = sorted(child.returncode for child in children)
    said = [out + err for out, err in outputs]
    assert not any("conflict" in text for text in said), said
    assert sum(f"Committed {total:,} changes" in text for text in said) == 1, said
    other = next(text for text in said if f"Committed {total:,}" not in text)
    assert (
        "another commit is running" in other
        or "Nothing to commit" in other
        or "Nothing left to commit" in other
    ), said
    assert codes in ([0, 0], [0, 2])
    assert area.count() == 0
    assert area.store.count("orders", "status != 'raced'") == 0


@pytest.mark.parametrize(
    ("declared", "stored", "staged"),
    [("TEXT COLLATE NOCASE", "ada", "Ada"), ("TEXT COLLATE RTRIM", "x1", "x1 "), ("", 1, 1.0)],
    ids=["nocase", "rtrim", "no-affinity"],
)
def test_a_commit_killed_before_the_store_wrote_keeps_a_change_the_comparison_blurs(
    tmp_path: Path, declared: str, stored: object, staged: object
) -> None:
    """The store never got the change; only a comparison blind to the column's collation (or,
    without affinity, to 1 against 1.0) takes the old value for the new one. Settling said
    "landed" and dropped the change, so the commit was lost."""
    db = tmp_path / "people.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(f"CREATE TABLE people (id INTEGER PRIMARY KEY, name {declared})")
        conn.execute("INSERT INTO people VALUES (1, ?)", (stored,))
    conn.close()
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        change = area.stage("people", "update", {"id": 1}, {"name": staged})
        with sqlite3.connect(area.path) as conn:
            conn.execute(
                "INSERT INTO commits_in_progress VALUES ('killed', ?, ?, 'then')",
                (store.identity, json.dumps([change.id])),
            )
        conn.close()
        assert [c.id for c in area.list()] == [change.id], "the change is still staged"
        report = area.commit()
        assert report.ok
        row = store.get_item("people", {"id": 1})
        assert row is not None and row["name"] == staged and type(row["name"]) is type(staged)
    finally:
        area.close()
        store.close()
