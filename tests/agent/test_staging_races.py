"""Two processes on one staging area at the worst moment: a commit starting while another
discards, stages or rebases. Each is a second StagingArea (own connections and commit-lock
descriptor, as another process has) run from the first one's statement trace, so the
interleaving is exact, not timed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.errors import StagingError
from agent.staging import StagingArea, bulk
from agent.staging.history import Retention
from agent.stores.sqlite import SQLiteStore


def other_process(demo_path: Path, staging: Path) -> StagingArea:
    """What a second tabletalk process (CLI, MCP server) opens on the same files."""
    return StagingArea(SQLiteStore.open(demo_path), staging)


def when(area: StagingArea, statement: str, act: Callable[[], object]) -> None:
    """Run `act` once, just before `area` runs the first statement starting with `statement`
    (its SQLite trace: nothing of that statement has run yet)."""
    conn: sqlite3.Connection = area._conn  # noqa: SLF001 - the exact moment needs its trace
    fired = False

    def trace(sql: str) -> None:
        nonlocal fired
        if not fired and sql.lstrip().startswith(statement):
            fired = True
            act()

    conn.set_trace_callback(trace)


def status(store: SQLiteStore, order: int) -> str:
    item = store.get_item("orders", {"id": order})
    assert item is not None
    return str(item["status"])


def test_a_discard_never_reports_changes_another_process_committed_meanwhile(
    demo_path: Path, tmp_path: Path
) -> None:
    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    changes = [app.stage("orders", "update", {"id": i}, {"status": "cancelled"}) for i in (1, 2)]
    cli = other_process(demo_path, staging)
    # The CLI commits both while the app is between checking them and deleting them.
    when(app, "BEGIN", lambda: cli.commit())
    try:
        discarded = app.discard(ids=[c.id for c in changes])
    except StagingError as exc:
        discarded = 0
        assert "no staged change" in str(exc) and "staged list" in exc.fix
    assert status(app.store, 1) == status(app.store, 2) == "cancelled"
    assert [e.changes for e in cli.history()] == [2]
    assert discarded == 0, "the changes were committed, not discarded"
    assert app.count() == 0


@pytest.mark.parametrize("chosen", [False, True], ids=["all", "ids"])
def test_a_commit_takes_exactly_what_is_staged_when_another_process_discards_and_stages(
    demo_path: Path, tmp_path: Path, chosen: bool
) -> None:
    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    first = app.stage("orders", "update", {"id": 1}, {"status": "cancelled"})
    last = app.stage("orders", "update", {"id": 2}, {"status": "cancelled"})
    mcp = other_process(demo_path, staging)
    before = status(app.store, 3)
    swapped: list[str] = []

    def swap() -> None:
        # Between the commit reading the staged set and recording it: the newest change goes,
        # and a new one takes its place at the end.
        mcp.discard(ids=[last.id])
        swapped.append(mcp.stage("orders", "update", {"id": 3}, {"status": "refunded"}).id)

    when(app, "BEGIN", swap)
    try:
        report = app.commit(ids=[first.id, last.id] if chosen else None)
    except StagingError as exc:
        assert chosen and "no staged change" in str(exc) and "staged list" in exc.fix
        committed: list[str] = []
    else:
        committed = report.committed
    assert last.id not in committed, "a discarded change was reported committed"
    assert status(app.store, 2) != "cancelled", "a discarded change was written"
    still = {c.id for c in app.list()}
    landed = status(app.store, 3) == "refunded"
    assert landed != (swapped[0] in still), "the new change must be staged or landed, not both"
    assert landed == (swapped[0] in committed)
    assert status(app.store, 1) == ("cancelled" if first.id in committed else status(app.store, 1))
    assert (first.id in committed) != (first.id in still)
    if not landed:
        assert status(app.store, 3) == before


def test_rejecting_an_attribute_keeps_what_another_process_folded_in_meanwhile(
    demo_path: Path, tmp_path: Path
) -> None:
    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    change = app.stage("orders", "update", {"id": 1}, {"status": "cancelled", "total": 1.5})
    mcp = other_process(demo_path, staging)
    when(app, "BEGIN", lambda: mcp.stage("orders", "update", {"id": 1}, {"quantity": 7}))
    app.reject_attribute(change.id, "total")
    (now,) = mcp.list()
    assert now.values == {"status": "cancelled", "quantity": 7}


def test_a_rebase_never_undoes_an_edit_another_process_folded_in_meanwhile(
    demo_path: Path, tmp_path: Path
) -> None:
    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    change = app.stage("orders", "update", {"id": 1}, {"status": "cancelled"})
    mcp = other_process(demo_path, staging)
    mcp.store._conn.execute("UPDATE orders SET quantity = 99 WHERE id = 1")  # noqa: SLF001
    # The MCP client turns the update into a delete while the app rebases it.
    when(app, "BEGIN", lambda: mcp.stage("orders", "delete", {"id": 1}))
    try:
        app.rebase([change.id])
    except StagingError as exc:
        assert "again" in exc.fix
    (now,) = mcp.list()
    assert now.op == "delete"


def test_naming_a_few_of_many_staged_changes_reads_those_not_all(tmp_path: Path) -> None:
    db = tmp_path / "big.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?, 0)", ((i,) for i in range(1, 20_001)))
    area = StagingArea(SQLiteStore.open(db), tmp_path / "staging.sqlite")
    staged = [
        c.id
        for half in ("id <= 10000", "id > 10000")
        for c in area.stage_many("t", query=f"SELECT id FROM t WHERE {half}", set={"n": 1})
    ]
    area.review()  # the compact bulk edit becomes rows once (staging.batches), then:
    conn = area._conn  # noqa: SLF001 - counting the staging database's work
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn.set_progress_handler(count, 100)
    area.discard(ids=staged[5000:5010])
    conn.set_progress_handler(None, 0)
    # A scan of the 20,000 changes takes well over 100,000 SQLite steps; the id index ~100s.
    assert steps * 100 < 20_000, f"{steps * 100} steps to find 10 changes"
    assert area.count() == 19_990


def test_a_commit_of_what_was_shown_never_commits_values_folded_in_after(
    demo_path: Path, tmp_path: Path
) -> None:
    """The panel checks the staged set is the one shown, then commits: another process folding
    new values into a shown change in between must not get them committed unseen."""
    from agent.errors import StagedSetMoved

    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    shown = [app.stage("orders", "update", {"id": i}, {"status": "cancelled"}) for i in (1, 2)]
    mcp = other_process(demo_path, staging)
    when(app, "BEGIN", lambda: mcp.stage("orders", "update", {"id": 2}, {"status": "refunded"}))
    with pytest.raises(StagedSetMoved) as caught:
        app.commit([c.id for c in shown], as_shown=shown)
    assert "nothing was committed" in str(caught.value) and "again" in caught.value.fix
    assert status(app.store, 1) != "cancelled" and status(app.store, 2) != "refunded"
    assert {c.id: c.values["status"] for c in app.list()} == {
        shown[0].id: "cancelled",
        shown[1].id: "refunded",
    }
    report = app.commit([c.id for c in shown], as_shown=app.list())
    assert report.ok and status(app.store, 2) == "refunded"


def test_a_commit_of_what_was_shown_refuses_a_change_staged_unseen_meanwhile(
    demo_path: Path, tmp_path: Path
) -> None:
    """ "Commit all" in the panel commits the set it showed: a change another process stages
    before the commit's transaction makes it commit nothing (the panel then refreshes), checked
    inside that transaction, so the panel need not read the whole set again first."""
    from agent.errors import StagedSetMoved

    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    shown = [app.stage("orders", "update", {"id": 1}, {"status": "cancelled"})]
    mcp = other_process(demo_path, staging)
    when(app, "BEGIN", lambda: mcp.stage("orders", "update", {"id": 2}, {"status": "refunded"}))
    with pytest.raises(StagedSetMoved) as caught:
        app.commit([c.id for c in shown], as_shown=shown)
    assert "1 change was staged by another process" in str(caught.value)
    assert status(app.store, 1) != "cancelled" and app.count() == 2
    report = app.commit([c.id for c in shown], as_shown=app.list())
    assert report.ok and status(app.store, 1) == "cancelled" and app.count() == 1


@pytest.mark.parametrize(
    ("reader", "moment"),
    [("list", "SELECT batch, store"), ("list", "SELECT tt_key"), ("count", "SELECT coalesce")],
)
def test_listing_never_misses_a_bulk_edit_another_process_turns_into_rows_meanwhile(
    demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, moment: str
) -> None:
    """A compact bulk edit becomes rows when another process stages anything; a listing (or
    count) reading the rows, then the edits, then their items must see it once, either way."""
    monkeypatch.setattr(bulk, "COMPACT_MIN", 1)
    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    staged = app.stage_many(
        "orders", query="SELECT id FROM orders WHERE id <= 40", set={"status": "x"}
    )
    cli = other_process(demo_path, staging)
    when(app, moment, lambda: cli.stage("orders", "update", {"id": 99}, {"status": "y"}))
    if reader == "list":
        listed = [c.id for c in app.list()]
        assert listed[: len(staged)] == [c.id for c in staged]
    else:
        assert app.count() in (len(staged), len(staged) + 1)


def test_reading_a_commit_never_fails_when_another_process_drops_it_from_the_history_meanwhile(
    demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retention (in another process's commit) drops an old commit's kept bulk edit while the
    app reads that commit: the app reads it whole, as it was when it started reading."""
    monkeypatch.setattr(bulk, "COMPACT_MIN", 1)
    staging = tmp_path / "staging.sqlite"
    app = other_process(demo_path, staging)
    app.stage_many("orders", query="SELECT id FROM orders WHERE id <= 40", set={"status": "x"})
    assert app.commit().ok
    [entry] = app.history()
    cli = StagingArea(SQLiteStore.open(demo_path), staging, keep=Retention(changes=1))
    cli.stage("orders", "update", {"id": 99}, {"status": "y"})

    def drop_the_history() -> None:
        assert cli.commit().ok
        assert [e.changes for e in cli.history()] == [1]  # the bulk edit's commit is gone

    dropped: list[bool] = []
    when(app, "SELECT printf", lambda: dropped.append(drop_the_history() is None))
    found, changes = app.commit_entry(entry.id)
    assert dropped and found.id == entry.id and len(changes) == 40
