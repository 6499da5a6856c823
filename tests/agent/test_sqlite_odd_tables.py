"""Tables SQLite allows that look like something else: a column named like the row id, keys of
odd types. Each must read, stage and commit exactly the rows the user means."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.errors import BadKeyError
from agent.staging import StagingArea
from agent.stores.paging import PAGE_SIZE
from agent.stores.sqlite import SQLiteStore
from tests.support.sqlite_files import make_db


@pytest.mark.parametrize("kind", ["INTEGER", "TEXT"])
def test_a_column_named_rowid_in_a_table_without_a_key_changes_only_the_row_meant(
    tmp_path: Path, kind: str
) -> None:
    value = "7" if kind == "TEXT" else 7
    rows = [(value, f"n{i}") for i in range(450)]  # every row has the same "rowid" column
    db = make_db(tmp_path / "odd.sqlite", f"CREATE TABLE t (rowid {kind}, name TEXT);")
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO t VALUES (?, ?)", rows)
    store = SQLiteStore.open(db)
    # The table tab lists every row once, and its keys address them one by one.
    source = store.pages("t")
    pages = [source.page(n) for n in range(3)]
    keys = [k for p in pages for k in p.keys]
    assert [r[-1] for p in pages for r in p.rows] == [f"n{i}" for i in range(450)]
    assert len({tuple(k.items()) for k in keys}) == 450
    area = StagingArea(store, tmp_path / "staging.sqlite")
    change = area.stage("t", "update", keys[1], {"name": "changed"})
    assert change.pre_image is not None and change.pre_image["name"] == "n1"
    area.stage_many("t", keys=[keys[2], keys[3]], delete=True)
    report = area.commit()
    assert report.ok and len(report.committed) == 3
    with sqlite3.connect(db) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM t ORDER BY _rowid_")]
    assert names == ["n0", "changed", *[f"n{i}" for i in range(4, 450)]]
    # The column keeps its own name and value beside the key.
    item = store.get_item("t", keys[0])
    assert item is not None and item["rowid"] == value and item["name"] == "n0"


def test_a_table_whose_columns_hide_every_row_id_name_cannot_be_edited_by_guess(
    tmp_path: Path,
) -> None:
    db = make_db(
        tmp_path / "odd.sqlite",
        "CREATE TABLE t (rowid INTEGER, _rowid_ INTEGER, oid INTEGER, name TEXT);"
        "INSERT INTO t VALUES (1, 1, 1, 'a'), (1, 1, 1, 'b');",
    )
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    with pytest.raises(BadKeyError) as caught:
        area.stage("t", "update", {"rowid": 1}, {"name": "x"})
    assert "primary key" in caught.value.fix
    assert [r["name"] for r in store.query("SELECT name FROM t").rows] == ["a", "b"]


def test_a_query_naming_two_columns_alike_keeps_both_values(demo_store: SQLiteStore) -> None:
    sql = (
        "SELECT o.id, c.id, o.id AS \"id:1\", 'x' AS v, 'y' AS v FROM orders o "
        "JOIN customers c ON c.id = o.customer_id WHERE o.id != c.id ORDER BY o.id LIMIT 1"
    )
    result = demo_store.query(sql)
    (row,) = result.rows
    assert result.columns == ["id", "id:2", "id:1", "v", "v:1"]
    assert row["id"] == row["id:1"] != row["id:2"]
    assert (row["v"], row["v:1"]) == ("x", "y")
    batches = list(demo_store.query_batches(sql))
    assert [b.rows for b in batches] == [[row]]


ODD_KEYS = """
CREATE TABLE n (k NUMERIC PRIMARY KEY, v TEXT);
INSERT INTO n VALUES ('abc', 'text in a numeric key'), (10, 'ten');
CREATE TABLE c (a TEXT, b INTEGER, v TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
INSERT INTO c VALUES ('x', 'not a number', 'text in an integer key'), ('x', 1, 'one');
CREATE TABLE f (k FLOATING POINT PRIMARY KEY, v TEXT);
INSERT INTO f VALUES (1.5, 'a real in a column whose type name reads as INTEGER'), (2, 'two');
CREATE TABLE r (k REAL PRIMARY KEY, v TEXT);
INSERT INTO r VALUES ('NaN', 'text in a real key'), (0.0, 'zero');
CREATE TABLE b (k BLOB PRIMARY KEY, v TEXT);
INSERT INTO b VALUES (x'00ff', 'blob key');
CREATE TABLE i (id INTEGER PRIMARY KEY, v TEXT);
INSERT INTO i VALUES (1, 'one');
CREATE TABLE p (v TEXT);
INSERT INTO p VALUES ('a');
"""


def test_every_row_a_table_shows_can_be_named_by_the_key_it_shows(tmp_path: Path) -> None:
    db = make_db(tmp_path / "odd.sqlite", ODD_KEYS)
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    for table in ("n", "c", "r", "f"):
        for row in store.query(f"SELECT * FROM {table}").rows:
            key = {k: row[k] for k in store.describe_table(table).key_columns}
            area.stage(table, "update", key, {"v": f"{row['v']}!"})
    report = area.commit()
    assert report.ok and len(report.committed) == 8
    for table in ("n", "c", "r", "f"):
        assert all(r["v"].endswith("!") for r in store.query(f"SELECT v FROM {table}").rows)


def test_minus_zero_and_zero_are_one_key(tmp_path: Path) -> None:
    store = SQLiteStore.open(make_db(tmp_path / "odd.sqlite", ODD_KEYS))
    area = StagingArea(store, tmp_path / "staging.sqlite")
    first = area.stage("r", "update", {"k": 0.0}, {"v": "a"})
    second = area.stage("r", "update", {"k": -0.0}, {"v": "b"})
    assert second.id == first.id and area.count() == 1
    assert area.commit().ok
    assert store.query("SELECT v FROM r WHERE k = 0").rows == [{"v": "b"}]


def test_a_blob_key_shown_as_its_marker_is_refused_not_created_as_text(tmp_path: Path) -> None:
    store = SQLiteStore.open(make_db(tmp_path / "odd.sqlite", ODD_KEYS))
    area = StagingArea(store, tmp_path / "staging.sqlite")
    (row,) = store.query("SELECT k FROM b").rows
    for op, values in (("update", {"v": "x"}), ("create", {"v": "copy"})):
        with pytest.raises(BadKeyError) as caught:
            area.stage("b", op, {"k": row["k"]}, values)  # type: ignore[arg-type]
        assert "blob" in str(caught.value) and "SQL" in caught.value.fix
    assert area.count() == 0


def test_a_row_id_key_still_takes_only_integers(tmp_path: Path) -> None:
    store = SQLiteStore.open(make_db(tmp_path / "odd.sqlite", ODD_KEYS))
    area = StagingArea(store, tmp_path / "staging.sqlite")
    for table, key in (("i", {"id": "one"}), ("p", {"rowid": "x"})):
        with pytest.raises(BadKeyError):
            area.stage(table, "create", key, {"v": "x"})


def test_a_without_rowid_table_counts_and_pages_by_its_key(demo_store: SQLiteStore) -> None:
    """The demo's stock_levels (WITHOUT ROWID): a quoted "rowid" read as the string 'rowid'
    there, so counting its tab raised TypeError (an error modal) and its pages were ordered
    by a constant."""
    source = demo_store.pages("stock_levels")
    total = source.count()
    assert total == 180
    keys = []
    for number in range(-(-total // PAGE_SIZE)):
        keys.extend(tuple(k.values()) for k in source.page(number).keys)
    assert len(keys) == len(set(keys)) == total
    assert keys == sorted(keys)


def test_a_table_of_two_thousand_columns_stages_and_commits(tmp_path: Path) -> None:
    """SQLite allows 2,000 columns; a commit's self-checking statement would compare each one
    in a WHERE deeper than SQLite parses, so a table that wide takes the checked path."""
    columns = ", ".join(f"c{i}" for i in range(1999))
    db = make_db(tmp_path / "wide.sqlite", f"CREATE TABLE t (id INTEGER PRIMARY KEY, {columns});")
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO t (id, c0) VALUES (?, ?)", [(1, "a"), (2, "b"), (3, "c")])
    store = SQLiteStore.open(db)
    area = StagingArea(store, tmp_path / "staging.sqlite")
    try:
        area.stage("t", "update", {"id": 1}, {"c1998": "one"})
        area.stage_many("t", keys=[{"id": 2}, {"id": 3}], set={"c5": "bulk"})
        report = area.commit()
        assert report.ok and len(report.committed) == 3
    finally:
        area.close()
        store.close()
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT id, c0, c5, c1998 FROM t ORDER BY id").fetchall()
    assert found == [(1, "a", None, "one"), (2, "b", "bulk", None), (3, "c", "bulk", None)]
