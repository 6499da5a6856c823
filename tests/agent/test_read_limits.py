"""Reads of untrusted SQL: bounded by bytes, table-valued functions allowed, no-op writes refused."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from agent.errors import ReadOnlyQueryError, StoreError
from agent.stores.base import MAX_READ_BYTES
from agent.stores.sqlite import SQLiteStore
from agent.tools.base import ToolContext
from tests.support.tools import make_ctx, ok


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def big_store(tmp_path: Path) -> SQLiteStore:
    """A table of 20 rows holding 1 MB of text each (20 MB in all, over the 8 MB budget)."""
    path = tmp_path / "big.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT)")
    conn.executemany("INSERT INTO docs VALUES (?, ?)", [(i, "x" * 1_000_000) for i in range(1, 21)])
    conn.commit()
    conn.close()
    store = SQLiteStore.open(path)
    yield store
    store.close()


# -- defect 5: a byte budget ------------------------------------------------------------------


def test_a_result_over_the_byte_budget_stops_with_a_narrower_query(big_store: SQLiteStore) -> None:
    result = big_store.query("SELECT id, body FROM docs ORDER BY id", limit=500)
    assert result.truncated and result.over_budget
    assert 1 <= len(result.rows) < 20
    assert sum(len(r["body"]) for r in result.rows) <= MAX_READ_BYTES
    narrow = big_store.query("SELECT id, substr(body, 1, 10) AS head FROM docs", limit=500)
    assert len(narrow.rows) == 20 and not narrow.truncated


def test_a_huge_generated_value_fails_cleanly_instead_of_being_built(
    demo_store: SQLiteStore,
) -> None:
    with pytest.raises(StoreError) as caught:
        demo_store.query("SELECT zeroblob(50000000) FROM orders", limit=500)
    assert "larger than the 8 MB limit of one read" in caught.value.message
    assert "substr(" in caught.value.fix
    assert demo_store.query("SELECT 1 AS ok").rows == [{"ok": 1}]


def test_one_row_over_the_budget_is_refused_not_returned(demo_store: SQLiteStore) -> None:
    with pytest.raises(StoreError) as caught:
        demo_store.query("SELECT zeroblob(5000000) AS a, zeroblob(5000000) AS b")
    assert "one row of this result is larger than the 8 MB limit" in caught.value.message


def test_run_query_says_the_byte_budget_cut_it(tmp_path: Path, big_store: SQLiteStore) -> None:
    ctx: ToolContext = make_ctx(big_store.path, tmp_path)
    try:
        result = ok(ctx, "runQuery", query="SELECT id, body FROM docs", limit=500)
    finally:
        ctx.staging.close()
        ctx.store.close()
    assert "8 MB limit of one read" in result["truncated"]
    assert "substr(column, 1, 200)" in result["truncated"]
    assert result["rowCount"] < 20


# -- defect 13: read-only table-valued functions ---------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT value FROM json_each('[1,2]')", [{"value": 1}, {"value": 2}]),
        ("SELECT count(*) AS n FROM json_tree('{\"a\": [1]}') WHERE type = 'integer'", [{"n": 1}]),
        ("SELECT count(*) > 0 AS ok FROM dbstat WHERE name = 'orders'", [{"ok": 1}]),
        ("SELECT count(*) > 0 AS ok FROM dbstat('main')", [{"ok": 1}]),
    ],
)
def test_read_only_table_valued_functions_are_reads(
    demo_store: SQLiteStore, sql: str, expected: list[dict[str, int]]
) -> None:
    assert demo_store.query(sql).rows == expected


def test_table_valued_functions_still_work_after_a_schema_change(demo_store: SQLiteStore) -> None:
    assert demo_store.query("SELECT count(*) AS n FROM json_each('[1]')").rows == [{"n": 1}]
    conn = sqlite3.connect(demo_store.path)
    conn.execute("CREATE TABLE later (a)")
    conn.commit()
    conn.close()
    assert demo_store.query("SELECT count(*) AS n FROM json_each('[1,2]')").rows == [{"n": 2}]
    assert demo_store.query("SELECT count(*) > 0 AS ok FROM dbstat").rows == [{"ok": 1}]


# -- defect 14: a write that changes nothing is still a write ---------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "DROP INDEX IF EXISTS no_such_index",
        "DROP TABLE IF EXISTS no_such_table",
        "DROP VIEW IF EXISTS no_such_view",
        "DROP TRIGGER IF EXISTS no_such_trigger",
        "DELETE FROM orders WHERE 0",
        "UPDATE orders SET status = status WHERE 0",
        "CREATE TABLE IF NOT EXISTS orders (a)",
        "CREATE INDEX IF NOT EXISTS orders_by_status ON orders(status)",
    ],
)
def test_no_op_writes_are_refused_as_writes(demo_store: SQLiteStore, sql: str) -> None:
    before = digest(demo_store.path)
    with pytest.raises(ReadOnlyQueryError) as caught:
        demo_store.query(sql)
    assert "only read-only SELECT/WITH queries are allowed" in caught.value.message
    assert digest(demo_store.path) == before


def _add_search_tables(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE VIRTUAL TABLE notes USING fts5(body)")
    conn.execute("INSERT INTO notes VALUES ('late delivery'), ('on time')")
    conn.execute("CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1)")
    conn.execute("INSERT INTO boxes VALUES (1, 0, 5)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("created_after_open", [False, True])
def test_the_databases_own_virtual_tables_are_readable_not_writable(
    demo_path: Path, created_after_open: bool
) -> None:
    if not created_after_open:
        _add_search_tables(demo_path)
    store = SQLiteStore.open(demo_path)
    try:
        if created_after_open:
            assert store.query("SELECT 1 AS ok").rows == [{"ok": 1}]
            _add_search_tables(demo_path)
        found = store.query("SELECT body FROM notes WHERE notes MATCH 'late'").rows
        assert found == [{"body": "late delivery"}]
        assert store.query("SELECT id FROM boxes WHERE x1 > 3").rows == [{"id": 1}]
        before = digest(demo_path)
        for sql in (
            "INSERT INTO notes VALUES ('x')",
            "DELETE FROM boxes",
            "PRAGMA data_version = 3",
        ):
            with pytest.raises(ReadOnlyQueryError):
                store.query(sql)
        assert digest(demo_path) == before
    finally:
        store.close()


@pytest.mark.parametrize(
    "sql",
    ["PRAGMA table_info('no_such_table')", "SELECT * FROM orders WHERE 0", "EXPLAIN SELECT 1"],
)
def test_reads_without_rows_are_still_reads(demo_store: SQLiteStore, sql: str) -> None:
    assert demo_store.query(sql).columns


def test_long_column_names_count_against_the_byte_budget(tmp_path: Path) -> None:
    """Each row is read out as name: value pairs, so a 1 MB column name costs 1 MB per row:
    50 short rows of such a table were a 51 MB tool result."""
    path = tmp_path / "wide.sqlite"
    name = "n" * 1_000_000
    with sqlite3.connect(path) as conn:
        conn.execute(f'CREATE TABLE t (id INTEGER PRIMARY KEY, "{name}" TEXT)')
        conn.executemany("INSERT INTO t VALUES (?, 'v')", [(i,) for i in range(1, 51)])
    ctx: ToolContext = make_ctx(path, tmp_path)
    try:
        result = ok(ctx, "runQuery", query="SELECT * FROM t", limit=50)
    finally:
        ctx.staging.close()
        ctx.store.close()
    assert 1 <= result["rowCount"] <= MAX_READ_BYTES // len(name) < 50
    assert "narrow" in str(result).lower() or "substr" in str(result)
