"""`tabletalk tools search` and `tabletalk tools eval`: try the tool ranker from a terminal and
measure it on labelled queries."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent.errors import ConfigError
from agent.text_plural import counted

if TYPE_CHECKING:  # the ranker loads only for `tools search|eval`, not for `tabletalk --help`
    from agent.config import Settings
    from agent.search.ranker import SearchDoc

MODE = "keyword"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def add_tools_subcommands(
    tools_subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Register `search` and `eval` under the `tools` command's subparsers."""
    search = tools_subparsers.add_parser(
        "search", help="rank a catalog's tools for a request, as searchTools does"
    )
    search.add_argument("query", metavar="QUERY", help="the request, e.g. 'export to csv'")
    search.add_argument(
        "--catalog", metavar="FILE", help="catalog JSON (default: tabletalk's own tools)"
    )
    search.add_argument("--limit", type=_positive_int, default=5, help="how many tools (default 5)")
    search.add_argument("--json", action="store_true", help="print JSON instead of a table")
    evaluate_cmd = tools_subparsers.add_parser(
        "eval", help="measure the ranker on labelled queries (recall@1, recall@5, MRR)"
    )
    evaluate_cmd.add_argument("--catalog", metavar="FILE", required=True, help="catalog JSON")
    evaluate_cmd.add_argument(
        "--queries", metavar="FILE", required=True, help='JSON lines of {"query", "gold"}'
    )
    evaluate_cmd.add_argument(
        "--limit", type=_positive_int, default=5, help="ranking depth for recall (default 5)"
    )
    evaluate_cmd.add_argument(
        "--rankings", metavar="OUT.jsonl", help="write each query's ranked tool names here"
    )
    evaluate_cmd.add_argument("--json", action="store_true", help="print JSON instead of text")


def configured_docs(settings: Settings) -> list[SearchDoc]:
    """What searchTools searches in a chat: built-in rows, configured MCP servers' tools,
    minus the tools pinned by `always_loaded`; a server that fails is a warning."""
    from agent.search.searcher import search_docs
    from agent.session import build_toolset, start_mcp_sources

    sources = start_mcp_sources(settings, lambda text: print(f"warning: {text}", file=sys.stderr))
    try:
        return search_docs(build_toolset(settings, sources), settings.tools.always_loaded)
    finally:
        if sources is not None:
            sources.close()


def run_search(args: argparse.Namespace) -> int:
    """Print the ranking for `args.query`: rank, name, score and description (or JSON)."""
    from agent.cli.common import resolve_settings
    from agent.search.catalog_file import load_catalog
    from agent.search.searcher import search_catalog

    catalog = getattr(args, "catalog", None)
    settings = resolve_settings(args)
    docs = load_catalog(catalog) if catalog else configured_docs(settings)
    found = search_catalog(docs, args.query, args.limit, settings)
    mode = found["mode"]
    results = [{"rank": position, **tool} for position, tool in enumerate(found["tools"], start=1)]
    if args.json:
        payload = {
            "mode": mode,
            **({"fallback_reason": found["fallback_reason"]} if "fallback_reason" in found else {}),
            "query": args.query,
            "catalog": str(catalog) if catalog else "builtin",
            "tools": len(docs),
            "results": results,
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    fallback = f", fell back: {found['fallback_reason']}" if "fallback_reason" in found else ""
    print(f"mode: {mode}{fallback}  ({counted(len(docs), 'tool')})")
    if not results:
        print("no tool matched")
        return 0
    width = max(len(result["name"]) for result in results)
    for result in results:
        print(
            f"{result['rank']:>2}. {result['name']:<{width}}  {result['score']:>8.3f}  "
            f"{result['description']}"
        )
    return 0


def run_eval(args: argparse.Namespace) -> int:
    """Print recall@1, recall@k, MRR (and no-tool accuracy) of the ranker on a queries file."""
    from agent.search.catalog_file import load_catalog, load_queries
    from agent.search.evaluate import evaluate
    from agent.search.ranker import KeywordRanker

    docs = load_catalog(args.catalog)
    queries = load_queries(args.queries)
    report = evaluate(KeywordRanker(docs), queries, limit=args.limit)
    if args.rankings:
        _write_rankings(Path(args.rankings), report.rankings)
    summary = {
        "mode": MODE,
        "tools": len(docs),
        "n": report.n,
        "limit": args.limit,
        "recall@1": round(report.recall_at_1, 4),
        f"recall@{args.limit}": round(report.recall_at_5, 4),
        "mrr": round(report.mrr, 4),
        "no_tool_accuracy": None
        if report.no_tool_accuracy is None
        else round(report.no_tool_accuracy, 4),
        "n_no_tool": report.n_no_tool,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(
        f"mode: {MODE}  ({counted(len(docs), 'tool')}, {counted(report.n, 'labelled query', 'labelled queries')})"
    )
    print(f"recall@1   {report.recall_at_1:.3f}")
    print(f"recall@{args.limit:<3} {report.recall_at_5:.3f}")
    print(f"MRR        {report.mrr:.3f}")
    if report.no_tool_accuracy is not None:
        print(
            f"no-tool    {report.no_tool_accuracy:.3f}  ({counted(report.n_no_tool, 'query', 'queries')} with no fitting tool)"
        )
    return 0


def _write_rankings(path: Path, rankings: list[tuple[str, list[str]]]) -> None:
    try:
        with path.open("w", encoding="utf-8") as handle:
            for query, ranked in rankings:
                handle.write(
                    json.dumps({"query": query, "ranked": ranked}, ensure_ascii=False) + "\n"
                )
    except OSError as error:
        raise ConfigError(
            f"{path}: cannot write the rankings file ({error.strerror or error}).",
            fix="Pass --rankings a path in a folder that exists and is writable.",
        ) from None
