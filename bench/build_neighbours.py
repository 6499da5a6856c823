"""Build agent/search/neighbours.json: for common English words, the words nearest in meaning
(Porter stems on both sides, as the ranker indexes them).

Each whole word of the all-MiniLM-L6-v2 WordPiece vocabulary (alphabetic, 3+ letters, not a
stop word) is embedded alone by the model (bench/minilm.py; Apache-2.0 weights), the way
Model2Vec distils a static table from a sentence model. A word keeps its NEIGHBOURS nearest
other words by cosine, at or above MIN_SIMILARITY, that do not share its Porter stem. The ranker
reads the table as related words, so a request's words reach tool words the hand-written
lexicon lacks, with no model at run time.

    .venv/bin/python bench/build_neighbours.py MODEL_DIR [--out agent/search/neighbours.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from minilm import MiniLM  # noqa: E402

from agent.search.text import STOP_WORDS, stem  # noqa: E402

NEIGHBOURS = 6
MIN_SIMILARITY = 0.6
OUT = Path(__file__).resolve().parents[1] / "agent" / "search" / "neighbours.json"


def vocabulary(model_dir: Path) -> list[str]:
    """Whole words of the model's WordPiece vocabulary worth relating."""
    vocab = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(
        word
        for word in vocab
        if word.isascii()
        and word.isalpha()
        and word.islower()
        and len(word) >= 3
        and word not in STOP_WORDS
    )


def neighbours(words: list[str], vectors: np.ndarray) -> dict[str, list[list[object]]]:
    table: dict[str, list[list[object]]] = {}
    stems = [stem(word) for word in words]
    for start in range(0, len(words), 1024):
        sims = vectors[start : start + 1024] @ vectors.T
        for offset, row in enumerate(sims):
            i = start + offset
            order = np.argsort(-row, kind="stable")[: NEIGHBOURS * 4]
            near = [
                [words[j], round(float(row[j]), 2)]
                for j in order
                if j != i and stems[j] != stems[i] and row[j] >= MIN_SIMILARITY
            ][:NEIGHBOURS]
            if near:
                table[words[i]] = near
    return table


def by_stem(table: dict[str, list[list[object]]]) -> dict[str, list[list[object]]]:
    """The table keyed by Porter stem (what the ranker looks up), neighbours merged by stem
    keeping the best similarity, best first, so loading it needs no stemming."""
    keyed: dict[str, dict[str, float]] = {}
    for word, near in table.items():
        best = keyed.setdefault(stem(word), {})
        for other, similarity in near:
            term = stem(str(other))
            if term != stem(word):
                best[term] = max(best.get(term, 0.0), float(similarity))  # type: ignore[arg-type]
    return {
        key: [[term, value] for term, value in sorted(near.items(), key=lambda kv: (-kv[1], kv[0]))]
        for key, near in keyed.items()
        if near
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    words = vocabulary(args.model_dir)
    vectors = MiniLM(args.model_dir).encode(words)
    table = by_stem(neighbours(words, vectors))
    args.out.write_text(
        json.dumps(table, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"{len(words)} words, {len(table)} stems with neighbours → {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
