"""ModelCaller: what the turn loop needs of a model (the Bedrock caller is one; tests replay).

One call is one step: given the system prompt, the history and the active set's toolSpecs it
yields `TextChunk`s, `ToolUseBlock`s and finally a `StepEnd`; it raises `StepCancelled` when
`cancel` is set and a `TabletalkError` (with its fix) when the model cannot be reached.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol

from agent.bedrock.stream import ModelEvent


class ModelCaller(Protocol):
    """One model step at a time."""

    def step(
        self,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        inline_count: int = 0,
        cancel: threading.Event | None = None,
    ) -> Iterator[ModelEvent]: ...
