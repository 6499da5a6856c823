"""Learn agent/search/wordvectors.bin by regression onto the model's sentence vectors
(Tokenlearn-style, issue 15 session 8).

Two steps:

- `encode`: the first `--sentences` corpus summaries (the same filter and fixed shuffle as
  bench/build_word_vectors.py) run through all-MiniLM-L6-v2 on torch's CPU kernels, one
  thread; per CHUNK sentences the cache keeps each sentence's mean-pooled final layer (the
  model's sentence vector before unit length) and, in build_word_vectors.py's own cache format,
  the chunk's per-token sums, so build_word_vectors.py reuses the same pass.
- `fit`: W = argmin ||A W - T||^2 + lam ||W - W0||^2, where W0 is the in-context table that
  build_word_vectors.py builds (before int8), A the sentence x token matrix of the pooling the
  ranker uses (agent/search/word_vectors.py: a sentence's content words, split into table
  pieces, weighted, averaged), T the sentence vectors centred and projected exactly as W0's
  rows were (the build's mean and principal components 2..DIMS+1). Solved by block conjugate
  gradients on the normal equations. Each target keeps its direction at the length W0's
  pooling gives that sentence (the ranker compares cosines only). Then int8 with one global
  scale, and the same file format as build_word_vectors.py, whose header also records the
  fitted corpus ("method": sentences, SHA-256, lambda, weighting).

Bench-only: needs torch (CPU) and scipy (`pip install torch scipy`). `--wordnet N` adds N
WordNet 3.0 synsets ("lemmas: gloss", Debian's wordnet-base) to the fitted corpus.
Session 8's figures (bench/README.md): a dev gain, but not shipped.

    .venv/bin/python bench/learn_word_vectors.py encode MODEL_DIR [--sentences 40000]
        [--wordnet 0] [--cache-dir /tmp/tabletalk-bench]
    .venv/bin/python bench/learn_word_vectors.py fit MODEL_DIR [--sentences 40000]
        [--lam 0.03] [--weighting idf] [--out FILE] [--cache-dir /tmp/tabletalk-bench]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_word_vectors import (  # noqa: E402
    CHUNK,
    CONTEXT_BATCH,
    CORPUS,
    OUT,
    PRIOR,
    WIDTH,
    blend,
    context_sums,
    corpus_sentences,
    encoder,
    kept,
    token_vectors,
)

from agent.search.word_vectors import MAGIC  # noqa: E402

WORDNET = Path("/usr/share/wordnet")  # Debian's wordnet-base (WordNet 3.0 licence)
WORDNET_SEED = 16


def wordnet_sentences(folder: Path, count: int) -> list[str]:
    """The first `count` WordNet 3.0 synsets in a fixed shuffle, each as "lemmas: gloss"
    (words of the synset joined by commas, underscores as spaces; the gloss with its
    examples): everyday English the software summaries lack. ASCII, at most 60 words."""
    found: set[str] = set()
    for part in ("noun", "verb", "adj", "adv"):
        path = folder / f"data.{part}"
        if not path.exists():
            continue
        with path.open(encoding="latin-1") as handle:
            for line in handle:
                if line.startswith(" ") or " | " not in line:
                    continue
                head, _, gloss = line.partition(" | ")
                fields = head.split()
                lemmas = [
                    fields[4 + 2 * i].replace("_", " ").split("(")[0]
                    for i in range(int(fields[3], 16))
                ]
                text = f"{', '.join(dict.fromkeys(lemmas))}: {gloss.strip()}"
                if text.isascii() and len(text.split()) <= 60:
                    found.add(text)
    sentences = sorted(found)
    random.Random(WORDNET_SEED).shuffle(sentences)
    return sentences[:count]


def encode_chunk(model, vocab_size: int, chunk: list[str]):  # type: ignore[no-untyped-def]
    """(mean-pooled sentence vectors in chunk order, per-token sums, per-token counts)."""
    sums = np.zeros((vocab_size, WIDTH))
    counts = np.zeros(vocab_size)
    pooled = np.zeros((len(chunk), WIDTH), dtype=np.float32)
    order = sorted(range(len(chunk)), key=lambda i: len(chunk[i]))
    for first in range(0, len(order), CONTEXT_BATCH):
        picked = order[first : first + CONTEXT_BATCH]
        encodings = model.tokenizer.encode_batch([chunk[i] for i in picked])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        hidden = model.hidden(ids, mask)
        real = mask.astype(bool)
        np.add.at(sums, ids[real], hidden[real])
        np.add.at(counts, ids[real], 1)
        pooled[picked] = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled, sums, counts


def chunk_paths(cache: Path, chunk: list[str]) -> tuple[Path, Path]:
    digest = hashlib.sha256("\n".join(chunk).encode("utf-8")).hexdigest()[:16]
    return (
        cache / f"sentences-{len(chunk)}-{digest}.npy",
        cache / f"chunk-{len(chunk)}-{digest}.npz",
    )


def encode(model_dir: Path, vocab_size: int, sentences: list[str], cache: Path) -> np.ndarray:
    """Every sentence's mean-pooled vector (cached per chunk)."""
    model = None
    out = []
    started, encoded = time.monotonic(), 0
    for start in range(0, len(sentences), CHUNK):
        chunk = sentences[start : start + CHUNK]
        pooled_path, sums_path = chunk_paths(cache, chunk)
        if pooled_path.exists():
            out.append(np.load(pooled_path))
            continue
        model = model or encoder(model_dir)
        pooled, sums, counts = encode_chunk(model, vocab_size, chunk)
        cache.mkdir(parents=True, exist_ok=True)
        if not sums_path.exists():
            seen = np.flatnonzero(counts)
            np.savez(sums_path, ids=seen, sums=sums[seen], counts=counts[seen])
        np.save(pooled_path, pooled)
        out.append(pooled)
        encoded += len(chunk)
        rate = encoded / max(time.monotonic() - started, 1e-9)
        print(
            f"  {start + len(chunk)} sentences ({encoded} encoded, {rate:.0f}/s)",
            file=sys.stderr,
            flush=True,
        )
    return np.concatenate(out) if out else np.zeros((0, WIDTH), dtype=np.float32)


