"""Prompt-cache points placed where each model family accepts them, and which models refused them.

Claude: after the system prompt and after the inline tools (the stable prefix of toolConfig).
Nova: after the system prompt and at the end of the last user message, never in toolConfig.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent.json_state import read_json, write_json

CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}


def _cache_point() -> dict[str, Any]:
    return {"cachePoint": dict(CACHE_POINT["cachePoint"])}


def has_cache_points(request: dict[str, Any]) -> bool:
    """True when the request holds any cachePoint block (system, tools or messages)."""
    blocks = [
        *(request.get("system") or []),
        *((request.get("toolConfig") or {}).get("tools") or []),
        *(block for message in request.get("messages") or [] for block in message["content"]),
    ]
    return any(isinstance(block, dict) and "cachePoint" in block for block in blocks)


def place_cache_points(
    request: dict[str, Any], family: str, *, inline_count: int = 0, disabled: bool = False
) -> dict[str, Any]:
    """A copy of the request with cache points for the family ("claude", "nova"; others get none).

    The input request is not modified; only the lists that gain a cache point are copied.
    """
    placed = dict(request)
    if disabled or family not in ("claude", "nova"):
        return placed
    if placed.get("system"):
        placed["system"] = [*placed["system"], _cache_point()]
    if family == "claude":
        tool_config = placed.get("toolConfig")
        tools = (tool_config or {}).get("tools") or []
        if tools and inline_count > 0:
            cut = min(inline_count, len(tools))
            placed["toolConfig"] = {
                **tool_config,  # type: ignore[dict-item]
                "tools": [*tools[:cut], _cache_point(), *tools[cut:]],
            }
    elif placed.get("messages"):
        placed["messages"] = with_message_cache_point(placed["messages"])
    return placed


def with_message_cache_point(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the messages with a cache point ending the last user message (Nova)."""
    copied = list(messages)
    for index in range(len(copied) - 1, -1, -1):
        if copied[index].get("role") == "user":
            message = copied[index]
            copied[index] = {**message, "content": [*message["content"], _cache_point()]}
            break
    return copied


class CachePointMemory:
    """Model ids whose requests were rejected because of a cache point; thread-safe.

    With a `path`, the set is read from and saved to that JSON file, so it survives restarts.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._rejected: set[str] = self._load()

    def _load(self) -> set[str]:
        if self._path is None:
            return set()
        data = read_json(self._path)  # None when missing or damaged: nothing refused yet
        rejected = data.get("rejected") if isinstance(data, dict) else None
        return (
            {model for model in rejected if isinstance(model, str)}
            if isinstance(rejected, list)
            else set()
        )

    def is_rejected(self, model_id: str) -> bool:
        """True when Bedrock refused a cache point for this model before."""
        with self._lock:
            return model_id in self._rejected

    def reject(self, model_id: str) -> None:
        """Remember that this model refuses cache points (and save, if persisted)."""
        with self._lock:
            if model_id in self._rejected:
                return
            self._rejected.add(model_id)
            if self._path is not None:
                self._save()

    def _save(self) -> None:
        assert self._path is not None
        # Best effort: when it can't be written, memory still holds it for this run.
        write_json(self._path, {"rejected": sorted(self._rejected)})
