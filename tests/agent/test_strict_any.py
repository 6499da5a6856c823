"""A STRICT table's ANY column has no affinity: it keeps each value as given (1.0 stays a
REAL next to the integer 1, '5' stays text), unlike a column declared ANY elsewhere (NUMERIC
affinity). Judging it as NUMERIC called 1.0 "already held" over 1 (the update was left out,
though a commit stores a REAL), and turned the key '5' into 5, so its row could not be found.

Real SQLite files; stageItem and bulkEdit on both bulk paths, and the commit's own result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.stores.sqlite import SQLiteStore
from agent.stores.sqlite_holds import holds_sql
from agent.stores.sqlite_json import register
from agent.tools.base import ToolContext
from tests.support.tools import ok, opened_ctx


@pytest.fixture
def strict_db(tmp_path: Path) -> Path:
    path = tmp_path / "strict.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, raw ANY, qty INTEGER) STRICT")
        conn.execute("INSERT INTO items VALUES (1, 1, 5)")
        conn.execute("CREATE TABLE tags (k ANY PRIMARY KEY, v TEXT) STRICT")
        conn.execute("INSERT INTO tags VALUES ('5', 'five-text'), (6, 'six-int')")
    conn.close()
    return path


@pytest.fixture
def ctx(strict_db: Path, tmp_path: Path) -> Iterator[ToolContext]:
    with opened_ctx(strict_db, tmp_path) as context:
        yield context


def raw_of(path: Path) -> tuple[str, Any]:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT typeof(raw), raw FROM items WHERE id = 1").fetchone()
    conn.close()
    return tuple(row)


@pytest.mark.parametrize(
    ("values", "held"),
    [({"raw": 1.0}, False), ({"raw": "1"}, False), ({"raw": 1}, True), ({"qty": "5"}, True)],
    ids=str,
)
def test_a_strict_any_column_keeps_the_storage_class(
    strict_db: Path, values: dict[str, Any], held: bool
) -> None:
    store = SQLiteStore.open(strict_db)
    try:
        assert store.holds("items", {"id": 1}, values) is held
        condition, params = holds_sql("t", store.schema("items").columns, values) or ("0", [])
        with sqlite3.connect(strict_db) as conn:
            register(conn)
            found = conn.execute(f"SELECT {condition} FROM items t WHERE id = 1", params)
            assert bool(found.fetchone()[0]) is held
        conn.close()
    finally:
        store.close()


@pytest.mark.parametrize("path", ["set-based", "row by row"])
def test_an_update_to_a_real_over_an_integer_in_any_is_staged_and_committed(
    ctx: ToolContext, strict_db: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    single = ok(ctx, "stageItem", table="items", op="update", key={"id": 1}, values={"raw": 1.0})
    assert single["staged"] == 1, single
    ctx.staging.discard(all=True)
    if path == "row by row":
        monkeypatch.setattr(SQLiteStore, "sqlite_file", property(lambda _self: None))
    result = ok(ctx, "bulkEdit", table="items", query="SELECT id FROM items", set={"raw": 1.0})
    assert (result["staged"], result["unchanged"]) == (1, 0), result
    assert ctx.staging.commit().ok
    assert raw_of(strict_db) == ("real", 1.0)


def test_a_text_key_in_a_strict_any_column_names_its_row(ctx: ToolContext) -> None:
    assert ctx.store.get_item("tags", {"k": "5"}) == {"k": "5", "v": "five-text"}
    assert ctx.store.get_item("tags", {"k": 5}) is None, "the integer 5 is another key"
    assert ctx.store.get_item("tags", {"k": 6}) == {"k": 6, "v": "six-int"}
    staged = ok(ctx, "stageItem", table="tags", op="update", key={"k": "5"}, values={"v": "x"})
    assert staged["staged"] == 1
    assert ctx.staging.commit().ok
    assert ctx.store.get_item("tags", {"k": "5"}) == {"k": "5", "v": "x"}