def base_table(
    model_dir: Path, vocab: list[str], sentences: list[str], cache: Path, prior: float, dims: int
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """build_word_vectors.py's table before int8: (tokens, rows, mean, components), rows being
    the centred blend projected on the components (dims x 384)."""
    alone = token_vectors(model_dir, vocab, cache / "token-vectors.npy")
    sums, counts = context_sums(model_dir, len(vocab), sentences, cache)
    rows = [i for i, token in enumerate(vocab) if kept(token)]
    matrix = blend(alone, sums, counts, prior)[rows].astype(np.float64)
    mean = matrix.mean(0)
    _, _, components = np.linalg.svd(matrix - mean, full_matrices=False)
    components = components[1 : dims + 1]
    return [vocab[i] for i in rows], (matrix - mean) @ components.T, mean, components


def pooling_matrix(sentences: list[str], tokens: list[str], weighting: str, power: float = 1.0):  # type: ignore[no-untyped-def]
    """Sparse sentence x token matrix: row s holds the weights with which the ranker would pool
    sentence s's table tokens (agent/search/word_vectors.py `_pieces`), scaled to sum to 1."""
    from scipy import sparse

    from agent.search.text import STOP_WORDS, words
    from agent.search.word_vectors import MAX_TEXT_TOKENS, WordVectorTable

    index = {token: i for i, token in enumerate(tokens)}
    table = WordVectorTable(1, index, b"")
    split: dict[str, list[int]] = {}
    docs: list[list[int]] = []
    for sentence in sentences:
        found: list[int] = []
        for word in words(sentence):
            pieces = split.get(word)
            if pieces is None:
                skip = word in STOP_WORDS or len(word) < 2 or not any(c.isalpha() for c in word)
                pieces = split[word] = [] if skip else [index[p] for p in table.pieces(word)]
            found.extend(pieces)
        docs.append(found[:MAX_TEXT_TOKENS])
    frequency = np.zeros(len(tokens))
    for found in docs:
        frequency[list(set(found))] += 1
    count = len(docs)
    idf = np.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
    weight = np.ones(len(tokens)) if weighting == "uniform" else idf**power
    rows, cols, vals = [], [], []
    for s, found in enumerate(docs):
        if not found:
            continue
        ids, times = np.unique(found, return_counts=True)
        w = weight[ids] * times
        rows.extend([s] * len(ids))
        cols.extend(ids.tolist())
        vals.extend((w / w.sum()).tolist())
    return sparse.csr_matrix((vals, (rows, cols)), shape=(count, len(tokens)))


def ridge(a, targets: np.ndarray, prior: np.ndarray, lam: float, iterations: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    """argmin ||a W - targets||^2 + lam ||W - prior||^2 by conjugate gradients, one per column
    (all columns in one block, each with its own step)."""
    at = a.T.tocsr()

    def apply(x: np.ndarray) -> np.ndarray:
        return at @ (a @ x) + lam * x

    x = prior.copy()
    r = at @ targets + lam * prior - apply(x)
    p = r.copy()
    rr = (r * r).sum(0)
    start = float(np.sqrt(rr.sum()))
    step = 0
    for step in range(iterations):  # noqa: B007 (reported below)
        q = apply(p)
        alpha = rr / np.maximum((p * q).sum(0), 1e-30)
        x += p * alpha
        r -= q * alpha
        new = (r * r).sum(0)
        p = r + p * (new / np.maximum(rr, 1e-30))
        rr = new
        if math.sqrt(rr.sum()) < 1e-6 * start:
            break
    print(f"  cg {step + 1} steps, residual {math.sqrt(rr.sum()) / start:.2e}", file=sys.stderr)
    return x


def write_table(path: Path, tokens: list[str], rows: np.ndarray, header: dict) -> None:  # type: ignore[type-arg]
    scale = float(np.abs(rows).max()) / 127.0
    table = np.clip(np.round(rows / scale), -127, 127).astype(np.int8)
    line = json.dumps(
        {"dims": rows.shape[1], "scale": scale, **header, "tokens": tokens},
        separators=(",", ":"),
    )
    with path.open("wb") as handle:
        handle.write(MAGIC + b"\n" + line.encode("utf-8") + b"\n" + table.tobytes())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["encode", "fit"])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the package list (TSV)")
    parser.add_argument("--sentences", type=int, default=40000, help="summaries to fit on")
    parser.add_argument("--wordnet", type=int, default=0, help="WordNet synsets to add")
    parser.add_argument("--base-sentences", type=int, default=12000, help="W0's corpus")
    parser.add_argument("--prior", type=float, default=PRIOR, help="W0's alone-vector weight")
    parser.add_argument("--dims", type=int, default=192)
    parser.add_argument("--lam", type=float, default=0.03, help="pull toward W0")
    parser.add_argument("--weighting", choices=["idf", "uniform"], default="idf")
    parser.add_argument("--idf-power", type=float, default=1.0, help="weight = IDF ** this")
    parser.add_argument(
        "--raw-targets", action="store_true", help="keep the sentence vectors' own lengths"
    )
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/tabletalk-bench"))
    args = parser.parse_args(argv)
    vocab_ids = json.loads((args.model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = sorted(vocab_ids["model"]["vocab"], key=vocab_ids["model"]["vocab"].get)
    sentences = corpus_sentences(args.corpus, args.sentences)
    if args.wordnet:
        sentences += wordnet_sentences(WORDNET, args.wordnet)
    pooled = encode(args.model_dir, len(vocab), sentences, args.cache_dir)
    if args.step == "encode":
        print(f"{len(pooled)} sentences encoded")
        return 0
    base = corpus_sentences(args.corpus, args.base_sentences)
    tokens, rows0, mean, components = base_table(
        args.model_dir, vocab, base, args.cache_dir, args.prior, args.dims
    )
    a = pooling_matrix(sentences, tokens, args.weighting, args.idf_power)
    targets = (pooled.astype(np.float64) - mean) @ components.T
    # Only the direction of a pooled vector counts (the ranker compares cosines): each target
    # keeps its direction at the length W0's pooling gives that sentence.
    if not args.raw_targets:
        length = np.linalg.norm(a @ rows0, axis=1, keepdims=True)
        targets *= length / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    rows = ridge(a, targets, rows0, args.lam, args.iterations)

    def digest(texts: list[str]) -> str:
        return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()

    header = {
        "corpus": {"sentences": len(base), "sha256": digest(base)},
        "method": {
            "name": "ridge regression onto sentence vectors (bench/learn_word_vectors.py)",
            "sentences": len(sentences),
            "wordnet": args.wordnet,
            "sha256": digest(sentences),
            "lambda": args.lam,
            "weighting": args.weighting,
            "idf_power": args.idf_power,
            "targets": "raw" if args.raw_targets else "direction",
        },
    }
    write_table(args.out, tokens, rows, header)
    print(
        f"{len(tokens)} tokens x {args.dims} dims, fitted on {len(sentences)} sentences"
        f" -> {args.out} ({args.out.stat().st_size:,} bytes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
