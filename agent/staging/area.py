"""The staging area of one store: stage, list, diff, reject, discard and commit changes.

Every change is written to the staging database before `stage`/`stage_many` return, so a
crash loses nothing; every operation sees only the changes of `store.identity`.

One change per item: staging again on an item that already has a staged change folds into
that change (same id, same pre-image, the original staging time): update + update merges the
values (newer wins); create + update merges into the create; update + delete becomes a delete.
Staging anything on an item staged for deletion, a create on a staged item, or a delete of an
item that only exists as a staged create is refused with the way out. `stage` and `stage_many`
stage what they are told, also an update whose values equal the current ones (the diff shows
old = new); stageItem and bulkEdit call `stage_unless_unchanged` and
`stage_many_unless_unchanged` (`agent.staging.area_bulk`), which leave such updates out and
say so (`Unchanged`, `BulkStaged`), and drop a staged update that the new values take back to
what the item holds (`agent.staging.unchanged`).

Commits and crashes: see `agent.staging.commit`; every operation first settles a commit that
was interrupted (`agent.staging.settle`), so nothing shown, diffed, discarded, rebased or
committed is already in the store. Rebase ("take current"): `agent.staging.rebase`.
"""

from __future__ import annotations

import builtins
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent import paths
from agent.errors import InDoubtError, StagingError, TabletalkError
from agent.staging import batches, history, write
from agent.staging import conflicts as records
from agent.staging.area_bulk import BulkStaging
from agent.staging.area_history import CommitHistory
from agent.staging.checks import (
    MAX_ITEMS_PER_CALL,
    TableShape,
    check_key_values,
    validate_values,
)
from agent.staging.commit import Pending, commit_changes, pending_all, pending_chosen
from agent.staging.db import (
    COLUMNS,
    commits_in_progress,
    open_staging_db,
    snapshot,
    transaction,
)
from agent.staging.diff import diff_of
from agent.staging.encoding import gc_paused, key_json, row_to_change
from agent.staging.lock import CommitLock
from agent.staging.model import AttributeDiff, CommitReport, StagedChange, Unchanged
from agent.staging.rebase import RebaseReport, plan_rebase
from agent.staging.review import StagingReview
from agent.staging.settle import Settlement, has_records, settle_interrupted
from agent.stores.base import Item, Key, Op, Store
from agent.stores.sqlite_snapshot import file_id
from agent.text_plural import noun

__all__ = ["MAX_ITEMS_PER_CALL", "StagingArea"]

LIST_HINT = "See the staged changes and their ids with `tabletalk staged list`."


