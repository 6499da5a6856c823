"""The headless CLI's root parser; `tui.entry` sends every headless command here."""

from __future__ import annotations

import argparse
import logging
import sys

from agent.cli import (
    ask,
    commits_cmd,
    conversations_cmd,
    eval_cmd,
    index_cmd,
    mcp_cmd,
    staged,
    tools_cmd,
)
from agent.cli import search_cmd as search_cli
from agent.cli.common import (
    HelpFormatter,
    add_model_flags,
    add_store_flag,
    open_cli_store,
    report_error,
    resolve_settings,
    share_common_flags,
)
from agent.errors import TabletalkError
from agent.logs import setup_logging
from agent.text_plural import counted
from agent.text_safety import SafeStream, printable_line

EXAMPLES = """\
examples:
  tabletalk                                  open the app on the demo database
  tabletalk --db shop.sqlite                 open the app on your SQLite file
  tabletalk ask "how many orders are pending?" --mode auto
  tabletalk staged list                      review what the agent staged
  tabletalk staged commit --all              commit it (conflicts exit 1)
  tabletalk tools search "export to csv"     how tool search ranks a request
  tabletalk index build products --columns name,category   semantic search index
  tabletalk mcp --level stage                serve the tools to an MCP client

Config: config.toml in the platform config dir (see README.md). Exit status: 0 ok,
1 turn failed or commit conflict, 2 usage or setup error, 3 step/token limit reached.
"""

HEADLESS_COMMANDS = frozenset(
    {"ask", "tools", "staged", "conversations", "info", "mcp", "eval", "commits", "index"}
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tabletalk",
        description="Chat with your tables on your own Amazon Bedrock credentials. "
        "Without a command, opens the app on the demo database (or --db PATH).",
        epilog=EXAMPLES,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="show the installed version and exit"
    )
    add_store_flag(parser)
    add_model_flags(parser)
    parser.add_argument("--conversation", metavar="ID", help="open the app on a saved conversation")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    ask.add_parser(commands)
    tools = tools_cmd.add_parser(commands)
    tool_commands = tools.add_subparsers(dest="tools_command", metavar="SUBCOMMAND")
    search_cli.add_tools_subcommands(tool_commands)
    staged.add_parser(commands)
    mcp_cmd.add_parser(commands)
    conversations_cmd.add_parser(commands)
    demo = commands.add_parser("demo", help="create the demo tables in a store (dynamodb)")
    demo.add_argument("target", choices=["dynamodb"], help="where to create them")
    demo.add_argument("--region", default=argparse.SUPPRESS, help="AWS region (default: profile's)")
    eval_cmd.add_parser(commands)
    commits_cmd.add_parser(commands)
    index_cmd.add_parser(commands)
    commands.add_parser(
        "info",
        help="summarise the store (tables and row counts)",
        description="Show the store's tables with their keys and row counts "
        "(the store: --db, else `db` in the config file, else the demo database).",
    )
    share_common_flags(parser)
    return parser


def package_version() -> str:
    """The installed package's version (from its metadata)."""
    from importlib import metadata  # only for --version: reading metadata is not free

    try:
        return metadata.version("tabletalk")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`: print `tabletalk VERSION` and exit (the version is read only then)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"tabletalk {package_version()}")
        parser.exit()


def run_info(args: argparse.Namespace) -> int:
    """Print the store's tables with their keys and row counts."""
    _, store = open_cli_store(args)
    try:
        print(f"{printable_line(store.label)} ({printable_line(store.identity)})")
        tables = store.list_tables()
        if not tables:
            print(f"  {printable_line(store.no_tables_hint)}")
        for table in tables:
            info = store.describe_table(table)
            key = printable_line(", ".join(info.key_columns))
            print(
                f"  {printable_line(table):<20} {counted(info.row_count, 'row'):>14}  key ({key})"
            )
    finally:
        store.close()
    return 0


def run_demo(args: argparse.Namespace) -> int:
    """Create the demo tables on the current DynamoDB endpoint (refusing existing tables)."""
    from agent.stores.dynamodb.client import endpoint_of, make_client
    from agent.stores.dynamodb.demo import create_demo_tables

    settings = resolve_settings(args)
    client, _session, region = make_client(settings.region, settings.profile)
    endpoint = endpoint_of(client) or "AWS"
    print(f"creating the demo tables in {region} at {endpoint} ...", file=sys.stderr)
    tables = create_demo_tables(client, region)
    print(f"created: {', '.join(tables)}")
    print(f"open them with: tabletalk --db dynamodb://{region}")
    return 0


def serves_protocol_on_stdout(args: argparse.Namespace) -> bool:
    """`tabletalk mcp` over stdio: its stdout is the MCP protocol, not text for a person."""
    return (
        args.command == "mcp"
        and getattr(args, "mcp_command", None) is None
        and not getattr(args, "http", False)
    )


def main(argv: list[str] | None = None) -> int:
    """Run a headless command; returns the exit status.

    Everything it prints passes the terminal sanitiser (`SafeStream`); `mcp` over stdio keeps
    stdout raw, as it carries the protocol.
    """
    streams = sys.stdout, sys.stderr
    sys.stderr = SafeStream(sys.stderr)
    try:
        args = _parse(build_parser(), argv)
        if not serves_protocol_on_stdout(args):
            sys.stdout = SafeStream(sys.stdout)
        return _run(args)
    finally:
        sys.stdout, sys.stderr = streams


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """`parser.parse_args`, but an unknown flag is reported by the command it was given to,
    with that command's usage (`tabletalk ask: error: …`), not the top level's."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        _chosen(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub)command parser `args` went through."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def _run(args: argparse.Namespace) -> int:
    log_path = setup_logging()
    handlers = {
        "ask": ask.run,
        "staged": staged.run,
        "conversations": conversations_cmd.run,
        "info": run_info,
        "mcp": mcp_cmd.run,
        "demo": run_demo,
        "eval": eval_cmd.run,
        "commits": commits_cmd.run,
        "index": index_cmd.run,
        None: run_info,
    }
    try:
        resolve_settings(args)  # a bad config file is a setup error for every command
        if args.command == "tools":
            sub = getattr(args, "tools_command", None)
            if sub == "search":
                return search_cli.run_search(args)
            if sub == "eval":
                return search_cli.run_eval(args)
            return tools_cmd.run(args)
        return handlers[args.command](args)
    except TabletalkError as exc:
        return report_error(exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one line for the user, the traceback in the log
        logging.getLogger("agent").exception("unexpected error")
        where = f"; details in {log_path}" if log_path else ""
        print(f"error: unexpected {type(exc).__name__}: {exc}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
