"""One event consumer for Converse and ConverseStream: both become the same ModelEvent sequence.

Streaming yields TextChunk pieces as they arrive, ToolInputProgress while a tool call is being
written, and a ToolUseBlock at each tool block's stop (its JSON fragments buffered per
contentBlockIndex); both APIs end with a StepEnd carrying the
assembled assistant message. Botocore errors are raised as they are (see errors.translate).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import urllib3.exceptions

from agent.bedrock.errors import BedrockCallError
from agent.bedrock.retries import reporting
from agent.events import Retrying, Usage
from agent.stop import StopSignal, stop_signal


@dataclass(frozen=True)
class TextChunk:
    """A piece of answer text."""

    text: str


@dataclass(frozen=True)
class ToolInputProgress:
    """The model is writing a tool call: at its start (`characters` 0), then about every
    PROGRESS_EVERY characters of its input (a big bulkEdit can stream for many seconds)."""

    name: str
    characters: int


PROGRESS_EVERY = 2048
"""Input characters between two ToolInputProgress events of one call."""


@dataclass(frozen=True)
class ToolUseBlock:
    """A complete tool call; `input` is None (and `error` says why) when its JSON is unusable."""

    tool_use_id: str
    name: str
    input: dict[str, Any] | None
    raw: str
    error: str | None = None


@dataclass(frozen=True)
class StepEnd:
    """The step's end: stop reason as Bedrock sent it, usage, and the assistant message for history.

    `message` holds one text block (omitted when blank) then the toolUse blocks; a toolUse whose
    input was unusable carries `{}`; an empty answer becomes the text "(no answer)", since
    Bedrock rejects a history holding an empty assistant message.
    """

    stop_reason: str
    usage: Usage
    message: dict[str, Any]


NO_ANSWER = "(no answer)"

ModelEvent = TextChunk | ToolInputProgress | ToolUseBlock | StepEnd | Retrying
"""What a step yields; `Retrying` while botocore (or the caller) is about to send a refused
request again, before any of the answer."""


class StepCancelled(Exception):
    """The cancel event was set while the model was answering; the stream has been closed.

    `partial_text` is the answer text received before the Stop (the loop keeps it);
    `tool_characters` about how much tool-call input had streamed (billed too, not kept).
    """

    def __init__(self, partial_text: str = "", tool_characters: int = 0) -> None:
        super().__init__(partial_text)
        self.partial_text = partial_text
        self.tool_characters = tool_characters


def usage_from(raw: dict[str, Any] | None) -> Usage:
    """Usage from a Converse `usage` object (missing counts are 0)."""
    raw = raw or {}
    return Usage(
        input=int(raw.get("inputTokens", 0) or 0),
        output=int(raw.get("outputTokens", 0) or 0),
        cache_read=int(raw.get("cacheReadInputTokens", 0) or 0),
        cache_write=int(raw.get("cacheWriteInputTokens", 0) or 0),
    )


def tool_block(tool_use_id: str, name: str, raw: str) -> ToolUseBlock:
    """Parse a tool call's JSON text: empty means {}, anything else unusable becomes an error (never raises)."""
    if not raw.strip():
        return ToolUseBlock(tool_use_id, name, {}, raw)
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        error = f"The input of {name} is not valid JSON ({exc}); received {raw[:200]!r}."
        return ToolUseBlock(tool_use_id, name, None, raw, error)
    except RecursionError:  # json raises it, not ValueError, past the recursion limit
        error = f"The input of {name} is nested too deeply to read; received {raw[:200]!r}."
        return ToolUseBlock(tool_use_id, name, None, raw, error)
    if not isinstance(parsed, dict):
        error = f"The input of {name} must be a JSON object, got {type(parsed).__name__}."
        return ToolUseBlock(tool_use_id, name, None, raw, error)
    if _deeper_than(parsed, MAX_INPUT_DEPTH):
        error = (
            f"The input of {name} is nested deeper than {MAX_INPUT_DEPTH} levels; "
            f"received {raw[:200]!r}."
        )
        return ToolUseBlock(tool_use_id, name, None, raw, error)
    return ToolUseBlock(tool_use_id, name, parsed, raw)


