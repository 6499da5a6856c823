"""A scripted Bedrock Converse endpoint on 127.0.0.1, so tests run the real boto3 stack.

Tests point boto3 at it with `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` and dummy credentials; the
real request serialisation, SigV4 signing, retries and event-stream parsing all run. Replies
are queued in order; each HTTP request (retries included) takes one.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import sys
import tempfile
import threading
import time
import uuid
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from agent.events import Usage
from tests.support.embeddings import invoke_answer

__all__ = [
    "DUMMY_ACCESS_KEY_ID",
    "DUMMY_SECRET_ACCESS_KEY",
    "Error",
    "NO_REPLY_LEFT",
    "RecordedRequest",
    "Reply",
    "ScriptedBedrock",
    "ToolUse",
    "UNSET_VARS",
    "Usage",
    "encode_frame",
    "scripted_bedrock",
    "stage_update",
]

NO_REPLY_LEFT = "scripted endpoint: no reply left"
TOO_LONG = "Input is too long for requested model."
DUMMY_ACCESS_KEY_ID = "AKIDSCRIPTEDTESTKEY0"
DUMMY_SECRET_ACCESS_KEY = "scripted-secret-access-key-not-real"

# Variables that would make boto3 read a real profile, use other credentials, or go elsewhere.
UNSET_VARS = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_RETRY_MODE",
    "AWS_MAX_ATTEMPTS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_USE_FIPS_ENDPOINT",
    "AWS_USE_DUALSTACK_ENDPOINT",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)


@dataclass
class ToolUse:
    """A tool call in a scripted reply; `raw_tool_input` replaces the JSON text sent (may be malformed)."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    raw_tool_input: str | None = None


@dataclass
class Reply:
    """A model answer, rendered as a Converse JSON body or as ConverseStream events."""

    text: str = ""
    tool_uses: list[ToolUse] = field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = field(default_factory=lambda: Usage(input=12, output=7))
    chunk_delay: float | None = None
    delay: float = 0.0  # seconds before the answer starts (before the HTTP status line)
    latency_ms: int = 42

    def resolved_stop_reason(self) -> str:
        """The given stop reason, else `tool_use` when the reply calls tools, else `end_turn`."""
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if self.tool_uses else "end_turn"


@dataclass
class Error:
    """An error answer: an HTTP error as Bedrock sends it, or (`in_stream`) an exception frame."""

    status: int = 429
    code: str = "ThrottlingException"
    message: str = "Too many requests, please wait before trying again."
    in_stream: bool = False
    text_before: str = "Partial answer "


def stage_update(key: dict[str, Any], values: dict[str, Any], table: str = "orders") -> Reply:
    """A reply that calls stageItem to update one item (the most common scripted step)."""
    return Reply(
        tool_uses=[
            ToolUse("stageItem", {"table": table, "op": "update", "key": key, "values": values})
        ]
    )


