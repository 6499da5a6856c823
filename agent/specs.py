"""Saved specs (named queries and table views) and declared relationships, kept per store.

They live in one small SQLite file under the data dir, scoped by the store's identity, so the
same names on two databases never collide. Every write is one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent import paths
from agent.errors import TabletalkError

if TYPE_CHECKING:
    from agent.stores.base import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS specs (
    store TEXT NOT NULL, name TEXT NOT NULL, tbl TEXT, query TEXT NOT NULL,
    description TEXT, created_at TEXT NOT NULL, PRIMARY KEY (store, name));
CREATE TABLE IF NOT EXISTS relationships (
    store TEXT NOT NULL, name TEXT NOT NULL, lft TEXT NOT NULL, lft_on TEXT NOT NULL,
    rgt TEXT NOT NULL, rgt_on TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (store, name));
"""


class SpecError(TabletalkError):
    """A saved spec or relationship that is missing, duplicated or invalid."""

    title = "Saved spec error"


@dataclass(frozen=True)
class SavedSpec:
    """A named read-only query, or a table view (table + optional filter condition)."""

    name: str
    query: str
    table: str | None = None
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (also what `UiPort.open_saved_spec` receives)."""
        return asdict(self)


@dataclass(frozen=True)
class Relationship:
    """A declared join: `left.left_on` matches `right.right_on`."""

    name: str
    left: str
    left_on: str
    right: str
    right_on: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    def same_join(self, other: Relationship) -> bool:
        """Whether both declare the same join (in either direction)."""
        mine = {(self.left, self.left_on), (self.right, self.right_on)}
        return mine == {(other.left, other.left_on), (other.right, other.right_on)}


def default_specs_path() -> Path:
    """Where saved specs and relationships live by default."""
    return paths.data_dir() / "specs.sqlite"


class SpecBook:
    """Saved specs and relationships of one store (`store_identity`) in the file at `path`."""

    def __init__(self, path: Path | None, store_identity: str) -> None:
        self.path = Path(path) if path is not None else default_specs_path()
        self.store_identity = store_identity

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """The specs file in a transaction; a damaged or unreadable file is a SpecError that
        names it (the staging panel's orphan check and the spec tools go on without it)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=5)
        except (OSError, sqlite3.Error) as exc:
            raise self._unusable(exc) from exc
        try:
            try:
                conn.executescript(_SCHEMA)
            except sqlite3.DatabaseError as exc:
                raise self._unusable(exc) from exc
            with conn:
                yield conn
        finally:
            conn.close()

    def _unusable(self, exc: BaseException) -> SpecError:
        return SpecError(
            f"The saved specs file {self.path} cannot be used ({exc})",
            fix=f"Move it aside (mv '{self.path}' '{self.path}.damaged'): saved specs and "
            "declared relationships start empty again.",
        )

    def list_specs(self) -> list[SavedSpec]:
        """All saved specs of this store, by name."""
        with self._db() as db:
            rows = db.execute(
                "SELECT name, query, tbl, description FROM specs WHERE store = ? ORDER BY name",
                (self.store_identity,),
            ).fetchall()
        return [SavedSpec(*row) for row in rows]

    def get_spec(self, name: str) -> SavedSpec:
        """The saved spec called `name` (case-insensitive when unambiguous)."""
        specs = self.list_specs()
        found = [s for s in specs if s.name == name] or [
            s for s in specs if s.name.lower() == name.strip().lower()
        ]
        if len(found) != 1:
            names = ", ".join(s.name for s in specs) or "none saved yet"
            raise SpecError(
                f"no saved spec '{name}'", fix=f"use a name from listSavedSpecs: {names}"
            )
        return found[0]

    def save_spec(self, spec: SavedSpec, overwrite: bool = False) -> SavedSpec:
        """Save `spec`; an existing name is an error unless `overwrite`."""
        if not spec.name.strip():
            raise SpecError(
                "a saved spec needs a name", fix="give it a short name, e.g. 'pending orders'"
            )
        with self._db() as db:
            exists = db.execute(
                "SELECT 1 FROM specs WHERE store = ? AND name = ?", (self.store_identity, spec.name)
            ).fetchone()
            if exists and not overwrite:
                raise SpecError(
                    f"a saved spec named '{spec.name}' already exists",
                    fix="choose another name, or pass overwrite=true to replace it",
                )
            db.execute(
                "INSERT OR REPLACE INTO specs VALUES (?, ?, ?, ?, ?, ?)",
                (self.store_identity, spec.name, spec.table, spec.query, spec.description, _now()),
            )
        return spec

    def delete_spec(self, name: str) -> bool:
        """Delete a saved spec; whether one was deleted."""
        with self._db() as db:
            cursor = db.execute(
                "DELETE FROM specs WHERE store = ? AND name = ?", (self.store_identity, name)
            )
        return cursor.rowcount > 0

    def list_relationships(self, table: str | None = None) -> list[Relationship]:
        """Declared relationships of this store, optionally only those touching `table`."""
        with self._db() as db:
            rows = db.execute(
                "SELECT name, lft, lft_on, rgt, rgt_on FROM relationships WHERE store = ? ORDER BY name",
                (self.store_identity,),
            ).fetchall()
        found = [Relationship(*row) for row in rows]
        if table is not None:
            found = [r for r in found if table in (r.left, r.right)]
        return found

    def declare_relationship(
        self, rel: Relationship, overwrite: bool = False
    ) -> tuple[Relationship, bool]:
        """Store `rel`; returns it and whether it is new (declaring the same join twice is fine)."""
        for existing in self.list_relationships():
            if existing.same_join(rel):
                return existing, False
            if existing.name == rel.name and not overwrite:
                raise SpecError(
                    f"a relationship named '{rel.name}' already exists with another join",
                    fix="choose another name, or pass overwrite=true to replace it",
                )
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO relationships VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    self.store_identity,
                    rel.name,
                    rel.left,
                    rel.left_on,
                    rel.right,
                    rel.right_on,
                    _now(),
                ),
            )
        return rel, True


def check_spec(store: Store, spec: SavedSpec) -> None:
    """Fail unless the spec's table exists and its query runs read-only against `store`.

    A query that starts with SELECT/WITH is a full query; otherwise it is a filter condition
    on `spec.table` (which it then needs).
    """
    if spec.table is not None:
        _check_columns(store, spec.table, [])
    if is_full_query(spec.query):
        store.query(spec.query, limit=1)
    elif spec.table is None:
        raise SpecError(
            "a condition needs a table", fix="pass table, or make query a full read-only SELECT"
        )
    else:
        store.count(spec.table, spec.query.strip() or None)


def is_full_query(text: str) -> bool:
    """Whether `text` is a full SELECT/WITH statement rather than a filter condition."""
    head = text.lstrip("( \n\t").split(None, 1)
    return bool(head) and head[0].lower() in {"select", "with"}


def _check_columns(store: Store, table: str, columns: list[str]) -> None:
    tables = store.list_tables()
    if table not in tables:
        raise SpecError(f"unknown table '{table}'", fix=f"use one of: {', '.join(tables)}")
    known = [c.name for c in store.describe_table(table).columns]
    for column in columns:
        if column not in known:
            raise SpecError(
                f"unknown column '{column}' in table '{table}'",
                fix=f"columns of {table}: {', '.join(known)}",
            )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
