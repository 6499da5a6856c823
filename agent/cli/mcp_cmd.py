"""`tabletalk mcp`: serve the catalog's tools to an MCP client over stdio at a chosen level.

Nothing but protocol goes to stdout; startup errors (bad --db, bad config) print to stderr
and exit 2 before serving.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import anyio

from agent.cli.common import report_error, resolve_settings, store_path
from agent.errors import ConfigError, TabletalkError
from agent.logs import setup_logging
from agent.mcp_server import LEVELS, McpBackend, serve_stdio
from agent.stores.open import open_store

DESCRIPTION = """\
Serve tabletalk's tools to an MCP client (Claude Desktop, an IDE, another agent) over stdio.
The level sets what the client may do:
  read   list, describe, query, count, sample (the default)
  stage  read, plus stage writes for a person to review (`tabletalk staged list`)
  full   stage, plus exports to files and commitStagedChanges
Gated tools run without a prompt (the level is your choice); each call goes to the audit log.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `mcp` on the root parser's subparsers."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve the tools to an MCP client over stdio",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser, suppress=True)
    return parser


def add_arguments(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """`--level`, plus `--db`/`--config` (suppressed under the root parser, which has its own)."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--level",
        choices=LEVELS,
        default="read",
        help="what the client may do: read (default), stage, or full",
    )
    parser.add_argument(
        "--db", metavar="DB", default=default, help="SQLite file or dynamodb://REGION (default: demo)"
    )
    parser.add_argument("--config", metavar="FILE", default=default, help="config file to use")


def run(args: argparse.Namespace) -> int:
    """Open the store and serve until the client disconnects; exit 2 on a startup error."""
    logging.getLogger("mcp").addHandler(logging.NullHandler())  # SDK logs stay off the terminal
    try:
        config = getattr(args, "config", None)
        if config and not Path(config).is_file():
            raise ConfigError(
                f"Config file {config} does not exist",
                fix="Pass an existing file to --config, or leave it out to use the default.",
            )
        settings = resolve_settings(args)
        store = open_store(store_path(args, settings), settings)
    except TabletalkError as exc:
        return report_error(exc)
    try:
        backend = McpBackend(store, getattr(args, "level", "read") or "read")
        try:
            anyio.run(serve_stdio, backend)
        finally:
            backend.close()
    except TabletalkError as exc:
        return report_error(exc)
    except KeyboardInterrupt:
        return 130
    finally:
        store.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m agent.cli.mcp_cmd`: the same command without the root parser."""
    parser = argparse.ArgumentParser(
        prog="tabletalk mcp",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    setup_logging()
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
