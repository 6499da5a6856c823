"""Table schemas of the SQLite store, key normalisation (SQLite's affinity rules), batched row reads."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from agent.errors import BadKeyError
from agent.stores.base import INT_MAX, INT_MIN, Column, Item, Key, unstorable
from agent.stores.sqlite_readonly import BLOB_MARKER, json_rows, quote_ident

_MISSING = object()
_WORDS = frozenset({"nan", "inf", "infinity"})


@dataclass(frozen=True)
class TableSchema:
    """What the store needs to read and write one table: columns, key, and rowid-ness."""

    name: str
    columns: tuple[Column, ...]
    key_columns: tuple[str, ...]
    rowid_key: bool
    integer_key: str | None = None
    """The key column that is the row id (the implicit one or an INTEGER PRIMARY KEY): only
    integers name its rows; any other key column also holds what its affinity cannot convert."""

    @cached_property
    def column_names(self) -> list[str]:
        """Every column an item has, the implicit rowid first when it is the key."""
        return [c.name for c in self.columns]

    @cached_property
    def guarded_columns(self) -> tuple[str, ...]:
        """The non-key columns, whose pre-image values a guarded statement checks."""
        return tuple(n for n in self.column_names if n not in self.key_columns)

    @cached_property
    def pick_guarded(self) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
        """item → the tuple of its guarded column values (a C-speed itemgetter)."""
        names = self.guarded_columns
        if not names:
            return lambda _item: ()
        getter = itemgetter(*names)
        if len(names) == 1:
            return lambda item: (getter(item),)
        return getter

    @cached_property
    def key_types(self) -> tuple[type | None, ...]:
        """The Python type each key column's values already have when no coercion is needed."""
        kinds = {"INTEGER": int, "TEXT": str, "REAL": float}
        return tuple(kinds.get(column_affinity(self.column(k))) for k in self.key_columns)  # type: ignore[arg-type]

    def column(self, name: str) -> Column | None:
        """The column called `name` (case-insensitive, as SQLite does), or None."""
        for c in self.columns:
            if c.name == name:
                return c
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)


ROWID_NAMES = ("rowid", "_rowid_", "oid")


def rowid_alias(column_names: Iterable[str]) -> str | None:
    """The first of SQLite's names for the row id that no column takes (a column named
    `rowid` hides the row id under that name), or None when columns take all three."""
    taken = {n.lower() for n in column_names}
    return next((n for n in ROWID_NAMES if n not in taken), None)


def column_affinity(column: Column) -> str:
    """SQLite's affinity of `column`: its declared type's, except that a STRICT table's ANY
    column has none (it stores each value as given, '5' as text, 1.0 as a REAL), where ANY
    elsewhere is NUMERIC."""
    if column.strict and column.type.strip().upper() == "ANY":
        return "BLOB"
    return affinity(column.type)


def affinity(declared_type: str) -> str:
    """SQLite's type affinity of a declared column type (section 3.1 of the datatype docs)."""
    t = declared_type.upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t or not t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


def coerce_key_value(table: str, column: Column, value: Any, *, row_id: bool = False) -> Any:
    """Coerce one key value to the column's affinity ("5" → 5 for an INTEGER key), as SQLite
    stores it: text the affinity cannot convert stays text, except in a row id (`row_id`)."""
    if value is None or isinstance(value, bool | dict | list):
        raise BadKeyError(
            f"key column {column.name!r} of table {table!r} cannot be {value!r}",
            fix=f"Give {column.name} {_a(column.type or 'scalar')} value.",
        )
    if isinstance(value, str) and BLOB_MARKER.fullmatch(value):
        raise BadKeyError(
            f"key column {column.name!r} of table {table!r}: {value} stands for a blob, "
            "and a key given as JSON cannot name a blob",
            fix="Rows keyed by a blob cannot be staged here (a create would add a text key); "
            "change them with SQL outside tabletalk.",
        )
    kind = column_affinity(column)
    try:
        coerced = _coerce(kind, value)
    except (ValueError, OverflowError):
        coerced = _MISSING
    if coerced is _MISSING and isinstance(value, str | float) and not row_id:
        coerced = value  # what the affinity cannot convert, the column keeps as it is (1.5)
    if isinstance(coerced, float) and not math.isfinite(coerced) and not row_id:
        if isinstance(value, str) and value.strip().lstrip("+-").lower() in _WORDS:
            coerced = value  # Python reads 'NaN' as a float; SQLite keeps it as text
    if isinstance(coerced, float) and coerced == 0:
        coerced = 0.0  # -0.0 is the same key as 0.0 (SQLite compares them equal)
    if coerced is _MISSING:
        raise BadKeyError(
            f"key column {column.name!r} of table {table!r} is {column.type or 'untyped'}; "
            f"{value!r} does not fit",
            fix=f"Give {column.name} {_a(kind.lower())} value.",
        )
    reason = unstorable(coerced)
    if reason is not None:
        raise BadKeyError(
            f"key column {column.name!r} of table {table!r}: {reason}",
            fix=f"Give {column.name} {_a(kind.lower())} value that SQLite can store.",
        )
    return coerced


