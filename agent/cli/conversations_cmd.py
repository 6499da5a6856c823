"""`tabletalk conversations`: the saved conversations, newest first."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from agent.session import list_conversations


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("conversations", help="list saved conversations")
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    summaries = list_conversations()
    if args.json:
        print(json.dumps([asdict(s) for s in summaries], indent=2))
        return 0
    if not summaries:
        print("No saved conversations yet. Start one with `tabletalk` or `tabletalk ask`.")
        return 0
    for summary in summaries:
        print(
            f"{summary.id}  {summary.updated_at}  {summary.message_count:>3} msgs  {summary.title}"
        )
    print("\nContinue one with `tabletalk --conversation ID` or `tabletalk ask --conversation ID`.")
    return 0
