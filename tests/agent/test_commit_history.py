"""Commit history and revert: every commit is kept with its changes; a revert is staged, not
written, and committing it restores the rows byte for byte (or conflicts on later edits)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli.main import main
from agent.errors import StagingError
from agent.staging import StagingArea
from agent.staging.history import Retention
from agent.stores.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


def dump(path: Path, table: str) -> list[tuple[object, ...]]:
    """Every row exactly as stored (typeof included, so 5 and 5.0 differ)."""
    connection = sqlite3.connect(path)
    try:
        columns = [r[1] for r in connection.execute(f"PRAGMA table_info({table})")]
        select = ", ".join(f"{c}, typeof({c})" for c in columns)
        return connection.execute(f"SELECT {select} FROM {table} ORDER BY 1").fetchall()
    finally:
        connection.close()


def test_create_update_and_delete_commits_revert_to_the_original_bytes(
    demo_store: SQLiteStore, demo_path: Path
) -> None:
    before = {t: dump(demo_path, t) for t in ("customers", "products")}
    area = StagingArea(demo_store)
    area.stage("customers", "update", {"id": 4}, {"city": "Lisbon", "email": "x@example.org"})
    area.stage("products", "delete", {"id": 9})
    area.stage(
        "customers",
        "create",
        {"id": 999},
        {"name": "New", "email": "new@example.org", "city": "Porto", "created_at": "2026-01-01"},
    )
    report = area.commit()
    assert len(report.committed) == 3 and not report.conflicts
    [entry] = area.history()
    assert entry.changes == 3 and set(entry.tables) == {"customers", "products"}
    assert entry.committed_by == "user"
    reverted = area.revert(entry.id[:6])
    assert sorted(c.op for c in reverted) == ["create", "delete", "update"]
    assert dump(demo_path, "customers") != before["customers"]  # staged, not written
    assert not area.commit().conflicts
    assert {t: dump(demo_path, t) for t in ("customers", "products")} == before
    assert len(area.history()) == 2  # the revert is a commit of its own
    area.close()


def test_a_revert_and_the_commit_it_undid_name_each_other(
    demo_store: SQLiteStore, demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the mark, the history showed two look-alike commits, and which one undid which
    (or whether a commit was already undone) could not be told."""
    area = StagingArea(demo_store)
    area.stage("products", "update", {"id": 3}, {"price": 12.5})
    area.commit()
    [first] = area.history()
    area.revert(first.id)
    area.commit()
    area.stage("products", "update", {"id": 4}, {"price": 1.0})
    area.commit()
    plain, undo, undone = area.history()
    assert undone.id == first.id
    assert undo.reverts == (first.id,) and undone.reverted_by == (undo.id,)
    assert plain.reverts == plain.reverted_by == () and undo.reverted_by == ()
    found = area.commit_entry(first.id[:6])[0]
    assert found.reverted_by == (undo.id,), "`commits show` of one commit knows it was undone"
    area.close()
    db = str(demo_path)
    assert main(["commits", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(plain.id) and "revert" not in lines[0]
    assert lines[1].startswith(undo.id) and lines[1].endswith(f"(reverts {first.id})")
    assert lines[2].startswith(first.id) and lines[2].endswith(f"(reverted by {undo.id})")
    assert main(["commits", "show", undo.id, "--db", db]) == 0
    assert f"(reverts {first.id})" in capsys.readouterr().out.splitlines()[0]
    assert main(["commits", "--json", "--db", db]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[1]["reverts"] == [first.id] and listed[2]["revertedBy"] == [undo.id]


def test_a_commit_whose_values_the_table_converted_or_defaulted_reverts_cleanly(
    tmp_path: Path,
) -> None:
    """Staged "19.99" is stored as the REAL 19.99, and a create leaves unnamed columns to
    their defaults: the rows still hold what the commit wrote, so the revert commits."""
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, price REAL, qty INTEGER, "
            "note TEXT, added TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        connection.execute("INSERT INTO items (id, price, qty, note) VALUES (1, 5.0, 3, 'a')")
    connection.close()
    before = dump(path, "items")
    store = SQLiteStore.open(path)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    area.stage("items", "update", {"id": "1"}, {"price": "19.99", "qty": "7"})
    area.stage("items", "create", {"id": 2}, {"price": 1})
    assert not area.commit().conflicts
    [entry] = area.history()
    area.revert(entry.id)
    report = area.commit()
    assert not report.conflicts, report.conflicts
    assert dump(path, "items") == before
    area.close()
    store.close()


def test_a_revert_conflicts_with_a_later_change_instead_of_overwriting_it(
    demo_store: SQLiteStore, demo_path: Path
) -> None:
    area = StagingArea(demo_store)
    area.stage_many("orders", keys=[{"id": i} for i in range(1, 41)], set={"status": "cancelled"})
    area.commit()
    [entry] = area.history()
    connection = sqlite3.connect(demo_path)
    connection.execute("UPDATE orders SET quantity = 77 WHERE id = 7")
    connection.commit()
    connection.close()
    area.revert(entry.id)
    report = area.commit()
    assert [c.change_id for c in report.conflicts] and len(report.committed) == 0
    conflict = report.conflicts[0]
    assert conflict.current is not None and conflict.current["quantity"] == 77
    assert area.count() == 40  # all of the revert stays staged, nothing lost
    area.close()


def test_a_revert_refuses_items_that_already_have_a_staged_change(
    demo_store: SQLiteStore,
) -> None:
    area = StagingArea(demo_store)
    area.stage("customers", "update", {"id": 2}, {"city": "Oslo"})
    area.commit()
    [entry] = area.history()
    area.stage("customers", "update", {"id": 2}, {"city": "Rome"})
    with pytest.raises(StagingError) as raised:
        area.revert(entry.id)
    assert "already has a staged change" in raised.value.message
    assert area.count() == 1
    with pytest.raises(StagingError):
        area.revert("nope")
    area.close()


@pytest.mark.parametrize("typed", ["", "%", "_", "%_%", " "])
def test_an_empty_or_wildcard_commit_id_names_no_commit(
    demo_store: SQLiteStore, typed: str
) -> None:
    """`tabletalk commits revert "$ID"` with an empty variable must not pick the only commit."""
    area = StagingArea(demo_store)
    area.stage("customers", "update", {"id": 2}, {"city": "Oslo"})
    area.commit()
    with pytest.raises(StagingError) as raised:
        area.revert(typed)
    assert "tabletalk commits" in (raised.value.fix or "")
    assert area.count() == 0
    area.close()


def test_history_is_kept_across_processes_and_shown_by_the_cli(
    demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(demo_path)
    store = SQLiteStore.open(demo_path)
    area = StagingArea(store)
    area.stage("products", "update", {"id": 3}, {"price": 12.5})
    area.close()
    store.close()
    done = subprocess.run(
        [sys.executable, "-m", "agent", "staged", "commit", "--all", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    capsys.readouterr()
    assert main(["commits", "--json", "--db", db]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["changes"] == 1 and entry["tables"] == ["products"]
    assert main(["commits", "show", entry["id"], "--db", db]) == 0
    shown = capsys.readouterr().out
    assert "update products" in shown and "price:" in shown and "12.5" in shown
    assert main(["commits", "revert", entry["id"], "--db", db]) == 0
    assert "Staged 1 change that undoes commit" in capsys.readouterr().out
    assert main(["staged", "commit", "--all", "--db", db]) == 0
    capsys.readouterr()
    assert main(["commits", "show", "zzzz", "--db", db]) == 2
    err = capsys.readouterr().err
    assert f"in the history of {demo_path.name}" in err, "names the store it looked in"
    assert f"`tabletalk commits --db {db}`" in err, "a fix that reaches the same store"
    assert main(["commits", "--db", db]) == 0
    listed = capsys.readouterr().out
    assert f"`tabletalk commits show ID --db {db}`" in listed, listed


def test_old_history_is_forgotten_by_size(demo_store: SQLiteStore) -> None:
    area = StagingArea(demo_store, keep=Retention(days=90, changes=5))
    for round_ in range(3):
        area.stage_many(
            "orders", keys=[{"id": i} for i in range(1, 4)], set={"quantity": round_ + 10}
        )
        area.commit()
    entries = area.history()
    assert sum(e.changes for e in entries) <= 5 and len(entries) == 1
    area.close()


def test_an_interrupted_commit_that_landed_is_logged_when_settled(
    demo_store: SQLiteStore, demo_path: Path
) -> None:
    area = StagingArea(demo_store)
    area.stage("customers", "update", {"id": 8}, {"city": "Turin"})
    # What a killed commit leaves: its record, the change applied but still staged.
    changes = [c.to_apply() for c in area.list()]
    conn = area._conn
    from agent.staging import history

    with conn:
        conn.execute(
            "INSERT INTO commits_in_progress (token, store, ids_json, started_at) "
            "VALUES ('dead1', ?, ?, 'x')",
            (demo_store.identity, json.dumps([changes[0].id])),
        )
        history.start(conn, "dead1", demo_store.identity, "user")
    connection = sqlite3.connect(demo_path)
    connection.execute("UPDATE customers SET city = 'Turin' WHERE id = 8")
    connection.commit()
    connection.close()
    area.close()
    again = StagingArea(demo_store)
    assert again.count() == 0
    [entry] = again.history()
    assert entry.id == "dead1" and entry.changes == 1
    again.close()


def test_a_clock_set_back_keeps_the_newest_commit_first_and_kept(
    demo_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clock was a day ahead at the first commit and put right (NTP) before the next two.
    The last commit is still the newest (listed first: the one F9's top line reverts), and
    size retention forgets the first commit, not the one just made."""
    from datetime import UTC, datetime, timedelta

    from agent.staging import history

    ahead = datetime.now(UTC) + timedelta(days=1)

    class Ahead(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Ahead:  # type: ignore[override]
            return cls.fromtimestamp(ahead.timestamp(), UTC)

    area = StagingArea(demo_store, keep=Retention(days=90, changes=6))
    for quantity in (10, 11, 12):
        monkeypatch.setattr(history, "datetime", Ahead if quantity == 10 else datetime)
        area.stage_many("orders", keys=[{"id": i} for i in range(1, 4)], set={"quantity": quantity})
        area.commit()
    shown = [area.commit_entry(e.id)[1][0].values["quantity"] for e in area.history()]
    assert shown == [12, 11]
    area.close()


def test_reverting_a_large_commit_reads_the_table_in_a_few_statements_not_one_per_row(
    tmp_path: Path,
) -> None:
    """Checking each row of a 50,000-change commit with its own SELECT took a revert ~12 s;
    the checks now share compound statements, with the same outcome: rows that still hold
    the commit's values revert cleanly, a row changed since conflicts."""
    path = tmp_path / "shop.sqlite"
    rows = 3000
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, price REAL, note TEXT)")
        connection.executemany(
            "INSERT INTO items VALUES (?, ?, ?)", [(i, i / 4, f"n{i}") for i in range(rows)]
        )
    connection.close()
    before = dump(path, "items")
    store = SQLiteStore.open(path)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    area.stage_many("items", keys=[{"id": i} for i in range(rows)], set={"price": "19.99"})
    assert not area.commit().conflicts
    [entry] = area.history()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE items SET note = 'later' WHERE id = 7")
    connection.close()
    statements: list[str] = []
    staged: list[str] = []
    store._conn.set_trace_callback(statements.append)  # noqa: SLF001 - counts the store's reads
    area._conn.set_trace_callback(staged.append)  # noqa: SLF001 - and the staging area's
    reverted = area.revert(entry.id)
    store._conn.set_trace_callback(None)  # noqa: SLF001
    area._conn.set_trace_callback(None)  # noqa: SLF001
    reads = [s for s in statements if 'FROM "items"' in s]
    assert len(reverted) == rows
    assert 0 < len(reads) <= 12, len(reads)  # was 3,004: one per row, then the held rows
    looked_up = [s for s in staged if s.startswith("SELECT")]
    assert len(looked_up) <= 40, len(looked_up)  # was 3,000 more: each item already staged?
    report = area.commit()
    [conflict] = report.conflicts
    assert conflict.current is not None and conflict.current["note"] == "later"
    assert not report.committed
    area.discard([c.change_id for c in report.conflicts])
    assert not area.commit().conflicts
    after = dump(path, "items")
    assert after[7] != before[7] and after[:7] + after[8:] == before[:7] + before[8:]
    area.close()
    store.close()


def test_a_deleted_row_holding_a_blob_is_not_restored_as_its_fingerprint_text(
    tmp_path: Path,
) -> None:
    """The history keeps a blob as `<blob N bytes sha256:…>`: reverting the delete would write
    that text where the bytes were, so the revert is refused and the table stays as it is."""
    db = tmp_path / "blobs.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, b BLOB)")
        conn.execute("INSERT INTO t VALUES (1, 'a', x'00ff'), (2, 'b', x'01')")
    conn.close()
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        area.stage("t", "delete", {"id": 1})
        assert area.commit().ok
        [entry] = area.history()
        with pytest.raises(StagingError, match="column 'b' held a blob") as caught:
            area.revert(entry.id)
        assert "backup" in caught.value.fix
        assert area.count() == 0
    finally:
        area.close()
        store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id, b FROM t").fetchall() == [(2, b"\x01")]
    conn.close()


def test_commits_show_writes_values_as_staged_diff_does(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`commits show` printed Python reprs (`status: 'pending' → 'x'`, `id: None → 5`) where
    `staged diff` prints JSON; both now write `"pending" → "x"`, and ∅ for no value."""
    db = str(demo_path)
    store = SQLiteStore.open(demo_path)
    area = StagingArea(store)
    old = store.get_item("orders", {"id": 7})["status"]
    area.stage("orders", "update", {"id": 7}, {"status": 'it\'s "late"'})
    assert area.commit().ok
    area.close()
    store.close()
    capsys.readouterr()
    assert main(["commits", "--json", "--db", db]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert main(["commits", "show", entry["id"], "--db", db]) == 0
    shown = capsys.readouterr().out
    assert f'status: {json.dumps(old)} → "it\'s \\"late\\""' in shown, shown
