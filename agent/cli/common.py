"""What every subcommand shares: global flags, settings resolution, error reporting."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TextIO

from agent.config import Settings, load_settings
from agent.errors import TabletalkError
from agent.stores.base import Store
from agent.text_safety import printable, printable_line

__all__ = ["printable", "printable_line"]


def add_store_flag(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """`--db PATH`; sub-parsers suppress the default so a global `--db` is not clobbered."""
    parser.add_argument(
        "--db",
        metavar="DB",
        default=argparse.SUPPRESS if suppress else None,
        help="SQLite file or dynamodb://REGION[?tables=GLOB] (default: the demo database)",
    )


def add_model_flags(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """The Bedrock and permission flags shared by `ask` and the app."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--config", metavar="FILE", default=default, help="config file to use")
    parser.add_argument("--profile", default=default, help="AWS profile for Bedrock")
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


def resolve_settings(args: argparse.Namespace) -> Settings:
    """Config file, then flags on top."""
    config = getattr(args, "config", None)
    settings = load_settings(Path(config) if config else None)
    updates = {}
    for name in ("profile", "region", "model", "mode"):
        value = getattr(args, name, None)
        if value is not None:
            updates[name] = value
    if getattr(args, "no_stream", False):
        updates["streaming"] = False
    if getattr(args, "step_limit", None):
        updates["step_limit"] = args.step_limit
    return settings.model_copy(update=updates)


def store_path(args: argparse.Namespace, settings: Settings | None = None) -> str | None:
    """`--db`, else the config's `db`, else None (the demo database)."""
    return getattr(args, "db", None) or (settings.db if settings else None)


def report_error(exc: TabletalkError, stream: TextIO | None = None) -> int:
    """Print a TabletalkError as `error: message` plus its fix; exit status 2."""
    stream = stream or sys.stderr
    print(f"error: {exc.message}", file=stream)
    if exc.fix:
        print(f"  fix: {exc.fix}", file=stream)
    return 2


def db_flag(store: Store) -> str:
    """` --db VALUE` for hints that must reach the same store; empty for the demo database."""
    from agent import paths

    path = store.file_path
    if path is not None and path.resolve() == paths.demo_db_path().resolve():
        return ""
    return f" --db {shlex.quote(store.db_arg)}"
