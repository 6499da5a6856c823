"""The conflicts a commit finds are kept in the staging database: another process (a second
StagingArea on the same file) sees them without committing, and they go when their change is
rejected, taken current, folded over, or commits, or when a later commit finds it clean."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.staging import StagingArea
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_staging_settle import killed_after_the_store_committed


@pytest.fixture
def area(demo_path: Path, tmp_path: Path) -> Iterator[StagingArea]:
    staging = StagingArea(SQLiteStore.open(demo_path), tmp_path / "staging.sqlite")
    yield staging
    staging.close()
    staging.store.close()


def other_program(db: Path, sql: str, *params: object) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(sql, params)
    conn.close()


def second_process(area: StagingArea) -> StagingArea:
    """Another StagingArea on the same staging file, as a second process opens it."""
    return StagingArea(SQLiteStore.open(area.store.path), area.path)


def stage_with_a_conflict(area: StagingArea) -> tuple[str, str]:
    """Two staged updates; another program then changes the first one's row."""
    stale = area.stage("orders", "update", {"id": 7}, {"status": "refunded"}).id
    fine = area.stage("orders", "update", {"id": 8}, {"status": "packed"}).id
    other_program(area.store.path, "UPDATE orders SET status = 'lost' WHERE id = 7")
    return stale, fine


def conflicts_seen_afresh(area: StagingArea) -> dict[str, object]:
    other = second_process(area)
    try:
        return dict(other.conflicts())
    finally:
        other.close()
        other.store.close()


def test_another_process_sees_the_conflict_a_commit_found_with_the_current_row(
    area: StagingArea,
) -> None:
    stale, fine = stage_with_a_conflict(area)
    report = area.commit()
    assert [c.change_id for c in report.conflicts] == [stale]
    other = second_process(area)
    try:
        found = other.conflicts()
        assert list(found) == [stale]
        conflict = found[stale]
        assert conflict.current is not None and conflict.current["status"] == "lost"
        assert conflict.reason == report.conflicts[0].reason
        assert conflict.found_at[:4].isdigit()
        assert {c.id for c in other.list()} == {stale, fine}, "still staged"
    finally:
        other.close()
        other.store.close()


def test_rejecting_the_change_forgets_its_conflict(area: StagingArea) -> None:
    stale, _ = stage_with_a_conflict(area)
    area.commit()
    area.discard(ids=[stale])
    assert conflicts_seen_afresh(area) == {}
    conn = sqlite3.connect(area.path)
    assert conn.execute("SELECT count(*) FROM staged_conflicts").fetchone() == (0,)
    conn.close()


def test_discarding_a_table_forgets_its_conflicts(area: StagingArea) -> None:
    stage_with_a_conflict(area)
    area.commit()
    area.discard(table="orders")
    assert conflicts_seen_afresh(area) == {}


def test_taking_current_forgets_the_conflict_and_the_change_then_commits(
    area: StagingArea,
) -> None:
    stale, _ = stage_with_a_conflict(area)
    area.commit()
    report = area.rebase([stale])
    assert report.refreshed == [stale]
    assert conflicts_seen_afresh(area) == {}
    assert area.commit().ok


def test_staging_again_on_the_item_forgets_its_conflict(area: StagingArea) -> None:
    stale, _ = stage_with_a_conflict(area)
    area.commit()
    folded = area.stage("orders", "update", {"id": 7}, {"quantity": 2})
    assert folded.id == stale
    assert conflicts_seen_afresh(area) == {}


def test_a_fold_by_a_process_that_knows_nothing_of_the_records_forgets_it(
    area: StagingArea,
) -> None:
    """The trigger: an older tabletalk folding into the change (an UPDATE of its values)."""
    stale, _ = stage_with_a_conflict(area)
    area.commit()
    other_program(
        area.path, 'UPDATE staged_changes SET values_json = \'{"status":"x"}\' WHERE id = ?', stale
    )
    assert conflicts_seen_afresh(area) == {}


def test_rejecting_an_attribute_forgets_the_conflict(area: StagingArea) -> None:
    stale = area.stage("orders", "update", {"id": 7}, {"status": "refunded", "quantity": 9}).id
    other_program(area.store.path, "UPDATE orders SET status = 'lost' WHERE id = 7")
    area.commit()
    assert list(conflicts_seen_afresh(area)) == [stale]
    area.reject_attribute(stale, "quantity")
    assert conflicts_seen_afresh(area) == {}


