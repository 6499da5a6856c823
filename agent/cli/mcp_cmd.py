"""`tabletalk mcp`: serve the catalog's tools to MCP clients, over stdio or loopback HTTP.

Over stdio nothing but protocol goes to stdout; startup errors (bad --db, bad config) print to
stderr and exit 2 before serving. Over HTTP each client presents its own token
(`tabletalk mcp token ...`), whose level decides what it may do.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict
from pathlib import Path

from agent.cli.common import (
    HelpFormatter,
    add_store_flag,
    open_cli_store,
    printable,
    printable_line,
    report_error,
    resolve_settings,
)
from agent.errors import ConfigError, TabletalkError
from agent.logs import setup_logging
from agent.mcp_server.levels import LEVELS
from agent.text_plural import counted

DEFAULT_PORT = 8765

DESCRIPTION = """\
Serve tabletalk's tools to MCP clients (Claude Desktop, an IDE, another agent).
The level sets what a client may do:
  read   list, describe, query, count, sample (the default)
  stage  read, plus stage writes for a person to review (tabletalk staged list)
  full   stage, plus exports to files and commitStagedChanges
Gated tools run without a prompt (the level is your choice); each call goes to the audit log.

Over stdio the client launches tabletalk and --level applies. With --http, tabletalk listens
on 127.0.0.1 only; each client sends its own token, created with
  tabletalk mcp token create NAME --level read|stage|full
and the token's level applies (--level is ignored). Headless, a new token's first call is not
asked about (you created it on purpose); in the app it is.
"""

TOKEN_DESCRIPTION = """\
Tokens for MCP clients of `tabletalk mcp --http`. A token is printed once when created; only
its hash is kept (in the state dir). Revoking takes effect on the client's next request, also
for a running server.
"""


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register `mcp` on the root parser's subparsers."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve the tools to MCP clients (stdio, or --http on loopback)",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    add_arguments(parser, suppress=True)
    add_token_commands(parser)
    return parser


def add_token_commands(parser: argparse.ArgumentParser) -> None:
    """`tabletalk mcp token create|list|revoke`."""
    commands = parser.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    token = commands.add_parser(
        "token",
        help="create, list or revoke client tokens for --http",
        description=TOKEN_DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    actions = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="issue a token for a new client (shown once)")
    create.add_argument("name", help="the client's name (shown in the audit log and the app)")
    create.add_argument(
        "--level", dest="token_level", choices=LEVELS, required=True, help="what the client may do"
    )
    listing = actions.add_parser("list", help="clients: level, created, last used, calls")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    revoke = actions.add_parser("revoke", help="revoke a client's token at once")
    revoke.add_argument("name", help="the client's name")


def add_arguments(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """`--level`, plus `--db`/`--config` (suppressed under the root parser, which has its own)."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--level",
        choices=LEVELS,
        default="read",
        help="what the client may do: read (default), stage, or full",
    )
    add_store_flag(parser, suppress=suppress)
    parser.add_argument("--config", metavar="FILE", default=default, help="config file to use")
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP on loopback instead of stdio"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"HTTP port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="loopback address to bind: 127.0.0.1 (default) or ::1"
    )


def run(args: argparse.Namespace) -> int:
    """Open the store and serve until the client disconnects; exit 2 on a startup error."""
    logging.getLogger("mcp").addHandler(logging.NullHandler())  # SDK logs stay off the terminal
    if getattr(args, "mcp_command", None) == "token":
        try:
            return run_token(args)
        except TabletalkError as exc:
            return report_error(exc)
    if getattr(args, "http", False):
        return run_http(args)
    # The MCP SDK takes seconds to import: only serving pays for it (not `mcp token ...`).
    import anyio

    from agent.mcp_server.server import McpBackend, serve_stdio

    try:
        config = getattr(args, "config", None)
        if config and not Path(config).is_file():
            raise ConfigError(
                f"Config file {config} does not exist",
                fix="Pass an existing file to --config, or leave it out to use the default.",
            )
        settings, store = open_cli_store(args)
    except TabletalkError as exc:
        return report_error(exc)
    try:
        backend = McpBackend(
            store,
            getattr(args, "level", "read") or "read",
            aws_profile=settings.profile,
            aws_region=settings.region,
            tell=_to_stderr,
        )
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


def _to_stderr(notice: str) -> None:
    """A staging notice on the serving terminal (stdout is the stdio protocol's)."""
    print(printable_line(notice), file=sys.stderr, flush=True)


def run_token(args: argparse.Namespace) -> int:
    """`tabletalk mcp token create|list|revoke`."""
    from agent.mcp_server.tokens import TokenBook

    book = TokenBook()
    try:
        action = args.token_command
        if action == "create":
            token = book.create(args.name, args.token_level)
            print(
                f"Created token for {args.name} (level {args.token_level}). It is shown only once:"
            )
            print(f"  {token}")
            print("Send it as `Authorization: Bearer TOKEN` to `tabletalk mcp --http`.")
            return 0
        if action == "revoke":
            if not book.revoke(args.name):
                raise TabletalkError(
                    f"No client named {args.name!r}", fix="See `tabletalk mcp token list`."
                )
            print(f"Revoked {args.name}: its next request is refused.")
            return 0
        clients = book.list()
        if getattr(args, "json", False):
            print(json.dumps([asdict(client) for client in clients], indent=2))
            return 0
        if not clients:
            print("No MCP clients yet: `tabletalk mcp token create NAME --level read`.")
            return 0
        print(f"{'name':<20} {'level':<6} {'created':<26} {'last used':<26} calls")
        for client in clients:
            print(
                f"{printable(client.name):<20} {client.level:<6} {client.created:<26} "
                f"{client.last_used or 'never':<26} {client.calls}"
            )
        return 0
    finally:
        book.close()


def run_http(args: argparse.Namespace) -> int:
    """Serve streamable HTTP on loopback until Ctrl+C; exit 2 on a startup error."""
    import anyio

    from agent.mcp_server.http import HttpServer, bind_sockets, build_app, client_snippet
    from agent.mcp_server.server import McpBackend
    from agent.mcp_server.tokens import TokenBook

    try:
        settings = resolve_settings(args)
        sockets = bind_sockets(getattr(args, "host", "127.0.0.1"), getattr(args, "port", 0))
        _, store = open_cli_store(args)
    except TabletalkError as exc:
        return report_error(exc)
    book = TokenBook()
    backend = McpBackend(
        store, "full", aws_profile=settings.profile, aws_region=settings.region, tell=_to_stderr
    )
    server = HttpServer(build_app(backend, book), sockets)
    count = len(book.list())
    print(f"tabletalk MCP server on {server.url} ({printable(store.label)})", flush=True)
    print(
        f"{counted(count, 'client token')}; create one with `tabletalk mcp token create NAME --level "
        "read|stage|full`. A client connects with:",
        flush=True,
    )
    print(client_snippet(server.url), flush=True)
    print("Ctrl+C stops the server.", flush=True)
    try:
        anyio.run(server.serve)
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()
        book.close()
        store.close()
    print("MCP server stopped.", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m agent.cli.mcp_cmd`: the same command without the root parser."""
    parser = argparse.ArgumentParser(
        prog="tabletalk mcp",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    add_arguments(parser)
    add_token_commands(parser)
    setup_logging()
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
