"""A client at its in-flight limit can still cancel a call or answer the server: a POSTed
JSON-RPC notification or response runs no tool and gets no result, so the guard serves it
uncounted (the SDK answers 202) instead of refusing it (429) like a new request. A request,
a batch, a large or unreadable body, and anything of a token still to be asked about are
refused at the limit as before; a request without a valid token is refused (401) first.

A real server and raw sockets or httpx (`test_mcp_http_client_limit`'s fixture).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest
from starlette.types import Message

from agent.mcp_server.http_messages import PEEK_BYTES, answers_nothing, peek_body, replaying
from agent.mcp_server.server import McpBackend
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_mcp_http_abandoned_calls import ACCEPT, open_session, wait_for
from tests.agent.test_mcp_http_client_limit import (
    BOUND,
    LIMIT,
    Served,
    answer_of,
    initialize_on_socket,
    served,
)

__all__ = ["served"]

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
"""A query that runs until it is stopped (or the store's 30-second query timeout)."""
REQUEST_CANCELLED = -32800
"""The JSON-RPC error the SDK ends a cancelled request's stream with."""


def headers_of(token: str, session: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {token}", "Accept": ACCEPT, "Content-Type": "application/json",
        "mcp-session-id": session, "mcp-protocol-version": "2025-06-18",
    }  # fmt: skip


def post(served: Served, headers: dict[str, str], body: Any) -> httpx2.Response:
    """One POST of `body` (JSON, or bytes / an iterator of bytes sent as they are)."""
    if isinstance(body, (bytes, Iterator)):
        return httpx2.post(served.url, content=body, headers=headers, timeout=BOUND)
    return httpx2.post(served.url, json=body, headers=headers, timeout=BOUND)


def call_body(number: int, name: str, arguments: dict[str, Any]) -> bytes:
    return json.dumps({
        "jsonrpc": "2.0", "id": 100 + number, "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }).encode()  # fmt: skip


def send_on_socket(served: Served, headers: dict[str, str], *parts: bytes) -> socket.socket:
    """A POST on its own connection, its body sent in `parts` a moment apart."""
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=BOUND)
    lines = "".join(f"{key}: {value}\r\n" for key, value in headers.items())
    length = sum(len(part) for part in parts)
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines}Content-Length: {length}\r\n\r\n"
    sock.sendall(head.encode() + parts[0])
    for part in parts[1:]:
        time.sleep(0.2)
        sock.sendall(part)
    return sock


def call_on_socket(
    served: Served, headers: dict[str, str], number: int, name: str, arguments: dict[str, Any]
) -> socket.socket:
    """A whole tools/call POST (id 100 + `number`) on its own connection."""
    return send_on_socket(served, headers, call_body(number, name, arguments))


def answer_on(sock: socket.socket) -> dict[str, Any]:
    """The JSON-RPC response (result or error) an SSE answer on `sock` carries."""
    seen = b""
    while True:
        for line in seen.split(b"\n"):
            if line.startswith(b"data: "):
                message = json.loads(line[6:])
                if "result" in message or "error" in message:
                    return dict(message)
        chunk = sock.recv(65536)
        assert chunk, f"the stream ended without an answer: {seen!r}"
        seen += chunk


def cancel_of(number: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 100 + number, "reason": "gave up"},
    }  # fmt: skip


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(tool, result text) of each call the backend ran, as it ends (taken under its lock)."""
    ran: list[tuple[str, str]] = []
    original = McpBackend._call

    def recorded(self: McpBackend, name: str, *args: Any) -> Any:
        result = original(self, name, *args)
        ran.append((name, result.content[0].text))
        return result

    monkeypatch.setattr(McpBackend, "_call", recorded)
    return ran


@dataclass
class Queued:
    """The tools of the calls that reached the backend (before they wait for its lock)."""

    names: list[str] = field(default_factory=list)
    backend: McpBackend | None = None

    def query_runs(self) -> bool:
        """Whether the store's read-only connection is running a query."""
        store = self.backend.store if self.backend is not None else None
        return isinstance(store, SQLiteStore) and store._reader._lock.locked()


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> Queued:
    queued = Queued()
    original = McpBackend.call

    def counted(self: McpBackend, name: str, *args: Any, **kwargs: Any) -> Any:
        queued.backend = self
        queued.names.append(name)
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(McpBackend, "call", counted)
    return queued


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Every call waits for the event (set at the end) before it reaches the backend."""
    release = threading.Event()
    original = McpBackend.call

    def held_call(self: McpBackend, *args: Any, **kwargs: Any) -> Any:
        release.wait(BOUND)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(McpBackend, "call", held_call)
    yield release
    release.set()


def at_the_limit(served: Served, headers: dict[str, str]) -> list[socket.socket]:
    """LIMIT held countItems calls of client "other", all in flight."""
    calls = [call_on_socket(served, headers, n, "countItems", {"table": "orders"})
             for n in range(LIMIT)]  # fmt: skip
    served.wait_in_flight("other", LIMIT)
    return calls


def test_at_its_limit_a_client_cancels_its_running_call(
    served: Served, ran: list[tuple[str, str]], queued: Queued
) -> None:
    """A runaway query and calls queued behind it fill the limit; the client cancels the
    query (202, not 429), its stream ends "Request cancelled", the query is stopped (not
    run to its timeout) and the queued calls are answered."""
    token = served.tokens["other"]
    headers = headers_of(token, open_session(served, token))
    runaway = call_on_socket(served, headers, 0, "runQuery", {"query": RUNAWAY})
    calls: list[socket.socket] = []
    try:
        wait_for(queued.query_runs, lambda: queued)
        calls = [call_on_socket(served, headers, n, "countItems", {"table": "orders"})
                 for n in range(1, LIMIT)]  # fmt: skip
        served.wait_in_flight("other", LIMIT)
        assert ran == [], "the query runs; the other calls wait for it"

        accepted = post(served, headers, cancel_of(0))
        assert accepted.status_code == 202, accepted.text

        cancelled = answer_on(runaway)
        assert cancelled["id"] == 100 and cancelled["error"]["code"] == REQUEST_CANCELLED
        for number, sock in enumerate(calls, start=1):
            answer = answer_on(sock)
            assert answer["id"] == 100 + number and not answer["result"].get("isError"), answer
        assert ran[0][0] == "runQuery" and "the query was stopped" in ran[0][1], ran[0]
        assert [name for name, _ in ran[1:]] == ["countItems"] * (LIMIT - 1)
    finally:
        for sock in [runaway, *calls]:
            sock.close()
    wait_for(lambda: not served.guard.in_flight, lambda: served.guard.in_flight)


def test_a_call_cancelled_while_it_waits_for_the_backend_never_runs(
    served: Served, ran: list[tuple[str, str]], queued: Queued
) -> None:
    """A call cancelled while it waits for the backend's lock (behind a running one) returns
    when it gets the lock, without running, and gives its place back."""
    token = served.tokens["other"]
    headers = headers_of(token, open_session(served, token))
    runaway = call_on_socket(served, headers, 0, "runQuery", {"query": RUNAWAY})
    waiting = None
    try:
        wait_for(queued.query_runs, lambda: queued)
        waiting = call_on_socket(served, headers, 1, "countItems", {"table": "orders"})
        wait_for(lambda: queued.names == ["runQuery", "countItems"], lambda: queued)
        assert queued.backend is not None
        wait_for(lambda: len(queued.backend._waiting) == 1, lambda: queued)  # for the lock

        assert post(served, headers, cancel_of(1)).status_code == 202
        assert answer_on(waiting)["error"]["code"] == REQUEST_CANCELLED
        assert post(served, headers, cancel_of(0)).status_code == 202
        assert answer_on(runaway)["error"]["code"] == REQUEST_CANCELLED
        wait_for(lambda: not served.guard.in_flight, lambda: served.guard.in_flight)
    finally:
        for sock in (runaway, waiting):
            if sock is not None:
                sock.close()
    assert [name for name, _ in ran] == ["runQuery"], "the cancelled call ran anyway"


def test_at_its_limit_a_client_answers_the_server(served: Served, held: threading.Event) -> None:
    """A JSON-RPC response (a result or an error, for a request the server sent) is
    acknowledged at the limit (202), and the session goes on serving."""
    token = served.tokens["other"]
    headers = headers_of(token, open_session(served, token))
    calls = at_the_limit(served, headers)
    try:
        answer = {"jsonrpc": "2.0", "id": "server-1", "result": {}}
        assert post(served, headers, answer).status_code == 202
        failure = {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "declined"}}
        assert post(served, headers, failure).status_code == 202
        assert served.guard.in_flight["other"] == LIMIT
        held.set()
        for sock in calls:
            assert "result" in answer_on(sock)
    finally:
        for sock in calls:
            sock.close()
    wait_for(lambda: not served.guard.in_flight, lambda: served.guard.in_flight)
    listed = post(served, headers, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert listed.status_code == 200 and "countItems" in listed.text


def test_a_cancel_sent_in_parts_reaches_the_sdk_whole(
    served: Served, held: threading.Event
) -> None:
    """The guard reads the body to tell what it is; the SDK then reads the same bytes, however
    they arrived: a cancel sent in three parts at the limit cancels its call."""
    token = served.tokens["other"]
    headers = headers_of(token, open_session(served, token))
    calls = at_the_limit(served, headers)
    try:
        body = json.dumps(cancel_of(3)).encode()
        sock = send_on_socket(served, headers, body[:5], body[5:20], body[20:])
        try:
            assert answer_of(sock).startswith(b"HTTP/1.1 202")
        finally:
            sock.close()
        assert answer_on(calls[3])["error"]["code"] == REQUEST_CANCELLED
    finally:
        held.set()
        for sock in calls:
            sock.close()


def test_at_its_limit_requests_batches_and_large_bodies_are_still_refused(
    served: Served, held: threading.Event
) -> None:
    token = served.tokens["other"]
    headers = headers_of(token, open_session(served, token))
    calls = at_the_limit(served, headers)
    try:
        padding = {"reason": "x" * PEEK_BYTES}
        large = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 100} | padding}  # fmt: skip
        large_bytes = json.dumps(large).encode()
        refused = {
            "a request": {"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
            "a batch": [cancel_of(0)],
            "a large notification": large,
            "a large one, chunked": iter([large_bytes[:1000], large_bytes[1000:]]),
            "not JSON": b"notifications/cancelled",
        }
        for what, body in refused.items():
            answer = post(served, headers, body)
            assert answer.status_code == 429, what
            assert "Too many requests at once" in answer.json()["error"]["message"], what
        stream = httpx2.get(served.url, headers=headers, timeout=BOUND)
        assert stream.status_code == 429, "a GET stream at the limit"

        for authorization in ({}, {"Authorization": "Bearer not-a-token"}):
            anonymous = {**headers, **authorization}
            if not authorization:
                del anonymous["Authorization"]
            assert post(served, anonymous, cancel_of(0)).status_code == 401
        assert served.guard.in_flight["other"] == LIMIT
    finally:
        held.set()
        for sock in calls:
            sock.close()


def test_a_client_still_to_be_asked_about_is_refused_at_its_limit(served: Served) -> None:
    """Requests of a token the user has not yet allowed wait for the consent prompt: at its
    limit even a notification is refused, or each would hold a connection uncounted."""
    waiting = [initialize_on_socket(served, served.tokens["flood"]) for _ in range(LIMIT)]
    try:
        served.wait_in_flight("flood", LIMIT)
        headers = headers_of(served.tokens["flood"], "none-yet")
        assert post(served, headers, cancel_of(0)).status_code == 429
        assert served.asked == ["flood"]
    finally:
        served.answer.set()
        for sock in waiting:
            sock.close()


@pytest.mark.parametrize(
    ("body", "uncounted"),
    [
        (b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}', True),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {}}', True),
        (b'{"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "no"}}', True),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}', False),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}', False),
        (b'{"jsonrpc": "2.0", "id": 1}', False),
        (b'[{"jsonrpc": "2.0", "method": "notifications/cancelled"}]', False),
        (b'"notifications/cancelled"', False),
        (b"\xff{}", False),
        (b"[" * 100_000, False),
    ],
)
def test_which_bodies_answer_nothing(body: bytes, uncounted: bool) -> None:
    assert answers_nothing(body) is uncounted


def test_a_peeked_body_is_replayed_as_it_came_then_receive_goes_on() -> None:
    parts: list[Message] = [
        {"type": "http.request", "body": b'{"a":', "more_body": True},
        {"type": "http.request", "body": b"", "more_body": True},
        {"type": "http.request", "body": b" 1}", "more_body": False},
        {"type": "http.disconnect"},
    ]

    async def run() -> tuple[bytes | None, list[Message]]:
        source = iter(parts)

        async def receive() -> Message:
            return next(source)

        peeked = await peek_body({"type": "http", "headers": []}, receive)
        again = replaying(peeked, receive)
        return peeked.body, [await again() for _ in parts]

    body, replayed = anyio.run(run)
    assert body == b'{"a": 1}'
    assert replayed == parts


def test_a_body_over_the_cap_is_not_read_to_its_end() -> None:
    read: list[int] = []

    async def run() -> bytes | None:
        async def receive() -> Message:
            read.append(1)
            return {"type": "http.request", "body": b"x" * 1000, "more_body": True}

        return (await peek_body({"type": "http", "headers": []}, receive, cap=2500)).body

    assert anyio.run(run) is None and len(read) == 3
    declared = {"type": "http", "headers": [(b"content-length", b"2501")]}

    async def never() -> Message:
        raise AssertionError("a body declared too large is not read")

    assert anyio.run(peek_body, declared, never, 2500).body is None
