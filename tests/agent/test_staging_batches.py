"""Compact bulk edits (agent/staging/batches.py): a set-based bulk edit is staged as one header
row and one narrow row per item; everything that reads it sees the changes the row-by-row path
would have staged, and files written before it still open, stage and commit."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.errors import BadKeyError, StagingError
from agent.staging import StagingArea, bulk, history
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_staging_set_based import ROWS
from tests.support.sqlite_files import make_db


@pytest.fixture(autouse=True)
def _compact_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests' small edits stay compact (by default only 500 items and more do)."""
    monkeypatch.setattr(bulk, "COMPACT_MIN", 1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    db = tmp_path / "types.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, r REAL, n NUMERIC, s TEXT, b BLOB, x)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", ROWS)
    conn.commit()
    conn.close()
    opened = SQLiteStore.open(db)
    yield opened
    opened.close()


def rows(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


STAGED = "SELECT store, tbl, key_json, op, values_json, pre_image_json, origin FROM staged_changes"


def test_a_bulk_edit_is_staged_as_one_header_and_a_narrow_row_per_item(
    demo_store: SQLiteStore, tmp_path: Path
) -> None:
    """The texts of 10,000 staged rows (store, table, values, the pre-image as JSON) cost more
    to write than the store's own UPDATE: a bulk edit keeps them once, in a header."""
    path = tmp_path / "staging.sqlite"
    area = StagingArea(demo_store, path)
    try:
        staged = area.stage_many("orders", query="SELECT id FROM orders", set={"status": "x"})
        assert area.count() == len(staged) > 100
    finally:
        area.close()
    assert rows(path, "SELECT count(*) FROM staged_changes") == [(0,)]
    assert rows(path, "SELECT tbl, count FROM staged_batches") == [("orders", len(staged))]


def test_a_compact_bulk_edit_reads_and_becomes_the_rows_the_row_by_row_path_writes(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listed, turned into rows (a review screen does), the compact edit's texts are byte for
    byte the row-by-row path's: REALs, 64-bit integers, blobs, NULLs, awkward text."""
    compact = StagingArea(store, tmp_path / "compact.sqlite")
    keys = [{"id": r[0]} for r in ROWS]
    staged = compact.stage_many("t", keys=keys, set={"s": "new"}, origin="o")
    assert compact.list() == list(staged)
    compact.review()
    assert compact.list() == list(staged)
    compact.close()
    monkeypatch.setattr("agent.staging.area_bulk.stage_set_based", lambda *a, **k: None)
    by_rows = StagingArea(store, tmp_path / "rows.sqlite")
    assert [
        c.pre_image for c in by_rows.stage_many("t", keys=keys, set={"s": "new"}, origin="o")
    ] == [c.pre_image for c in staged]
    by_rows.close()
    expected = rows(tmp_path / "rows.sqlite", STAGED + " ORDER BY seq")
    assert rows(tmp_path / "compact.sqlite", STAGED + " ORDER BY seq") == expected
    assert len(expected) == len(ROWS)


def test_a_change_staged_after_a_compact_bulk_edit_folds_into_it_and_comes_after_it(
    store: SQLiteStore, tmp_path: Path
) -> None:
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        staged = area.stage_many("t", keys=[{"id": 1}, {"id": 2}], set={"s": "bulk"})
        folded = area.stage("t", "update", {"id": 2}, {"x": "one"})
        later = area.stage("t", "update", {"id": 3}, {"x": "two"})
        assert folded.id == staged[1].id and folded.values == {"s": "bulk", "x": "one"}
        assert [c.id for c in area.list()] == [staged[0].id, staged[1].id, later.id]
        assert area.commit().ok and area.count() == 0
    finally:
        area.close()


def test_a_committed_compact_bulk_edit_is_history_that_reverts_and_retention_drops(
    store: SQLiteStore, tmp_path: Path
) -> None:
    path = tmp_path / "staging.sqlite"
    area = StagingArea(store, path, keep=history.Retention(changes=len(ROWS)))
    try:
        before = {r[0]: r for r in rows(store.path, "SELECT * FROM t")}
        staged = area.stage_many("t", query="SELECT id FROM t", set={"s": "bulk"})
        assert area.commit().ok
        [entry] = area.history()
        assert (entry.changes, entry.tables) == (len(ROWS), ("t",))
        _, logged = area.commit_entry(entry.id)
        assert [(c.key, c.pre_image, c.values) for c in logged] == [
            (c.key, c.pre_image, c.values) for c in staged
        ]
        area.revert(entry.id)
        assert area.commit().ok
        assert {r[0]: r for r in rows(store.path, "SELECT * FROM t")} == before
        # Two commits of 6 changes keep 6: the first one (the bulk edit) is forgotten.
        assert [e.id for e in area.history()] != [entry.id] and len(area.history()) == 1
        names = rows(path, "SELECT name FROM sqlite_master WHERE name GLOB 'staged_batch_[0-9]*'")
        assert names == [] and rows(path, "SELECT count(*) FROM staged_batches") == [(0,)]
    finally:
        area.close()


V2_SCHEMA = """
CREATE TABLE staged_changes (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    store TEXT NOT NULL,
    tbl TEXT NOT NULL,
    key_json TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op = 'create' OR op = 'update' OR op = 'delete'),
    values_json TEXT NOT NULL,
    pre_image_json TEXT,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    snapshot TEXT
);
CREATE UNIQUE INDEX staged_changes_item ON staged_changes (store, tbl, key_json);
CREATE TABLE commits_in_progress (
    token TEXT PRIMARY KEY, store TEXT NOT NULL, ids_json TEXT NOT NULL, started_at TEXT NOT NULL
);
CREATE TABLE commit_log (
    id TEXT PRIMARY KEY, store TEXT NOT NULL, committed_at TEXT NOT NULL,
    committed_by TEXT NOT NULL, changes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX commit_log_store ON commit_log (store, committed_at);
CREATE TABLE commit_log_changes (
    commit_id TEXT NOT NULL, seq INTEGER NOT NULL, tbl TEXT NOT NULL, key_json TEXT NOT NULL,
    op TEXT NOT NULL, values_json TEXT NOT NULL, pre_image_json TEXT, origin TEXT NOT NULL,
    PRIMARY KEY (commit_id, seq)
) WITHOUT ROWID;
PRAGMA user_version = 2;
"""


def test_a_staging_file_written_before_compact_bulk_edits_opens_stages_and_commits(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """A staging file of schema 2 (as the previous version wrote it, with a staged change and
    a commit in its history) opens; its change and a new compact bulk edit list, commit and
    stay in the history with the old commit, which still reverts."""
    path = make_db(tmp_path / "staging.sqlite", V2_SCHEMA)
    pre = '{"id":6,"r":null,"n":0,"s":"\'single\' quotes","b":null,"x":0.30000000000000004}'
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, pre_image_json, "
        "origin, created_at) VALUES ('0000abcd', ?, 't', '{\"id\":6}', 'update', "
        "'{\"x\":\"old\"}', ?, 'cli', '2026-11-30T10:00:00Z')",
        (store.identity, pre),
    )
    conn.execute(
        "INSERT INTO commit_log VALUES ('c0ffee0000000000', ?, '2026-11-30T09:00:00', 'user', 1)",
        (store.identity,),
    )
    conn.execute(
        "INSERT INTO commit_log_changes VALUES ('c0ffee0000000000', 1, 't', '{\"id\":6}', "
        "'update', '{\"n\":0}', ?, 'cli')",
        (pre.replace('"n":0', '"n":9'),),
    )
    conn.commit()
    conn.close()
    area = StagingArea(store, path)
    try:
        assert [c.id for c in area.list()] == ["0000abcd"]
        staged = area.stage_many("t", query="SELECT id FROM t WHERE id < 6", set={"s": "bulk"})
        assert [c.id for c in area.list()] == ["0000abcd", *(c.id for c in staged)]
        report = area.commit()
        assert report.ok and len(report.committed) == 6 and area.count() == 0
        assert [e.id for e in area.history()][1:] == ["c0ffee0000000000"]
        assert len(area.revert("c0ffee")) == 1
    finally:
        area.close()
    assert rows(path, "PRAGMA user_version") == [(3,)]
    assert rows(store.path, "SELECT s, x FROM t WHERE id IN (1, 6) ORDER BY id") == [
        ("bulk", 7),
        ("'single' quotes", "old"),
    ]


def test_a_bulk_edit_on_a_table_with_a_column_named_like_the_item_columns_stages_by_rows(
    tmp_path: Path,
) -> None:
    db = make_db(tmp_path / "odd.sqlite", "CREATE TABLE o (id INTEGER PRIMARY KEY, TT_KEY);"
                 "INSERT INTO o VALUES (1, 'a'), (2, 'b');")  # fmt: skip
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        staged = area.stage_many("o", query="SELECT id FROM o", set={"TT_KEY": "z"})
        assert not isinstance(staged, bulk.StagedBatch) and len(staged) == 2
        assert area.commit().ok
    finally:
        area.close()
        store.close()


@pytest.mark.parametrize("then", ["nothing", "review", "commit", "discard"])
def test_what_a_bulk_edit_returns_reads_its_later_changes_when_asked(
    demo_store: SQLiteStore, tmp_path: Path, then: str
) -> None:
    """`stage_many` reads back the first changes; the rest come from the staging file when
    read: the edit as staged, as the rows it became, or as the history it is now; a discarded
    edit says so instead of inventing changes."""
    area = StagingArea(demo_store, tmp_path / "staging.sqlite")
    try:
        staged = area.stage_many("orders", query="SELECT id FROM orders", set={"status": "x"})
        listed = area.list()
        assert len(staged) == len(listed) > bulk.PREFIX and staged[0] == listed[0]
        if then == "review":
            area.review()
        elif then == "commit":
            assert area.commit().ok
        elif then == "discard":
            area.discard(all=True)
            with pytest.raises(StagingError, match="discarded or forgotten"):
                staged[-1]
            return
        assert list(staged) == listed and staged[-1] == listed[-1]
    finally:
        area.close()


def test_a_small_bulk_edit_leaves_no_table_of_its_own(
    demo_store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every compact edit keeps a table, even once committed (as history), and a staging file
    with thousands of them costs every connection ~35 ms to open: an edit of fewer than
    COMPACT_MIN items becomes ordinary rows in its own transaction, after any compact one."""
    monkeypatch.setattr(bulk, "COMPACT_MIN", 500)
    path = tmp_path / "staging.sqlite"

    def item_tables() -> list[str]:
        tables = rows(path, "SELECT name FROM sqlite_master WHERE type = 'table'")
        return [name for (name,) in tables if name.startswith("staged_batch_")]

    area = StagingArea(demo_store, path)
    try:
        big = area.stage_many(
            "orders", query="SELECT id FROM orders LIMIT 600", set={"status": "x"}
        )
        assert len(item_tables()) == 1
        small = area.stage_many(
            "customers", query="SELECT id FROM customers LIMIT 3", set={"city": "Porto"}
        )
        assert len(small) == 3 and [c.values for c in small] == [{"city": "Porto"}] * 3
        assert item_tables() == []  # the small edit, and the big one before it, are rows now
        assert [c.id for c in area.list()] == [*(c.id for c in big), *(c.id for c in small)]
        area.discard([c.id for c in big])
        assert area.commit().ok
        again = area.stage_many(
            "customers", query="SELECT id FROM customers LIMIT 2", set={"city": "Faro"}
        )
        assert area.commit().ok
        assert [entry.changes for entry in area.history()] == [2, 3]
        assert [c.values for c in again] == [{"city": "Faro"}] * 2
    finally:
        area.close()
    assert item_tables() == []


def test_a_row_staged_by_the_previous_version_on_an_item_of_a_compact_edit_does_not_jam_staging(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """A tabletalk of the previous version still running (it checked the schema when it
    opened the file) stages a change on an item a compact bulk edit holds, not knowing the
    edit: staging, listing and discarding still work, and that later change is the item's."""
    path = tmp_path / "staging.sqlite"
    area = StagingArea(store, path)
    try:
        staged = area.stage_many("t", query="SELECT id FROM t WHERE id < 6", set={"s": "bulk"})
        assert staged[0].key == {"id": 1}
        conn = sqlite3.connect(path)
        conn.execute(  # what the previous version's row-by-row path writes
            "INSERT INTO staged_changes (id, store, tbl, key_json, op, values_json, "
            "pre_image_json, origin, created_at) VALUES ('0000abcd', ?, 't', ?, 'update', "
            "'{\"s\":\"later\"}', NULL, 'cli', '2026-12-01T08:00:00Z')",
            (store.identity, '{"id":1}'),
        )
        conn.commit()
        conn.close()
        area.stage("t", "update", {"id": 6}, {"s": "six"})
        listed = {c.key["id"]: c.values["s"] for c in area.list()}
        assert listed == {1: "later", 2: "bulk", 3: "bulk", 4: "bulk", 5: "bulk", 6: "six"}
        assert area.discard(all=True) == 6 and area.count() == 0
    finally:
        area.close()


def test_a_bulk_edit_of_a_table_keyed_by_blobs_is_refused_as_row_by_row(tmp_path: Path) -> None:
    """A blob key has no JSON text (it shows as a placeholder that names no row): the edit is
    refused when staged, not staged to fail at commit."""
    db = tmp_path / "blobs.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE bk (k BLOB PRIMARY KEY, v)")
    conn.executemany("INSERT INTO bk VALUES (?, ?)", [(b"\x00\x01", 1), (b"\xff", 2)])
    conn.commit()
    conn.close()
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        with pytest.raises(BadKeyError, match="cannot name a blob"):
            area.stage_many("bk", query="SELECT k FROM bk", set={"v": 5})
        assert area.count() == 0
    finally:
        area.close()
        store.close()


def test_what_a_bulk_edit_returns_reads_on_when_another_process_expands_it_meanwhile(
    demo_store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The later changes are read after checking the edit is still compact: another process
    turning it into rows between the check and the read does not fail the read."""
    path = tmp_path / "staging.sqlite"
    area = StagingArea(demo_store, path)
    other_store = SQLiteStore.open(demo_store.path)
    other = StagingArea(other_store, path)
    connect = sqlite3.connect
    expanded: list[bool] = []

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)

        def trace(sql: str) -> None:
            if sql.startswith("SELECT tt_key") and not expanded:
                other.stage("customers", "update", {"id": 1}, {"city": "Faro"})  # expands it
                expanded.append(True)

        conn.set_trace_callback(trace)
        return conn

    try:
        staged = area.stage_many("orders", query="SELECT id FROM orders", set={"status": "x"})
        assert len(staged) > bulk.PREFIX
        monkeypatch.setattr("agent.staging.staged_batch.sqlite3.connect", traced)
        last = staged[-1]
        assert expanded and last.values == {"status": "x"}
        assert rows(path, "SELECT count(*) FROM staged_batches") == [(0,)]
    finally:
        area.close()
        other.close()
        other_store.close()


def test_a_compact_edit_commits_a_value_that_looks_like_the_sql_it_is_built_into(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """The store reads a lone compact edit through a SELECT template whose values are literals
    (and whose braces are doubled): text from the model that spells the template's database
    name or braces must land exactly as staged."""
    value = "tt_db_.x {db}. {{}} ' \" tt_db_."
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        area.stage_many("t", query="SELECT id FROM t", set={"s": value})
        assert area.commit().ok
    finally:
        area.close()
    conn = sqlite3.connect(store.sqlite_file)  # type: ignore[arg-type]
    try:
        assert {s for (s,) in conn.execute("SELECT s FROM t")} == {value}
    finally:
        conn.close()
