"""The staging filter's words match what a change shows: its key, the values it writes, and
the values those replace (a deleted row whole), not the untouched columns of a row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent.staging import StagingArea
from agent.staging.review import ChangeFilter
from agent.stores.sqlite import SQLiteStore


def _area(tmp_path: Path) -> StagingArea:
    db = tmp_path / "people.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
        conn.executemany(
            "INSERT INTO people VALUES (?, ?, ?)",
            [(1, "Ann", "Oslo"), (2, "Oslo Bob", "Bergen"), (3, "Cy", "Oslo"), (4, "Di", "Rome")],
        )
    return StagingArea(SQLiteStore.open(db))


def _matching(area: StagingArea, typed: str) -> list[tuple[str, int]]:
    changes = area.review().page(ChangeFilter.parse(typed), limit=50, offset=0)
    return sorted((c.op, c.key["id"]) for c in changes)


def test_words_match_keys_new_and_replaced_values_but_not_untouched_columns(
    tmp_path: Path,
) -> None:
    """Typing "Oslo" listed every update of a row that held Oslo anywhere, though none of
    those changes touched it: a review narrowed to Oslo changes showed unrelated renames."""
    area = _area(tmp_path)
    area.stage("people", "update", {"id": 1}, {"name": "Anne"})
    area.stage("people", "update", {"id": 2}, {"city": "Tromsø"})
    area.stage("people", "delete", {"id": 3})
    area.stage("people", "update", {"id": 4}, {"city": "Oslo"})
    assert _matching(area, "Oslo") == [("delete", 3), ("update", 4)]
    assert _matching(area, "Bergen") == [("update", 2)], "the value a change replaces"
    assert _matching(area, "tromsø") == [("update", 2)], "the value it writes, any case"
    assert _matching(area, "Ann") == [("update", 1)]
    assert _matching(area, "Cy") == [("delete", 3)], "a deleted row matches on any column"
    assert ("update", 2) not in _matching(area, "attr:name Oslo"), "2's name is left alone"
    assert _matching(area, "attr:city Oslo") == [("delete", 3), ("update", 4)]
    area.close()
