"""`tabletalk staged list|diff|commit|discard|rebase`: review and commit staged changes.

Exit codes: 0 success; 1 a commit hit conflicts (nothing applied, or with --skip-conflicts
the others were); 2 usage or store errors; 3 nothing committed because deletes would leave
rows pointing at nothing (--allow-orphans commits them anyway).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from agent.cli.common import (
    ELIDED,
    add_store_flag,
    open_cli_store,
    printable_line,
    report_error,
    same_store,
    show_value,
    staging_of,
)
from agent.cli.status_line import StatusLine
from agent.errors import TabletalkError
from agent.stores.base import transaction_plan
from agent.text_plural import counted, noun

if TYPE_CHECKING:
    from agent.staging import CommitReport, StagedChange, StagingArea

LIST_WIDTH = 80
"""`staged list` cuts longer values (`staged diff` shows them whole)."""
LIST_LIMIT = 50
"""`staged list` shows this many changes unless --limit says otherwise (a bulk edit stages
thousands; its summary line says what they do)."""


def add_parser(subparsers: Any) -> None:
    """Register `staged` and its sub-commands on the root parser's subparsers."""
    staged = subparsers.add_parser(
        "staged",
        help="review, commit or discard staged changes",
        description="Review, commit or discard the changes staged for a database.",
    )
    _add_db(staged)
    commands = staged.add_subparsers(
        dest="staged_command", metavar="COMMAND", help="list (the default), diff, commit, ..."
    )

    listing = commands.add_parser("list", help="list staged changes")
    listing.add_argument("--table", help="only changes of this table")
    listing.add_argument("--json", action="store_true", help="print a JSON list (every change)")
    listing.add_argument(
        "--limit",
        type=_count,
        default=LIST_LIMIT,
        metavar="N",
        help=f"show at most N changes (default {LIST_LIMIT}; 0 shows all)",
    )
    _add_db(listing)

    diff = commands.add_parser(
        "diff", aliases=["show"], help="show old → new per attribute (alias: show)"
    )
    diff.add_argument("id", nargs="?", help="one change id (default: all changes)")
    _add_db(diff)

    helps = {
        "commit": "commit staged changes",
        "discard": "discard staged changes",
        "rebase": "take current: refresh changes' old values from the table after a conflict",
    }
    for name, help_text in helps.items():
        sub = commands.add_parser(name, help=help_text)
        verb = name
        which = sub.add_mutually_exclusive_group(required=True)
        which.add_argument("--all", action="store_true", help=f"{verb} every staged change")
        which.add_argument("ids", nargs="*", default=[], metavar="ID", help="change ids")
        _add_db(sub)
        if name == "commit":
            sub.add_argument(
                "--skip-conflicts",
                action="store_true",
                help="when some changes conflict, commit the others (the conflicts stay staged)",
            )
            sub.add_argument(
                "--allow-orphans",
                action="store_true",
                help="commit deletes that leave rows of other tables pointing at nothing "
                "(without it the commit stops and names those rows)",
            )
    staged.set_defaults(func=run)


def _add_db(parser: argparse.ArgumentParser) -> None:
    add_store_flag(parser, suppress=True)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one `staged` sub-command; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    command = getattr(args, "staged_command", None) or "list"
    if command not in _COMMANDS:
        print("usage: tabletalk staged {list,diff,show,commit,discard,rebase} ...", file=err)
        return 2
    if command in ("commit", "discard", "rebase") and not getattr(args, "all", False):
        if not getattr(args, "ids", None):
            print(f"tabletalk staged {command}: give change ids or --all", file=err)
            return 2
    try:
        settings, store = open_cli_store(args, err)
        out, err = same_store(out, store), same_store(err, store)  # hints reach this store
        try:
            with staging_of(store, settings, err) as area:
                return _COMMANDS[command](area, args, out, err)
        finally:
            store.close()
    except TabletalkError as exc:
        return report_error(exc, err)


