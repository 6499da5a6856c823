"""`tabletalk conversations`: the saved conversations, newest first."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from agent.cli.common import open_cli_store, printable_line
from agent.text_plural import noun


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "conversations",
        help="list saved conversations",
        description="List saved conversations, newest first; with --db, only those about "
        "that database.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    """List the conversations (with --db, that database's); a damaged file gets one line on
    stderr and the rest still list."""
    from agent.conversations import ConversationStore
    from agent.stores.open import identity_db

    summaries, broken = ConversationStore().scan()
    for bad in broken:
        print(
            f"warning: skipped damaged conversation file {printable_line(bad.path)}: "
            f"{printable_line(bad.reason)}",
            file=sys.stderr,
        )
    db = getattr(args, "db", None)
    if db:
        _, store = open_cli_store(args)  # opening it checks the address
        try:
            identity = store.identity
        finally:
            store.close()
        summaries = [s for s in summaries if s.store == identity]
    if args.json:
        print(json.dumps([asdict(s) for s in summaries], indent=2))
        return 0
    if not summaries:
        where = f" about {db}" if db else ""
        print(f"No saved conversations{where} yet. Start one with `tabletalk` or `tabletalk ask`.")
        return 0
    for summary in summaries:
        # Without --db the list mixes databases: each line says which (the --db that opens it).
        where = "" if db else f"  [{printable_line(identity_db(summary.store) or '?')}]"
        print(
            f"{printable_line(summary.id)}  {printable_line(summary.updated_at)}  "
            f"{summary.message_count:>6,} {noun(summary.message_count, 'msg'):<4}  "
            f"{printable_line(summary.title)}{where}"
        )
    print("\nContinue one with `tabletalk --conversation ID` or `tabletalk ask --conversation ID`.")
    return 0
