"""Open the store a `--db` value names, and map store identities back to `--db` values."""

from __future__ import annotations

from pathlib import Path

from agent import paths
from agent.stores.base import Store
from agent.stores.demo import ensure_demo_db
from agent.stores.sqlite import SQLiteStore

SQLITE_PREFIX = "sqlite:"


def open_store(db: str | Path | None = None) -> Store:
    """The store for `db`: None → the demo database (created on first use), else a SQLite file."""
    if db is None or str(db) == "":
        return SQLiteStore.open(ensure_demo_db(paths.demo_db_path()))
    return SQLiteStore.open(db)


def identity_db(identity: str) -> str | None:
    """The `--db` value that reopens the store with this identity; None when not known here."""
    if identity.startswith(SQLITE_PREFIX):
        return identity.removeprefix(SQLITE_PREFIX)
    return None


def same_db(a: str, b: str) -> bool:
    """True when two `--db` values name the same store (file paths compared resolved)."""
    if "://" in a or "://" in b:
        return a == b
    return Path(a).resolve() == Path(b).resolve()