def _list(area: StagingArea, args: argparse.Namespace, out: TextIO, _err: TextIO) -> int:
    changes = area.list(getattr(args, "table", None))
    conflicts = area.conflicts()  # recorded by the last commit (of any process) that tried them
    if getattr(args, "json", False):
        listed = [
            c.to_dict() | ({"conflict": conflicts[c.id].to_dict()} if c.id in conflicts else {})
            for c in changes
        ]
        print(json.dumps(listed, indent=2, ensure_ascii=False), file=out)
        return 0
    if not changes:
        print(f"No staged changes for {area.store.label}.", file=out)
        return 0
    print(f"{counted(len(changes), 'staged change')} for {area.store.label}:", file=out)
    _print_groups(area, getattr(args, "table", None), out)
    limit = getattr(args, "limit", LIST_LIMIT) or len(changes)
    table = None
    cut = False
    for change in changes[:limit]:
        if change.table != table:
            table = change.table
            print(f"\n{_show_name(table)}", file=out)
        diffs = [d for d in area.diff(change) if d.attribute not in change.key]
        shown = [
            (
                _show_name(d.attribute),
                show_value(d.old, LIST_WIDTH),
                show_value(d.new, LIST_WIDTH),
                d,
            )
            for d in diffs
        ]
        cut = cut or any(text.endswith(ELIDED) for shown_diff in shown for text in shown_diff[:3])
        summary = ", ".join(
            f"{name}: {old}{_type(d.old_type)} → {new}{_type(d.new_type)}"
            for name, old, new, d in shown
        )
        if change.op == "delete":
            summary = "(delete)"
        print(
            f"  {change.id}  {change.op:<6}  {_key(change)}  {summary}  "
            f"[{printable_line(change.origin)}, {change.created_at}]",
            file=out,
        )
        if change.id in conflicts:
            _print_conflict(conflicts[change.id], out)
    if len(changes) > limit:
        print(
            f"\n… and {len(changes) - limit:,} more: `tabletalk staged list --limit 0` shows "
            "every change, --table one table's.",
            file=out,
        )
    in_conflict = sum(c.id in conflicts for c in changes)
    if in_conflict:
        print(
            f"\n{counted(in_conflict, 'change')} conflicted at the last commit (⚠): take current "
            "with `tabletalk staged rebase ID` (or --all), or drop with `tabletalk staged "
            "discard ID`.",
            file=out,
        )
    if cut:
        print(
            f"\nNames and values longer than {LIST_WIDTH} characters are cut ({ELIDED}); "
            "`tabletalk staged diff ID` shows them whole.",
            file=out,
        )
    return 0


def _print_conflict(conflict: Any, out: TextIO) -> None:
    """The lines under a change a commit found in conflict: why, when, the item as it was then."""
    print(
        f"    ⚠ conflict (commit at {conflict.found_at}): {printable_line(conflict.reason)}",
        file=out,
    )
    print(f"      current value then: {_show_item(conflict.current)}", file=out)


def _print_groups(area: StagingArea, table: str | None, out: TextIO) -> None:
    """The bulk edits first (changes of one table staging the same values), one line each."""
    from agent.staging.review import ChangeFilter

    groups = area.review().groups(ChangeFilter(table=table) if table else None, limit=10)
    if groups:
        print("\nBulk edits:", file=out)
    for group in groups:
        print(f"  {printable_line(group.summary(LIST_WIDTH))}", file=out)


