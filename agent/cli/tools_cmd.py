"""`tabletalk tools`: the catalog as a table or JSON (after the user's config overrides)."""

from __future__ import annotations

import argparse
import json

from agent.cli.common import resolve_settings
from agent.text_plural import counted

COLUMNS = ("name", "visibility", "tier", "access", "mcp", "description")


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "tools",
        help="show the tool catalog (and search or evaluate it)",
        description="Show the tool catalog: one row per tool, after your config's overrides.",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list of rows, each with its tool's inputSchema",
    )
    parser.add_argument(
        "--config", metavar="FILE", default=argparse.SUPPRESS, help="config file to use"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    from agent.toolset import Toolset  # the tools' pydantic models load only for this command

    settings = resolve_settings(args)
    toolset = Toolset.build(settings.tools.always_loaded, settings.tools.discoverable)
    rows = [row.to_dict() for row in toolset.rows]
    for row in rows:
        if row["name"] == "searchTools":
            row["description"] = toolset.description("searchTools")
    if args.json:
        for tool, row in zip(toolset.rows, rows, strict=True):
            row["inputSchema"] = toolset.spec(tool.name)["toolSpec"]["inputSchema"]["json"]
        print(json.dumps(rows, indent=2))
        return 0
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS[:-1]}
    header = "  ".join(c.upper().ljust(widths[c]) for c in COLUMNS[:-1]) + "  DESCRIPTION"
    print(header)
    for row in rows:
        cells = "  ".join(str(row[c]).ljust(widths[c]) for c in COLUMNS[:-1])
        print(f"{cells}  {row['description']}")
    inline = len(toolset.inline_names())
    print(
        f"\n{counted(len(rows), 'tool')}: {inline} inline, {len(rows) - inline} discoverable. "
        "`tabletalk tools --json` for every field."
    )
    return 0
