"""A bulk edit on a SQLite store is staged by one INSERT … SELECT (agent/staging/bulk.py): the
staged pre-images and keys must be exactly what the row-by-row path reads, value and type, so
commits, conflicts and folding behave the same."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.errors import StagingError, TabletalkError
from agent.staging import StagingArea, bulk
from agent.staging.commit import commit_changes, pending_all
from agent.stop import reads_stop_when
from agent.stores.sqlite import SQLiteStore

AWKWARD_TEXT = 'quote " back \\ ctrl \x01\x1f tab \t é € 😀 \u2028 end'
ROWS: list[tuple[Any, ...]] = [
    (1, 0.1 + 0.2, 2**63 - 1, AWKWARD_TEXT, b"\x00\xffblob", 7),
    (2, 1 / 3, -(2**63), "", None, 2.5),
    (3, 1e300, 1.5, "plain", b"", "text"),
    (4, 5.0, None, None, None, None),
    (5, -2.5e-308, 12345678901234567, "x", None, 12345678901234567.0),
    (6, None, 0, "'single' quotes", None, 0.30000000000000004),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    db = tmp_path / "types.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, r REAL, n NUMERIC, s TEXT, b BLOB, x)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", ROWS)
    conn.execute('CREATE TABLE codes ("na""me" TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID')
    conn.executemany("INSERT INTO codes VALUES (?, ?)", [(AWKWARD_TEXT, 1), ("b'c", 2), ("12", 3)])
    conn.execute("CREATE TABLE notes (body TEXT)")  # keyed by the implicit rowid
    conn.executemany("INSERT INTO notes VALUES (?)", [("a",), ("b",), ("c",)])
    conn.commit()
    conn.close()
    opened = SQLiteStore.open(db)
    yield opened
    opened.close()


@pytest.fixture
def area(store: SQLiteStore, tmp_path: Path) -> Iterator[StagingArea]:
    staging = StagingArea(store, tmp_path / "staging.sqlite")
    yield staging
    staging.close()


def typed(item: dict[str, Any] | None) -> list[tuple[str, type, Any]]:
    """An item with each value's type, so 5 and 5.0 (or 1 and True) do not compare equal."""
    assert item is not None
    return [(name, type(value), value) for name, value in item.items()]


def table_state(store: SQLiteStore) -> list[tuple[Any, ...]]:
    columns = ["r", "n", "s", "b", "x"]
    listed = ", ".join(f"typeof({c}), quote({c})" for c in columns)
    conn = sqlite3.connect(store.path)
    try:
        return conn.execute(f"SELECT id, {listed} FROM t ORDER BY id").fetchall()
    finally:
        conn.close()


def test_pre_images_are_the_rows_exactly_and_commit_keeps_every_value(
    area: StagingArea, store: SQLiteStore
) -> None:
    before = table_state(store)
    changes = area.stage_many("t", query="SELECT id FROM t ORDER BY id DESC", set={"s": "new"})
    assert [c.key for c in changes] == [{"id": i} for i in (6, 5, 4, 3, 2, 1)]
    for change in changes:
        assert typed(change.pre_image) == typed(store.get_item("t", change.key))
    assert [typed(c.pre_image) for c in area.list()] == [typed(c.pre_image) for c in changes]
    assert changes == area.list()
    report = area.commit()
    assert report.ok and len(report.committed) == len(ROWS)
    after = table_state(store)
    for old, new in zip(before, after, strict=True):
        assert new[:5] == old[:5] and new[7:] == old[7:]  # every column but s, exactly
        assert new[5:7] == ("text", "'new'")


def test_a_row_changed_after_staging_conflicts_with_its_current_values(
    area: StagingArea, store: SQLiteStore
) -> None:
    changes = area.stage_many("t", keys=[{"id": 1}, {"id": 2}], set={"x": None})
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE t SET r = r + 1e-16 WHERE id = 2")  # 1/3 → the next float up
    conn.commit()
    conn.close()
    report = area.commit()
    assert not report.ok and [c.change_id for c in report.conflicts] == [changes[1].id]
    assert report.conflicts[0].current == store.get_item("t", {"id": 2})
    assert area.count() == 2  # nothing committed, everything still staged


