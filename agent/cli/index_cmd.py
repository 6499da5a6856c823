"""`tabletalk index build|status|drop`: the embedding indexes behind vectorSearch."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

from agent.cli.common import (
    HelpFormatter,
    open_cli_store,
    printable_line,
    report_error,
    same_store,
)
from agent.cli.status_line import StatusLine
from agent.errors import TabletalkError
from agent.stores.base import Store
from agent.text_plural import counted

if TYPE_CHECKING:
    from agent.vectors.index import VectorIndex

DESCRIPTION = """\
Embedding indexes let vectorSearch find rows by meaning. `index build` embeds one text per
row (the chosen columns with their names) through Bedrock on your credentials and keeps the
vectors in a sidecar database under the data dir. Rebuilding embeds only new or changed rows.
"""

BUILD_DESCRIPTION = """\
Embed the rows of TABLE (the --columns joined with their names) through Bedrock InvokeModel.
Shows the number of rows to embed and an approximate cost first, and asks to go on unless
--yes. A rebuild embeds only new or changed rows (and drops deleted ones); a different column
set, model or --dims builds the index anew. Models: amazon.titan-embed-text-v2:0 (default;
1024, 512 or 256 dims), cohere.embed-english-v3, cohere.embed-multilingual-v3.
"""


def add_parser(subparsers: Any) -> None:
    """Register `index` on the root parser's subparsers."""
    parser = subparsers.add_parser(
        "index",
        help="embedding indexes for vectorSearch (build, status, drop)",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    commands = parser.add_subparsers(dest="index_command", metavar="COMMAND")
    build = commands.add_parser(
        "build",
        help="embed a table's rows (incremental)",
        description=BUILD_DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    build.add_argument("table", help="table to index")
    build.add_argument(
        "--columns", metavar="A,B", help="columns to embed (default: the index's current ones)"
    )
    build.add_argument(
        "--model",
        dest="embed_model",
        metavar="ID",
        help="embedding model id (default amazon.titan-embed-text-v2:0)",
    )
    build.add_argument("--dims", type=int, help="vector size (Titan v2: 1024, 512 or 256)")
    build.add_argument("--yes", action="store_true", help="start without asking")
    status = commands.add_parser(
        "status",
        help="indexed tables, columns, model, rows, stale rows, size",
        description="Show each index of the store: table, columns, model, vector size, rows "
        "indexed, rows marked stale by commits since the last build, and the sidecar's size.",
    )
    status.add_argument("--json", action="store_true", help="machine-readable output")
    drop = commands.add_parser(
        "drop",
        help="delete a table's index",
        description="Delete a table's embedding index (vectorSearch stops offering that table).",
    )
    drop.add_argument("table", help="table whose index to delete")


def run(args: argparse.Namespace, out: TextIO | None = None, stdin: TextIO | None = None) -> int:
    """Run `index`; 0 done, 1 declined, 2 a usage, store or Bedrock error."""
    from agent.vectors.index import VectorIndex  # apsw and sqlite-vec load only for `index`

    out = out or sys.stdout
    try:
        settings, store = open_cli_store(args)
    except TabletalkError as exc:
        return report_error(exc)
    out, err = same_store(out, store), same_store(sys.stderr, store)  # hints reach this store
    try:
        index = VectorIndex.open(store)
        try:
            command = getattr(args, "index_command", None)
            if command == "build":
                return _build(index, store, args, settings.profile, settings.region, out, stdin)
            if command == "drop":
                return _drop(index, args.table, out)
            return _status(index, bool(getattr(args, "json", False)), out)
        finally:
            index.close()
    except TabletalkError as exc:
        return report_error(exc, err)
    finally:
        store.close()


def _build(
    index: VectorIndex,
    store: Store,
    args: argparse.Namespace,
    profile: str | None,
    region: str | None,
    out: TextIO,
    stdin: TextIO | None,
) -> int:
    from agent.vectors.build import check_columns, plan_build, run_build

    table = _table(store, args.table)
    info = store.describe_table(table)
    columns = None
    if args.columns:
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        columns = list(check_columns(info, wanted, any_attribute=store.value_checker is not None))
    plan, estimate = plan_build(index, info, columns, args.embed_model, args.dims)
    todo = estimate.rows
    name = printable_line(table)
    print(
        f"{name}: {counted(todo, 'row')} to embed, {estimate.drop:,} to drop, {estimate.unchanged:,} "
        f"unchanged (columns {', '.join(map(printable_line, estimate.columns))}; "
        f"{estimate.model}, {estimate.dims} dims)",
        file=out,
    )
    if todo:
        print(f"about {estimate.tokens:,} tokens, cost {estimate.price()} (approximate)", file=out)
    if todo and not args.yes:
        print("Go on? [y/N] ", end="", file=out, flush=True)
        answer = (stdin or sys.stdin).readline().strip().lower()
        if answer not in {"y", "yes"}:
            print("Nothing embedded.", file=out)
            return 1
    progress = Progress(todo, out)
    rows = run_build(
        index, plan, estimate, profile=profile, region=region, on_progress=progress.add
    )
    progress.finish()
    print(f"{name}: {counted(rows, 'row')} indexed.", file=out)
    return 0


def _table(store: Store, table: str) -> str:
    tables = store.list_tables()
    if table in tables:
        return table
    folded = [t for t in tables if t.lower() == table.lower()]
    if len(folded) == 1:
        return folded[0]
    raise TabletalkError(
        f"unknown table '{table}'", fix=f"use one of: {', '.join(tables) or '(none)'}"
    )


def _drop(index: VectorIndex, table: str, out: TextIO) -> int:
    if not index.drop(table):
        raise TabletalkError(
            f"table '{table}' has no index", fix="see `tabletalk index status` for the indexes"
        )
    print(f"Dropped the index of {printable_line(table)}.", file=out)
    return 0


def _status(index: VectorIndex, as_json: bool, out: TextIO) -> int:
    entries = index.status()
    size = index.size_bytes()
    if as_json:
        print(json.dumps({"indexes": entries, "sizeBytes": size}, indent=2), file=out)
        return 0
    if not entries:
        print(
            f"No embedding indexes on {printable_line(index.store.label)}. "
            "Build one with `tabletalk index build TABLE --columns A,B`.",
            file=out,
        )
        return 0
    for e in entries:
        print(
            f"{printable_line(e['table'])}: {counted(e['rows'], 'row')}, {e['stale']:,} stale; columns "
            f"{', '.join(map(printable_line, e['columns']))}; {printable_line(e['model'])} "
            f"({e['dims']} dims); "
            + (
                f"built {e['builtAt']}"
                if e["finished"]
                else "build not finished (interrupted or running): build again to finish it"
            ),
            file=out,
        )
    print(f"sidecar size: {size / 1_000_000:.1f} MB", file=out)
    return 0


class Progress:
    """Rows embedded, with rate and ETA, redrawn on one line when the output is a terminal."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.total = total
        self.done = 0
        self.out = out
        self.status = StatusLine(out)
        self.tty = self.status.tty
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._drawn = 0.0

    def add(self, n: int) -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            if self.tty and (now - self._drawn > 0.2 or self.done >= self.total):
                self._drawn = now
                self.status.show(self.line(now))

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-6)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate else 0.0
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        return f"[{bar}] {self.done:,}/{self.total:,} rows  {rate:,.0f} rows/s  ETA {eta:,.0f}s"

    def finish(self) -> None:
        self.status.end()