MAX_INPUT_DEPTH = 64
"""Nesting a tool input may have. Deeper ones (a few hundred levels) parse, but then fail every
later request of the conversation (botocore validates it recursively) and its reading back."""


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects in `value` nest deeper than `limit` (checked without recursion)."""
    level: list[Any] = [value]
    for _ in range(limit + 1):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return False
    return True


def assistant_message(text: str, tools: list[ToolUseBlock]) -> dict[str, Any]:
    """The Converse assistant message: text first (if not blank), then the toolUse blocks."""
    content: list[dict[str, Any]] = []
    if text.strip():
        content.append({"text": text.rstrip()})
    for tool in tools:
        tool_input = tool.input if tool.input is not None else {}
        content.append(
            {"toolUse": {"toolUseId": tool.tool_use_id, "name": tool.name, "input": tool_input}}
        )
    if not content:
        content.append({"text": NO_ANSWER})
    return {"role": "assistant", "content": content}


@dataclass
class _PendingTool:
    tool_use_id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    characters: int = 0


class _Assembler:
    """Handles ConverseStream events one at a time (one branch per event type)."""

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.pending: dict[int, _PendingTool] = {}
        self.tools: list[ToolUseBlock] = []
        self.stop_reason: str | None = None
        self.usage = Usage()

    def feed(self, event: dict[str, Any]) -> Iterator[ModelEvent]:
        if "contentBlockStart" in event:
            body = event["contentBlockStart"]
            start = body.get("start", {}).get("toolUse")
            if start is not None:
                pending = _PendingTool(start.get("toolUseId", ""), start.get("name", ""))
                self.pending[body.get("contentBlockIndex", 0)] = pending
                yield ToolInputProgress(pending.name, 0)
        elif "contentBlockDelta" in event:
            body = event["contentBlockDelta"]
            delta = body.get("delta", {})
            if delta.get("text"):
                self.text_parts.append(delta["text"])
                yield TextChunk(delta["text"])
            elif "toolUse" in delta:
                pending = self.pending.setdefault(body.get("contentBlockIndex", 0), _PendingTool())
                part = delta["toolUse"].get("input", "")
                pending.parts.append(part)
                before, pending.characters = pending.characters, pending.characters + len(part)
                if pending.characters // PROGRESS_EVERY > before // PROGRESS_EVERY:
                    yield ToolInputProgress(pending.name, pending.characters)
        elif "contentBlockStop" in event:
            finished = self.pending.pop(event["contentBlockStop"].get("contentBlockIndex", 0), None)
            if finished is not None:
                yield self._finish_tool(finished)
        elif "messageStop" in event:
            self.stop_reason = event["messageStop"].get("stopReason") or "end_turn"
        elif "metadata" in event:
            self.usage = usage_from(event["metadata"].get("usage"))

    def _finish_tool(self, pending: _PendingTool) -> ToolUseBlock:
        block = tool_block(pending.tool_use_id, pending.name, "".join(pending.parts))
        self.tools.append(block)
        return block

    def finish(self) -> Iterator[ModelEvent]:
        for index in sorted(self.pending):
            yield self._finish_tool(self.pending.pop(index))
        if self.stop_reason is None:
            raise BedrockCallError(
                "service",
                "Bedrock's answer stream ended before the answer was complete.",
                fix="Retry the message; if it keeps happening, try non-streaming mode or another model.",
            )
        message = assistant_message("".join(self.text_parts), self.tools)
        yield StepEnd(self.stop_reason, self.usage, message)


def events_from_response(response: dict[str, Any]) -> Iterator[ModelEvent]:
    """The ModelEvents of a non-streaming Converse response (same shape as the stream's)."""
    content = response.get("output", {}).get("message", {}).get("content", [])
    text = "".join(block["text"] for block in content if block.get("text"))
    if text:
        yield TextChunk(text)
    tools: list[ToolUseBlock] = []
    for block in content:
        use = block.get("toolUse")
        if use is None:
            continue
        raw_input = use.get("input")
        raw = raw_input if isinstance(raw_input, str) else json.dumps(raw_input, default=str)
        tools.append(tool_block(use.get("toolUseId", ""), use.get("name", ""), raw))
        yield tools[-1]
    stop_reason = response.get("stopReason") or "end_turn"
    yield StepEnd(stop_reason, usage_from(response.get("usage")), assistant_message(text, tools))


def _abort(event_stream: Any) -> None:
    """Stop any ongoing read of the stream's HTTP response (shutdown wakes a blocked recv)."""
    raw = getattr(event_stream, "_raw_stream", None)
    try:
        raw.shutdown()  # type: ignore[union-attr]
    except Exception:
        try:
            event_stream.close()
        except Exception:
            pass


def _close(event_stream: Any) -> None:
    try:
        event_stream.close()
    except Exception:
        pass


class _CallThreads:
    """Daemon threads that run blocking boto3 calls and then wait for the next one (starting
    a thread per request costs more than the rest of a step). A call given up on keeps its
    thread until it returns; a new thread starts whenever none is idle."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, call: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # that idle thread takes this call
        self._calls.put(call)
        if start:
            threading.Thread(target=self._serve, name="bedrock-call", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self._calls.get()()
            with self._lock:
                self._idle += 1


_CALLS = _CallThreads()


def _call_cancellable(
    call: Callable[[], Any], cancel: StopSignal
) -> Generator[Retrying, None, Any]:
    """Run a blocking boto3 call on a call thread and wait for it, yielding each retry botocore
    is about to make meanwhile (`Retrying`: throttled, unavailable); return its answer. Give up
    at once on Stop (the call finishes in the background and its answer is dropped)."""
    outcome: dict[str, Any] = {}
    news: queue.SimpleQueue[Retrying | None] = queue.SimpleQueue()  # None: done, or Stop

    def run() -> None:
        try:
            with reporting(news.put):
                outcome["value"] = call()
            if cancel.is_set():  # nobody will read it: release the connection
                _close_abandoned(outcome["value"])
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc
        finally:
            news.put(None)

    with cancel.when_set(lambda: news.put(None)):
        _CALLS.submit(run)
        while (retry := news.get()) is not None:
            if not cancel.is_set():
                yield retry
    if cancel.is_set():
        _close_abandoned(outcome.get("value"))
        raise StepCancelled()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _close_abandoned(response: Any) -> None:
    if isinstance(response, dict) and "stream" in response:
        _close(response["stream"])


def converse_events(
    client: Any,
    request: dict[str, Any],
    *,
    stream: bool,
    cancel: threading.Event | None = None,
) -> Iterator[ModelEvent]:
    """Call Converse (or ConverseStream) with `request` and yield its ModelEvents, StepEnd last.

    Raises StepCancelled promptly once `cancel` is set, after closing the stream (a
    `StopSignal` closes it from the thread that sets it, which wakes a read blocked on a silent
    model); botocore errors (HTTP or in-stream EventStreamError) propagate unchanged.
    """
    with stop_signal(cancel) as signal:
        yield from _converse_events(client, request, stream=stream, cancel=signal)


def _converse_events(
    client: Any, request: dict[str, Any], *, stream: bool, cancel: StopSignal
) -> Iterator[ModelEvent]:
    if cancel.is_set():
        raise StepCancelled()
    if not stream:
        response = yield from _call_cancellable(lambda: client.converse(**request), cancel)
        yield from events_from_response(response)
        return

    response = yield from _call_cancellable(lambda: client.converse_stream(**request), cancel)
    event_stream = response["stream"]
    assembler = _Assembler()
    try:
        with cancel.when_set(lambda: _abort(event_stream)):
            try:
                for event in event_stream:
                    if cancel.is_set():
                        raise StepCancelled()
                    yield from assembler.feed(event)
            except StepCancelled:
                raise
            except Exception as exc:
                if cancel.is_set():
                    raise StepCancelled() from None
                if isinstance(exc, urllib3.exceptions.HTTPError):
                    raise BedrockCallError(
                        "unreachable",
                        f"The connection to Bedrock broke during the answer: {exc}",
                        fix="Retry the message; check your network if it keeps happening.",
                    ) from exc
                raise
        if cancel.is_set():
            raise StepCancelled()
    finally:
        _close(event_stream)
    yield from assembler.finish()
