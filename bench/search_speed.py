"""Search speed: index build time and per-query latency (median, p95) of KeywordRanker on
synthetic catalogs of 100, 1,000 and 10,000 tools (MCP-style `server__verbObject` names,
template descriptions), with short, long and misspelled queries. Also: reading the static
tables once per process (neighbours.json, wordvectors.bin, generalvectors.bin) and a fresh ranker's first query,
which builds what it keeps per catalog for them (word neighbours, tool vectors), and the first
query of the next conversation over the same catalog, which shares that ranker.

    .venv/bin/python bench/search_speed.py [--sizes 100 1000 10000] [--queries 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search import ranker as ranker_module  # noqa: E402
from agent.search import word_vectors as vectors_module  # noqa: E402
from agent.search.ranker import KeywordRanker, SearchDoc, shared_ranker  # noqa: E402

SERVERS = (
    "github", "jira", "slack", "postgres", "s3", "calendar", "gmail", "notion", "stripe",
    "salesforce", "zendesk", "linear", "figma", "drive", "shopify", "hubspot", "twilio",
    "datadog", "sentry", "kubernetes", "docker", "weather", "maps", "spotify", "trello",
)  # fmt: skip
VERBS = (
    "get", "list", "create", "update", "delete", "search", "export", "import", "archive",
    "restore", "share", "assign", "close", "merge", "sync", "count", "download", "upload",
    "schedule", "cancel", "approve", "tag", "move", "copy", "summarize",
)  # fmt: skip
OBJECTS = (
    "issue", "pullRequest", "comment", "channel", "message", "table", "row", "bucket", "object",
    "event", "invite", "email", "draft", "page", "database", "payment", "invoice", "customer",
    "ticket", "user", "team", "project", "file", "folder", "order", "product", "metric",
    "alert", "deployment", "pod", "container", "forecast", "route", "playlist", "card", "board",
    "label", "milestone", "release", "webhook",
)  # fmt: skip
TEMPLATES = (
    "{Verb} a {object} in {server}.",
    "{Verb} one or more {objects} of the current {server} workspace, with optional filters.",
    "{Verb} {objects} by id or name; returns the {object} with its metadata.",
    "Use this to {verb} a {object} on {server} when the user asks about their {objects}.",
    "{Verb} the {object} and report what changed, including timestamps and owner.",
)
WORDS = ("please", "the", "my", "latest", "all", "for", "from", "yesterday", "team", "new")


def synthetic_catalog(size: int, seed: int = 7) -> list[SearchDoc]:
    """`size` distinct tools from templates (deterministic for a seed)."""
    rng = random.Random(seed)
    docs: list[SearchDoc] = []
    seen: set[str] = set()
    while len(docs) < size:
        server, verb, obj = rng.choice(SERVERS), rng.choice(VERBS), rng.choice(OBJECTS)
        name = f"{server}__{verb}{obj[0].upper()}{obj[1:]}"
        if name in seen:
            name = f"{name}{len(docs)}"
        seen.add(name)
        words = obj.replace("R", " r").lower()
        description = rng.choice(TEMPLATES).format(
            Verb=verb.capitalize(), verb=verb, object=words, objects=words + "s", server=server
        )
        docs.append(SearchDoc(name, description))
    return docs


def synthetic_queries(count: int, seed: int = 11) -> list[str]:
    """Requests of 1-12 words, a fifth with a typo, a few in camelCase."""
    rng = random.Random(seed)
    queries = []
    for number in range(count):
        words = [rng.choice(VERBS), rng.choice(OBJECTS).lower()]
        if number % 3 == 0:
            words += [rng.choice(SERVERS)] + rng.sample(WORDS, rng.randint(2, 8))
        if number % 5 == 0:
            word = words[1]
            position = rng.randrange(len(word) - 1)
            words[1] = word[:position] + word[position + 1] + word[position] + word[position + 2 :]
        queries.append(" ".join(words))
    return queries


def measure(size: int, query_count: int) -> dict[str, float]:
    """Build time (ms) and per-query median/p95 (ms) for one synthetic catalog size."""
    return timed(synthetic_catalog(size), synthetic_queries(query_count), size)


def measure_real() -> dict[str, float] | None:
    """The same figures on the BFCL catalog with its real questions, when bench/data has it."""
    data = Path(__file__).resolve().parent / "data"
    catalog = data / "bfcl_simple.catalog.json"
    if not catalog.exists():
        return None
    from agent.search.catalog_file import load_catalog, load_queries

    queries = [
        item.query
        for path in sorted(data.glob("bfcl_simple*.queries.jsonl"))
        for item in load_queries(path)
    ]
    docs = load_catalog(catalog)
    return timed(docs, queries, f"{len(docs)} (BFCL)")


def timed(docs: list[SearchDoc], queries: list[str], label: object) -> dict[str, float]:
    start = time.perf_counter()
    ranker = KeywordRanker(docs)
    build_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    ranker.rank(queries[0])
    first_ms = (time.perf_counter() - start) * 1000
    shared_ranker(tuple(docs)).rank(queries[0])  # the first conversation over this catalog
    start = time.perf_counter()
    shared_ranker(tuple(docs)).rank(queries[-1])  # the next one (another request) shares it
    next_ms = (time.perf_counter() - start) * 1000
    for query in queries[:20]:  # warm the typo cache the way a conversation would
        ranker.rank(query)
    warm, cold = [], []
    for query in queries:
        start = time.perf_counter()
        ranker.rank(query, limit=5)
        warm.append((time.perf_counter() - start) * 1000)
    for query in queries:
        ranker.clear_cache()  # every word new to this ranker: typo lookups run each time
        start = time.perf_counter()
        ranker.rank(query, limit=5)
        cold.append((time.perf_counter() - start) * 1000)
    return {
        "tools": label,
        "build_ms": round(build_ms, 1),
        "first_query_ms": round(first_ms, 1),
        "next_conversation_ms": round(next_ms, 3),
        "median_ms": round(statistics.median(warm), 3),
        "p95_ms": percentile(warm, 0.95),
        "cold_median_ms": round(statistics.median(cold), 3),
        "cold_p95_ms": percentile(cold, 0.95),
        "queries": len(queries),
    }


def table_load_ms() -> dict[str, float]:
    """Time to read each static table the ranker loads once per process."""
    times = {}
    for name, load in (
        ("neighbours.json", ranker_module.neighbours),
        ("wordvectors.bin", vectors_module.word_vectors),
        ("generalvectors.bin", vectors_module.general_vectors),
    ):
        load.cache_clear()
        start = time.perf_counter()
        load()
        times[name] = round((time.perf_counter() - start) * 1000, 1)
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return round(ordered[max(0, int(len(ordered) * fraction) - 1)], 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    load_ms = table_load_ms()
    rows = [measure(size, args.queries) for size in args.sizes]
    real = measure_real()
    if real:
        rows.append(real)
    if args.json:
        print(json.dumps({"table_load_ms": load_ms, "sizes": rows}, indent=2))
        return 0
    print(
        "reading the static tables once per process: "
        + ", ".join(f"{name} {ms:.1f} ms" for name, ms in load_ms.items())
    )
    print("per-query ms: warm = words seen before by this ranker, cold = expansion cache cleared;")
    print("first = a fresh ranker's first query (builds its neighbour map and tool vectors);")
    print("next = the first query of another conversation over the same catalog (shared ranker)")
    print(
        f"{'tools':>13} {'build ms':>9} {'first ms':>9} {'next ms':>8} {'median':>8} {'p95':>8}"
        f" {'cold med':>9} {'cold p95':>9}"
    )
    for row in rows:
        print(
            f"{row['tools']!s:>13} {row['build_ms']:>9.1f} {row['first_query_ms']:>9.1f}"
            f" {row['next_conversation_ms']:>8.3f}"
            f" {row['median_ms']:>8.3f} {row['p95_ms']:>8.3f} {row['cold_median_ms']:>9.3f}"
            f" {row['cold_p95_ms']:>9.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
