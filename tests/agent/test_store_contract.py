"""The Store contract: capabilities are asked, never probed; identities map back to --db."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agent.cli.common import db_flag
from agent.stores.base import Store
from agent.stores.open import identity_db, open_store, same_db
from agent.stores.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


def _probes(path: Path) -> list[str]:
    """`getattr(<something named ...store...>, ...)` calls in one source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
            target = ast.unparse(node.args[0]) if node.args else ""
            if re.search(r"\bstore\b|_store\b|\bsource\b|_source\b", target):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_code_probes_a_store_or_row_source_with_getattr() -> None:
    probes = [p for pkg in ("agent", "tui") for f in (ROOT / pkg).rglob("*.py") for p in _probes(f)]
    assert probes == []


def test_a_store_must_implement_the_whole_contract() -> None:
    class Half(Store):
        def list_tables(self) -> list[str]:
            return []

    with pytest.raises(TypeError, match="abstract"):
        Half()  # type: ignore[abstract]


def test_sqlite_store_states_its_capabilities(demo_store: SQLiteStore) -> None:
    assert demo_store.supports_sql_joins is True
    assert demo_store.query_language == "SQL"
    assert demo_store.max_transaction_items is None  # the whole commit is one transaction
    assert demo_store.file_path == demo_store.path
    assert db_flag(demo_store) == f" --db {demo_store.path}"


def test_identity_maps_back_to_the_db_that_opens_the_same_store(demo_path: Path) -> None:
    store = open_store(str(demo_path))
    try:
        db = identity_db(store.identity)
        assert db is not None and same_db(db, str(demo_path))
        assert identity_db("elsewhere:thing") is None
    finally:
        store.close()


def test_table_pages_come_from_the_store_with_its_filter(demo_store: SQLiteStore) -> None:
    source = demo_store.pages("ORDERS", "status = 'shipped'")
    try:
        first = source.page(0)
        assert first.rows and source.count() == demo_store.count("orders", "status = 'shipped'")
        status = [c.name for c in source.columns].index("status")
        assert {row[status] for row in first.rows} == {"shipped"}
    finally:
        source.close()