class StagingArea(CommitHistory, BulkStaging):
    """Pending changes of one store, persisted in the shared staging database."""

    def __init__(
        self, store: Store, path: Path | None = None, keep: history.Retention | None = None
    ) -> None:
        self.store = store
        self.keep = keep or history.Retention()
        self.path = Path(path) if path is not None else paths.staging_db_path()
        self._notices: builtins.list[str] = []
        self._conn = open_staging_db(self.path, self._notices)
        self._file = file_id(self.path)
        self._lock = threading.RLock()
        self._commit_lock = CommitLock(self.path)
        self._settled_landed: set[str] = set()
        self._settle()

    # -- interrupted commits ------------------------------------------------------------------

    def take_notices(self) -> builtins.list[str]:
        """Sentences about what opening or settling did (a recovered damaged file, a settled
        interrupted commit) that the user should read; each is returned once."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    def _follow_file(self) -> None:
        """Reopen the staging database when another program deleted or replaced its file while
        this area had it open: writing on would reach a file no other process sees, gone when
        this one ends. Called under the area's lock before every operation."""
        now = file_id(self.path)
        if now is not None and now == self._file:
            return
        old = self._conn
        self._conn = open_staging_db(self.path, self._notices)
        self._file = file_id(self.path)
        old.close()
        what = "deleted" if now is None else "replaced"
        self._notices.append(
            f"The staging database {self.path} was {what} by another program while tabletalk "
            "had it open; staged changes are now read from and saved to the file there."
        )

    def _settle(self) -> Settlement:
        """Settle commits that a dead process left unfinished; a running one is left alone."""
        with self._lock:
            self._follow_file()
            if self._commit_lock.held or not has_records(self._conn, self.store.identity):
                return Settlement()
            if not self._commit_lock.try_acquire():
                return Settlement()  # a live commit: its own process finishes it
            try:
                return self._settle_locked()
            finally:
                self._commit_lock.release()

    def _settle_locked(self) -> Settlement:
        settled = settle_interrupted(self.store, self._conn)
        if settled.landed or settled.kept:
            self._settled_landed.update(settled.landed)
            self._notices.append(settled.describe())
        return settled

    def _refuse_held(self, ids: builtins.list[str] | None) -> None:
        """Refuse to touch changes a running commit (another process's) holds."""
        held = commits_in_progress(self._conn, self.store.identity)
        if held and (ids is None or held.intersection(ids)):
            raise self._commit_lock.busy_error()

    # -- staging ------------------------------------------------------------------------------

    def stage(
        self,
        table: str,
        op: Op,
        key: Key,
        values: Item | None = None,
        origin: str = "cli",
        *,
        own_only: bool = False,
    ) -> StagedChange:
        """Stage one create/update/delete after checking it against the store; return it.
        `own_only`: refuse to fold into a change another origin staged (see `_write`)."""
        table, entry, clean = self._one_item(table, op, key, values)
        return self._write(table, op, [entry], clean, origin, own_only)[0]

    def stage_unless_unchanged(
        self,
        table: str,
        op: Op,
        key: Key,
        values: Item | None = None,
        origin: str = "cli",
        *,
        own_only: bool = False,
    ) -> StagedChange | Unchanged:
        """`stage`, except that an update which would change nothing stages nothing and
        returns `Unchanged`, and one taking the item's staged update back to what the item
        holds drops that change (`Unchanged.withdrawn`); judged as a commit judges
        (`Store.holds`, `staging.unchanged`). An update changing any value is staged whole."""
        if op != "update":
            return self.stage(table, op, key, values, origin, own_only=own_only)
        table, entry, clean = self._one_item(table, op, key, values)
        left, changes = self._write_unless_unchanged(table, [entry], clean, origin, own_only)
        if left.withdrawn:
            (dropped,) = left.withdrawn
            return Unchanged(table, entry[1], clean, dropped.id, withdrawn=True)
        return left.unchanged[0] if left.unchanged else changes[0]

    def _one_item(
        self, table: str, op: Op, key: Key, values: Item | None
    ) -> tuple[str, tuple[str, Key, Item | None], Item]:
        """Checked: the table's name, the entry `write.write_changes` takes, the values."""
        info = self._shape(table)
        clean = validate_values(info, op, values, check_value=self.store.value_checker)
        normalized = self.store.normalize_key(info.name, key)
        if op == "create":
            check_key_values(self.store, info, normalized, values or {})
        item = self.store.get_item(info.name, normalized)
        return info.name, (key_json(normalized), normalized, item), clean

    def _shape(self, table: str) -> TableShape:
        """The table's name, columns and key; the SQLite store answers without counting rows."""
        return self.store.schema(table)

    def _write(
        self,
        table: str,
        op: Op,
        entries: builtins.list[tuple[str, Key, Item | None]],
        values: Item,
        origin: str,
        own_only: bool = False,
    ) -> builtins.list[StagedChange]:
        """Fold the new changes into the staged ones and persist them in one transaction
        (`agent.staging.write`), after settling any interrupted commit."""
        self._settle()
        with self._lock, transaction(self._conn) as conn:
            return write.write_changes(
                conn, self.store.identity, table, op, entries, values, origin, own_only=own_only
            )

    # -- reading ------------------------------------------------------------------------------

    def list(self, table: str | None = None) -> builtins.list[StagedChange]:
        """This store's staged changes (optionally of one table), in staging order."""
        # `+store`: scan in seq order instead of searching the item index and sorting.
        sql = f"SELECT {COLUMNS} FROM staged_changes WHERE +store = ?"
        params: tuple[Any, ...] = (self.store.identity,)
        if table is not None:
            sql += " AND tbl = ?"
            params += (table,)
        with self._lock:
            self._settle()
            with snapshot(self._conn):  # rows, then batches: another process may expand them
                rows = self._conn.execute(sql + " ORDER BY seq", params).fetchall()
                compact = [
                    b for b in batches.staged(self._conn, self.store.identity)
                    if table is None or b.table == table
                ]  # fmt: skip
                memo: dict[str, Item] = {}
                changes = [row_to_change(r, memo) for r in rows]
                for batch in compact:  # after every row
                    changes.extend(batches.changes(self._conn, batch))
        return changes

    def get(self, change_id: str) -> StagedChange:
        """One staged change of this store by id."""
        return self._get_many([change_id])[0]

    def _get_many(self, ids: builtins.list[str]) -> builtins.list[StagedChange]:
        with self._lock:
            self._settle()
            self._expand()
            return self._read_many(ids)

    def _expand(self) -> None:
        """Turn staged compact bulk edits into rows, for code that reads rows by id or SQL."""
        if batches.any_staged(self._conn):
            with transaction(self._conn):
                pass  # db.transaction expands them

    def _read_many(self, ids: builtins.list[str]) -> builtins.list[StagedChange]:
        """The staged changes `ids` as the connection sees them now (inside a caller's
        transaction: as they stay until it ends); StagingError naming any not staged."""
        wanted = list(dict.fromkeys(ids))
        found = {c.id: c for c in write.staged_by_id(self._conn, self.store.identity, wanted)}
        unknown = [i for i in wanted if i not in found]
        if unknown:
            raise StagingError(
                f"no staged change {', '.join(map(repr, unknown[:5]))} for {self.store.label}"
                + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""),
                fix=LIST_HINT,
            )
        return [found[i] for i in wanted]

    def conflicts(self) -> dict[str, records.RecordedConflict]:
        """The conflicts commits (of any process) found among this store's staged changes and
        that still hold as far as staging knows: no change, rebase or commit since."""
        with self._lock:
            self._settle()
            return records.recorded(self._conn, self.store.identity)

    def conflict_stamp(self) -> tuple[Any, ...]:
        """Changes whenever a conflict of this store is recorded or forgotten (cheap to poll)."""
        with self._lock:
            self._follow_file()
            return records.stamp(self._conn, self.store.identity)

    def count(self) -> int:
        """How many changes this store has staged."""
        with self._lock:
            self._settle()
            with snapshot(self._conn):
                row = self._conn.execute(
                    "SELECT count(*) FROM staged_changes WHERE store = ?", (self.store.identity,)
                ).fetchone()
                return int(row[0]) + batches.count(self._conn, self.store.identity)

    def review(self) -> StagingReview:
        """Filtered counts, bulk-edit summaries and pages for a review screen."""
        with self._lock:
            self._follow_file()
            self._expand()
            return StagingReview(self._conn, self._lock, self.store.identity)

    def diff(self, change: StagedChange) -> builtins.list[AttributeDiff]:
        """Per attribute old → new (see `agent.staging.diff`)."""
        return diff_of(self.store, change)

    # -- rejecting, discarding, committing ----------------------------------------------------

    def reject_attribute(self, change_id: str, attribute: str) -> StagedChange | None:
        """Drop one attribute from an update (or create); returns the change, or None when an
        update lost its last attribute and was discarded."""
        with self._lock:
            self._settle()
            # Read inside the write transaction: what another process folds in meanwhile stays.
            with transaction(self._conn) as conn:
                (change,) = self._read_many([change_id])
                return write.reject_attribute(conn, self.store.identity, change, attribute)

    def discard(
        self,
        ids: builtins.list[str] | None = None,
        table: str | None = None,
        all: bool = False,  # noqa: A002 - reads naturally at call sites: discard(all=True)
        origin: str | None = None,
    ) -> int:
        """Drop staged changes: the given ids, every change of a table, or all; return how many.

        With `origin`, only changes staged from that origin are dropped (others are kept, and
        naming one of them by id is refused).
        """
        if sum((ids is not None, table is not None, bool(all))) != 1:
            raise StagingError(
                "say which changes to discard: ids, a table, or all",
                fix="Pass ids=[...], table='name' or all=True (CLI: ID... or --all).",
            )
        # Checked inside the write transaction: another process's commit or discard cannot
        # take these changes between the check and the delete.
        with self._lock:
            self._settle()
            if ids is not None:
                with transaction(self._conn) as conn:
                    changes = self._read_many(ids)
                    others = [c.id for c in changes if origin is not None and c.origin != origin]
                    if others:
                        raise StagingError(
                            f"{noun(len(others), 'change')} {', '.join(others[:5])} "
                            f"{noun(len(others), 'was', 'were')} staged by someone else "
                            f"(not {origin}); nothing was discarded",
                            fix="Discard only the changes you staged (see their origin in the "
                            "list); discarding others' changes needs MCP level full.",
                        )
                    self._refuse_held([c.id for c in changes])
                    conn.executemany(
                        "DELETE FROM staged_changes WHERE store = ? AND id = ?",
                        [(self.store.identity, c.id) for c in changes],
                    )
                    records.drop(conn, [c.id for c in changes])
                return len(changes)
            with transaction(self._conn) as conn:
                self._refuse_held(None)
                return write.discard_where(conn, self.store.identity, table, origin)

    def rebase(self, ids: builtins.list[str] | None = None) -> RebaseReport:
        """Take current: refresh the pre-image of these changes (None: all) from the store.

        Each change then applies on top of the item's current value; a change the table
        already matches is dropped. See `agent.staging.rebase` for the rules per op.
        """
        with self._lock:
            self._settle()
            changes = self.list() if ids is None else self._get_many(ids)
            self._refuse_held([c.id for c in changes])
            updates, report = plan_rebase(self.store, changes)
            with transaction(self._conn) as conn:
                self._refuse_moved(changes)
                conn.executemany(
                    "UPDATE staged_changes SET op = ?, pre_image_json = ? WHERE id = ?", updates
                )
                conn.executemany(
                    "DELETE FROM staged_changes WHERE id = ?", [(i,) for i in report.dropped]
                )
                records.drop(conn, [*(u[-1] for u in updates), *report.dropped])
        return report

    def _refuse_moved(self, planned: builtins.list[StagedChange]) -> None:
        """Inside a write transaction: refuse when another process committed, discarded or
        changed any of `planned` since they were read (a rebase planned on them would undo it)."""
        self._refuse_held([c.id for c in planned])
        moved = write.moved_since(self._conn, self.store.identity, planned)
        if moved:
            raise StagingError(
                f"{noun(len(moved), 'change')} {', '.join(moved[:5])} "
                f"{noun(len(moved), 'was', 'were')} committed, discarded or changed by "
                "another process meanwhile; nothing was rebased",
                fix="Run the rebase again (`tabletalk staged rebase`) on the changes as they "
                "are now.",
            )

    @gc_paused
    def commit(
        self,
        ids: builtins.list[str] | None = None,
        progress: Callable[[int, int], Any] | None = None,
        wait_s: float | None = None,
        by: str = "user",
        as_shown: builtins.list[StagedChange] | None = None,
    ) -> CommitReport:
        """Commit this store's changes (or `ids`); see `staging.commit`. With `as_shown` (every
        staged change of the store as a person reviewed them), StagedSetMoved and nothing
        committed when any of them moved since or another change was staged meanwhile: checked
        inside the transaction that records the commit.

        One commit at a time per staging area: waits up to `wait_s` (default
        `lock.WAIT_S`) for a running one, then
        raises StagingError naming it. An interrupted commit is settled first; its landed
        changes are reported in `recovered` (and `committed`).
        """
        with self._lock:
            self._commit_lock.acquire(wait_s)
            try:
                self._follow_file()
                settled = self._settle_locked()
                before = self._settled_landed
                recovered = settled.landed
                wanted: builtins.list[str] = []
                if ids is not None:
                    recovered = [i for i in dict.fromkeys(ids) if i in before]
                    wanted = [i for i in dict.fromkeys(ids) if i not in before]

                def choose() -> Pending:  # run inside the transaction recording the commit
                    if as_shown is not None:
                        batches.expand(self._conn, self.store.identity)
                        write.check_as_shown(self._conn, self.store.identity, as_shown)
                    if ids is None:
                        return pending_all(self._conn, self.store.identity, self.path)
                    chosen = pending_chosen(self._conn, self.store.identity, self.path, wanted)
                    if chosen is None:
                        self._read_many(wanted)  # raises, naming the ids not staged
                        raise AssertionError("unreachable: some id is not staged")
                    return chosen

                try:
                    report = commit_changes(
                        self.store, self._conn, choose, progress, by=by, keep=self.keep
                    )
                except InDoubtError:
                    # Settle what may have landed now, if the store answers; else the next
                    # operation does.
                    with contextlib.suppress(TabletalkError, sqlite3.Error):
                        self._settle_locked()
                    raise
            finally:
                self._commit_lock.release()
        report.recovered = list(recovered)
        report.committed = [*recovered, *report.committed]
        return report

    def close(self) -> None:
        """Close the staging database connection."""
        with self._lock:
            self._conn.close()