def test_text_and_rowid_keys_fold_with_later_single_stages(area: StagingArea) -> None:
    staged = area.stage_many("codes", query='SELECT "na""me" FROM codes ORDER BY v', set={"v": 0})
    assert [c.key for c in staged] == [{'na"me': AWKWARD_TEXT}, {'na"me': "b'c"}, {'na"me': "12"}]
    again = area.stage("codes", "update", {'na"me': AWKWARD_TEXT}, {"v": 5})
    assert again.id == staged[0].id and area.count() == 3  # the same item: folded
    notes = area.stage_many("notes", query="SELECT rowid FROM notes", delete=True)
    assert [c.key for c in notes] == [{"rowid": 1}, {"rowid": 2}, {"rowid": 3}]
    with pytest.raises(StagingError, match=f"staged for deletion \\(change {notes[1].id}\\)"):
        area.stage("notes", "update", {"rowid": 2}, {"body": "z"})  # found as the same item
    assert area.commit().ok
    assert area.store.count("notes") == 0
    assert area.store.get_item("codes", {'na"me': AWKWARD_TEXT}) == {'na"me': AWKWARD_TEXT, "v": 5}


def test_a_bulk_edits_ids_are_a_run_that_skips_staged_ids(
    area: StagingArea, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One bulk edit's ids are consecutive from a random start; a start whose run would hold an
    id already staged is drawn again, so every id stays unique."""
    draws = iter([0x100, 0x101, 0x200])  # the second edit's first start overlaps the first's run
    monkeypatch.setattr(bulk.secrets, "randbelow", lambda _bound: next(draws))
    first = area.stage_many("t", keys=[{"id": 1}, {"id": 2}], set={"s": "a"})
    second = area.stage_many("t", keys=[{"id": 3}, {"id": 4}, {"id": 5}], set={"s": "b"})
    assert [c.id for c in first] == ["00000101", "00000102"]
    assert [c.id for c in second] == ["00000201", "00000202", "00000203"]
    assert [c.id for c in area.list()] == [*(c.id for c in first), *(c.id for c in second)]
    assert area.commit().ok and store_values(area, "s") == ["a", "a", "b", "b", "b", ROWS[5][3]]


def store_values(area: StagingArea, column: str) -> list[Any]:
    """One column of table t, in key order."""
    return [row[column] for row in area.store.query(f"SELECT {column} FROM t ORDER BY id").rows]


def test_a_value_json_cannot_hold_is_staged_row_by_row(
    area: StagingArea, store: SQLiteStore
) -> None:
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE t SET r = 1e999 WHERE id = 3")  # +Infinity: no JSON number for it
    conn.commit()
    conn.close()
    changes = area.stage_many("t", query="SELECT id FROM t WHERE id IN (2, 3)", set={"s": "y"})
    assert [c.pre_image["r"] for c in changes if c.pre_image] == [1 / 3, float("inf")]
    assert area.commit().ok
    item = store.get_item("t", {"id": 3})
    assert item is not None and item["r"] == float("inf") and item["s"] == "y"


def test_a_commit_of_several_bulk_edits_lands_whole_and_logs_each_change(
    area: StagingArea, store: SQLiteStore
) -> None:
    area.stage_many("t", query="SELECT id FROM t WHERE id <= 3", set={"s": "a", "x": 1.25})
    area.stage_many("t", query="SELECT id FROM t WHERE id IN (4, 5)", delete=True)
    area.stage_many("notes", query="SELECT rowid FROM notes", set={"body": "z"})
    area.stage("t", "update", {"id": 6}, {"n": 2**62})
    staged = area.list()
    report = area.commit()
    assert report.ok and report.committed == [c.id for c in staged] and area.count() == 0
    assert [r[0] for r in table_state(store)] == [1, 2, 3, 6]
    assert store.get_item("t", {"id": 2}) == {
        "id": 2,
        "r": 1 / 3,
        "n": -(2**63),
        "s": "a",
        "b": None,
        "x": 1.25,
    }
    assert store.get_item("t", {"id": 6})["n"] == 2**62  # type: ignore[index]
    assert store.query("SELECT DISTINCT body FROM notes").rows == [{"body": "z"}]
    (entry,) = area.history()
    logged = area.commit_entry(entry.id)[1]
    assert [(c.table, c.key, c.op, c.values, c.origin) for c in logged] == [
        (c.table, c.key, c.op, c.values, c.origin) for c in staged
    ]
    assert [typed(c.pre_image) for c in logged] == [typed(c.pre_image) for c in staged]


def test_a_commit_on_a_store_without_a_vector_index_loads_no_aws_sdk(
    store: SQLiteStore, tmp_path: Path
) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agent.staging import StagingArea\n"
        "from agent.stores.sqlite import SQLiteStore\n"
        f"store = SQLiteStore.open(Path({str(store.path)!r}))\n"
        f"area = StagingArea(store, Path({str(tmp_path / 's.sqlite')!r}))\n"
        "area.stage('t', 'update', {'id': 1}, {'s': 'z'})\n"
        "assert area.commit().ok\n"
        "heavy = ('boto3', 'botocore', 'agent.vectors.index')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "[]"
    assert store.get_item("t", {"id": 1})["s"] == "z"  # type: ignore[index]


@pytest.mark.parametrize("set_based", [True, False])
def test_a_change_staged_while_a_commit_starts_is_not_committed_by_it(
    area: StagingArea, store: SQLiteStore, tmp_path: Path, set_based: bool
) -> None:
    first = area.stage_many("t", query="SELECT id FROM t WHERE id <= 3", set={"s": "a"})
    pending = pending_all(area._conn, store.identity, area.path)  # noqa: SLF001
    if not set_based:
        pending.source = None
    other = StagingArea(SQLiteStore.open(store.path), area.path)  # another process's area
    late = other.stage("t", "update", {"id": 4}, {"s": "late"})
    report = commit_changes(store, area._conn, lambda: pending)  # noqa: SLF001
    assert report.ok and report.committed == [c.id for c in first]
    assert [c.id for c in area.list()] == [late.id]  # still staged, not in the store
    assert store.get_item("t", {"id": 4})["s"] is None  # type: ignore[index]
    other.close()


def test_committing_chosen_ids_commits_exactly_those_in_the_order_given(
    area: StagingArea, store: SQLiteStore
) -> None:
    changes = area.stage_many("t", query="SELECT id FROM t", set={"s": "c"})
    chosen = [changes[4].id, changes[0].id, changes[2].id, changes[0].id]
    report = area.commit(chosen)
    assert report.ok and report.committed == [changes[4].id, changes[0].id, changes[2].id]
    assert [c.id for c in area.list()] == [changes[1].id, changes[3].id, changes[5].id]
    assert [store.get_item("t", {"id": i})["s"] for i in range(1, 7)] == [  # type: ignore[index]
        "c",
        "",
        "c",
        None,
        "c",
        "'single' quotes",
    ]
    with pytest.raises(StagingError, match="no staged change 'gone'"):
        area.commit([changes[1].id, "gone"])
    assert area.count() == 3


def test_a_query_keeps_its_order_and_an_item_selected_twice_is_staged_once(
    area: StagingArea,
) -> None:
    picked = (
        "WITH w(k, o) AS (VALUES (3, 1), (1, 2), (3, 3), (5, 4)) SELECT k AS ID FROM w ORDER BY o"
    )
    changes = area.stage_many("t", query=picked, set={"s": "q"})
    assert [c.key for c in changes] == [{"id": 3}, {"id": 1}, {"id": 5}]
    assert [c.id for c in area.list()] == [c.id for c in changes]
    assert changes[-1] == area.get(changes[-1].id) and changes[:1] == [area.get(changes[0].id)]


def test_a_query_naming_a_missing_item_or_selecting_too_many_stages_nothing(
    area: StagingArea, store: SQLiteStore
) -> None:
    with pytest.raises(TabletalkError, match="no item with key id=99"):
        area.stage_many("t", query="SELECT 99 AS id UNION ALL SELECT 1", set={"s": "q"})
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 10001) SELECT 1 AS id FROM n"
    with pytest.raises(StagingError, match="10,000 per call"):
        area.stage_many("t", query=many, set={"s": "q"})
    with pytest.raises(StagingError, match="key columns"):
        area.stage_many("t", query="SELECT s FROM t", set={"s": "q"})
    assert area.count() == 0
    assert [c.key for c in area.stage_many("t", query="SELECT id FROM t;  ", delete=True)] == [
        {"id": i} for i in range(1, 7)
    ]


def test_a_query_that_writes_is_refused_and_stages_nothing(area: StagingArea) -> None:
    with pytest.raises(TabletalkError, match="(?i)read-only"):
        area.stage_many("t", query="DELETE FROM t RETURNING id", set={"s": "q"})
    assert area.count() == 0 and area.store.count("t") == 6


ENDLESS = (  # its first two rows come at once (the store reads it that far), then it runs on
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT i AS id FROM n WHERE i <= 2 OR i < 0"
)


def test_stop_stops_a_bulk_edit_whose_query_runs_on_and_stages_nothing(
    area: StagingArea, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    import agent.staging.bulk as bulk

    monkeypatch.setattr(bulk, "QUERY_TIMEOUT_S", 120.0)  # only Stop can end it here
    failures: list[BaseException] = []

    stop = threading.Event()

    def stage() -> None:
        with reads_stop_when(stop.is_set):  # as a turn's tools run
            try:
                area.stage_many("t", query=ENDLESS, set={"s": "q"})
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                failures.append(exc)

    worker = threading.Thread(target=stage)
    worker.start()
    time.sleep(0.3)  # the selection runs on
    stop.set()
    worker.join(10)
    assert not worker.is_alive()
    (failure,) = failures
    assert isinstance(failure, TabletalkError) and failure.message == "the query was stopped"
    assert area.count() == 0


def test_a_bulk_edit_whose_query_runs_past_the_limit_says_so_and_stages_nothing(
    area: StagingArea, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent.staging.bulk as bulk

    monkeypatch.setattr(bulk, "QUERY_TIMEOUT_S", 0.2)
    with pytest.raises(TabletalkError, match="ran longer than 0.2 s"):
        area.stage_many("t", query=ENDLESS, set={"s": "q"})
    assert area.count() == 0


SLOW_ONE = (  # selects item 1 after counting to 200,000: long enough for the progress handler
    "SELECT id FROM t WHERE id = 1 AND (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
    "SELECT i + 1 FROM n WHERE i < 200000) SELECT count(*) FROM n) > 0"
)


def test_while_a_bulk_edits_query_runs_others_can_read_and_stage(
    area: StagingArea, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query may run up to its time limit: meanwhile the panel in this process reads the
    staged changes and another program stages, as they can while the row-by-row path reads."""
    import threading
    import time

    import agent.staging.bulk as bulk

    other = StagingArea(SQLiteStore.open(store.path), area.path)  # another program's session
    seen: list[object] = []
    state = {"running": True, "calls": 0}

    def meanwhile() -> None:
        def read() -> None:
            count = area.count()
            seen.append(("count", count, "during" if state["running"] else "after"))

        reader = threading.Thread(target=read)
        reader.start()
        reader.join(60)  # only a guard against a hang: the read does not wait on the query
        try:
            seen.append(other.stage("t", "update", {"id": 2}, {"s": "other"}, origin="other").key)
        except TabletalkError as exc:
            seen.append(exc.message)

    class Clock:  # the set-based path's clock; its second reading is the query's progress handler
        @staticmethod
        def monotonic() -> float:
            state["calls"] += 1
            if state["calls"] == 2:
                meanwhile()
            return time.monotonic()

    monkeypatch.setattr(bulk, "time", Clock)
    try:
        changes = area.stage_many("t", query=SLOW_ONE, set={"s": "bulk"})
        state["running"] = False
    finally:
        other.close()
        other.store.close()
    assert state["calls"] > 2  # the hook ran while the query ran
    assert seen[0] == ("count", 0, "during")
    assert seen[1] == {"id": 2}
    assert [c.key for c in changes] == [{"id": 1}]
    assert sorted(c.key["id"] for c in area.list()) == [1, 2]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT rowid AS id FROM sqlite_temp_master",
        "SELECT rowid AS id FROM temp.sqlite_master",
        "SELECT cid + 1 AS id FROM pragma_table_info('staged_changes')",
        "SELECT count(*) AS id FROM pragma_table_list",
        "SELECT count(*) + 1 AS id FROM pragma_table_info('tt_bulk')",
        "SELECT count(*) + 1 AS id FROM pragma_table_info('staged_changes')",
        "SELECT 1 AS id FROM dbstat('tt_scratch')",
    ],
)
def test_a_bulk_edits_query_selects_the_items_it_selects_when_run_as_a_query(
    area: StagingArea, store: SQLiteStore, query: str
) -> None:
    """The query is checked and previewed (runQuery) on the store alone: staging must select
    the same items, not also see the staging database or its own scratch table."""
    shown = sorted(row["id"] for row in store.query(query).rows if 1 <= row["id"] <= 6)
    changes = area.stage_many("t", query=query, set={"s": "q"})
    assert sorted(c.key["id"] for c in changes) == shown
