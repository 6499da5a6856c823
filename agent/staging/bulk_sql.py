"""The statements of a set-based bulk edit (`staging.bulk`): the INSERT … SELECT of its items
from the store's table `t` joined to the selected keys `b`, and the checks around it. Every
key text is the one the row-by-row path writes (`encoding.key_json`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.staging.encoding import key_json
from agent.stores.base import Op, TableShape
from agent.stores.sqlite_json import literal
from agent.stores.sqlite_readonly import json_value, quote_ident

STAGING = "tt_stage"
"""The staging database's name on the shared connection (the store's file is `main`)."""


def key_json_function(names: tuple[str, ...]) -> Callable[..., str]:
    """The SQL function that renders a key exactly as `encoding.key_json` does; a blob in a
    key fails the statement (its JSON text names no blob: the row-by-row path refuses it)."""

    def render(*values: Any) -> str:
        if any(type(v) is bytes for v in values):
            raise ValueError("a key holds a blob")
        return key_json({n: json_value(v) for n, v in zip(names, values, strict=True)})

    return render


def key_sql(keys: tuple[str, ...]) -> str:
    """`encoding.key_json` of row `t`'s key: inline for one integer, else through tt_key."""
    args = ", ".join(f"t.{quote_ident(k)}" for k in keys)
    if len(keys) == 1 and keys[0].isidentifier():
        c = f"t.{quote_ident(keys[0])}"
        prefix = literal(f'{{"{keys[0]}":')
        return (
            f"CASE typeof({c}) WHEN 'integer' THEN {prefix} || {c} || '}}' ELSE tt_key({args}) END"
        )
    return f"tt_key({args})"


def join_sql(shape: TableShape) -> tuple[str, str]:
    """The join of `b` (key columns k0…kn) to the table `t`, and the test of no such row."""
    keys = shape.key_columns
    join = " AND ".join(f"t.{quote_ident(k)} = b.k{i}" for i, k in enumerate(keys))
    return join, f"t.{quote_ident(keys[0])} IS NULL"


def insert_sql(
    shape: TableShape, op: Op, source: str, items: str, unchanged: str | None = None
) -> str:
    """INSERT … SELECT of one item row (staging order, key text, the row's values) per row of
    `source` (a FROM item `b` with the key columns k0…kn and the staging order n as its rowid)
    into the item table `items`, joined to the table `t`; a key without a row makes the key
    text NULL, so the statement fails on the NOT NULL and writes nothing. With `unchanged`
    (a condition on `t`), the rows it holds for are left out and the rest numbered 1…m in
    staging order: a NULL `tt_n` takes the next rowid of the (new, empty) item table."""
    join, missing = join_sql(shape)
    natives = "".join(f", t.{quote_ident(c.name)}" for c in shape.columns)
    order, where = "b.n", ""
    if unchanged is not None:
        order, where = "NULL", f" WHERE {missing} OR NOT ({unchanged})"
    return (
        f"INSERT INTO {STAGING}.{items} "
        f"SELECT {order}, CASE WHEN {missing} THEN NULL ELSE {key_sql(shape.key_columns)} END"
        f"{natives} FROM {source} LEFT JOIN main.{quote_ident(shape.name)} t ON {join}"
        f"{where} ORDER BY b.n"
    )


def left_out_sql(shape: TableShape, source: str, unchanged: str) -> str:
    """How many rows of `source` the INSERT left out as `unchanged`, and how many items they
    are (a query may select one twice): told apart by the table's own key values."""
    join, missing = join_sql(shape)
    item = " || ',' || ".join(f"quote(t.{quote_ident(k)})" for k in shape.key_columns)
    return (
        f"SELECT count(*), count(DISTINCT {item}) FROM {source} "
        f"JOIN main.{quote_ident(shape.name)} t ON {join} WHERE NOT {missing} AND ({unchanged})"
    )


def left_out_staged_sql(shape: TableShape, source: str, unchanged: str) -> str:
    """A row of `source` left out as `unchanged` whose item has a staged change (staging's
    `staged_changes`; the store and table are the two last parameters)."""
    join, missing = join_sql(shape)
    return (
        f"SELECT 1 FROM {source} JOIN main.{quote_ident(shape.name)} t ON {join} "
        f"JOIN {STAGING}.staged_changes s ON s.store = ? AND s.tbl = ? "
        f"AND s.key_json = {key_sql(shape.key_columns)} "
        f"WHERE NOT {missing} AND ({unchanged}) LIMIT 1"
    )


def finite_sql(items: str, shape: TableShape) -> str:
    """A row of `items` holding a non-finite REAL (which JSON cannot write: the row path's
    statement fails on it, so this one must too)."""
    tests = " OR ".join(f"{quote_ident(c.name)} IN (9e999, -9e999)" for c in shape.columns)
    return f"SELECT 1 FROM {STAGING}.{items} WHERE {tests} LIMIT 1"
