"""`tabletalk conversations`: the saved conversations, newest first."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "conversations",
        help="list saved conversations",
        description="List saved conversations, newest first; with --db, only those about "
        "that database.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _store_identity(db: str) -> str:
    """The identity conversations record for the store at `db` (opening it checks the path)."""
    from agent.stores.open import open_store

    store = open_store(db)
    try:
        return store.identity
    finally:
        store.close()


def run(args: argparse.Namespace) -> int:
    from agent.conversations import ConversationStore

    summaries = ConversationStore().list()
    db = getattr(args, "db", None)
    if db:
        identity = _store_identity(db)
        summaries = [s for s in summaries if s.store == identity]
    if args.json:
        print(json.dumps([asdict(s) for s in summaries], indent=2))
        return 0
    if not summaries:
        where = f" about {db}" if db else ""
        print(f"No saved conversations{where} yet. Start one with `tabletalk` or `tabletalk ask`.")
        return 0
    for summary in summaries:
        print(
            f"{summary.id}  {summary.updated_at}  {summary.message_count:>3} msgs  {summary.title}"
        )
    print("\nContinue one with `tabletalk --conversation ID` or `tabletalk ask --conversation ID`.")
    return 0
