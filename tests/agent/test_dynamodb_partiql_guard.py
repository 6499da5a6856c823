"""Read-only PartiQL: only one SELECT passes; writes, several statements and comments do not."""

from __future__ import annotations

import pytest

from agent.errors import ReadOnlyQueryError
from agent.stores.dynamodb.partiql_guard import check_select, table_of


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO \"orders\" VALUE {'id': 1}",
        "UPDATE \"orders\" SET status = 'x' WHERE id = 1",
        'DELETE FROM "orders" WHERE id = 1',
        'SELECT * FROM "orders"; DELETE FROM "orders" WHERE id = 1',
        'SELECT * FROM "orders" WHERE EXISTS(SELECT * FROM "orders")',
        'SELECT * FROM "orders" -- ; DELETE',
        'SELECT * FROM "orders" /* hidden */',
        "  delete from orders",
    ],
)
def test_anything_but_one_select_is_refused(statement: str) -> None:
    with pytest.raises(ReadOnlyQueryError):
        check_select(statement)


def test_write_words_inside_quotes_are_only_text() -> None:
    tokens = check_select(
        'SELECT * FROM "orders" WHERE "note" = \'DELETE this; -- not a comment\' ;'
    )
    assert table_of(tokens) == ("orders", None)


def test_an_index_is_named_after_the_table() -> None:
    assert table_of(check_select('SELECT * FROM "orders"."status-index"')) == (
        "orders",
        "status-index",
    )
