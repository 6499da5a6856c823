"""The commit history side of a staging area: list the commits, read one, revert one."""

from __future__ import annotations

import builtins
import sqlite3
import threading
from typing import TYPE_CHECKING

from agent.errors import StagingError
from agent.staging import history
from agent.staging.db import snapshot, transaction
from agent.staging.history import CommitEntry, LoggedChange
from agent.staging.model import StagedChange
from agent.staging.revert import stage_inverses
from agent.stores.base import Store

if TYPE_CHECKING:
    from agent.staging.settle import Settlement


class CommitHistory:
    """`StagingArea`'s history methods, apart so that area.py keeps to staging and committing;
    they use the area's store, connection and lock."""

    store: Store
    _lock: threading.RLock
    _conn: sqlite3.Connection

    if TYPE_CHECKING:

        def _follow_file(self) -> None: ...

        def _settle(self) -> Settlement: ...

        def _get_many(self, ids: builtins.list[str]) -> builtins.list[StagedChange]: ...

    def history(self, limit: int = 200) -> builtins.list[CommitEntry]:
        """This store's commits, newest first."""
        with self._lock:
            self._follow_file()
            with snapshot(self._conn):
                return history.commits(self._conn, self.store.identity, limit)

    def commit_entry(self, commit_id: str) -> tuple[CommitEntry, builtins.list[LoggedChange]]:
        """One commit (by id or a unique prefix) and its changes; StagingError if unknown."""
        with self._lock:
            self._follow_file()
            with snapshot(self._conn):  # retention in another process may drop it meanwhile
                entry = history.find(self._conn, self.store.identity, commit_id)
                if entry is None:
                    raise StagingError(
                        f"no commit {commit_id!r} in the history of {self.store.label}",
                        fix="See the commits and their ids with `tabletalk commits`.",
                    )
                return entry, history.changes_of(self._conn, entry.id)

    def revert(self, commit_id: str) -> builtins.list[StagedChange]:
        """Stage the inverse of a commit, each checked against the commit's post-image.

        Refused (nothing staged) when an item of the commit already has a staged change.
        """
        entry, changes = self.commit_entry(commit_id)
        inverses = history.as_stored(self.store, [history.inverse(c) for c in changes])
        self._settle()
        with self._lock, transaction(self._conn) as conn:
            ids = stage_inverses(conn, self.store.identity, entry.id, inverses)
        return self._get_many(ids)
