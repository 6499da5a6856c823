"""Open the store a `--db` value names, and map store identities back to `--db` values."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent import paths
from agent.stores.base import Store
from agent.stores.demo import ensure_demo_db
from agent.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from agent.config import Settings

SQLITE_PREFIX = "sqlite:"
DYNAMODB_SCHEME = "dynamodb://"


def open_store(db: str | Path | None = None, settings: Settings | None = None) -> Store:
    """The store for `db`: None → the demo database (created on first use), `dynamodb://...`
    → DynamoDB (with the settings' profile and caps), else a SQLite file."""
    if db is None or str(db) == "":
        return SQLiteStore.open(ensure_demo_db(paths.demo_db_path()))
    if str(db).startswith(DYNAMODB_SCHEME):
        from agent.stores.dynamodb.reads import Limits  # boto3 only when DynamoDB is used
        from agent.stores.dynamodb.store import DynamoDBStore

        limits = Limits()
        if settings is not None:
            limits = Limits(settings.dynamodb.max_scan_items, settings.dynamodb.max_read_units)
        return DynamoDBStore.open(
            str(db),
            profile=settings.profile if settings else None,
            region=settings.region if settings else None,
            limits=limits,
        )
    return SQLiteStore.open(db)


def identity_db(identity: str) -> str | None:
    """The `--db` value that reopens the store with this identity; None when not known here.

    A DynamoDB identity (dynamodb:ACCOUNT:REGION:ENDPOINT) maps to dynamodb://REGION.
    """
    if identity.startswith(SQLITE_PREFIX):
        return identity.removeprefix(SQLITE_PREFIX)
    if identity.startswith("dynamodb:"):
        parts = identity.split(":", 3)
        return f"{DYNAMODB_SCHEME}{parts[2]}" if len(parts) == 4 else None
    return None


def same_db(a: str, b: str) -> bool:
    """True when two `--db` values name the same store (file paths compared resolved)."""
    if "://" in a or "://" in b:
        return a.split("?")[0] == b.split("?")[0]
    return Path(a).resolve() == Path(b).resolve()
