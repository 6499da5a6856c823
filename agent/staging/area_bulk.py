"""The bulk side of a staging area: one update or delete on many items, and the writes that
leave out updates changing nothing (`staging.unchanged`), for bulkEdit and stageItem alike."""

from __future__ import annotations

import builtins
import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agent.staging import write
from agent.staging.bulk import stage_query_set_based, stage_set_based
from agent.staging.checks import (
    MAX_ITEMS_PER_CALL,
    TableShape,
    bulk_op,
    check_pre_image_names,
    keys_from_query,
    too_many,
    validate_values,
)
from agent.staging.db import transaction
from agent.staging.encoding import gc_paused
from agent.staging.model import BulkStaged, StagedChange
from agent.staging.unchanged import Entry, LeftOut, NoOpCheck
from agent.stores.base import Item, Key, Op, Store

if TYPE_CHECKING:
    from agent.staging.settle import Settlement


class BulkStaging:
    """`StagingArea`'s bulk edits and no-op-skipping writes, apart so that area.py keeps to
    one-item staging, reading and committing; they use the area's store, connection and lock."""

    store: Store
    path: Path
    _lock: threading.RLock
    _conn: sqlite3.Connection

    if TYPE_CHECKING:

        def _settle(self) -> Settlement: ...

        def _shape(self, table: str) -> TableShape: ...

        def _expand(self) -> None: ...

        def _write(
            self,
            table: str,
            op: Op,
            entries: builtins.list[Entry],
            values: Item,
            origin: str,
            own_only: bool = False,
        ) -> builtins.list[StagedChange]: ...

    @gc_paused
    def stage_many(
        self,
        table: str,
        *,
        keys: builtins.list[Key] | None = None,
        query: str | None = None,
        set: Item | None = None,  # noqa: A002 - the bulkEdit contract's name
        delete: bool = False,
        origin: str = "cli",
        own_only: bool = False,
    ) -> Sequence[StagedChange]:
        """Stage one update (`set`) or a delete on many items, all or nothing (≤ 10,000);
        `own_only` as for `stage`. Every item is staged, also one already holding `set`."""
        return self._stage_many(table, keys, query, set, delete, origin, own_only, False).changes

    @gc_paused
    def stage_many_unless_unchanged(
        self,
        table: str,
        *,
        keys: builtins.list[Key] | None = None,
        query: str | None = None,
        set: Item | None = None,  # noqa: A002 - the bulkEdit contract's name
        delete: bool = False,
        origin: str = "cli",
        own_only: bool = False,
    ) -> BulkStaged:
        """`stage_many`, leaving out (and counting) the items an update would not change, as
        `stage_unless_unchanged` judges one: on SQLite's set-based path in the same INSERT
        (`staging.bulk`), else through `staging.unchanged`."""
        return self._stage_many(table, keys, query, set, delete, origin, own_only, True)

    def _stage_many(
        self,
        table: str,
        keys: builtins.list[Key] | None,
        query: str | None,
        values: Item | None,
        delete: bool,
        origin: str,
        own_only: bool,
        skip_unchanged: bool,
    ) -> BulkStaged:
        op = bulk_op(keys, query, values, delete)
        info = self._shape(table)
        clean = validate_values(info, op, values, check_value=self.store.value_checker)
        skip = skip_unchanged and op == "update"
        if query is not None:
            staged = self._stage_set_based(info, op, query, clean, origin, skip)
            if staged is not None:
                return staged
        raw_keys = keys if keys is not None else keys_from_query(self.store, info, query or "")
        if len(raw_keys) > MAX_ITEMS_PER_CALL:
            raise too_many(len(raw_keys))
        check_pre_image_names(info, len(raw_keys))
        staged = self._stage_set_based(info, op, raw_keys, clean, origin, skip)
        if staged is not None:
            return staged
        entries = write.item_entries(self.store, info, raw_keys)
        if not entries:
            return BulkStaged([])
        if not skip:
            return BulkStaged(self._write(info.name, op, entries, clean, origin, own_only))
        left, changes = self._write_unless_unchanged(info.name, entries, clean, origin, own_only)
        return BulkStaged(
            changes,
            unchanged=sum(1 for u in left.unchanged if u.change_id is None),
            already_staged=sum(1 for u in left.unchanged if u.change_id is not None),
            withdrawn=[c.id for c in left.withdrawn],
        )

    def _stage_set_based(
        self,
        info: TableShape,
        op: Op,
        keys: builtins.list[Key] | str,
        values: Item,
        origin: str,
        skip_unchanged: bool,
    ) -> BulkStaged | None:
        """One INSERT … SELECT on a SQLite store of the items `keys` names or selects (a
        query: `staging.bulk`); None: stage row by row."""
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        where = (self.store, self.path, info, op)
        if isinstance(keys, str):  # the query runs outside the lock; only the INSERT takes it
            return stage_query_set_based(
                *where, keys, values, origin, now, self._settled(), skip_unchanged=skip_unchanged
            )
        return stage_set_based(
            *where, keys, values, origin, now, self._settled(), skip_unchanged=skip_unchanged
        )

    @contextlib.contextmanager
    def _settled(self) -> Iterator[None]:
        """Hold this area's lock with any interrupted commit settled (for a staging write)."""
        with self._lock:
            self._settle()
            yield

    def _write_unless_unchanged(
        self, table: str, entries: builtins.list[Entry], values: Item, origin: str, own_only: bool
    ) -> tuple[LeftOut, builtins.list[StagedChange]]:
        """Update `entries` with `values` in one transaction, leaving out the updates that
        change nothing and dropping the staged changes they take back (`staging.unchanged`):
        the staged changes are read under the lock, the store asked outside it."""
        self._settle()
        identity = self.store.identity
        with self._lock:
            self._expand()  # an item's staged change may still be in a compact edit
            check = NoOpCheck(self._conn, identity, table, entries, values)
        check.ask(self.store)
        with self._lock, transaction(self._conn) as conn:
            left = check.apply(conn, origin, own_only)
            if not left.rest:
                return left, []
            changes = write.write_changes(
                conn, identity, table, "update", left.rest, values, origin, own_only=own_only
            )
        return left, changes
