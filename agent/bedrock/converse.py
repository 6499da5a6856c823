"""One model step: build the Converse request, place cache points, run it, translate failures.

Before any event is yielded, some failures are retried once: a rejected cache point (then
remembered per model), a model that cannot stream tool use (switch to Converse), and a
transient error inside the stream (announced by a `Retrying` event, as botocore's own retries
of HTTP-level throttling are: `retries.py`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import botocore.exceptions

from agent.bedrock.caching import (
    CachePointMemory,
    has_cache_points,
    place_cache_points,
    with_message_cache_point,
)
from agent.bedrock.client import model_family
from agent.bedrock.errors import error_code, error_message, is_cache_point_rejection, translate
from agent.bedrock.request_check import RequestCheck
from agent.bedrock.stream import ModelEvent, StepCancelled, converse_events
from agent.events import Retrying

DEFAULT_MAX_TOKENS = 4096
_RETRYABLE_IN_STREAM = {
    "ThrottlingException",
    "ModelStreamErrorException",
    "InternalServerException",
    "ServiceUnavailableException",
}


def is_retryable_stream_error(exc: BaseException) -> bool:
    """True for a transient error Bedrock sent inside a stream (botocore retries only HTTP errors)."""
    return (
        isinstance(exc, botocore.exceptions.EventStreamError)
        and error_code(exc) in _RETRYABLE_IN_STREAM
    )


def is_streaming_tool_rejection(exc: BaseException) -> bool:
    """True when Bedrock says the model cannot use tools while streaming."""
    message = error_message(exc).lower()
    return error_code(exc) == "ValidationException" and "stream" in message and "tool" in message


def tool_entries(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """toolConfig.tools entries: `{"toolSpec": ...}` dicts pass as they are, bare specs get wrapped."""
    return [tool if "toolSpec" in tool else {"toolSpec": tool} for tool in tools]


class BedrockCaller:
    """Calls one model for one step at a time; keeps the streaming choice and cache-point memory."""

    stream_retry_delay = 1.0  # seconds before retrying a transient in-stream error (once)

    def __init__(
        self,
        client: Any,
        model_id: str,
        *,
        streaming: bool = True,
        memory: CachePointMemory | None = None,
        notice: Callable[[str], None] | None = None,
        profile: str | None = None,
        region: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        cache_points: bool = True,
    ) -> None:
        self.client = client
        self.model_id = model_id
        self.family = model_family(model_id)
        self.streaming = streaming
        self.memory = memory if memory is not None else CachePointMemory()
        self.notice = notice
        self.profile = profile
        self.region = region or getattr(getattr(client, "meta", None), "region_name", None)
        self.max_tokens = max_tokens
        self.cache_points = cache_points
        self._fixed: tuple[tuple[Any, ...], tuple[Any, ...], dict[str, Any]] | None = None
        self._check = RequestCheck.for_client(client)

    def build_request(
        self,
        system: list[dict[str, Any]] | str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """The Converse request without cache points."""
        request: dict[str, Any] = {"modelId": self.model_id, "messages": messages}
        system_blocks = [{"text": system}] if isinstance(system, str) else list(system)
        if system_blocks:
            request["system"] = system_blocks
        if tools:
            request["toolConfig"] = {"tools": tool_entries(tools), "toolChoice": {"auto": {}}}
        inference: dict[str, Any] = {"maxTokens": self.max_tokens}
        if self.family == "nova":
            inference["temperature"] = 0
        request["inferenceConfig"] = inference
        return request

    def _fixed_part(
        self,
        system: list[dict[str, Any]] | str,
        tools: list[dict[str, Any]],
        inline_count: int,
        use_cache: bool,
    ) -> dict[str, Any]:
        """The request without its messages, cache points placed: built again only when the
        system blocks or the tool list are other objects (the loop keeps them while the
        active set does not change) or the cache-point choice changes."""
        key = (id(system), id(tools), inline_count, use_cache, self.streaming)
        cached = self._fixed
        if cached is not None and cached[0] == key:
            return cached[2]
        request = self.build_request(system, [], tools)
        del request["messages"]
        placed = place_cache_points(
            request, self.family, inline_count=inline_count, disabled=not use_cache
        )
        self._fixed = (key, (system, tools), placed)  # the sources kept: their ids stay theirs
        return placed

    def step(
        self,
        system: list[dict[str, Any]] | str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        inline_count: int = 0,
        cancel: threading.Event | None = None,
    ) -> Iterator[ModelEvent]:
        """Run one model call and yield its ModelEvents (StepEnd last).

        Raises StepCancelled when `cancel` is set, or a BedrockCallError (see errors.translate).
        """
        use_cache = self.cache_points and not self.memory.is_rejected(self.model_id)
        stream_retried = False
        for _attempt in range(4):
            fixed = self._fixed_part(system, tools, inline_count, use_cache)
            if self._check is not None:
                try:
                    self._check.check({**fixed, "messages": messages})
                except botocore.exceptions.ParamValidationError as exc:
                    raise self._translate(exc) from exc
            nova_point = use_cache and self.family == "nova"
            sent = {
                **fixed,
                "messages": with_message_cache_point(messages) if nova_point else messages,
            }
            yielded = False
            try:
                for event in converse_events(
                    self.client, sent, stream=self.streaming, cancel=cancel
                ):
                    yielded = yielded or not isinstance(event, Retrying)
                    yield event
                return
            except StepCancelled:
                raise
            except Exception as exc:
                if yielded:
                    raise self._translate(exc) from exc
                if use_cache and has_cache_points(sent) and is_cache_point_rejection(exc):
                    use_cache = False
                    self.memory.reject(self.model_id)
                    self._tell(
                        f"Bedrock refused a prompt-cache point for {self.model_id}; "
                        "continuing without prompt caching for this model."
                    )
                    continue
                if not stream_retried and is_retryable_stream_error(exc):
                    stream_retried = True  # botocore does not retry errors inside a stream
                    yield Retrying(error_code(exc), 2, 2)
                    if cancel is not None and cancel.wait(self.stream_retry_delay):
                        raise StepCancelled() from None
                    if cancel is None:
                        time.sleep(self.stream_retry_delay)
                    continue
                if self.streaming and is_streaming_tool_rejection(exc):
                    self.streaming = False
                    self._tell(
                        f"{self.model_id} cannot use tools while streaming; "
                        "answers will appear when complete."
                    )
                    continue
                raise self._translate(exc) from exc

    def _translate(self, exc: BaseException) -> Exception:
        return translate(exc, profile=self.profile, model_id=self.model_id, region=self.region)

    def _tell(self, message: str) -> None:
        if self.notice is not None:
            self.notice(message)
