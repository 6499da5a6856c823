"""Build agent/search/wordvectors.bin: a static vector per WordPiece token of all-MiniLM-L6-v2.

Distilled from the model (Apache-2.0 weights; the table is derived from them) in two parts:

- In context: a corpus of short English software descriptions (the one-line summaries of the
  PyPI package list, `--corpus`, first `--sentences` of them in a fixed shuffle) runs through
  the model, and each token's final-layer output is averaged over every place it occurs. The
  model's sentence vector is the mean of those outputs, so a text's sum of these averages is
  what the model would give it with the context averaged out (Bommasani et al. 2020 found
  such pooled contextual vectors far better than a token read alone).
- Alone (Model2Vec-style): every token runs through the model by itself ([CLS] token [SEP],
  mean-pooled, bench/minilm.py). A token's vector is its corpus average pulled toward this
  one (scaled to the corpus averages' mean length) as if it had been seen `PRIOR` more
  times, so a token the corpus never holds still has one.

Only tokens that `agent.search.text.words` can produce are kept (ASCII letters and digits,
whole words and ## continuations); the vectors are centred and projected on their principal
components 2..DIMS+1 (the first is the direction every token shares), and stored as int8 with
one global scale. The ranker sums a text's token vectors with IDF weights at run time
(agent/search/word_vectors.py); no model is needed then.

The corpus runs through PyTorch's CPU kernels when torch is installed (bench/minilm_torch.py,
one thread: ~200-240 sentences/s on this machine, outputs equal to the numpy pass to ~1e-5),
else through bench/minilm.py in numpy (~25/s). With `--cache-dir`, each chunk of CHUNK
sentences keeps its sums there, so a build that reads the corpus further encodes only the
chunks it adds.

    .venv/bin/python bench/build_word_vectors.py MODEL_DIR [--dims 192] [--out FILE]
        [--corpus /work/.library/env/packages/pypi.tsv] [--sentences 12000] [--prior 5]
        [--cache-dir /tmp/tabletalk-bench]

File layout: the line `tabletalk-word-vectors 1`, one JSON line {"dims", "scale", "corpus":
{"sentences", "sha256"}, "tokens": [...]}, then len(tokens) × dims signed bytes, row i for
tokens[i]. The corpus digest (SHA-256 of the sentences joined by newlines) says which corpus
a rebuild must read to give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from minilm import MiniLM  # noqa: E402

from agent.search.word_vectors import MAGIC  # noqa: E402

if TYPE_CHECKING:
    from minilm_torch import TorchMiniLM

OUT = Path(__file__).resolve().parents[1] / "agent" / "search" / "wordvectors.bin"
CORPUS = Path("/work/.library/env/packages/pypi.tsv")
BATCH = 512  # tokens per forward pass, alone
CHUNK = 2000  # corpus sentences per pass (sorted by length within it), in context
CONTEXT_BATCH = 32
PRIOR = 5.0  # how many corpus occurrences the token-alone vector counts for
SHUFFLE_SEED = 15
WIDTH = 384


def kept(token: str) -> bool:
    """A token that lower-case ASCII words can be split into."""
    body = token[2:] if token.startswith("##") else token
    return bool(body) and body.isascii() and body.isalnum() and body == body.lower()


def token_vectors(model_dir: Path, vocab: list[str], cache: Path | None) -> np.ndarray:
    """Each vocabulary token embedded alone by the model (rows in vocabulary id order)."""
    if cache and cache.exists():
        return np.load(cache)
    model = MiniLM(model_dir)
    out = np.zeros((len(vocab), WIDTH), dtype=np.float32)
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


def corpus_sentences(path: Path, count: int) -> list[str]:
    """The first `count` summaries of the package list (tab-separated, summary in the fifth
    column) in a fixed shuffle: ASCII, 5 to 30 words, no template text, no duplicates."""
    found: set[str] = set()
    with path.open(encoding="utf-8", errors="replace") as handle:
        next(handle)
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            summary = parts[4].strip()
            lower = summary.lower()
            if not summary.isascii() or not 5 <= len(summary.split()) <= 30:
                continue
            if any(
                junk in lower
                for junk in ("short description", "my first", "test package", "placeholder")
            ):
                continue
            found.add(summary)
    sentences = sorted(found)
    random.Random(SHUFFLE_SEED).shuffle(sentences)
    return sentences[:count]


def encoder(model_dir: Path) -> MiniLM | TorchMiniLM:
    """The model's forward pass on torch's CPU kernels when torch is installed (several times
    faster; outputs equal to ~1e-5, one thread so a build is repeatable), else in numpy."""
    try:
        import torch
    except ImportError:
        return MiniLM(model_dir)
    from minilm_torch import TorchMiniLM

    torch.set_num_threads(1)
    return TorchMiniLM(model_dir)


def chunk_sums(
    model: MiniLM | TorchMiniLM, vocab_size: int, chunk: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Per vocabulary id: the sum of the model's final-layer outputs wherever the token occurs
    in `chunk` (special tokens included), and how many times it occurs."""
    sums = np.zeros((vocab_size, WIDTH))
    counts = np.zeros(vocab_size)
    order = sorted(range(len(chunk)), key=lambda i: len(chunk[i]))
    for first in range(0, len(order), CONTEXT_BATCH):
        encodings = model.tokenizer.encode_batch(
            [chunk[i] for i in order[first : first + CONTEXT_BATCH]]
        )
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        real = mask.astype(bool)
        np.add.at(sums, ids[real], model.hidden(ids, mask)[real])
        np.add.at(counts, ids[real], 1)
    return sums, counts


