"""What a set-based bulk edit staged, as the sequence `stage_many` returns.

The first changes are read back in the staging transaction; the rest only when asked for, from
the staging file: the edit's item table while it is staged compact or kept as history
(`staging.batches`), else the rows it became (same ids). Each change is built from its key
text and pre-image values when it is read, so staging 10,000 items builds none nobody reads.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from agent.errors import StagingError
from agent.staging.encoding import loads
from agent.staging.model import StagedChange
from agent.stores.base import Item, Op
from agent.stores.sqlite_readonly import json_value, quote_ident


class StagedBatch(Sequence[StagedChange]):
    """The changes one set-based stage wrote, in staging order."""

    def __init__(
        self,
        shared: tuple[str, str, Op, Item, str, str],
        id_start: int,
        columns: tuple[str, ...] | None,
        count: int,
        first: list[tuple[Any, ...]],
        where: tuple[Path, int] | None,
    ) -> None:
        self._shared = shared  # store, table, op, values, origin, created_at
        self._start = id_start  # the n-th change's id is start + n, in 8 hex digits
        self._columns = columns  # the pre-image's column names (None: a create, no pre-image)
        self._count = count
        self._rows = first  # key text, then the pre-image's values; the rest read on demand
        self._where = where  # the staging file and the batch's number there (None: all read)

    @staticmethod
    def read_sql(items: str, columns: list[str], op: str) -> str:
        """SELECT of the rows (key text, pre-image values) numbered ? to ? of item table `items`."""
        picked = "" if op == "create" else "".join(f", {quote_ident(c)}" for c in columns)
        return f"SELECT tt_key{picked} FROM {items} WHERE tt_n BETWEEN ? AND ? ORDER BY tt_n"

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> StagedChange: ...

    @overload
    def __getitem__(self, index: slice) -> list[StagedChange]: ...

    def __getitem__(self, index: int | slice) -> StagedChange | list[StagedChange]:
        if isinstance(index, slice):
            return [self._change(n) for n in range(self._count)[index]]
        return self._change(range(self._count)[index])  # IndexError as a list's

    def __iter__(self) -> Iterator[StagedChange]:
        return map(self._change, range(self._count))

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence (a list, say) of the same changes in the same order."""
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def _change(self, n: int) -> StagedChange:
        store, table, op, values, origin, created_at = self._shared
        if n >= len(self._rows):
            self._read_rest()
        row = self._rows[n]
        id_ = f"{self._start + n + 1:08x}"
        if isinstance(row, _Texts):  # read back from the rows the edit became
            pre = None if row.pre_image is None else loads(row.pre_image)
            return StagedChange(
                id_, store, table, loads(row.key), op, dict(values), pre, origin, created_at
            )
        key_text, *natives = row
        pre_image = None
        if self._columns is not None:  # as the JSON text read back would give it
            pre_image = {c: json_value(v) for c, v in zip(self._columns, natives, strict=True)}
        return StagedChange(
            id_, store, table, loads(key_text), op, dict(values), pre_image, origin, created_at
        )

    def _read_rest(self) -> None:
        if self._where is None:
            raise IndexError("the rows given are all there are")
        path, batch = self._where
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rest = self._from_items(conn, batch)
            if rest is None:
                rest = self._from_rows(conn)
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        if len(self._rows) + len(rest) != self._count:
            raise StagingError(
                "these staged changes were discarded or forgotten since they were staged",
                fix="See what is staged with `tabletalk staged list`.",
            )
        self._rows = [*self._rows, *rest]

    def _from_items(self, conn: sqlite3.Connection, batch: int) -> list[Any] | None:
        """The rest from the edit's item table, if it is still this edit's."""
        store, table, op, _values, _origin, created_at = self._shared
        header = conn.execute(
            "SELECT 1 FROM staged_batches WHERE batch = ? AND store = ? AND tbl = ? "
            "AND id_start = ? AND created_at = ?",
            (batch, store, table, self._start, created_at),
        ).fetchone()
        if header is None:
            return None
        sql = self.read_sql(f"staged_batch_{batch}", list(self._columns or ()), op)
        return conn.execute(sql, (len(self._rows) + 1, self._count)).fetchall()

    def _from_rows(self, conn: sqlite3.Connection) -> list[Any]:
        """The rest from the staged rows the edit became (same ids, in order)."""
        first = f"{self._start + len(self._rows) + 1:08x}"
        last = f"{self._start + self._count:08x}"
        found = conn.execute(
            "SELECT key_json, pre_image_json FROM staged_changes WHERE id BETWEEN ? AND ? "
            "AND store = ? AND tbl = ? ORDER BY id",
            (first, last, self._shared[0], self._shared[1]),
        ).fetchall()
        return [_Texts(key, pre) for key, pre in found]


class _Texts:
    """A change read back as the texts of its staged row."""

    __slots__ = ("key", "pre_image")

    def __init__(self, key: str, pre_image: str | None) -> None:
        self.key = key
        self.pre_image = pre_image
