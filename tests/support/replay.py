"""ReplayCaller: a ModelCaller that answers each step from a script, without HTTP.

For fast loop tests and benchmarks; tests that exercise boto3 and the wire format use the
scripted Converse endpoint (`scripted_bedrock.py`) instead.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.bedrock.stream import ModelEvent, StepEnd, TextChunk, ToolUseBlock
from agent.events import Usage


@dataclass(frozen=True)
class Step:
    """One scripted model answer: some text and/or tool calls (name, input)."""

    text: str = ""
    tool_uses: Sequence[tuple[str, dict[str, Any]]] = ()


@dataclass
class ReplayCaller:
    """Answers step N with `steps[N]`; records the tool names each request offered."""

    steps: list[Step]
    offered: list[list[str]] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def step(
        self,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        inline_count: int = 0,
        cancel: threading.Event | None = None,
    ) -> Iterator[ModelEvent]:
        self.offered.append([tool["toolSpec"]["name"] for tool in tools])
        step = self.steps.pop(0) if self.steps else Step(text="(no scripted step left)")
        content: list[dict[str, Any]] = []
        if step.text:
            yield TextChunk(step.text)
            content.append({"text": step.text})
        for name, tool_input in step.tool_uses:
            tool_use_id = f"replay_{next(self._ids)}"
            yield ToolUseBlock(tool_use_id, name, tool_input, "", None)
            content.append(
                {"toolUse": {"toolUseId": tool_use_id, "name": name, "input": tool_input}}
            )
        reason = "tool_use" if step.tool_uses else "end_turn"
        yield StepEnd(reason, Usage(10, 5), {"role": "assistant", "content": content})


def repeating(steps: int, tool: str = "listTables") -> ReplayCaller:
    """`steps - 1` steps that each call `tool`, then a final answer (the loop benchmark)."""
    return ReplayCaller([Step(tool_uses=[(tool, {})]) for _ in range(steps - 1)] + [Step("done")])
