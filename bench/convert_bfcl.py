"""Convert the Berkeley Function Calling Leaderboard "simple" set into tool-retrieval files.

BFCL v3 simple (github.com/ShishirPatil/gorilla, berkeley-function-call-leaderboard/data/
BFCL_v3_simple.json, Apache-2.0) has 400 lines, each a user question with the one function
that answers it. Pooling every distinct (name, description) gives a catalog of a few hundred
tools; each question's gold tool is its function's name. Parameters are dropped: our ranker
and the BM25 baseline both see name + description only.

Queries are split by position (even → dev, odd → holdout) so ranker changes can be tuned on
one half and checked on the other.

    .venv/bin/python bench/convert_bfcl.py BFCL_v3_simple.json bench/data
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

NAME = "bfcl_simple"


def records(path: Path) -> list[dict[str, Any]]:
    """BFCL lines as dicts; also accepts condensed {"q", "n", "d"} lines."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if "question" in entry:
            question = entry["question"][0][-1]["content"]
            function = entry["function"][0]
            out.append({"q": question, "n": function["name"], "d": function["description"]})
        else:
            out.append({"q": entry["q"], "n": entry["n"], "d": entry["d"]})
    return out


def convert(rows: list[dict[str, Any]], out_dir: Path) -> tuple[int, int]:
    """Write NAME.catalog.json and the dev/holdout query files; returns (tools, queries)."""
    catalog: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        key = (row["n"], row["d"])
        if key not in seen:
            seen.add(key)
            catalog.append({"name": row["n"], "description": row["d"]})
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{NAME}.catalog.json").write_text(
        json.dumps(catalog, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for split, remainder in (("dev", 0), ("holdout", 1)):
        with (out_dir / f"{NAME}.{split}.queries.jsonl").open("w", encoding="utf-8") as handle:
            for position, row in enumerate(rows):
                if position % 2 == remainder:
                    handle.write(
                        json.dumps({"query": row["q"], "gold": [row["n"]]}, ensure_ascii=False)
                        + "\n"
                    )
    return len(catalog), len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="+", help="BFCL_v3_simple.json (JSON lines)")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    rows = [row for path in args.source for row in records(path)]
    tools, queries = convert(rows, args.out_dir)
    print(f"{tools} tools, {queries} queries → {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
