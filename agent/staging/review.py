"""Reading the staging area for review at scale: filtered counts, bulk-edit summaries and pages.

Everything is computed in SQL on the staging database, so a screen can show a summary of
10,000 staged changes and any page of them without loading them all.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any

from agent.errors import StagingError
from agent.staging.db import COLUMNS
from agent.staging.encoding import loads, row_to_change
from agent.staging.model import StagedChange

OPS = ("create", "update", "delete")
PREFIXES = {"table": "table", "t": "table", "op": "op", "attr": "attribute", "a": "attribute"}


def show_value(value: Any, limit: int | None = None) -> str:
    """A value on one line (JSON for structures, ∅ for missing), cut to `limit` with `…`."""
    if value is None:
        text = "∅"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, default=str, ensure_ascii=False)
    elif isinstance(value, str):
        text = " ".join(value.split())
    else:
        text = str(value)
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def json_path(attribute: str) -> str:
    """The JSON path of a top-level attribute, quoted so any name works."""
    return '$."' + attribute.replace('"', '\\"') + '"'


@dataclass(frozen=True)
class ChangeFilter:
    """Which staged changes to show or act on; empty parts match everything.

    `values_json` narrows to one bulk group (the changes staging exactly those values), `ids`
    to given changes (e.g. those in conflict).
    """

    table: str | None = None
    op: str | None = None
    attribute: str | None = None
    text: str | None = None
    values_json: str | None = None
    ids: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, typed: str) -> ChangeFilter:
        """`table:orders op:update attr:status cancel` → a filter; other words are text."""
        parts: dict[str, str] = {}
        words: list[str] = []
        for word in typed.split():
            name, sep, value = word.partition(":")
            field_name = PREFIXES.get(name.lower()) if sep and value else None
            if field_name is None:
                words.append(word)
            else:
                parts[field_name] = value.lower() if field_name == "op" else value
        op = parts.get("op")
        if op is not None and op not in OPS:
            raise StagingError(
                f"unknown op {op!r} in the filter", fix="Use op:create, op:update or op:delete."
            )
        return cls(
            table=parts.get("table"),
            op=op,
            attribute=parts.get("attribute"),
            text=" ".join(words) or None,
        )

    @property
    def empty(self) -> bool:
        parts = (self.table, self.op, self.attribute, self.text, self.values_json)
        return not any(parts) and self.ids is None

    def where(self) -> tuple[str, list[Any]]:
        """SQL conditions (ANDed after `store = ?`) and their parameters."""
        sql: list[str] = []
        params: list[Any] = []
        if self.table:
            sql.append("tbl = ? COLLATE NOCASE")
            params.append(self.table)
        if self.op:
            sql.append("op = ?")
            params.append(self.op)
        if self.values_json is not None:
            sql.append("values_json = ?")
            params.append(self.values_json)
        if self.ids is not None:
            sql.append(f"id IN ({', '.join('?' * len(self.ids))})" if self.ids else "0")
            params += list(self.ids)
        if self.attribute:
            sql.append(
                "(EXISTS (SELECT 1 FROM json_each(values_json) WHERE key = ? COLLATE NOCASE)"
                " OR (op = 'delete' AND EXISTS (SELECT 1 FROM json_each(pre_image_json)"
                " WHERE key = ? COLLATE NOCASE)))"
            )
            params += [self.attribute, self.attribute]
        if self.text:  # what the change shows: its key, new values, and what they replace
            like = _like(self.text)
            sql.append(
                "(key_json LIKE ? ESCAPE '\\' OR values_json LIKE ? ESCAPE '\\'"
                " OR (op = 'delete' AND coalesce(pre_image_json, '') LIKE ? ESCAPE '\\')"
                " OR (op = 'update' AND EXISTS (SELECT 1 FROM json_each(values_json) AS v"
                " JOIN json_each(pre_image_json) AS p ON p.key = v.key"
                " WHERE coalesce(p.atom, p.value) LIKE ? ESCAPE '\\')))"
            )
            params += [like, like, like, like]
        return "".join(f" AND {s}" for s in sql), params


@dataclass(frozen=True)
class ChangeGroup:
    """Staged changes of one table and op that stage the same values: one bulk decision.

    `old` holds, per changed attribute, its most common pre-image values with their counts,
    and `distinct` how many different old values there are.
    """

    table: str
    op: str
    values_json: str
    count: int
    old: dict[str, list[tuple[Any, int]]] = field(default_factory=dict)
    distinct: dict[str, int] = field(default_factory=dict)

    @property
    def values(self) -> dict[str, Any]:
        loaded = loads(self.values_json)
        return loaded if isinstance(loaded, dict) else {}

    def summary(self, limit: int = 40) -> str:
        """`1,400 orders: status delivered → cancelled` (old values summed up when they vary)."""
        head = f"{self.count:,} {self.table}"
        if self.op == "delete":
            return f"{head}: delete"
        if self.op == "create":
            return f"{head}: create"
        parts = []
        for attribute, new in self.values.items():
            common = self.old.get(attribute, [])
            distinct = self.distinct.get(attribute, len(common))
            if distinct == 1 and common:
                old = show_value(common[0][0], limit)
            else:
                shown = ", ".join(f"{show_value(v, 20)} ×{n:,}" for v, n in common[:2])
                more = ", …" if distinct > 2 else ""
                old = f"({distinct:,} values: {shown}{more})"
            parts.append(f"{attribute} {old} → {show_value(new, limit)}")
        return f"{head}: " + "; ".join(parts)


class StagingReview:
    """Filtered, grouped and paged reads of one store's staged changes."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, store: str) -> None:
        self._conn = conn
        self._lock = lock
        self._store = store

    def _rows(self, sql: str, params: list[Any]) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _where(self, flt: ChangeFilter | None) -> tuple[str, list[Any]]:
        extra, params = (flt or ChangeFilter()).where()
        return "store = ?" + extra, [self._store, *params]

    def count(self, flt: ChangeFilter | None = None) -> int:
        """How many staged changes match."""
        where, params = self._where(flt)
        return int(self._rows(f"SELECT count(*) FROM staged_changes WHERE {where}", params)[0][0])

    def tables(self, flt: ChangeFilter | None = None) -> list[tuple[str, int]]:
        """(table, matching changes) in table order."""
        where, params = self._where(flt)
        sql = f"SELECT tbl, count(*) FROM staged_changes WHERE {where} GROUP BY tbl ORDER BY tbl"
        return [(r[0], int(r[1])) for r in self._rows(sql, params)]

    def groups(
        self, flt: ChangeFilter | None = None, *, smallest: int = 2, limit: int = 20
    ) -> list[ChangeGroup]:
        """The biggest bulk groups (≥ `smallest` changes staging the same values), largest first."""
        where, params = self._where(flt)
        sql = (
            f"SELECT tbl, op, values_json, count(*) AS n FROM staged_changes WHERE {where} "
            "GROUP BY tbl, op, values_json HAVING n >= ? ORDER BY n DESC, min(seq) LIMIT ?"
        )
        found = []
        for table, op, values_json, n in self._rows(sql, [*params, smallest, limit]):
            group = ChangeGroup(table, op, values_json, int(n))
            if op == "update":
                group = self._with_old_values(group)
            found.append(group)
        return found

    def _with_old_values(self, group: ChangeGroup) -> ChangeGroup:
        old: dict[str, list[tuple[Any, int]]] = {}
        distinct: dict[str, int] = {}
        base = "store = ? AND tbl = ? AND op = ? AND values_json = ?"
        args = [self._store, group.table, group.op, group.values_json]
        for attribute in group.values:
            path = json_path(attribute)
            rows = self._rows(
                f"SELECT json_extract(pre_image_json, ?) AS v, count(*) AS n FROM staged_changes "
                f"WHERE {base} GROUP BY v ORDER BY n DESC LIMIT 3",
                [path, *args],
            )
            old[attribute] = [(r[0], int(r[1])) for r in rows]
            distinct[attribute] = int(
                self._rows(
                    "SELECT count(*) FROM (SELECT 1 FROM staged_changes "
                    f"WHERE {base} GROUP BY json_extract(pre_image_json, ?))",
                    [*args, path],
                )[0][0]
            )
        return ChangeGroup(group.table, group.op, group.values_json, group.count, old, distinct)

    def page(
        self, flt: ChangeFilter | None = None, *, offset: int = 0, limit: int = 100
    ) -> list[StagedChange]:
        """Matching changes `offset` … `offset + limit`, in staging order."""
        where, params = self._where(flt)
        sql = f"SELECT {COLUMNS} FROM staged_changes WHERE {where} ORDER BY seq LIMIT ? OFFSET ?"
        memo: dict[str, Any] = {}
        return [row_to_change(r, memo) for r in self._rows(sql, [*params, limit, offset])]

    def ids(self, flt: ChangeFilter | None = None) -> list[str]:
        """Ids of every matching change, in staging order."""
        where, params = self._where(flt)
        sql = f"SELECT id FROM staged_changes WHERE {where} ORDER BY seq"
        return [r[0] for r in self._rows(sql, params)]

    def deletes(self, flt: ChangeFilter | None = None) -> list[StagedChange]:
        """Every matching delete (for the check of rows they would leave orphaned)."""
        where, params = self._where(flt)
        sql = f"SELECT {COLUMNS} FROM staged_changes WHERE {where} AND op = 'delete' ORDER BY seq"
        return [row_to_change(r) for r in self._rows(sql, params)]
