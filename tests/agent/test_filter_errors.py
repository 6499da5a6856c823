"""A bad table filter is explained by what was written: in a table tab's pages and count, in
`Store.count` and in openTable/proposeOpenTable, never with the SQL tabletalk built around it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.errors import FilterError, ReadOnlyQueryError, TabletalkError
from agent.stores.sqlite import SQLiteStore
from tests.support.tools import err, opened_ctx

INTERNAL = ("__order_", "__cell_", "LIMIT 200", "OFFSET", "?", "SELECT", "count(*)", "CASE")
"""Text of the queries tabletalk builds, which nobody typed."""

ORDERS_COLUMNS = "id, customer_id, product_id, quantity, total, status, created_at"


def tab_error(store: SQLiteStore, table: str, where: str) -> TabletalkError:
    """What a table tab shows for `where`: its first page is read as the filter is applied."""
    source = store.pages(table, where)
    try:
        with pytest.raises(TabletalkError) as caught:
            source.page(0)
    finally:
        source.close()
    return caught.value


def count_error(store: SQLiteStore, table: str, where: str) -> TabletalkError:
    """What `Store.count` (countItems, openTable's check) raises for `where`."""
    with pytest.raises(TabletalkError) as caught:
        store.count(table, where)
    return caught.value


READS: dict[str, Callable[[SQLiteStore, str, str], TabletalkError]] = {
    "tab": tab_error,
    "count": count_error,
}


@pytest.mark.parametrize("read", READS)
@pytest.mark.parametrize(
    ("table", "where", "message", "fix"),
    [
        (
            "orders",
            "status = 'open",
            """The filter `status = 'open` is not valid SQLite: unrecognized token: "'open".""",
            "Write a condition such as `status = '",
        ),
        (
            "orders",
            "status = ",
            "The filter `status =` is not valid SQLite: incomplete input",
            "Write a condition such as `status = '",
        ),
        (
            "products",
            "price = > 2",
            'The filter `price = > 2` is not valid SQLite: near ">": syntax error.',
            "Write a condition such as `price > ",
        ),
        (
            "orders",
            "nosuchcolumn > 3",
            "The filter `nosuchcolumn > 3` names a column orders does not have: nosuchcolumn.",
            f"Columns of orders: {ORDERS_COLUMNS}. Write a condition such as `",
        ),
        (
            "orders",
            "statuss = 'pending'",
            "The filter `statuss = 'pending'` names a column orders does not have: statuss.",
            "Write a condition such as `status = '",  # the column it was most likely meant to be
        ),
        (
            "orders",
            "quantity > (SELECT 1",
            "The filter `quantity > (SELECT 1` is not valid SQLite: incomplete input",
            "Write a condition such as `quantity > ",
        ),
        (
            "orders",
            "status = 'pending' ORDER BY id",
            "The filter `status = 'pending' ORDER BY id` is not one condition on its own",
            "Write a condition such as `status = '",
        ),
    ],
)
def test_a_bad_filter_is_explained_by_what_was_written(
    demo_store: SQLiteStore, read: str, table: str, where: str, message: str, fix: str
) -> None:
    error = READS[read](demo_store, table, where)
    assert isinstance(error, FilterError)
    assert error.message.startswith(message)
    assert fix in (error.fix or "")
    said = error.message.replace(where.strip(), "")  # what is said about it, besides its text
    assert not any(text in said for text in INTERNAL), error.message


def test_the_example_in_the_fix_works_as_typed(demo_store: SQLiteStore) -> None:
    error = count_error(demo_store, "orders", "status = ")
    example = (error.fix or "").split("`")[1]
    assert demo_store.count("orders", example) > 0, "the example names a value the column holds"


def test_a_comment_at_the_end_of_a_filter_no_longer_swallows_the_query(
    demo_store: SQLiteStore,
) -> None:
    where = "status = 'pending' -- the ones to chase"
    expected = demo_store.count("orders", "status = 'pending'")
    assert demo_store.count("orders", where) == expected
    source = demo_store.pages("orders", where)
    try:
        assert source.count() == expected and len(source.page(0).rows) == min(expected, 200)
    finally:
        source.close()


@pytest.mark.parametrize(
    "where",
    [
        "1; DELETE FROM orders",
        "1); DELETE FROM orders; SELECT (1",
        "1) OR (1",
        "status = 'x' UNION SELECT 1 --",
        "(SELECT count(*) FROM orders) > 0 /*",
    ],
)
def test_a_hostile_filter_writes_nothing_and_is_explained_without_our_sql(
    demo_path: Path, where: str
) -> None:
    before = hashlib.sha256(demo_path.read_bytes()).hexdigest()
    store = SQLiteStore.open(demo_path)
    try:
        total = store.count("orders")
        for read in (
            lambda: store.pages("orders", where).page(0),
            lambda: store.count("orders", where),
        ):
            try:
                read()
            except TabletalkError as error:
                said = error.message.replace(" ".join(where.split()), "")
                assert not any(text in said for text in INTERNAL), error.message
        assert store.count("orders") == total
    finally:
        store.close()
    assert hashlib.sha256(demo_path.read_bytes()).hexdigest() == before


def test_a_filter_calling_a_denied_function_is_still_refused_as_a_write(
    demo_store: SQLiteStore,
) -> None:
    error = count_error(demo_store, "orders", "load_extension('x') IS NULL")
    assert isinstance(error, ReadOnlyQueryError)


@pytest.mark.parametrize("tool", ["openTable", "proposeOpenTable"])
def test_the_models_open_table_tools_say_the_same(
    demo_path: Path, tmp_path: Path, tool: str
) -> None:
    with opened_ctx(demo_path, tmp_path) as ctx:
        failure = err(ctx, tool, table="orders", query="status = 'open")
        assert ctx.ui.opened == []
    assert failure["error"] == (
        """The filter `status = 'open` is not valid SQLite: unrecognized token: "'open"."""
    )
    assert "Write a condition such as `status = '" in failure["fix"]
    assert 'describeTable with {"table": "orders"}' in failure["fix"]
    assert "__order_" not in failure["error"] + failure["fix"]
