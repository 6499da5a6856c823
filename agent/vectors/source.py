"""What an index reads from a store: every row's key and text, in batches, read-only.

Rows come from `Store.scan_rows`: SQLite streams a SELECT through its read-only path; DynamoDB
pages through Scan. A table of any size is read in bounded memory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

from agent.errors import TabletalkError
from agent.stores.base import Item, Key, Store, TableInfo

PAGE_ROWS = 1000


def quote_ident(name: str) -> str:
    """An SQL identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def key_json(key: Key) -> str:
    """A row key as the index stores it (sorted JSON, so every writer spells it alike)."""
    return json.dumps(key, sort_keys=True, default=str, ensure_ascii=False)


def row_text(columns: Sequence[str], row: Item) -> str:
    """The text embedded for a row: each chosen column with its name, one per line."""
    parts = []
    for column in columns:
        value = row.get(column)
        if value is not None and str(value).strip():
            parts.append(f"{column}: {value}")
    return "\n".join(parts)


def text_hash(text: str) -> str:
    """The hash kept per row, so a rebuild embeds only rows whose text changed."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def key_of(info: TableInfo, row: Item) -> Key:
    """The key of a row read with its key columns."""
    return {k: row.get(k) for k in info.key_columns}


def read_rows(store: Store, info: TableInfo, columns: Sequence[str]) -> Iterator[tuple[Key, str]]:
    """(key, text) of every row of the table, streamed in batches (`Store.scan_rows`)."""
    keys = list(info.key_columns)
    wanted = keys + [c for c in columns if c not in keys]
    batches = store.scan_rows(info.name, wanted, PAGE_ROWS)
    try:
        for batch in batches:
            for row in batch:
                yield key_of(info, row), row_text(columns, row)
    finally:
        batches.close()


def sql_literal(value: Any) -> str:
    """A key value as an SQL literal (numbers, text, NULL); other types are refused."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TabletalkError(f"key value of type {type(value).__name__} cannot filter a search")


def key_condition(keys: Sequence[Key]) -> str:
    """An SQL condition matching exactly the given keys."""
    clauses = []
    for key in keys:
        parts = [f"{quote_ident(k)} = {sql_literal(v)}" for k, v in key.items()]
        clauses.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(clauses) or "0"