def _coerce(kind: str, value: Any) -> Any:
    """`value` converted as a column of affinity `kind` would store it; _MISSING if it cannot."""
    if kind == "INTEGER":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            return int(value.strip())
        return value if isinstance(value, int) else _MISSING
    if kind == "REAL":
        return float(value)
    if kind == "NUMERIC" and isinstance(value, str):
        text = value.strip()
        return int(text) if text.lstrip("-").isdigit() else float(text)
    if kind == "TEXT" and isinstance(value, int | float):
        return str(value)
    return value


def _storable(value: Any) -> bool:
    """`unstorable(value) is None`, inlined for the common key types (called per key); False
    for a zero float too, so -0.0 takes the slow path that makes it 0.0."""
    kind = type(value)
    if kind is str:
        return True
    if kind is int:
        return bool(INT_MIN <= value <= INT_MAX)
    return bool(value) and unstorable(value) is None


def _a(word: str) -> str:
    """`word` with its indefinite article: "an integer", "a text"."""
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def normalize_with(schema: TableSchema, key: Key) -> Key:
    """Check `key` names exactly the schema's key columns; coerce values to the column types."""
    if type(key) is dict and len(key) == 1 == len(schema.key_columns):
        name = schema.key_columns[0]
        value = key.get(name, _MISSING)
        if type(value) is schema.key_types[0] and _storable(value):
            return {name: value}
    elif type(key) is dict and tuple(key) == schema.key_columns:
        fast = schema.key_types
        if all(type(v) is t and _storable(v) for v, t in zip(key.values(), fast, strict=True)):
            return dict(key)
    if not schema.key_columns:
        raise BadKeyError(
            f"table {schema.name!r} has no primary key, and its columns named "
            f"{', '.join(ROWID_NAMES)} hide SQLite's row id, so no row can be named alone",
            fix="Give the table a primary key (or rename one of those columns) to edit it here.",
        )
    wanted = ", ".join(schema.key_columns)
    if not isinstance(key, dict) or not key:
        raise BadKeyError(
            f"a key of table {schema.name!r} is an object with {wanted}; got {key!r}",
            fix=f"Pass the key as {{{', '.join(f'{k!r}: ...' for k in schema.key_columns)}}}.",
        )
    normalized: Key = {}
    for given, value in key.items():
        column = schema.column(str(given))
        if column is None or column.name not in schema.key_columns:
            what = "not a column" if column is None else "not part of the key"
            raise BadKeyError(
                f"{given!r} is {what} of table {schema.name!r}; its key is ({wanted})",
                fix=f"Pass exactly the key columns: {wanted}.",
            )
        row_id = column.name == schema.integer_key
        normalized[column.name] = coerce_key_value(schema.name, column, value, row_id=row_id)
    missing = [k for k in schema.key_columns if k not in normalized]
    if missing:
        raise BadKeyError(
            f"the key of table {schema.name!r} is ({wanted}); missing {', '.join(missing)}",
            fix=f"Pass every key column: {wanted}.",
        )
    return {k: normalized[k] for k in schema.key_columns}


def fetch_rows(
    conn: sqlite3.Connection, select_sql: str, schema: TableSchema, keys: list[Key]
) -> dict[tuple[Any, ...], Item]:
    """Current rows for `keys`, keyed by key tuple, fetched in batches of IN (...) lookups."""
    key_cols = schema.key_columns
    names = schema.column_names
    positions = [names.index(k) for k in key_cols]
    found: dict[tuple[Any, ...], Item] = {}
    batch = 900
    width = len(key_cols)
    unique_keys = list(dict.fromkeys([tuple(k.values()) for k in keys]))
    for start in range(0, len(unique_keys), batch):
        chunk = unique_keys[start : start + batch]
        if width == 1:
            where = f"{quote_ident(key_cols[0])} IN ({', '.join('?' * len(chunk))})"
            params: list[Any] = [k[0] for k in chunk]
        else:
            tuple_cols = ", ".join(quote_ident(k) for k in key_cols)
            one = "(" + ", ".join("?" * width) + ")"
            where = f"({tuple_cols}) IN (VALUES {', '.join([one] * len(chunk))})"
            params = [v for k in chunk for v in k]
        rows = conn.execute(f"{select_sql} WHERE {where}", params).fetchall()
        items = json_rows(names, rows)
        if width == 1:
            found.update(zip(zip(map(itemgetter(positions[0]), rows)), items, strict=True))
        else:
            found.update(zip(map(itemgetter(*positions), rows), items, strict=True))
    return found


class SchemaSource(Protocol):
    """What the commit path (`sqlite_apply`, `sqlite_guarded`) needs from the SQLite store:
    its name for messages and its cached table schemas; narrow so they never import it."""

    label: str
    path: Path

    def schema(self, table: str) -> TableSchema: ...

    def select_sql(self, schema: TableSchema) -> str: ...
