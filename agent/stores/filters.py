"""Table filters (the condition of a table tab, openTable, countItems) in the words of whoever
wrote them: an example that works as typed, and a bad SQLite condition explained by what SQLite
says of the condition alone, never of the statement tabletalk builds around it (its column
aliases, ORDER BY, LIMIT/OFFSET and placeholders)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from agent.errors import FilterError
from agent.stores.sqlite_readonly import quote_ident

NUMERIC_TYPES = ("int", "real", "num", "float", "double", "dec")
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A column name that needs no quotes in a condition."""

SHOWN_FILTER_CHARS = 200
"""Characters of the filter an error quotes (a longer one ends in `…`)."""
LISTED_COLUMNS = 8
"""Columns an unknown-column error names."""
EXAMPLE_VALUE_CHARS = 30
"""A text value longer than this is not used in an example."""

_NO_SUCH_COLUMN = re.compile(r"no such column: (.+)", re.DOTALL)
_GLOSSES = {
    "incomplete input": "incomplete input (the condition stops before it is complete)",
    "You can only execute one statement at a time.": (
        "a `;` ends it and something follows (a filter is one condition, not statements)"
    ),
}
"""SQLite's (or sqlite3's) terse words, said in full; any other complaint is shown as it is."""

FilterColumn = tuple[str, str, bool]
"""A column as an error names it: name, declared type, whether it is a key column."""


def condition_sql(where: str) -> str:
    """The filter as every query puts it after WHERE: parenthesised, the line break ending a
    trailing `--` comment before the closing parenthesis."""
    return f"({where}\n)"


def column_ref(name: str) -> str:
    """`name` as a condition writes it: bare when a plain word, else quoted."""
    return name if PLAIN_NAME.fullmatch(name) else quote_ident(name)


def example_condition(
    columns: Iterable[Any], language: str = "SQL", value: Any = None, column: str | None = None
) -> str:
    """A filter example on `column` (default: the first non-key column, else the first) that
    works as typed: `price > 100`, `name LIKE 'A%'`, or with `value` (one the column holds)
    `status = 'pending'`. Columns have `name`, `type` and `key`. PartiQL has no LIKE, so text
    there starts with begins_with."""
    listed = list(columns)
    chosen = next((c for c in listed if c.name == column), None) or next(
        (c for c in listed if not c.key), listed[0] if listed else None
    )
    if chosen is None:
        return "1 = 1"
    name = column_ref(chosen.name)
    numeric = any(word in chosen.type.lower() for word in NUMERIC_TYPES)
    if language == "PartiQL":
        return f"{name} > 100" if numeric else f"begins_with({quote_ident(chosen.name)}, 'A')"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{name} > {value!r}" if numeric else f"{name} = {value!r}"
    if isinstance(value, str) and 0 < len(value) <= EXAMPLE_VALUE_CHARS and value.isprintable():
        return f"{name} = '{value.replace(chr(39), chr(39) * 2)}'"
    return f"{name} > 100" if numeric else f"{name} LIKE 'A%'"


class _Column:
    """A FilterColumn with the attributes `example_condition` reads."""

    def __init__(self, spec: FilterColumn) -> None:
        self.name, self.type, self.key = spec


def _shown(where: str) -> str:
    """The filter as an error quotes it: as written, on one line, cut past SHOWN_FILTER_CHARS."""
    where = re.sub(r"\s*\n\s*", " ", where.strip())
    return where if len(where) <= SHOWN_FILTER_CHARS else where[: SHOWN_FILTER_CHARS - 1] + "…"


def _named_column(where: str, names: Sequence[str]) -> str | None:
    """The column the filter mentions first, as a word (case-insensitive), if any."""
    by_word = {n.lower(): n for n in reversed(names)}
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", where)
    return next((by_word[w.lower()] for w in words if w.lower() in by_word), None)


def filter_error(
    table: str,
    columns: Sequence[FilterColumn],
    where: str,
    failure: str,
    compile_error: Callable[[str], str | None],
    first_values: Callable[[str], list[Any]] | None = None,
) -> FilterError:
    """The error for filter `where` on `table`, whose query failed with SQLite's `failure`.

    The condition is compiled alone (`SELECT 1 FROM table WHERE <filter>`: nothing after it
    that SQLite could quote), then as the queries wrap it (`condition_sql`); `compile_error`
    compiles without running (EXPLAIN on a read-only connection). An unknown column is named
    with the table's real ones; `first_values` (a few values of a column) makes the example
    one that matches rows.
    """
    names = [name for name, _, _ in columns]
    base = f"SELECT 1 FROM {quote_ident(table)} WHERE "
    alone = compile_error(base + where)
    wrapped = compile_error(base + condition_sql(where)) if alone is None else None
    shown = _shown(where)
    missing = _NO_SUCH_COLUMN.fullmatch(alone or "")
    near: str | None = None
    if missing:
        unknown = missing.group(1).strip()
        near = next(iter(difflib.get_close_matches(unknown.split(".")[-1], names, n=1)), None)
        message = f"The filter `{shown}` names a column {table} does not have: {unknown}."
    elif alone is not None:
        message = f"The filter `{shown}` is not valid SQLite: {_GLOSSES.get(alone, alone)}."
    elif wrapped is not None:
        message = (
            f"The filter `{shown}` is not one condition on its own: a filter is what follows "
            "WHERE, without ORDER BY, LIMIT, UNION, `;`, an unmatched parenthesis or an "
            "unclosed comment."
        )
    else:  # it compiles: SQLite failed while running it (a malformed JSON, say)
        message = f"The filter `{shown}` fails on {table}: {failure}."
    column = near or _named_column(where, names)
    specs = [_Column(c) for c in columns]
    if column is None:
        column = next((c.name for c in specs if not c.key), names[0] if names else None)
    value = _example_value(first_values(column)) if first_values and column else None
    example = example_condition(specs, "SQL", value, column)
    fix = f"Write a condition such as `{example}`."
    if missing:
        listed = ", ".join(names[:LISTED_COLUMNS])
        more = f", … ({len(names)} in all)" if len(names) > LISTED_COLUMNS else ""
        fix = f"Columns of {table}: {listed}{more}. {fix}"
    return FilterError(message, fix=fix)


def _example_value(values: list[Any]) -> Any:
    """The first value fit for an example: a number, or a short one-line text."""
    for value in values:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and 0 < len(value) <= EXAMPLE_VALUE_CHARS:
            if value.isprintable():
                return value
    return None