def context_sums(
    model_dir: Path, vocab_size: int, sentences: list[str], cache: Path | None
) -> tuple[np.ndarray, np.ndarray]:
    """`chunk_sums` over every sentence, CHUNK sentences at a time; with `cache`, each chunk's
    sums are kept there by the chunk's digest, so a larger corpus (the same fixed shuffle, read
    further) encodes only the sentences it adds."""
    sums = np.zeros((vocab_size, WIDTH))
    counts = np.zeros(vocab_size)
    model: MiniLM | TorchMiniLM | None = None
    started = time.monotonic()
    encoded = 0
    for start in range(0, len(sentences), CHUNK):
        chunk = sentences[start : start + CHUNK]
        digest = hashlib.sha256("\n".join(chunk).encode("utf-8")).hexdigest()[:16]
        path = cache / f"chunk-{len(chunk)}-{digest}.npz" if cache else None
        if path and path.exists():
            with np.load(path) as stored:
                seen = stored["ids"]
                sums[seen] += stored["sums"]
                counts[seen] += stored["counts"]
        else:
            model = model or encoder(model_dir)
            part_sums, part_counts = chunk_sums(model, vocab_size, chunk)
            encoded += len(chunk)
            sums += part_sums
            counts += part_counts
            if path:  # only the tokens the chunk holds (a few thousand of 30,522)
                seen = np.flatnonzero(part_counts)
                path.parent.mkdir(parents=True, exist_ok=True)
                np.savez(path, ids=seen, sums=part_sums[seen], counts=part_counts[seen])
        rate = encoded / max(time.monotonic() - started, 1e-9)
        print(
            f"  {start + len(chunk)} sentences ({encoded} encoded, {rate:.0f}/s)",
            file=sys.stderr,
            flush=True,
        )
    return sums, counts


def blend(
    alone: np.ndarray, sums: np.ndarray, counts: np.ndarray, prior: float = PRIOR
) -> np.ndarray:
    """Each token's corpus average pulled toward its alone vector (see the module docstring)."""
    seen = counts > 0
    if not seen.any():
        return alone.astype(np.float64)
    length = float(np.linalg.norm(sums[seen] / counts[seen, None], axis=1).mean())
    return (sums + prior * length * alone) / (counts[:, None] + prior)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--dims", type=int, default=192)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the package list (TSV)")
    parser.add_argument("--sentences", type=int, default=12000, help="0: tokens alone only")
    parser.add_argument("--prior", type=float, default=PRIOR, help="the alone vector's weight")
    parser.add_argument(
        "--cache-dir", type=Path, help="keep the model's outputs here between builds"
    )
    args = parser.parse_args(argv)
    vocab_ids = json.loads((args.model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = sorted(vocab_ids["model"]["vocab"], key=vocab_ids["model"]["vocab"].get)
    cache = args.cache_dir
    alone = token_vectors(args.model_dir, vocab, cache / "token-vectors.npy" if cache else None)
    sentences = corpus_sentences(args.corpus, args.sentences) if args.sentences else []
    digest = hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()
    sums, counts = context_sums(args.model_dir, len(vocab), sentences, cache)
    rows = [i for i, token in enumerate(vocab) if kept(token)]
    tokens = [vocab[i] for i in rows]
    matrix = blend(alone, sums, counts, args.prior)[rows].astype(np.float64)
    centred = matrix - matrix.mean(0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    projected = centred @ components[1 : args.dims + 1].T
    scale = float(np.abs(projected).max()) / 127.0
    table = np.clip(np.round(projected / scale), -127, 127).astype(np.int8)
    header = json.dumps(
        {
            "dims": args.dims,
            "scale": scale,
            "corpus": {"sentences": len(sentences), "sha256": digest},
            "tokens": tokens,
        },
        separators=(",", ":"),
    )
    with args.out.open("wb") as handle:
        handle.write(MAGIC + b"\n" + header.encode("utf-8") + b"\n" + table.tobytes())
    print(
        f"{len(tokens)} tokens × {args.dims} dims, {len(sentences)} corpus sentences"
        f" → {args.out} ({args.out.stat().st_size:,} bytes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
