"""Open the store a `--db` value names: the demo database when none is given."""

from __future__ import annotations

from pathlib import Path

from agent import paths
from agent.stores.base import Store
from agent.stores.demo import ensure_demo_db
from agent.stores.sqlite import SQLiteStore


def open_store(db: str | Path | None = None) -> Store:
    """The store for `db`: None → the demo database (created on first use), else a SQLite file.

    Other backends (DynamoDB) will be recognised here by their own scheme before the file case.
    """
    if db is None or str(db) == "":
        return SQLiteStore.open(ensure_demo_db(paths.demo_db_path()))
    return SQLiteStore.open(db)