ReplySpec = Reply | Error | Callable[[dict[str, Any]], "Reply | Error"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the endpoint received (retries are separate requests)."""

    model_id: str
    path: str
    stream: bool
    body: dict[str, Any]
    headers: dict[str, str]


def _encode_header(name: str, value: str) -> bytes:
    name_bytes, value_bytes = name.encode(), value.encode()
    return (
        struct.pack("!B", len(name_bytes))
        + name_bytes
        + struct.pack("!BH", 7, len(value_bytes))  # 7 = string value
        + value_bytes
    )


def encode_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One `application/vnd.amazon.eventstream` message: prelude, CRCs, headers, payload."""
    header_bytes = b"".join(_encode_header(k, v) for k, v in headers.items())
    total = 12 + len(header_bytes) + len(payload) + 4
    prelude = struct.pack("!II", total, len(header_bytes))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + header_bytes + payload
    return body + struct.pack("!I", zlib.crc32(body))


def _event(event_type: str, payload: dict[str, Any]) -> bytes:
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_frame(headers, json.dumps(payload).encode())


def _exception_frame(error: Error) -> bytes:
    member = error.code[:1].lower() + error.code[1:]  # the stream member name, as Bedrock sends
    headers = {
        ":exception-type": member,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_frame(headers, json.dumps({"message": error.message}).encode())


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def _usage_json(usage: Usage) -> dict[str, int]:
    return {
        "inputTokens": usage.input,
        "outputTokens": usage.output,
        "totalTokens": usage.input + usage.output,
        "cacheReadInputTokens": usage.cache_read,
        "cacheWriteInputTokens": usage.cache_write,
    }


class ScriptedBedrock:
    """The endpoint: a ThreadingHTTPServer on 127.0.0.1 (port 0) in a daemon thread."""

    def __init__(self, *replies: ReplySpec, chunk_delay: float = 0.0, text_chunk_size: int = 4):
        self.chunk_delay = chunk_delay
        self.text_chunk_size = text_chunk_size
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0  # requests the client hung up on before the end
        # Like a model's context window: a larger request body is refused as Bedrock does,
        # without using a queued reply.
        self.max_request_bytes: int | None = None
        self._queue: deque[ReplySpec] = deque(replies)
        self.invocations: list[tuple[str, dict[str, Any]]] = []
        """InvokeModel requests (model id, body), answered with embeddings."""
        self.invoke_errors: deque[Error] = deque()
        """Errors the next InvokeModel requests get (one each), e.g. a throttle."""
        self.responder: Callable[[dict[str, Any]], Reply | Error] | None = None
        """Answers requests once the queue is empty (a reply chosen from the request itself)."""
        self._lock = threading.Lock()
        self._tool_ids = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._missing_dir = os.path.join(
            tempfile.gettempdir(), f"tabletalk-no-aws-{uuid.uuid4().hex}"
        )

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> ScriptedBedrock:
        """Bind a free port and serve in a daemon thread."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.scripted = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedBedrock:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        assert self._server is not None, "ScriptedBedrock is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """Environment that sends boto3 here with dummy credentials and no real AWS profile."""
        return {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.url,
            "AWS_ACCESS_KEY_ID": DUMMY_ACCESS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET_ACCESS_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.path.join(self._missing_dir, "config"),
            "AWS_SHARED_CREDENTIALS_FILE": os.path.join(self._missing_dir, "credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    def apply_env(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Set `env()` and remove variables that would reach a real profile or endpoint."""
        for name in UNSET_VARS:
            monkeypatch.delenv(name, raising=False)
        for name, value in self.env().items():
            monkeypatch.setenv(name, value)

    # -- scripting -------------------------------------------------------------------------

    def add(self, *replies: ReplySpec) -> None:
        """Queue more replies (a Reply, an Error, or a callable taking the request body)."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        """How many queued replies are not yet used."""
        with self._lock:
            return len(self._queue)

    def _take(self, request: RecordedRequest) -> ReplySpec | None:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
            return self.responder

    def _next_tool_id(self) -> str:
        with self._lock:
            self._tool_ids += 1
            return f"tooluse_scripted_{self._tool_ids}"

    # -- rendering -------------------------------------------------------------------------

    def render_converse(self, reply: Reply) -> dict[str, Any]:
        """The Converse JSON body for a reply."""
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"text": reply.text})
        for tool in reply.tool_uses:
            tool_input: Any = tool.input if tool.raw_tool_input is None else tool.raw_tool_input
            content.append(
                {
                    "toolUse": {
                        "toolUseId": tool.id or self._next_tool_id(),
                        "name": tool.name,
                        "input": tool_input,
                    }
                }
            )
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": reply.resolved_stop_reason(),
            "usage": _usage_json(reply.usage),
            "metrics": {"latencyMs": reply.latency_ms},
        }

    def stream_frames(self, reply: Reply) -> Iterator[bytes]:
        """The ConverseStream frames for a reply, text in several deltas, tool JSON in fragments."""
        yield _event("messageStart", {"role": "assistant"})
        index = 0
        if reply.text:
            for piece in _pieces(reply.text, self.text_chunk_size):
                yield _event(
                    "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}}
                )
            yield _event("contentBlockStop", {"contentBlockIndex": 0})
            index = 1
        for tool in reply.tool_uses:
            start = {"toolUse": {"toolUseId": tool.id or self._next_tool_id(), "name": tool.name}}
            yield _event("contentBlockStart", {"contentBlockIndex": index, "start": start})
            raw = json.dumps(tool.input) if tool.raw_tool_input is None else tool.raw_tool_input
            for fragment in _pieces(raw, max(1, -(-len(raw) // 3))):
                delta = {"toolUse": {"input": fragment}}
                yield _event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
            yield _event("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        yield _event("messageStop", {"stopReason": reply.resolved_stop_reason()})
        metadata = {"usage": _usage_json(reply.usage), "metrics": {"latencyMs": reply.latency_ms}}
        yield _event("metadata", metadata)

    def error_frames(self, error: Error) -> Iterator[bytes]:
        """Frames of a stream that fails mid-way: some text, then an exception frame."""
        yield _event("messageStart", {"role": "assistant"})
        for piece in _pieces(error.text_before, self.text_chunk_size):
            yield _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
        yield _exception_frame(error)


_PATH = re.compile(r"/model/(?P<model>[^/]+)/(?P<op>converse|converse-stream|invoke)")


class _Server(ThreadingHTTPServer):
    """Counts a client's hang-up (as Stop does) instead of printing a traceback.

    Handler threads outlive `stop()`, so a printed traceback would land in whatever test runs
    next and fail its stderr checks; any other handler error still prints.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            scripted: ScriptedBedrock = self.scripted  # type: ignore[attr-defined]
            with scripted._lock:
                scripted.disconnects += 1
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Serves Converse and ConverseStream from the owning ScriptedBedrock's queue."""

    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Small frames go out at once (no Nagle/delayed-ACK stalls of ~40 ms per request).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        return

    @property
    def scripted(self) -> ScriptedBedrock:
        return self.server.scripted  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = urlsplit(self.path).path
        match = _PATH.fullmatch(path)
        if match is None:
            self._send_error(Error(404, "UnknownOperationException", f"no route for {path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode(errors="replace")}
        if match["op"] == "invoke":
            self._invoke(unquote(match["model"]), body)
            return
        stream = match["op"] == "converse-stream"
        recorded = RecordedRequest(
            model_id=unquote(match["model"]),
            path=path,
            stream=stream,
            body=body,
            headers=dict(self.headers.items()),
        )
        limit = self.scripted.max_request_bytes
        if limit is not None and len(raw) > limit:
            with self.scripted._lock:
                self.scripted.requests.append(recorded)
            self._send_error(Error(400, "ValidationException", TOO_LONG))
            return
        spec = self.scripted._take(recorded)
        if spec is None:
            self._send_error(Error(500, "InternalServerException", NO_REPLY_LEFT))
            return
        if callable(spec):
            try:
                spec = spec(body)
            except Exception as exc:  # a broken test script must fail loudly, not hang
                message = f"scripted endpoint: reply callable raised {exc!r}"
                self._send_error(Error(500, "InternalServerException", message))
                return
        if isinstance(spec, Reply) and spec.delay:
            time.sleep(spec.delay)
        if isinstance(spec, Error):
            if spec.in_stream and stream:
                self._send_stream(self.scripted.error_frames(spec), self.scripted.chunk_delay)
            else:
                self._send_error(spec)
        elif stream:
            delay = spec.chunk_delay if spec.chunk_delay is not None else self.scripted.chunk_delay
            self._send_stream(self.scripted.stream_frames(spec), delay)
        else:
            self._send_json(200, self.scripted.render_converse(spec))

    def _invoke(self, model_id: str, body: dict[str, Any]) -> None:
        """InvokeModel for the embedding models: deterministic vectors (tests/support/embeddings)."""
        scripted = self.scripted
        with scripted._lock:
            scripted.invocations.append((model_id, body))
            error = scripted.invoke_errors.popleft() if scripted.invoke_errors else None
        if error is not None:
            self._send_error(error)
            return
        answer = invoke_answer(model_id, body)
        if answer is None:
            self._send_error(Error(400, "ValidationException", f"malformed request for {model_id}"))
            return
        self._send_json(200, answer)

    def _send_json(
        self, status: int, payload: dict[str, Any], error_type: str | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        if error_type:
            self.send_header("x-amzn-ErrorType", f"{error_type}:http://internal.amazon.com/coral/")
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, error: Error) -> None:
        self._send_json(error.status, {"message": error.message}, error_type=error.code)

    def _send_stream(self, frames: Iterator[bytes], delay: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.amazon.eventstream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.end_headers()
        try:
            for number, frame in enumerate(frames):
                if number and delay:
                    time.sleep(delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with self.scripted._lock:
                self.scripted.disconnects += 1
            self.close_connection = True


@pytest.fixture
def scripted_bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedBedrock]:
    """A started ScriptedBedrock with the environment pointing boto3 at it; queue with `.add()`."""
    with ScriptedBedrock() as server:
        server.apply_env(monkeypatch)
        yield server
