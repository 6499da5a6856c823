"""Bedrock embedding models: the request formats we support, batching, pricing, throttling.

Titan Text Embeddings V2 takes one text per InvokeModel request; Cohere Embed v3 takes up to
96. Requests run on a small thread pool; a throttled request is retried with backoff beyond
botocore's own retries, so a long build survives a burst of ThrottlingException.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import botocore.exceptions

from agent.bedrock.client import make_client
from agent.bedrock.errors import translate
from agent.errors import TabletalkError

Purpose = Literal["document", "query"]

DEFAULT_MODEL = "amazon.titan-embed-text-v2:0"
CONCURRENCY = 4
THROTTLE_RETRIES = 6


@dataclass(frozen=True)
class ModelFormat:
    """How one family of embedding models is called and priced."""

    family: Literal["titan-v2", "cohere-v3"]
    batch: int
    dims: tuple[int, ...]
    default_dims: int
    usd_per_million_tokens: float


FORMATS: dict[str, ModelFormat] = {
    "amazon.titan-embed-text-v2": ModelFormat("titan-v2", 1, (1024, 512, 256), 1024, 0.02),
    "cohere.embed-english-v3": ModelFormat("cohere-v3", 96, (1024,), 1024, 0.10),
    "cohere.embed-multilingual-v3": ModelFormat("cohere-v3", 96, (1024,), 1024, 0.10),
}


def model_format(model_id: str) -> ModelFormat:
    """The request format of `model_id` (a regional prefix like `us.` and a `:0` suffix are
    allowed); a clear error naming the supported models otherwise."""
    base = model_id.strip().split(":")[0]
    for prefix, fmt in FORMATS.items():
        if base == prefix or base.endswith("." + prefix):
            return fmt
    raise TabletalkError(
        f"embedding model '{model_id}' is not supported (unknown request format)",
        fix=f"use --model with one of: {', '.join(f'{m}:0' for m in FORMATS)}",
    )


def check_dims(fmt: ModelFormat, dims: int | None) -> int:
    """The vector size to build with: `dims` when the model offers it, else its default."""
    if dims is None:
        return fmt.default_dims
    if dims not in fmt.dims:
        raise TabletalkError(
            f"this embedding model makes vectors of {', '.join(map(str, fmt.dims))} dimensions, "
            f"not {dims}",
            fix=f"use --dims {fmt.default_dims} (or leave it out)",
        )
    return dims


def estimate_tokens(texts: Sequence[str]) -> int:
    """A rough token count (about four characters a token) for the cost estimate."""
    return sum(max(1, math.ceil(len(t) / 4)) for t in texts)


def estimate_cost(fmt: ModelFormat, tokens: int) -> float:
    """Approximate price in US dollars of embedding `tokens` tokens."""
    return tokens * fmt.usd_per_million_tokens / 1_000_000


def _is_throttle(exc: BaseException) -> bool:
    if isinstance(exc, botocore.exceptions.ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        return code in {"ThrottlingException", "TooManyRequestsException"}
    return False


class Embedder:
    """Turns texts into vectors with one Bedrock embedding model."""

    def __init__(
        self,
        model_id: str,
        dims: int | None = None,
        *,
        profile: str | None = None,
        region: str | None = None,
        client: Any = None,
        backoff: Callable[[int], float] | None = None,
    ) -> None:
        self.model_id = model_id
        self.format = model_format(model_id)
        self.dims = check_dims(self.format, dims)
        self._profile = profile
        self._region = region
        self._client = client or make_client(profile, region, read_timeout=120)
        self._backoff = backoff or (lambda attempt: min(20.0, 0.5 * 2**attempt) * random.random())

    def embed(
        self,
        texts: Sequence[str],
        purpose: Purpose = "document",
        on_done: Callable[[int], None] | None = None,
    ) -> list[list[float]]:
        """One vector per text, in order; `on_done(n)` after each finished batch of n texts."""
        batches = list(_chunks(list(texts), self.format.batch))
        out: list[list[list[float]]] = [[] for _ in batches]

        def work(index: int) -> None:
            out[index] = self._call(batches[index], purpose)
            if on_done is not None:
                on_done(len(batches[index]))

        if len(batches) <= 1:
            for index in range(len(batches)):
                work(index)
        else:
            with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
                for future in [pool.submit(work, i) for i in range(len(batches))]:
                    future.result()
        return [vector for batch in out for vector in batch]

    def _call(self, texts: list[str], purpose: Purpose) -> list[list[float]]:
        body = self._body(texts, purpose)
        for attempt in range(THROTTLE_RETRIES + 1):
            try:
                response = self._client.invoke_model(
                    modelId=self.model_id,
                    body=json.dumps(body),
                    contentType="application/json",
                    accept="application/json",
                )
                return self._vectors(json.loads(response["body"].read()), len(texts))
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
                if attempt < THROTTLE_RETRIES and _is_throttle(exc):
                    time.sleep(self._backoff(attempt))
                    continue
                raise translate(
                    exc, profile=self._profile, model_id=self.model_id, region=self._region
                ) from exc
        raise AssertionError("unreachable")

    def _body(self, texts: list[str], purpose: Purpose) -> dict[str, Any]:
        if self.format.family == "titan-v2":
            return {"inputText": texts[0], "dimensions": self.dims, "normalize": True}
        kind = "search_query" if purpose == "query" else "search_document"
        return {"texts": texts, "input_type": kind, "truncate": "END"}

    def _vectors(self, payload: dict[str, Any], expected: int) -> list[list[float]]:
        if self.format.family == "titan-v2":
            vectors = [payload.get("embedding")]
        else:
            vectors = payload.get("embeddings") or []
        if len(vectors) != expected or any(
            not isinstance(v, list) or len(v) != self.dims for v in vectors
        ):
            raise TabletalkError(
                f"{self.model_id} answered with no usable embedding of {self.dims} dimensions",
                fix="check the model id (--model) and --dims",
            )
        return [[float(x) for x in v] for v in vectors if isinstance(v, list)]


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
