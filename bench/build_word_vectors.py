"""Build agent/search/wordvectors.bin: a static vector per WordPiece token of all-MiniLM-L6-v2.

Model2Vec-style distillation (Apache-2.0 weights; the table is derived from them): every
token of the model's vocabulary that `agent.search.text.words` can produce (ASCII letters and
digits, whole words and ## continuations) is run through the model alone ([CLS] token [SEP],
mean-pooled, unit length; bench/minilm.py), the vectors are centred and projected on their
principal components 2..DIMS+1 (the first is the direction every token shares), and stored as
int8 with one global scale. The ranker averages a text's token vectors with IDF weights at
run time (agent/search/word_vectors.py); no model is needed then.

With --corpus (one short English text per line; for a tab-separated file, the last column), the
token vectors are then fitted Tokenlearn-style: SENTENCES texts are encoded by the model, and
the vectors move (Adam on cosine loss, pulled back towards where they started) so that each
text's IDF-weighted sum of token vectors points where the model's sentence vector does. Texts
are picked deterministically: ASCII, 5-30 words, distinct, shuffled with a fixed seed.

    .venv/bin/python bench/build_word_vectors.py MODEL_DIR [--dims 64] [--out FILE]
        [--raw-cache /tmp/tabletalk-bench/token-vectors.npy]
        [--corpus FILE [--sentences 20000] [--corpus-cache FILE.npz] [--epochs 3]]

File layout: the line `tabletalk-word-vectors 1`, one JSON line {"dims", "scale",
"tokens": [...]}, then len(tokens) × dims signed bytes, row i for tokens[i].
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from minilm import MiniLM  # noqa: E402

from agent.search.text import STOP_WORDS, words  # noqa: E402
from agent.search.word_vectors import MAGIC, WordVectorTable  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "agent" / "search" / "wordvectors.bin"
BATCH = 512
RATE = 0.01  # Adam step size while fitting to the corpus
BOILERPLATE = ("short description", "my first", "test package", "placeholder")
PULL = 1e-4  # how strongly fitted vectors are pulled back to the model's own token vectors


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


def corpus_texts(path: Path, count: int) -> list[str]:
    """Up to `count` distinct ASCII texts of 5-30 words, in a seeded random order, without
    boilerplate ("my short description", "test package", ...)."""
    texts = set()
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            text = line.rstrip("\n").split("\t")[-1].strip()
            if not text.isascii() or not 5 <= len(text.split()) <= 30:
                continue
            if not any(phrase in text.lower() for phrase in BOILERPLATE):
                texts.add(text)
    ordered = sorted(texts)
    random.Random(15).shuffle(ordered)
    return ordered[:count]


def encoded_corpus(args: argparse.Namespace) -> tuple[list[str], np.ndarray]:
    """The corpus texts and their sentence vectors (kept in --corpus-cache between runs)."""
    cache: Path | None = args.corpus_cache
    if cache and cache.exists():
        with np.load(cache) as stored:
            return [str(text) for text in stored["texts"]], stored["vectors"]
    texts = corpus_texts(args.corpus, args.sentences)
    vectors = MiniLM(args.model_dir).encode(texts)
    if cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, texts=np.array(texts), vectors=vectors)
    return texts, vectors


def fit(
    start: np.ndarray, vocab: list[str], texts: list[str], targets: np.ndarray, epochs: int
) -> np.ndarray:
    """Token vectors whose IDF-weighted sums over each text approach its target vector."""
    index = {token: i for i, token in enumerate(vocab)}
    splitter = WordVectorTable(1, {token: i for i, token in enumerate(vocab) if kept(token)}, b"")
    sequences = []
    for text in texts:
        pieces = []
        for word in words(text):
            if word not in STOP_WORDS and len(word) >= 2 and any(c.isalpha() for c in word):
                pieces.extend(index[piece] for piece in splitter.pieces(word))
        sequences.append(pieces)
    frequency = np.zeros(len(vocab))
    for sequence in sequences:
        frequency[list(set(sequence))] += 1
    idf = np.log(1 + (len(texts) - frequency + 0.5) / (frequency + 0.5)).astype(np.float32)
    table = start.astype(np.float32)
    moment, square = np.zeros_like(table), np.zeros_like(table)
    rng = np.random.default_rng(0)
    usable = np.array([i for i, sequence in enumerate(sequences) if sequence])
    step = 0
    for _ in range(epochs):
        for begin in range(0, len(usable), 256):
            ids = usable[begin : begin + 256]
            owners = np.array([b for b, i in enumerate(ids) for _ in sequences[i]])
            tokens = np.array([t for i in ids for t in sequences[i]])
            weights = idf[tokens][:, None]
            sums = np.zeros((len(ids), table.shape[1]), dtype=np.float32)
            np.add.at(sums, owners, weights * table[tokens])
            norms = np.linalg.norm(sums, axis=1, keepdims=True) + 1e-9
            wanted = targets[ids]
            cosines = (sums * wanted).sum(1, keepdims=True)
            grad_sums = -(wanted / norms - cosines * sums / norms**3) / len(ids)
            rows = np.unique(tokens)
            grad = np.zeros((len(vocab), table.shape[1]), dtype=np.float32)
            np.add.at(grad, tokens, weights * grad_sums[owners])
            grad[rows] += PULL * (table[rows] - start[rows])
            step += 1
            moment[rows] = 0.9 * moment[rows] + 0.1 * grad[rows]
            square[rows] = 0.999 * square[rows] + 0.001 * grad[rows] ** 2
            table[rows] -= (
                RATE
                * (moment[rows] / (1 - 0.9**step))
                / (np.sqrt(square[rows] / (1 - 0.999**step)) + 1e-8)
            )
        usable = rng.permutation(usable)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--raw-cache", type=Path, help="keep the model's token vectors here")
    parser.add_argument("--corpus", type=Path, help="texts to fit the token vectors to")
    parser.add_argument("--sentences", type=int, default=20000)
    parser.add_argument("--corpus-cache", type=Path, help="keep the corpus's vectors here")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)
    vocab_ids = json.loads((args.model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = sorted(vocab_ids["model"]["vocab"], key=vocab_ids["model"]["vocab"].get)
    raw = token_vectors(args.model_dir, vocab, args.raw_cache)
    if args.corpus:
        texts, targets = encoded_corpus(args)
        raw = fit(raw, vocab, texts, targets, args.epochs)
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