def _count(text: str) -> int:
    """A --limit value: a whole number ≥ 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 0, got {text!r}")
    return value


def _diff(area: StagingArea, args: argparse.Namespace, out: TextIO, _err: TextIO) -> int:
    changes = [area.get(args.id)] if getattr(args, "id", None) else area.list()
    if not changes:
        print(f"No staged changes for {area.store.label}.", file=out)
    for change in changes:
        print(f"{change.id}  {change.op} {printable_line(change.table)} {_key(change)}", file=out)
        for d in area.diff(change):
            old, new = show_value(d.old) + _type(d.old_type), show_value(d.new) + _type(d.new_type)
            print(f"    {printable_line(d.attribute)}: {old} → {new}", file=out)
    return 0


def _commit(area: StagingArea, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    ids = None if args.all else list(args.ids)
    total = area.count() if ids is None else len(ids)
    if total == 0:
        print(f"Nothing to commit for {area.store.label}.", file=out)
        return 0
    if not getattr(args, "allow_orphans", False) and _orphans_stop(area, ids, out, err):
        return 3
    plan = transaction_plan(area.store, total)
    if plan:
        print(f"Committing {counted(total, 'change')} as {plan}.", file=err)
    with _progress(err) as progress:
        report = area.commit(ids, progress=progress)
    if report.conflicts and getattr(args, "skip_conflicts", False):
        report = _commit_the_others(area, ids, report, err)
    print(commit_summary(report, area.store.label), file=out)
    if report.conflicts:
        for conflict in report.conflicts:
            print(f"  conflict {conflict.change_id}: {printable_line(conflict.reason)}", file=out)
            print(f"    current value: {_show_item(conflict.current)}", file=out)
        others = "" if report.committed else " Or commit the others with --skip-conflicts."
        print(
            "To apply a conflicting change on top of the current value, take current with "
            "`tabletalk staged rebase ID` (or --all); or drop it with `tabletalk staged "
            f"discard ID`. Then commit again.{others}",
            file=out,
        )
        return 1
    return 0


def _commit_the_others(
    area: StagingArea, ids: list[str] | None, failed: CommitReport, err: TextIO
) -> CommitReport:
    """After an all-or-nothing commit hit conflicts: commit the changes without conflict in a
    second transaction, and report those conflicts with it (they stay staged)."""
    in_conflict = {c.change_id for c in failed.conflicts}
    settled = in_conflict | set(failed.committed)
    wanted = ids if ids is not None else [c.id for c in area.list()]
    others = [i for i in dict.fromkeys(wanted) if i not in settled]
    if not others:
        return failed
    print(
        f"{counted(len(failed.conflicts), 'change')} in conflict; committing the other "
        f"{len(others):,}.",
        file=err,
    )
    with _progress(err) as progress:
        report = area.commit(others, progress=progress)
    return replace(
        report,
        committed=[*failed.committed, *report.committed],
        recovered=[*failed.recovered, *report.recovered],
        conflicts=[*failed.conflicts, *report.conflicts],
        kept=[*(i for i in failed.kept if i in in_conflict), *report.kept],
    )


def _orphans_stop(area: StagingArea, ids: list[str] | None, out: TextIO, err: TextIO) -> bool:
    """True (after naming them) when the deletes being committed would leave rows of other
    tables pointing at nothing and the person does not confirm; the panel asks the same."""
    from agent.staging.orphans import orphaned_by
    from agent.staging.review import ChangeFilter
    from agent.stores.references import orphan_warning

    review = area.review()
    deletes = review.deletes(ChangeFilter(ids=tuple(ids)) if ids is not None else None)
    if not deletes:
        return False
    found = orphaned_by(area.store, deletes, _relationships(area))
    if not found:
        return False
    print(printable_line(orphan_warning(found, then="")), file=err)
    for rows in found:
        print(f"  {printable_line(rows.describe())}", file=err)
    if _confirmed("Commit anyway? [y/N] ", err):
        return False
    chosen = "--all" if ids is None else " ".join(ids) if len(ids) <= 5 else "ID …"
    offending = _pointed_at_deletes(deletes, found)
    print(
        f"Nothing was committed. {_named_deletes(offending)} Commit anyway with "
        f"`tabletalk staged commit {chosen} --allow-orphans`, or drop "
        f"{_discard_hint(offending)}.",
        file=out,
    )
    return True


NAMED_DELETES = 5
"""The orphan stop names this many of a table's deletes by id (the rest: `staged list --table`)."""


def _pointed_at_deletes(
    deletes: list[StagedChange], found: list[Any]
) -> list[tuple[str, list[StagedChange]]]:
    """The deletes of the tables that other rows still point at, per table in staging order:
    the ones to drop (a delete of a table nothing points at is not among them)."""
    targets = {rows.reference.target.lower() for rows in found}
    by_table: dict[str, list[StagedChange]] = {}
    for change in deletes:
        if change.op == "delete" and change.table.lower() in targets:
            by_table.setdefault(change.table, []).append(change)
    return list(by_table.items())


def _named_deletes(offending: list[tuple[str, list[StagedChange]]]) -> str:
    """`Deletes that other rows point at: customers 0a1, 0a2.` by id, a handful per table; more than
    that ends in `and 35 more (`tabletalk staged list --table customers` shows them)`, since
    a plain `staged list` shows the first 50 changes, which may all be another table's."""
    import shlex

    parts = []
    for table, changes in offending:
        shown = ", ".join(c.id for c in changes[:NAMED_DELETES])
        if len(changes) > NAMED_DELETES:
            listing = f"tabletalk staged list --table {shlex.quote(printable_line(table))}"
            shown += f" and {len(changes) - NAMED_DELETES:,} more (`{listing}` shows them)"
        parts.append(f"{_show_name(table)} {shown}")
    total = sum(len(changes) for _, changes in offending)
    which = "The delete" if total == 1 else "Deletes"
    return f"{which} that other rows point at: {'; '.join(parts)}."