def test_a_successful_commit_forgets_the_conflicts_it_settles(area: StagingArea) -> None:
    stale, fine = stage_with_a_conflict(area)
    area.commit()
    other_program(
        area.store.path,
        "UPDATE orders SET status = ? WHERE id = 7",
        area.get(stale).pre_image["status"],
    )  # the table back as staged
    assert area.commit([stale]).ok
    assert conflicts_seen_afresh(area) == {}
    assert fine in {c.id for c in area.list()}


def test_a_later_commit_that_finds_it_clean_forgets_it_and_records_the_new_one(
    area: StagingArea,
) -> None:
    stale, fine = stage_with_a_conflict(area)
    area.commit()
    before = area.get(stale).pre_image["status"]
    other_program(area.store.path, "UPDATE orders SET status = ? WHERE id = 7", before)
    other_program(area.store.path, "UPDATE orders SET status = 'gone' WHERE id = 8")
    report = area.commit()
    assert [c.change_id for c in report.conflicts] == [fine]
    seen = conflicts_seen_afresh(area)
    assert list(seen) == [fine] and seen[fine].current["status"] == "gone"


def test_a_commit_killed_after_landing_leaves_no_conflict_claimed(area: StagingArea) -> None:
    """The next open settles what landed: its recorded conflict goes with it."""
    stale, fine = stage_with_a_conflict(area)
    area.commit()
    area.discard(ids=[fine])
    before = area.get(stale).pre_image["status"]
    other_program(area.store.path, "UPDATE orders SET status = ? WHERE id = 7", before)
    killed_after_the_store_committed(area)
    assert conflicts_seen_afresh(area) == {}
    assert area.list() == []


def test_a_commit_failing_before_it_closes_records_no_conflict(
    area: StagingArea, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record is written with the commit's closing transaction: killed before it, the
    commit's record is settled by the next open and no conflict is claimed."""
    from agent.staging import conflicts

    stale, _ = stage_with_a_conflict(area)

    real_record = conflicts.record

    def killed(*args: object) -> None:  # the record is written, then the process dies
        real_record(*args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(conflicts, "record", killed)
    with pytest.raises(KeyboardInterrupt):
        area.commit()
    monkeypatch.undo()
    other = second_process(area)
    try:
        assert other.conflicts() == {}
        assert {c.id for c in other.list()} >= {stale}
        raw = sqlite3.connect(area.path)
        assert raw.execute("SELECT * FROM staged_conflicts").fetchall() == [], "rolled back"
        rows = raw.execute("SELECT * FROM commits_in_progress")
        assert rows.fetchall() == [], "the interrupted commit was settled"
    finally:
        other.close()
        other.store.close()


def test_a_staging_file_of_the_previous_version_gains_the_records(
    area: StagingArea, tmp_path: Path
) -> None:
    """A file the previous version wrote (schema 3 without the table and trigger) keeps its
    changes and records conflicts once opened; the schema number stays, so that version still
    opens it."""
    stale, fine = stage_with_a_conflict(area)
    area.close()
    with sqlite3.connect(area.path) as conn:
        conn.execute("DROP TRIGGER staged_conflicts_moved")
        conn.execute("DROP TABLE staged_conflicts")
    conn.close()
    again = StagingArea(area.store, area.path)
    try:
        assert [c.id for c in again.list()] == [stale, fine]
        again.commit()
        assert list(again.conflicts()) == [stale]
        again.stage("orders", "update", {"id": 7}, {"quantity": 5})
        assert again.conflicts() == {}, "the trigger came with the table"
    finally:
        again.close()
    conn = sqlite3.connect(area.path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    conn.close()


def test_staged_conflicts_are_never_shown_for_another_store(
    area: StagingArea, tmp_path: Path
) -> None:
    stage_with_a_conflict(area)
    area.commit()
    copy = tmp_path / "other.sqlite"
    with sqlite3.connect(area.store.path) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    other = StagingArea(SQLiteStore.open(copy), area.path)
    try:
        assert other.conflicts() == {}
    finally:
        other.close()
        other.store.close()
    assert len(area.conflicts()) == 1
