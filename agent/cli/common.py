"""What every subcommand shares: global flags, settings resolution, error reporting."""

from __future__ import annotations

import argparse
import io
import json
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent.config import Settings, load_settings
from agent.errors import TabletalkError
from agent.store_hints import db_flag, for_store, with_flag
from agent.stores.base import Store
from agent.text_safety import printable, printable_line

if TYPE_CHECKING:
    from agent.staging import StagingArea

__all__ = ["db_flag", "for_store", "printable", "printable_line", "with_flag"]

COMMON_FLAGS = ("--db", "--profile", "--region", "--config")
"""Flags every command takes, before or after its name."""

DB_METAVAR = "PATH"
DB_HELP = (
    "SQLite file, or dynamodb://REGION[?tables=GLOB] (default: `db` in the config file, "
    "else the demo database)"
)
"""`--db` as every command's --help describes it."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs with their prose re-wrapped to the terminal's width, and
    indented lines (examples, lists) kept as written, so `--help` reads whole at 80 columns."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines: list[str] = []
        prose: list[str] = []
        for line in [*text.splitlines(), ""]:
            if line and not line[0].isspace():
                prose.append(line.strip())
                continue
            if prose:
                lines.append(
                    textwrap.fill(
                        " ".join(prose), width, initial_indent=indent, subsequent_indent=indent
                    )
                )
                prose.clear()
            lines.append(indent + line)
        return "\n".join(lines[:-1])


def add_store_flag(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """`--db PATH`; sub-parsers suppress the default so a global `--db` is not clobbered."""
    parser.add_argument(
        "--db",
        metavar=DB_METAVAR,
        default=argparse.SUPPRESS if suppress else None,
        help=DB_HELP,
    )


def add_model_flags(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """The Bedrock and permission flags shared by `ask` and the app."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--config", metavar="FILE", default=default, help="config file to use")
    parser.add_argument(
        "--profile", metavar="NAME", default=default, help="AWS profile for Bedrock"
    )
    parser.add_argument("--region", default=default, help="AWS region for Bedrock")
    parser.add_argument(
        "--model", default=default, help="model id or alias (nova-2-lite, haiku-4.5)"
    )
    parser.add_argument(
        "--mode",
        choices=("manual", "auto", "full-auto"),
        default=default,
        help="permission mode for gated tools",
    )


def _add_common_flag(parser: argparse.ArgumentParser, flag: str) -> None:
    """One of COMMON_FLAGS with a suppressed default, unless the parser already has it."""
    helps = {
        "--db": (DB_METAVAR, DB_HELP),
        "--profile": ("NAME", "AWS profile for Bedrock"),
        "--region": ("REGION", "AWS region for Bedrock"),
        "--config": ("FILE", "config file to use"),
    }
    metavar, text = helps[flag]
    try:
        parser.add_argument(flag, metavar=metavar, default=argparse.SUPPRESS, help=text)
    except argparse.ArgumentError:  # the command declares it itself
        pass


def share_common_flags(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand, at any depth, the COMMON_FLAGS and a `--help` description.

    Defaults are suppressed, so `tabletalk --db X staged list` and `tabletalk staged list
    --db X` parse the same; a subcommand without a description gets its one-line help.
    """
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            if not sub.description and helps.get(name):
                sub.description = str(helps[name])[:1].upper() + str(helps[name])[1:] + "."
            for flag in COMMON_FLAGS:
                _add_common_flag(sub, flag)
            share_common_flags(sub)


def resolve_settings(args: argparse.Namespace) -> Settings:
    """Config file, then flags on top; read once per command line (every command uses this)."""
    cached = getattr(args, "_settings", None)
    if isinstance(cached, Settings):
        return cached
    config = getattr(args, "config", None)
    settings = load_settings(Path(config) if config else None)
    updates = {}
    for name in ("profile", "region", "model", "mode"):
        value = getattr(args, name, None)
        if value is not None:
            updates[name] = value
    if "model" in updates:
        from agent.bedrock.models import check_model_name

        check_model_name(updates["model"], given="--model", fix_start="Use --model")
    if getattr(args, "no_stream", False):
        updates["streaming"] = False
    if getattr(args, "step_limit", None):
        updates["step_limit"] = args.step_limit
    settings = settings.model_copy(update=updates)
    args._settings = settings
    return settings


def store_path(args: argparse.Namespace, settings: Settings | None = None) -> str | None:
    """`--db`, else the config's `db`, else None (the demo database)."""
    return getattr(args, "db", None) or (settings.db if settings else None)


def open_cli_store(args: argparse.Namespace, err: TextIO | None = None) -> tuple[Settings, Store]:
    """The settings and the store a command works on (see `store_path`), opened with the
    settings' AWS profile, region and DynamoDB caps; while the store retries throttled requests
    it says so on `err` (stderr)."""
    from agent.stores.open import open_store

    settings = resolve_settings(args)
    store = open_store(store_path(args, settings), settings)
    retries_to_stderr(store, err)
    return settings, store


@contextmanager
def staging_of(
    store: Store, settings: Settings, err: TextIO | None = None
) -> Iterator[StagingArea]:
    """The store's staging area for one command; what opening or using it settled, recovered
    or reopened (an interrupted commit, a damaged or replaced file) is said on `err`."""
    from agent.staging import StagingArea

    area = StagingArea(store, keep=settings.history.retention())

    def tell() -> None:
        for notice in area.take_notices():
            print(printable_line(notice), file=err or sys.stderr)

    try:
        tell()
        yield area
    finally:
        tell()
        area.close()


def retries_to_stderr(store: Store, stream: TextIO | None = None) -> None:
    """A headless command says on stderr, one line each, while the store retries throttled
    requests and when it gives up."""

    def tell(text: str, state: str) -> None:
        if text:
            print(printable_line(text), file=stream or sys.stderr, flush=True)

    store.watch_retries(tell)


def report_error(exc: TabletalkError, stream: TextIO | None = None) -> int:
    """Print a TabletalkError as `error: message` plus its fix; exit status 2."""
    stream = stream or sys.stderr
    print(f"error: {exc.message}", file=stream)
    if exc.fix:
        print(f"  fix: {exc.fix}", file=stream)
    return 2


class SameStore(io.TextIOBase):
    """A text stream that writes through `for_store`: everything a command prints about one
    store (hints, error fixes) names commands that reach that store. The flag is worked out
    once (db_flag resolves paths), not per line of a 10,000-change listing."""

    def __init__(self, stream: TextIO, store: Store) -> None:
        super().__init__()
        self.stream, self.flag = stream, db_flag(store)

    def write(self, text: str) -> int:
        self.stream.write(with_flag(text, self.flag))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()


def same_store(stream: TextIO, store: Store) -> TextIO:
    """`stream` as a SameStore (typed as the TextIO the commands print to)."""
    return SameStore(stream, store)  # type: ignore[return-value]


ELIDED = "…"
"""Ends a value cut to fit a line."""


def show_value(value: Any, width: int | None = None) -> str:
    """A value on one terminal line as JSON; cut to `width` characters (ending in …) if given."""
    if value is None:
        return "∅"
    if width is not None and isinstance(value, str) and len(value) > width:
        return printable_line(json.dumps(value[:width], ensure_ascii=False)[:-1]) + ELIDED
    text = printable_line(json.dumps(value, ensure_ascii=False, default=str))
    return text if width is None or len(text) <= width else text[:width] + ELIDED