def _discard_hint(offending: list[tuple[str, list[StagedChange]]]) -> str:
    """`them with `tabletalk staged discard 0a1 0a2`` (every id when there are a handful)."""
    ids = [c.id for _, changes in offending for c in changes]
    if len(ids) <= NAMED_DELETES:
        return f"{noun(len(ids), 'it', 'them')} with `tabletalk staged discard {' '.join(ids)}`"
    return "them with `tabletalk staged discard ID …` (the ids above)"


def _relationships(area: StagingArea) -> list[Any]:
    """The relationships declared for this store (none when the specs file cannot be read)."""
    from agent.specs import SpecBook

    try:
        return list(SpecBook(None, area.store.identity).list_relationships())
    except (TabletalkError, OSError):
        return []


def _confirmed(question: str, err: TextIO) -> bool:
    """Ask on the terminal; False without one (a script must pass the flag instead)."""
    if not (sys.stdin.isatty() and hasattr(err, "isatty") and err.isatty()):
        return False
    print(question, end="", file=err, flush=True)
    try:
        return sys.stdin.readline().strip().lower() in ("y", "yes")
    except (OSError, KeyboardInterrupt):
        return False


def commit_summary(report: CommitReport, label: str) -> str:
    """One sentence counting what really happened: committed, recovered, conflicts, kept."""
    recovered = len(report.recovered)
    note = f" ({recovered:,} already applied by an interrupted commit)" if recovered else ""
    if not report.conflicts:
        if not report.committed:
            return (
                f"Nothing left to commit for {label}: another commit settled these changes first."
            )
        return f"Committed {counted(len(report.committed), 'change')} to {label}{note}."
    done = (
        f"Committed {counted(len(report.committed), 'change')}{note}"
        if report.committed
        else "Nothing was committed"
    )
    return (
        f"{done}: {counted(len(report.conflicts), 'conflict')}; "
        f"{counted(len(report.kept), 'change')} "
        f"{noun(len(report.kept), 'is', 'are')} still staged."
    )


def _discard(area: StagingArea, args: argparse.Namespace, out: TextIO, _err: TextIO) -> int:
    count = area.discard(all=True) if args.all else area.discard(ids=list(args.ids))
    print(f"Discarded {counted(count, 'staged change')} for {area.store.label}.", file=out)
    return 0


def _rebase(area: StagingArea, args: argparse.Namespace, out: TextIO, _err: TextIO) -> int:
    report = area.rebase(None if args.all else list(args.ids))
    print(report.describe(), file=out)
    for change_id, why in report.refused:
        print(f"  {change_id}: {why}", file=out)
    return 1 if report.refused else 0


_COMMANDS = {
    "list": _list,
    "diff": _diff,
    "show": _diff,
    "commit": _commit,
    "discard": _discard,
    "rebase": _rebase,
}


@contextmanager
def _progress(err: TextIO) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback writing "committing n/total" over itself to stderr, only when it
    is a TTY (a StatusLine); the line is ended however the commit ends (a conflict stops it
    short)."""
    line = StatusLine(err)
    if not line.tty:
        yield None
        return

    def report(done: int, total: int) -> None:
        line.show(f"committing {done:,}/{total:,}")

    try:
        yield report
    finally:
        line.end()


def _key(change: StagedChange) -> str:
    return ", ".join(f"{_show_name(k)}={show_value(v, LIST_WIDTH)}" for k, v in change.key.items())


def _show_name(name: str) -> str:
    """A table or column name on one line, cut to LIST_WIDTH (a name may be a megabyte long)."""
    cut = name if len(name) <= LIST_WIDTH else name[:LIST_WIDTH] + ELIDED
    return printable_line(cut)


def _type(name: str | None) -> str:
    """` (Number)` after a value whose type the change alters; empty otherwise."""
    return f" ({name})" if name else ""


def _show_item(item: Any) -> str:
    """An item's current value on one line as JSON, each name and value cut to LIST_WIDTH as
    in the list: a conflict report stays readable when rows hold long texts."""
    if not isinstance(item, dict):
        return show_value(item, LIST_WIDTH)
    fields = (
        f"{show_value(str(name), LIST_WIDTH)}: {show_value(value, LIST_WIDTH)}"
        for name, value in item.items()
    )
    return "{" + ", ".join(fields) + "}"
