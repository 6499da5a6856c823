"""The SQLite store: reads, read-only enforcement, bad input, and all-or-nothing apply."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.errors import (
    BadKeyError,
    ReadOnlyQueryError,
    StoreError,
    UnknownColumnError,
    UnknownTableError,
)
from agent.stop import reads_stop_when
from agent.stores.base import ChangeToApply
from agent.stores.sqlite import SQLiteStore
from tests.support.sqlite_files import make_db


@pytest.fixture
def shapes(tmp_path: Path) -> SQLiteStore:
    """Tables with every key shape: implicit rowid, composite rowid PK, WITHOUT ROWID, text PK."""
    path = make_db(
        tmp_path / "shapes.sqlite",
        """
        CREATE TABLE notes (body TEXT, tag TEXT, data BLOB);
        INSERT INTO notes VALUES ('first', 'a', x'00ff10'), ('second', 'b', NULL);
        CREATE TABLE grades (student TEXT, course INTEGER, grade REAL, PRIMARY KEY (course, student));
        INSERT INTO grades VALUES ('ann', 1, 3.5), ('bob', 1, 2.0), ('ann', 2, 4.0);
        CREATE TABLE tags (name TEXT PRIMARY KEY, uses INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO tags VALUES ('red', 3), ('blue', 1);
        CREATE UNIQUE INDEX grades_by_student ON grades(student, course);
        """,
    )
    store = SQLiteStore.open(path)
    yield store
    store.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- reads ------------------------------------------------------------------------------------


def test_demo_tables_and_orders_schema(demo_store: SQLiteStore) -> None:
    assert demo_store.kind == "sqlite"
    assert demo_store.identity == f"sqlite:{demo_store.path}"
    assert demo_store.label == "demo.sqlite"
    assert {"customers", "products", "orders"} <= set(demo_store.list_tables())
    info = demo_store.describe_table("orders")
    assert info.key_columns == ("id",)
    assert [c.name for c in info.columns][:3] == ["id", "customer_id", "product_id"]
    assert {i.name: i.columns for i in info.indexes} == {
        "orders_customer_id": ("customer_id",),
        "orders_status": ("status",),
    }
    assert info.row_count >= 2000
    assert info.to_dict()["rowCount"] == info.row_count


def test_internal_tables_are_hidden(tmp_path: Path) -> None:
    path = make_db(tmp_path / "s.sqlite", "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT);")
    store = SQLiteStore.open(path)
    assert store.list_tables() == ["t"]  # sqlite_sequence is not listed


def test_rowid_table_gets_rowid_key(shapes: SQLiteStore) -> None:
    info = shapes.describe_table("notes")
    assert info.key_columns == ("rowid",)
    assert info.rowid_key is True
    item = shapes.get_item("notes", {"rowid": "2"})
    assert item == {"rowid": 2, "body": "second", "tag": "b", "data": None}


def test_composite_key_in_primary_key_order(shapes: SQLiteStore) -> None:
    info = shapes.describe_table("grades")
    assert info.key_columns == ("course", "student")
    assert shapes.get_item("grades", {"student": "bob", "course": "1"})["grade"] == 2.0
    assert shapes.get_item("grades", {"student": "bob", "course": 2}) is None
    unique = {i.name: i.unique for i in info.indexes}
    assert unique["grades_by_student"] is True


def test_without_rowid_table(shapes: SQLiteStore) -> None:
    info = shapes.describe_table("tags")
    assert info.key_columns == ("name",)
    assert not info.rowid_key
    assert shapes.get_item("tags", {"name": "red"}) == {"name": "red", "uses": 3}
    stats = shapes.index_stats("tags")
    assert any(s["coversKey"] for s in stats)


def test_blobs_come_back_as_json_friendly_markers(shapes: SQLiteStore) -> None:
    item = shapes.get_item("notes", {"rowid": 1})
    assert isinstance(item["data"], str) and item["data"].startswith("<blob 3 bytes")
    rows = shapes.query("SELECT data FROM notes WHERE rowid = 1").rows
    assert rows == [{"data": item["data"]}]


def test_query_limit_and_truncation(demo_store: SQLiteStore) -> None:
    result = demo_store.query("SELECT id, status FROM orders ORDER BY id", limit=3)
    assert result.columns == ["id", "status"]
    assert [r["id"] for r in result.rows] == [1, 2, 3]
    assert result.truncated
    whole = demo_store.query("SELECT count(*) AS n FROM orders")
    assert not whole.truncated and whole.rows[0]["n"] >= 2000


def test_count_sample_values_and_index_stats(demo_store: SQLiteStore) -> None:
    total = demo_store.count("orders")
    pending = demo_store.count("orders", "status = 'pending'")
    assert 0 < pending < total
    samples = demo_store.sample_values("orders", "status")
    assert {s["value"] for s in samples} == {"pending", "shipped", "delivered", "cancelled"}
    counts = [s["count"] for s in samples]
    assert counts == sorted(counts, reverse=True) and sum(counts) == total
    stats = {s["name"]: s for s in demo_store.index_stats("orders")}
    assert stats["orders_status"]["distinctKeys"] == 4
    assert stats["orders_status"]["entries"] == total
    assert stats["(primary key)"]["coversKey"] and not stats["orders_status"]["coversKey"]


def test_index_stats_uses_sqlite_stat1_when_present(demo_path: Path) -> None:
    conn = sqlite3.connect(demo_path)
    conn.execute("ANALYZE")
    conn.commit()
    conn.close()
    store = SQLiteStore.open(demo_path)
    stats = {s["name"]: s for s in store.index_stats("orders")}
    assert stats["orders_status"]["source"] == "sqlite_stat1"
    assert stats["orders_status"]["distinctKeys"] >= 1


# -- read-only enforcement ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO orders (id, customer_id, product_id, quantity, total, status, created_at) "
        "VALUES (999999, 1, 1, 1, 1.0, 'pending', 'x')",
        "UPDATE orders SET status = 'cancelled'",
        "DELETE FROM orders",
        "DROP TABLE orders",
        "CREATE TABLE sneaky (a)",
        "CREATE TEMP TABLE sneaky (a)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA query_only = OFF",
        "PRAGMA journal_mode = WAL",
        "PRAGMA user_version = 7",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "BEGIN",
        "WITH x AS (SELECT 1) DELETE FROM orders",
        "SELECT load_extension('nope')",
    ],
)
def test_writes_are_refused_by_the_database(demo_store: SQLiteStore, sql: str) -> None:
    before = digest(demo_store.path)
    with pytest.raises(ReadOnlyQueryError) as caught:
        demo_store.query(sql)
    assert "only read-only SELECT/WITH queries are allowed" in caught.value.message
    assert caught.value.fix
    assert digest(demo_store.path) == before
    assert demo_store.query("SELECT 1 AS ok").rows == [{"ok": 1}]  # connection still usable


def test_vacuum_into_cannot_write_a_copy(demo_store: SQLiteStore, tmp_path: Path) -> None:
    target = tmp_path / "copy.sqlite"
    with pytest.raises(ReadOnlyQueryError):
        demo_store.query(f"VACUUM INTO '{target}'")
    assert not target.exists()


def test_count_where_cannot_write(demo_store: SQLiteStore) -> None:
    with pytest.raises(StoreError):
        demo_store.count("orders", "1); DELETE FROM orders; SELECT (1")
    assert demo_store.count("orders") >= 2000


def test_one_statement_per_query(demo_store: SQLiteStore) -> None:
    with pytest.raises(StoreError, match="one SQL statement"):
        demo_store.query("SELECT 1; DELETE FROM orders")
    assert demo_store.count("orders") >= 2000


def test_sql_error_carries_sqlite_message_and_hint(demo_store: SQLiteStore) -> None:
    with pytest.raises(StoreError) as caught:
        demo_store.query("SELECT nope FROM orders")
    assert "no such column: nope" in caught.value.message
    assert "describeTable" in caught.value.fix


# -- bad input ----------------------------------------------------------------------------------


def test_unknown_table_lists_valid_tables(demo_store: SQLiteStore) -> None:
    with pytest.raises(UnknownTableError) as caught:
        demo_store.describe_table("ordres")
    assert "ordres" in caught.value.message
    assert "orders" in caught.value.fix and "customers" in caught.value.fix


def test_unknown_column_lists_valid_columns(demo_store: SQLiteStore) -> None:
    with pytest.raises(UnknownColumnError) as caught:
        demo_store.sample_values("orders", "colour")
    assert "status" in caught.value.fix


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        ({}, "object"),
        ("5", "object"),
        ({"id": "five"}, "does not fit"),
        ({"id": 1, "status": "x"}, "not part of the key"),
        ({"idd": 1}, "not a column"),
        ({"id": None}, "cannot be"),
        ({"id": True}, "cannot be"),
    ],
)
def test_malformed_keys(demo_store: SQLiteStore, key: object, needle: str) -> None:
    with pytest.raises(BadKeyError) as caught:
        demo_store.get_item("orders", key)  # type: ignore[arg-type]
    assert needle in caught.value.message
    assert caught.value.fix


def test_missing_composite_key_part(demo_store: SQLiteStore) -> None:
    with pytest.raises(BadKeyError, match="missing product_id"):
        demo_store.get_item("stock_levels", {"warehouse": "north"})


def test_key_coercion(demo_store: SQLiteStore) -> None:
    assert demo_store.normalize_key("orders", {"ID": "5"}) == {"id": 5}
    assert demo_store.normalize_key("orders", {"id": 5.0}) == {"id": 5}
    key = demo_store.normalize_key("stock_levels", {"product_id": "3", "warehouse": "north"})
    assert list(key.items()) == [("warehouse", "north"), ("product_id", 3)]


def test_missing_file_names_path_and_db_flag(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        SQLiteStore.open(tmp_path / "nope.sqlite")
    assert "nope.sqlite" in caught.value.message and "--db" in caught.value.fix


def test_a_database_locked_by_another_program_says_so_at_open(demo_path: Path) -> None:
    """A file another program held an exclusive lock on was reported as one that "cannot be
    opened as a SQLite database", with the fix to check it is one; it is named as locked."""
    holder = sqlite3.connect(demo_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as caught:
            SQLiteStore.open(demo_path, busy_timeout_s=0.1)
    finally:
        holder.close()
    assert "locked by another program" in caught.value.message
    assert "close it" in (caught.value.fix or "")
    SQLiteStore.open(demo_path).close()  # once the lock is gone it opens


def test_reads_while_another_program_holds_the_lock_say_so(demo_path: Path) -> None:
    """A query and a table tab's page read while another program held an exclusive lock
    said "SQLite error: database is locked" with the fix to check the table and column
    names (the tab: to check the file is not corrupt); both name the lock and its fix."""
    from agent.stores.sqlite_paging import SQLiteRowSource

    store = SQLiteStore.open(demo_path)
    holder = sqlite3.connect(demo_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as query:
            store.query("SELECT count(*) FROM orders")
        with pytest.raises(StoreError) as page:
            SQLiteRowSource(demo_path, "orders").page(0)
    finally:
        holder.close()
        store.close()
    for caught in (query, page):
        assert "locked by another program" in caught.value.message, caught.value.message
        assert "close it" in (caught.value.fix or ""), caught.value.fix
    with pytest.raises(StoreError, match="no such column: busy"):  # a name is not a lock
        SQLiteStore.open(demo_path).query("SELECT busy FROM orders")


def test_create_makes_an_empty_database(tmp_path: Path) -> None:
    store = SQLiteStore.open(tmp_path / "sub" / "new.sqlite", create=True)
    assert store.list_tables() == []


def test_non_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, definitely not a database\n")
    with pytest.raises(StoreError, match="is not a SQLite database"):
        SQLiteStore.open(path)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        SQLiteStore.open(tmp_path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "shop.sqlite"
    os.mkfifo(fifo)
    done = subprocess.run(  # in a child process: opening a FIFO would block this one forever
        [sys.executable, "-m", "agent", "info", "--db", str(fifo)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "is a FIFO (named pipe), not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


def damage(path: Path, how: str) -> Path:
    data = bytearray(path.read_bytes())
    if how == "schema page":
        data[100:4096] = b"\xff" * (4096 - 100)
    else:  # an impossible page size in the header
        data[16:18] = b"\x00\x03"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how", ["schema page", "page size"])
def test_a_damaged_database_is_named_as_damaged_at_open(demo_path: Path, how: str) -> None:
    damage(demo_path, how)
    with pytest.raises(StoreError) as caught:
        SQLiteStore.open(demo_path)
    assert "is damaged or not a SQLite database" in caught.value.message
    assert "describeTable" not in (caught.value.fix or "")
    assert "integrity_check" in (caught.value.fix or "")


def test_damage_found_by_a_query_is_named_as_damage(demo_path: Path) -> None:
    store = SQLiteStore.open(demo_path)
    with sqlite3.connect(demo_path) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'orders'").fetchone()[
            0
        ]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with demo_path.open("r+b") as handle:  # overwrite the orders table's root page
        handle.seek((root - 1) * page_size)
        handle.write(b"\xee" * page_size)
    with pytest.raises(StoreError) as caught:
        store.query("SELECT * FROM orders NOT INDEXED")
    assert "is damaged or not a SQLite database" in caught.value.message
    assert "describeTable" not in (caught.value.fix or "")
    store.close()


def test_read_only_file_reads_but_refuses_commit(read_only_demo: Path) -> None:
    before = digest(read_only_demo)
    store = SQLiteStore.open(read_only_demo)
    one = store.get_item("orders", {"id": 1})
    assert one is not None and store.count("orders") >= 2000
    change = ChangeToApply("c1", "orders", {"id": 1}, "update", {"status": "x"}, one)
    with pytest.raises(StoreError) as caught:
        store.apply([change])
    assert "nothing was committed" in caught.value.message
    assert "writable" in caught.value.fix
    assert digest(read_only_demo) == before


# -- apply -------------------------------------------------------------------------------------


def test_a_column_added_since_staging_is_named_in_the_conflict(demo_store: SQLiteStore) -> None:
    one = demo_store.get_item("orders", {"id": 1})
    assert one is not None
    demo_store._conn.execute("ALTER TABLE orders ADD COLUMN audited TEXT DEFAULT 'no'")
    change = ChangeToApply("a", "orders", {"id": 1}, "update", {"quantity": 99}, one)
    [conflict] = demo_store.apply([change]).conflicts
    assert "audited: (absent) → now 'no'" in conflict.reason, conflict.reason


def test_apply_is_all_or_nothing(demo_store: SQLiteStore) -> None:
    one = demo_store.get_item("orders", {"id": 1})
    two = demo_store.get_item("orders", {"id": 2})
    stale = {**two, "status": "not what is there"}
    changes = [
        ChangeToApply("a", "orders", {"id": 1}, "update", {"quantity": 99}, one),
        ChangeToApply("b", "orders", {"id": 2}, "update", {"quantity": 98}, stale),
        ChangeToApply("c", "orders", {"id": 1}, "create", {"quantity": 1}, None),
    ]
    result = demo_store.apply(changes)
    assert result.applied == []
    assert {c.change_id for c in result.conflicts} == {"b", "c"}
    by_id = {c.change_id: c for c in result.conflicts}
    assert by_id["b"].current == two and "changed since it was staged" in by_id["b"].reason
    assert demo_store.get_item("orders", {"id": 1}) == one


def test_apply_commits_creates_updates_and_deletes(demo_store: SQLiteStore) -> None:
    one = demo_store.get_item("orders", {"id": 1})
    three = demo_store.get_item("orders", {"id": 3})
    row = {k: v for k, v in one.items() if k != "id"}
    seen: list[tuple[int, int]] = []
    result = demo_store.apply(
        [
            ChangeToApply("u", "orders", {"id": 1}, "update", {"status": "shipped"}, one),
            ChangeToApply("d", "orders", {"id": 3}, "delete", {}, three),
            ChangeToApply("c", "orders", {"id": 900000}, "create", row, None),
        ],
        progress=lambda done, total: seen.append((done, total)),
    )
    assert result.applied == ["u", "d", "c"] and not result.conflicts
    assert demo_store.get_item("orders", {"id": 1})["status"] == "shipped"
    assert demo_store.get_item("orders", {"id": 3}) is None
    assert demo_store.get_item("orders", {"id": 900000})["total"] == one["total"]
    assert seen[-1] == (3, 3)


def test_constraint_failure_is_a_conflict_and_rolls_back(demo_store: SQLiteStore) -> None:
    one = demo_store.get_item("customers", {"id": 1})
    two = demo_store.get_item("customers", {"id": 2})
    result = demo_store.apply(
        [
            ChangeToApply("ok", "customers", {"id": 1}, "update", {"city": "Nowhere"}, one),
            ChangeToApply("dup", "customers", {"id": 2}, "update", {"email": one["email"]}, two),
        ]
    )
    assert result.applied == []
    assert [c.change_id for c in result.conflicts] == ["dup"]
    assert "UNIQUE" in result.conflicts[0].reason
    assert demo_store.get_item("customers", {"id": 1}) == one


def test_runaway_query_is_stopped(demo_path: Path) -> None:
    demo_store = SQLiteStore.open(demo_path, query_timeout_s=0.2)
    runaway = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    )
    with pytest.raises(StoreError) as caught:
        demo_store.query(runaway)
    assert "was stopped" in caught.value.message and "LIMIT" in caught.value.fix
    assert demo_store.count("orders") >= 2000


RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def _read_in_thread(
    store: SQLiteStore, sql: str, stop: threading.Event
) -> tuple[threading.Thread, list[BaseException]]:
    """`store.query(sql)` on a thread whose reads stop when `stop` is set (as a turn's tools)."""
    outcome: list[BaseException] = []

    def run() -> None:
        with reads_stop_when(stop.is_set):
            try:
                store.query(sql)
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    return worker, outcome


def _stopped(outcome: list[BaseException]) -> bool:
    (error,) = outcome
    return isinstance(error, StoreError) and error.message == "the query was stopped"


def test_stop_ends_a_running_query_at_once_and_the_reader_stays_usable(demo_path: Path) -> None:
    store = SQLiteStore.open(demo_path, query_timeout_s=60)
    stop = threading.Event()
    worker, outcome = _read_in_thread(store, RUNAWAY, stop)
    time.sleep(0.2)  # the query runs
    stop.set()
    worker.join(10)
    assert not worker.is_alive() and _stopped(outcome)  # not reported as a timeout
    assert outcome[0].fix and "Stop" in outcome[0].fix
    assert store.query("SELECT 1 AS ok").rows == [{"ok": 1}]  # lock released, connection fine
    assert store.count("orders") >= 2000
    store.close()


def test_a_stop_that_came_before_the_read_began_stops_it_too(demo_path: Path) -> None:
    """Stop pressed while a tool still checks its input: its read never runs (an interrupt of
    the running query would have found none, and the read would have run to its time limit)."""
    store = SQLiteStore.open(demo_path, query_timeout_s=60)
    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    worker, outcome = _read_in_thread(store, RUNAWAY, stop)
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - started < 5 and _stopped(outcome)
    store.close()


def test_stop_ends_a_wait_for_another_threads_read_and_leaves_that_read_running(
    demo_path: Path,
) -> None:
    """The chat's Stop stops the chat's read, even while it waits for the connection, and not
    a read of another part of the app (here a runaway one that holds the connection)."""
    store = SQLiteStore.open(demo_path, query_timeout_s=60)
    other_stop, chat_stop = threading.Event(), threading.Event()
    other, other_outcome = _read_in_thread(store, RUNAWAY, other_stop)
    time.sleep(0.2)  # the other read holds the connection
    chat, chat_outcome = _read_in_thread(store, "SELECT count(*) FROM orders", chat_stop)
    time.sleep(0.2)  # the chat's read waits for it
    chat_stop.set()
    chat.join(10)
    assert not chat.is_alive() and _stopped(chat_outcome)
    assert other.is_alive() and not other_outcome  # the other read goes on
    other_stop.set()
    other.join(10)
    assert _stopped(other_outcome)
    store.close()


def test_timeout_says_it_ran_too_long(demo_path: Path) -> None:
    store = SQLiteStore.open(demo_path, query_timeout_s=0.1)
    with pytest.raises(StoreError) as caught:
        store.query(RUNAWAY)
    assert "ran longer than 0.1 s" in caught.value.message
    assert store.query("SELECT 1 AS ok").rows == [{"ok": 1}]
    store.close()


@pytest.mark.parametrize(
    ("sql", "column"),
    [
        ("SELECT name FROM pragma_table_info('orders') ORDER BY cid", "name"),
        ("SELECT name FROM pragma_index_list('orders')", "name"),
        ("SELECT i.name FROM pragma_index_list('orders') l, pragma_index_info(l.name) i", "name"),
        ("SELECT \"table\" FROM pragma_foreign_key_list('orders')", "table"),
    ],
)
def test_table_valued_read_only_pragmas_work(
    demo_store: SQLiteStore, sql: str, column: str
) -> None:
    rows = demo_store.query(sql).rows
    assert rows and all(r[column] for r in rows)


def test_table_valued_pragma_sees_a_table_created_later(demo_store: SQLiteStore) -> None:
    conn = sqlite3.connect(demo_store.path)
    conn.execute("CREATE TABLE later (a INTEGER PRIMARY KEY, b TEXT)")
    conn.commit()
    conn.close()
    rows = demo_store.query("SELECT name FROM pragma_table_info('later')").rows
    assert [r["name"] for r in rows] == ["a", "b"]


@pytest.mark.parametrize(
    "sql",
    ["PRAGMA integrity_check", "SELECT * FROM pragma_integrity_check", "PRAGMA freelist_count"],
)
def test_refused_read_only_pragmas_are_not_called_writes(demo_store: SQLiteStore, sql: str) -> None:
    with pytest.raises(ReadOnlyQueryError) as caught:
        demo_store.query(sql)
    assert "is not allowed here" in caught.value.message
    assert "would change" not in caught.value.message
    assert "pragma_table_info" in caught.value.fix


# -- values SQLite cannot store ------------------------------------------------------------------


@pytest.mark.parametrize("key", [{"id": 2**63}, {"id": str(2**70)}, {"id": -(2**63) - 1}])
def test_keys_outside_the_integer_range_are_refused(demo_store: SQLiteStore, key: dict) -> None:
    with pytest.raises(BadKeyError) as caught:
        demo_store.get_item("orders", key)
    assert "'id'" in caught.value.message and "9223372036854775807" in caught.value.message
    assert "an integer value" in caught.value.fix


def test_non_finite_real_key_is_refused(tmp_path: Path) -> None:
    path = make_db(tmp_path / "r.sqlite", "CREATE TABLE m (x REAL PRIMARY KEY, v TEXT);")
    store = SQLiteStore.open(path)
    for bad in (float("nan"), float("inf"), "1e400"):
        with pytest.raises(BadKeyError, match="not a finite number"):
            store.get_item("m", {"x": bad})
    store.close()


def test_key_type_hint_uses_the_right_article(demo_store: SQLiteStore) -> None:
    with pytest.raises(BadKeyError) as caught:
        demo_store.get_item("orders", {"id": "five"})
    assert "Give id an integer value." in caught.value.fix


@pytest.mark.parametrize("bad", [2**70, -(2**64)])
def test_apply_turns_unbindable_values_into_a_store_error(
    demo_store: SQLiteStore, bad: int
) -> None:
    row = demo_store.get_item("orders", {"id": 1})
    change = ChangeToApply("c1", "orders", {"id": 1}, "update", {"total": bad}, row)
    with pytest.raises(StoreError) as caught:
        demo_store.apply([change])
    assert "nothing was committed" in caught.value.message and caught.value.fix
    assert demo_store.get_item("orders", {"id": 1}) == row
    assert demo_store.apply(  # the connection is not left inside a transaction
        [ChangeToApply("c2", "orders", {"id": 1}, "update", {"quantity": 9}, row)]
    ).applied == ["c2"]


def test_commit_against_a_locked_database_says_so(demo_path: Path) -> None:
    store = SQLiteStore.open(demo_path, busy_timeout_s=0.05)
    row = store.get_item("orders", {"id": 1})
    other = sqlite3.connect(demo_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    change = ChangeToApply("c1", "orders", {"id": 1}, "update", {"quantity": 9}, row)
    with pytest.raises(StoreError) as caught:
        store.apply([change])
    assert "locked" in caught.value.message and "nothing was committed" in caught.value.message
    assert "Close the other program" in caught.value.fix
    other.execute("ROLLBACK")
    assert store.apply([change]).applied == ["c1"]
    other.close()
    store.close()


def test_a_reader_blocking_the_final_commit_says_locked(demo_path: Path) -> None:
    """Rollback-journal mode: another program's open read keeps COMMIT from finishing."""
    store = SQLiteStore.open(demo_path, busy_timeout_s=0.05)
    row = store.get_item("orders", {"id": 1})
    other = sqlite3.connect(demo_path, isolation_level=None)
    other.execute("BEGIN")
    other.execute("SELECT count(*) FROM orders").fetchone()  # holds a SHARED lock
    change = ChangeToApply("c1", "orders", {"id": 1}, "update", {"quantity": 9}, row)
    with pytest.raises(StoreError) as caught:
        store.apply([change])
    assert "locked" in caught.value.message and "Close the other program" in caught.value.fix
    other.execute("COMMIT")
    other.close()
    assert store.get_item("orders", {"id": 1}) == row
    assert store.apply([change]).applied == ["c1"]
    store.close()


def test_holds_compares_as_sqlite_does(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "h.sqlite",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, r REAL, u, b BLOB);"
        "INSERT INTO t VALUES (1, 5, 5.0, 1, x'01');",
    )
    store = SQLiteStore.open(path)
    blob = store.get_item("t", {"id": 1})["b"]
    assert store.holds("t", {"id": 1}, {"n": "5", "r": 5, "u": 1, "b": blob})
    assert not store.holds("t", {"id": 1}, {"u": "1"})  # untyped column: text '1' is not 1
    assert not store.holds("t", {"id": 1}, {"n": 6})
    assert not store.holds("t", {"id": 2}, {"n": 5})
    assert not store.holds("t", {"id": 1}, {"n": 5}, whole=True)
    assert store.holds("t", {"id": 1}, {"id": 1, "n": 5, "r": 5.0, "u": 1, "b": blob}, whole=True)
    store.close()


def test_the_home_list_says_row_or_rows_as_the_count_reads(tmp_path: Path) -> None:
    path = make_db(
        tmp_path / "sizes.sqlite",
        "CREATE TABLE one (id INTEGER PRIMARY KEY); INSERT INTO one VALUES (1);"
        "CREATE TABLE none_ (id INTEGER PRIMARY KEY);"
        "CREATE TABLE many (id INTEGER PRIMARY KEY); INSERT INTO many VALUES (1), (2);",
    )
    store = SQLiteStore(path)
    labels = [store.size_label(table) for table in ("one", "none_", "many")]
    assert labels == ["1 row", "0 rows", "2 rows"]


def test_opening_a_store_builds_no_pragma_table_until_a_query_uses_one(
    demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building SQLite's ~70 pragma tables took the app's start-up tens of statements before
    its first screen; now the first query that needs one builds them, and then runs."""
    from agent.stores import sqlite_readonly

    statements: list[str] = []
    connect = sqlite_readonly.connect_read_only

    def traced(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite_readonly, "connect_read_only", traced)
    store = SQLiteStore.open(demo_path)
    assert store.list_tables()
    assert not [s for s in statements if "pragma_" in s.lower()]
    rows = store.query("SELECT name FROM pragma_table_info('orders') ORDER BY cid").rows
    assert rows[0]["name"] == "id"
    assert [s for s in statements if "FROM pragma_table_info WHERE 0" in s]
    with pytest.raises(ReadOnlyQueryError) as caught:
        store.query("SELECT * FROM pragma_integrity_check")
    assert "PRAGMA integrity_check is not allowed here" in caught.value.message
    store.close()


def test_stop_ends_a_wait_for_the_connection_to_warm_a_pragma_table(
    demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read meeting a pragma table for the first time warms the connection and runs again;
    another thread's long read takes the connection in between: the chat's Stop ends the
    warm-up's wait at once, as it ends any read's wait for the connection."""
    from agent.stores.sqlite_readonly import ReadOnlyConnection

    store = SQLiteStore.open(demo_path, query_timeout_s=60)
    other_stop, chat_stop = threading.Event(), threading.Event()
    warm = ReadOnlyConnection._warm_new_virtual_tables
    others: list[tuple[threading.Thread, list[BaseException]]] = []

    def warm_after_another_read(reader: ReadOnlyConnection) -> None:
        others.append(_read_in_thread(store, RUNAWAY, other_stop))
        while not reader._lock.locked():  # the other read holds the connection
            time.sleep(0.01)
        chat_stop.set()  # Stop, pressed while the chat's read waits to warm it
        warm(reader)

    monkeypatch.setattr(ReadOnlyConnection, "_warm_new_virtual_tables", warm_after_another_read)
    chat, chat_outcome = _read_in_thread(
        store, "SELECT name FROM pragma_table_info('orders')", chat_stop
    )
    try:
        chat.join(3)
        assert not chat.is_alive() and _stopped(chat_outcome)
        ((other, other_outcome),) = others
        assert other.is_alive() and not other_outcome  # the other read goes on
    finally:
        other_stop.set()
        chat.join(10)
        for other, _ in others:
            other.join(10)
        store.close()
