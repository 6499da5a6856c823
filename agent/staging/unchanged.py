"""Which updates of a call would change nothing, judged as a commit judges (`Store.holds`).

An update is left out when the item already holds every value and has no staged change, or
when its staged change already sets every value to the same JSON. An update that folds a
staged update back to what the item holds drops that change (`withdrawn`). The store is read
before the staging transaction (no store call holds staging's write lock); inside it, the
judgement stands only if nothing wrote staging meanwhile (`written`: another connection's
commits, `PRAGMA data_version`, and this connection's own writes, `total_changes`, since
another thread of the process may stage or commit through the same area: a commit may have
cleared a change and changed the item, another stager folded values in) and the fold is still
the one the store was asked about (the same change, setting the same). Otherwise the update is
staged as `stage` would stage it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.staging import conflicts
from agent.staging.db import commits_in_progress, data_version
from agent.staging.encoding import dumps, row_to_change
from agent.staging.model import StagedChange, Unchanged
from agent.staging.write import staged_rows
from agent.stores.base import Item, Key, Store

Entry = tuple[str, Key, Item | None]
"""(item key text, key, current item or None): what `write.write_changes` takes."""


@dataclass
class LeftOut:
    """Inside the staging transaction: the entries still to stage (`rest`), the updates left
    out (`unchanged`: their change_id names a staged change already setting the values), and
    the staged changes dropped because the update takes them back to what the item holds."""

    rest: list[Entry] = field(default_factory=list)
    unchanged: list[Unchanged] = field(default_factory=list)
    withdrawn: list[StagedChange] = field(default_factory=list)


def written(conn: sqlite3.Connection) -> tuple[int, int]:
    """What moves whenever the staging DB is written: other connections' commits (`PRAGMA
    data_version`) and this connection's own rows changed (`total_changes`)."""
    return data_version(conn), conn.total_changes


class NoOpCheck:
    """One call's updates of `table` with `values`, judged in three steps: `__init__` reads
    the staged changes (under the area's lock), `ask` asks the store (outside it), `apply`
    decides inside the staging transaction and drops the withdrawn changes there."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        identity: str,
        table: str,
        entries: Sequence[Entry],
        values: Item,
    ) -> None:
        self.identity, self.table, self.entries, self.values = identity, table, entries, values
        self.seen = written(conn)
        rows = staged_rows(conn, identity, table, [e[0] for e in entries])
        self._staged = {row[3]: row_to_change(row) for row in rows}
        self.held: set[str] = set()
        """Item keys whose item holds `values` (and had no staged change when read)."""
        self.back: dict[str, tuple[str, str]] = {}
        """Item key → (id of its staged update, JSON of the values that update would fold
        into, which the item holds)."""

    def ask(self, store: Store) -> None:
        """Ask the store which items already hold the values (or the folded ones): from the
        items as read where the store can tell (`holds_as_read`), else in one call."""
        asked: list[tuple[str, Key, Item, bool]] = []  # item key, key, values, a fold
        for item_key, key, item in self.entries:
            staged = self._staged.get(item_key)
            if item is None or (staged is not None and staged.op != "update"):
                continue
            wanted = self.values if staged is None else {**staged.values, **self.values}
            check = (item_key, key, wanted, staged is not None)
            answer = store.holds_as_read(self.table, item, wanted)
            if answer is None:
                asked.append(check)
            elif answer:
                self._record(check)
        if not asked:
            return
        if len(asked) == 1:  # one item: the store's own single check
            _, key, wanted, _ = asked[0]
            answers = [store.holds(self.table, key, wanted)]
        else:
            answers = store.holds_many(self.table, [(c[1], c[2]) for c in asked])
        for check, answer in zip(asked, answers, strict=True):
            if answer:
                self._record(check)

    def _record(self, check: tuple[str, Key, Item, bool]) -> None:
        item_key, _, wanted, folds = check
        if folds:
            self.back[item_key] = (self._staged[item_key].id, dumps(wanted))
        else:
            self.held.add(item_key)

    def apply(self, conn: sqlite3.Connection, origin: str, own_only: bool) -> LeftOut:
        """Inside the staging transaction: split the entries and delete the withdrawn changes.
        A change a running commit holds, or (`own_only`) another origin's, is never dropped:
        it goes on to `write_changes`, which refuses it as a fold."""
        if written(conn) != self.seen:  # staging was written meanwhile: judged afresh
            self.held, self.back = set(), {}
        rows = staged_rows(conn, self.identity, self.table, [e[0] for e in self.entries])
        staged = {row[3]: row_to_change(row) for row in rows}
        in_commit = commits_in_progress(conn, self.identity) if self.back else set()
        out = LeftOut()
        for entry in self.entries:
            item_key, key, _item = entry
            change = staged.get(item_key)
            if change is None:
                if item_key in self.held:
                    out.unchanged.append(Unchanged(self.table, key, dict(self.values)))
                else:
                    out.rest.append(entry)
                continue
            if (
                self._folds_back(item_key, change)
                and change.id not in in_commit
                and not (own_only and change.origin != origin)
            ):
                out.withdrawn.append(change)
            elif change.op != "delete" and self._sets_already(change):
                out.unchanged.append(Unchanged(self.table, key, dict(self.values), change.id))
            else:
                out.rest.append(entry)
        conn.executemany(
            "DELETE FROM staged_changes WHERE id = ?", [(c.id,) for c in out.withdrawn]
        )
        conflicts.drop(conn, [c.id for c in out.withdrawn])
        return out

    def _folds_back(self, item_key: str, change: StagedChange) -> bool:
        """The store said the item holds what `change` folded with the values would set (as
        `merge.fold` merges an update into an update), and `change` is still the change it was
        asked about (its id: not one staged since under a commit's feet) setting what it set."""
        judged = self.back.get(item_key)
        if judged is None or change.op != "update" or change.id != judged[0]:
            return False
        return dumps({**change.values, **self.values}) == judged[1]

    def _sets_already(self, change: StagedChange) -> bool:
        """`change` already sets every value to the same JSON (1 against 1.0 is a change: the
        store may keep them apart)."""
        return all(
            name in change.values and dumps(change.values[name]) == dumps(value)
            for name, value in self.values.items()
        )
