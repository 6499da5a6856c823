"""bench/minilm.py's forward pass on PyTorch's CPU kernels, for building the word-vector table.

The same weights and arithmetic as `MiniLM.hidden` (its outputs match to ~1e-5), several
times faster on the table's corpus. Bench-only: `pip install torch` (CPU); nothing at run
time imports it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from minilm import MiniLM


class TorchMiniLM:
    """The final layer's output for every token, computed with torch (float32, CPU)."""

    def __init__(self, model_dir: Path) -> None:
        base = MiniLM(model_dir)
        self.tokenizer = base.tokenizer
        self.layers = base.layers
        self.w = {name: torch.from_numpy(value) for name, value in base.w.items()}

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return torch.nn.functional.layer_norm(
            x, (x.shape[-1],), self.w[f"{name}.weight"], self.w[f"{name}.bias"], eps=1e-12
        )

    @torch.inference_mode()
    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The final layer's output for every token (batch × length × 384), as numpy."""
        w = self.w
        batch, length = ids.shape
        tokens = torch.from_numpy(ids)
        x = (
            w["embeddings.word_embeddings.weight"][tokens]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        heads, width = 12, x.shape[-1] // 12
        blocked = ((1.0 - torch.from_numpy(mask)) * -1e9)[:, None, None, :]
        for n in range(self.layers):
            p = f"encoder.layer.{n}"

            def split(t: torch.Tensor) -> torch.Tensor:
                return t.reshape(batch, length, heads, width).transpose(1, 2)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            scores = torch.softmax(q @ k.transpose(-1, -2) / width**0.5 + blocked, dim=-1)
            context = (scores @ v).transpose(1, 2).reshape(batch, length, -1)
            x = self._norm(
                x + self._linear(context, f"{p}.attention.output.dense"),
                f"{p}.attention.output.LayerNorm",
            )
            hidden = torch.nn.functional.gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = self._norm(x + self._linear(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        return x.numpy()
