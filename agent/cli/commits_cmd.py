"""`tabletalk commits [show ID | revert ID]`: the commit history of a store, and reverts.

A revert stages the inverse changes (reviewed and committed like any other); it never writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from agent.cli.common import (
    HelpFormatter,
    add_store_flag,
    open_cli_store,
    printable_line,
    report_error,
    same_store,
    show_value,
    staging_of,
)
from agent.errors import TabletalkError
from agent.text_plural import counted, noun

if TYPE_CHECKING:  # staging loads only when `commits` runs
    from agent.staging import StagingArea
    from agent.staging.history import CommitEntry, LoggedChange

DESCRIPTION = """\
The commits made to a store, newest first, with every change's values before and after.
`commits revert ID` stages the inverse of a commit: each change is checked against the
values the commit left, so a row changed since then shows as a conflict instead of being
overwritten. Review and commit the revert like any staged change.
"""


def add_parser(subparsers: Any) -> None:
    """Register `commits` on the root parser's subparsers."""
    parser = subparsers.add_parser(
        "commits",
        help="commit history; revert a commit (staged for review)",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_store_flag(parser, suppress=True)
    commands = parser.add_subparsers(dest="commits_command", metavar="COMMAND")
    show = commands.add_parser("show", help="one commit's changes, old → new")
    show.add_argument("id", help="commit id (or a unique prefix)")
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    revert = commands.add_parser("revert", help="stage the inverse of a commit for review")
    revert.add_argument("id", help="commit id (or a unique prefix)")
    for sub in (show, revert):
        add_store_flag(sub, suppress=True)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run `commits`; 0 done, 2 an unknown commit or a store error."""
    out = out or sys.stdout
    try:
        settings, store = open_cli_store(args)
    except TabletalkError as exc:
        return report_error(exc)
    out, err = same_store(out, store), same_store(sys.stderr, store)  # hints reach this store
    try:
        with staging_of(store, settings) as area:
            command = getattr(args, "commits_command", None)
            if command == "show":
                return _show(area, args.id, bool(getattr(args, "json", False)), out)
            if command == "revert":
                return _revert(area, args.id, out)
            return _list(area, bool(getattr(args, "json", False)), out)
    except TabletalkError as exc:
        return report_error(exc, err)
    finally:
        store.close()


def _list(area: StagingArea, as_json: bool, out: TextIO) -> int:
    from agent.staging.history import describe

    entries = area.history()
    if as_json:
        print(json.dumps([describe(e) for e in entries], indent=2), file=out)
        return 0
    if not entries:
        print(f"No commits yet on {printable_line(area.store.label)}.", file=out)
        return 0
    for entry in entries:
        tables = ", ".join(printable_line(t) for t in entry.tables)
        print(
            f"{entry.id}  {entry.committed_at}  {counted(entry.changes, 'change'):>14}  {tables}  "
            f"by {printable_line(entry.committed_by)}{_revert_note(entry)}",
            file=out,
        )
    print(
        "Show one with `tabletalk commits show ID`; undo it with `tabletalk commits revert ID`.",
        file=out,
    )
    return 0


def _show(area: StagingArea, commit_id: str, as_json: bool, out: TextIO) -> int:
    from agent.staging.history import describe

    entry, changes = area.commit_entry(commit_id)
    if as_json:
        data = {**describe(entry), "items": [_change_json(c) for c in changes]}
        print(json.dumps(data, indent=2, default=str), file=out)
        return 0
    print(
        f"commit {entry.id}  {entry.committed_at}  by {printable_line(entry.committed_by)}"
        f"{_revert_note(entry)}",
        file=out,
    )
    for change in changes:
        key = printable_line(json.dumps(change.key, default=str))
        print(f"  {change.op} {printable_line(change.table)} {key}", file=out)
        before, after = change.pre_image or {}, change.post_image or {}
        for column in dict.fromkeys([*before, *after]):
            old, new = before.get(column), after.get(column)
            if change.op == "update" and column not in change.values:
                continue
            # values as `staged diff` writes them: JSON, ∅ for none
            print(f"    {printable_line(column)}: {show_value(old)} → {show_value(new)}", file=out)
    return 0


def _revert_note(entry: CommitEntry) -> str:
    """`  (reverts ID)` / `  (reverted by ID)` after a commit's line; empty when neither."""
    from agent.staging.history import revert_words

    words = revert_words(entry)
    return f"  ({words})" if words else ""


def _change_json(change: LoggedChange) -> dict[str, Any]:
    return {
        "table": change.table,
        "key": change.key,
        "op": change.op,
        "before": change.pre_image,
        "after": change.post_image,
        "origin": change.origin,
    }


def _revert(area: StagingArea, commit_id: str, out: TextIO) -> int:
    staged = area.revert(commit_id)
    print(
        f"Staged {counted(len(staged), 'change')} that {noun(len(staged), 'undoes', 'undo')} "
        f"commit {commit_id}. Review {noun(len(staged), 'it', 'them')} with "
        "`tabletalk staged diff`, then `tabletalk staged commit --all` (a row changed since "
        "the commit shows as a conflict).",
        file=out,
    )
    return 0
