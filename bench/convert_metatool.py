"""Convert MetaTool's tool-selection data into tool-retrieval files.

MetaTool (github.com/HowieHwong/MetaTool, MIT): dataset/plugin_des.json describes 199 ChatGPT
plugins in a sentence each; dataset/data/all_clean_data.csv holds about 20,000 requests written
by an LLM (GPT-4), each labelled with the one plugin that serves it. We keep the catalog and a
deterministic sample of PER_TOOL requests per tool (smallest SHA-1 of the text first).

Queries are split by their gold tool (a hash of its name), so the holdout asks for tools no
dev query asks for: tuning on dev cannot learn the holdout tools' words.

    .venv/bin/python bench/convert_metatool.py plugin_des.json all_clean_data.csv bench/data
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
from pathlib import Path

NAME = "metatool"
PER_TOOL = 6


def sha1(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


def convert(descriptions: Path, requests: Path, out_dir: Path) -> tuple[int, int, int]:
    """Write NAME.catalog.json and the dev/holdout query files; returns (tools, dev, holdout)."""
    catalog: dict[str, str] = json.loads(descriptions.read_text(encoding="utf-8"))
    by_tool: dict[str, set[str]] = {}
    with requests.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            query, tool = " ".join(row["Query"].split()), row["Tool"]
            if query and tool in catalog:
                by_tool.setdefault(tool, set()).add(query)
    out_dir.mkdir(parents=True, exist_ok=True)
    tools = [
        {"name": name, "description": " ".join(text.split())} for name, text in catalog.items()
    ]
    (out_dir / f"{NAME}.catalog.json").write_text(
        json.dumps(tools, indent=0, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    splits: dict[str, list[dict[str, object]]] = {"dev": [], "holdout": []}
    for tool in catalog:
        chosen = sorted(by_tool.get(tool, ()), key=sha1)[:PER_TOOL]
        split = "holdout" if sha1(tool)[0] % 2 else "dev"
        splits[split].extend({"query": query, "gold": [tool]} for query in chosen)
    for split, items in splits.items():
        with (out_dir / f"{NAME}.{split}.queries.jsonl").open("w", encoding="utf-8") as handle:
            for item in items:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    return len(tools), len(splits["dev"]), len(splits["holdout"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("descriptions", type=Path, help="MetaTool dataset/plugin_des.json")
    parser.add_argument("requests", type=Path, help="MetaTool dataset/data/all_clean_data.csv")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    tools, dev, held = convert(args.descriptions, args.requests, args.out_dir)
    print(f"{tools} tools, {dev} dev + {held} holdout queries → {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
