"""Deterministic embeddings for the scripted endpoint: a hashed bag of words, normalised.

Texts that share words get near vectors (cosine), so ranking is predictable in tests.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

_WORD = re.compile(r"[a-z0-9]+")


def bag_of_words(text: str, dims: int) -> list[float]:
    """A unit vector with one hashed bucket (and sign) per word of `text`."""
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dims
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


def invoke_answer(model_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The InvokeModel answer of a supported embedding model; None for any other model."""
    if "titan-embed-text-v2" in model_id:
        text = str(body.get("inputText", ""))
        dims = int(body.get("dimensions", 1024))
        return {"embedding": bag_of_words(text, dims), "inputTextTokenCount": len(text.split())}
    if "cohere.embed" in model_id:
        texts = [str(t) for t in body.get("texts", [])]
        if not texts or len(texts) > 96:
            return None
        return {"embeddings": [bag_of_words(t, 1024) for t in texts], "texts": texts}
    return None
