"""Build agent/search/wordvectors.bin: a static vector per WordPiece token of all-MiniLM-L6-v2.

Model2Vec-style distillation (Apache-2.0 weights; the table is derived from them): every
token of the model's vocabulary that `agent.search.text.words` can produce (ASCII letters and
digits, whole words and ## continuations) is run through the model alone ([CLS] token [SEP],
mean-pooled, unit length; bench/minilm.py), the vectors are centred and projected on their
principal components 2..DIMS+1 (the first is the direction every token shares), and stored as
int8 with one global scale. The ranker averages a text's token vectors with IDF weights at
run time (agent/search/word_vectors.py); no model is needed then.

    .venv/bin/python bench/build_word_vectors.py MODEL_DIR [--dims 64] [--out FILE]
        [--raw-cache /tmp/tabletalk-bench/token-vectors.npy]

File layout: the line `tabletalk-word-vectors 1`, one JSON line {"dims", "scale",
"tokens": [...]}, then len(tokens) × dims signed bytes, row i for tokens[i].
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

from agent.search.word_vectors import MAGIC  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "agent" / "search" / "wordvectors.bin"
BATCH = 512


def kept(token: str) -> bool:
    """A token that lower-case ASCII words can be split into."""
    body = token[2:] if token.startswith("##") else token
    return bool(body) and body.isascii() and body.isalnum() and body == body.lower()


def token_vectors(model_dir: Path, vocab: list[str], cache: Path | None) -> np.ndarray:
    """Each vocabulary token embedded alone by the model (rows in vocabulary id order)."""
    if cache and cache.exists():
        return np.load(cache)
    model = MiniLM(model_dir)
    out = np.zeros((len(vocab), 384), dtype=np.float32)
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    for start in range(0, len(vocab), BATCH):
        ids = np.array(
            [[cls, i, sep] for i in range(start, min(len(vocab), start + BATCH))], dtype=np.int64
        )
        out[start : start + len(ids)] = model._forward(ids, np.ones(ids.shape, dtype=np.float32))
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--raw-cache", type=Path, help="keep the model's token vectors here")
    args = parser.parse_args(argv)
    vocab_ids = json.loads((args.model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = sorted(vocab_ids["model"]["vocab"], key=vocab_ids["model"]["vocab"].get)
    raw = token_vectors(args.model_dir, vocab, args.raw_cache)
    rows = [i for i, token in enumerate(vocab) if kept(token)]
    tokens = [vocab[i] for i in rows]
    matrix = raw[rows].astype(np.float64)
    centred = matrix - matrix.mean(0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    projected = centred @ components[1 : args.dims + 1].T
    scale = float(np.abs(projected).max()) / 127.0
    table = np.clip(np.round(projected / scale), -127, 127).astype(np.int8)
    header = json.dumps(
        {"dims": args.dims, "scale": scale, "tokens": tokens}, separators=(",", ":")
    )
    with args.out.open("wb") as handle:
        handle.write(MAGIC + b"\n" + header.encode("utf-8") + b"\n" + table.tobytes())
    print(
        f"{len(tokens)} tokens × {args.dims} dims → {args.out} ({args.out.stat().st_size:,} bytes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
