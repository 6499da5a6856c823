"""Fit the keyword ranker's weights (agent.search.ranker.RankerParams) on the dev splits only.

Coordinate search: each weight in turn tries a few multiples of its current value and keeps
the best, until a full pass changes nothing. The objective is the mean over the dev sets
(our own catalog's devset and every bench/data NAME.dev.queries.jsonl) of (recall@5 + MRR) / 2,
each set counting the same. A change that makes the devset's no-tool accuracy (requests no
tool fits, scoring under the no-match threshold) fall below --min-no-tool is refused, so weights that lift every score cannot win by recall alone. Holdout and
paraphrase files are never read.

    .venv/bin/python bench/tune_search.py [--passes 2] [--fields related neighbour ...]
        [--min-no-tool 0.66]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search.catalog_file import LabelledQuery, load_catalog, load_queries  # noqa: E402
from agent.search.evaluate import evaluate  # noqa: E402
from agent.search.ranker import KeywordRanker, RankerParams, SearchDoc  # noqa: E402
from catalog import ROWS  # noqa: E402

BENCH = Path(__file__).resolve().parent
STEPS = (0.5, 0.75, 1.33, 2.0)


def dev_sets() -> list[tuple[str, list[SearchDoc], list[LabelledQuery]]]:
    sets = [
        (
            "devset",
            [SearchDoc(row.name, row.description, tuple(row.keywords)) for row in ROWS],
            load_queries(BENCH / "search_devset.jsonl"),
        )
    ]
    for path in sorted((BENCH / "data").glob("*.dev.queries.jsonl")):
        name = path.name.removesuffix(".dev.queries.jsonl")
        sets.append(
            (name, load_catalog(BENCH / "data" / f"{name}.catalog.json"), load_queries(path))
        )
    return sets


def score(
    params: RankerParams, sets: list[tuple[str, list[SearchDoc], list[LabelledQuery]]]
) -> tuple[float, float]:
    """The objective and the lowest no-tool accuracy of any set that has no-tool requests."""
    total, no_tool = 0.0, 1.0
    for _, docs, queries in sets:
        report = evaluate(KeywordRanker(docs, params), queries, limit=5)
        total += (report.recall_at_5 + report.mrr) / 2
        if report.no_tool_accuracy is not None:
            no_tool = min(no_tool, report.no_tool_accuracy)
    return total / len(sets), no_tool


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--fields", nargs="+", help="tune only these RankerParams fields")
    parser.add_argument("--min-no-tool", type=float, default=0.66)
    args = parser.parse_args(argv)
    sets = dev_sets()
    params = RankerParams()
    best, no_tool = score(params, sets)
    print(f"start {best:.4f} (no-tool accuracy {no_tool:.3f}) {params}")
    for _ in range(args.passes):
        changed = False
        for field in dataclasses.fields(RankerParams):
            if args.fields and field.name not in args.fields:
                continue
            current = getattr(params, field.name)
            for step in STEPS:
                value = round(current * step, 3)
                if field.name.endswith("_b"):
                    value = min(value, 1.0)
                trial = dataclasses.replace(params, **{field.name: value})
                result, no_tool = score(trial, sets)
                if result > best + 1e-4 and no_tool >= args.min_no_tool:
                    best, params, changed = result, trial, True
                    print(f"  {field.name}={value}: {best:.4f} (no-tool accuracy {no_tool:.3f})")
        if not changed:
            break
    print(f"best {best:.4f} {params}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
