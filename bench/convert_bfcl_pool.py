"""Convert the Berkeley Function Calling Leaderboard sets into one pooled tool-retrieval set.

BFCL v4 (github.com/ShishirPatil/gorilla, berkeley-function-call-leaderboard/bfcl_eval/data,
Apache-2.0): every question file offers a few functions and its possible_answer file names the
ones the answer calls. Pooling the functions of all given files (first description kept per
name) gives a catalog of about 1,300 tools; the questions of every file except the simple set
(already in bfcl_simple) become queries whose gold is the called functions. Parameters are
dropped: the rankers see name + description only.

Queries are split by their gold tool (a hash of its name), so the holdout asks for tools no
dev query asks for: tuning on dev cannot learn the holdout tools' words.

    .venv/bin/python bench/convert_bfcl_pool.py DATA_DIR bench/data
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

NAME = "bfcl_pool"
MAX_QUERY_CHARS = 600


def holdout(gold: list[str]) -> bool:
    """Whether a query with these gold names belongs to the holdout half (stable across runs)."""
    digest = hashlib.sha1(min(gold).encode("utf-8")).digest()
    return digest[0] % 2 == 1


def last_user_text(question: list[list[dict[str, Any]]]) -> str:
    """The last user message of a BFCL question (its turns are lists of role/content dicts)."""
    texts = [turn["content"] for turns in question for turn in turns if turn["role"] == "user"]
    return " ".join(texts[-1].split())[:MAX_QUERY_CHARS] if texts else ""


def convert(data_dir: Path, out_dir: Path) -> tuple[int, int, int]:
    """Write NAME.catalog.json and the dev/holdout query files; returns (tools, dev, holdout)."""
    catalog: dict[str, str] = {}
    queries: list[dict[str, Any]] = []
    for path in sorted(data_dir.glob("BFCL_v4_*.json")):
        answers_path = data_dir / "possible_answer" / path.name
        if not answers_path.exists():
            continue
        answers = {}
        for line in answers_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                answers[entry["id"]] = entry
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            for function in entry["function"]:
                catalog.setdefault(function["name"], " ".join(function["description"].split()))
            if "simple" in path.name and "live" not in path.name:
                continue
            gold = sorted({name for call in answers[entry["id"]]["ground_truth"] for name in call})
            text = last_user_text(entry["question"])
            if gold and text:
                queries.append({"query": text, "gold": gold})
    out_dir.mkdir(parents=True, exist_ok=True)
    tools = [{"name": name, "description": text} for name, text in catalog.items()]
    (out_dir / f"{NAME}.catalog.json").write_text(
        json.dumps(tools, indent=0, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    counts = {}
    for split, wanted in (("dev", False), ("holdout", True)):
        chosen = [item for item in queries if holdout(item["gold"]) is wanted]
        counts[split] = len(chosen)
        with (out_dir / f"{NAME}.{split}.queries.jsonl").open("w", encoding="utf-8") as handle:
            for item in chosen:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    return len(tools), counts["dev"], counts["holdout"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data_dir", type=Path, help="BFCL data dir (BFCL_v4_*.json, possible_answer/)"
    )
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    tools, dev, held = convert(args.data_dir, args.out_dir)
    print(f"{tools} tools, {dev} dev + {held} holdout queries → {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
