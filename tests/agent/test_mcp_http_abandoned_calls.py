"""A tool call whose client hung up still runs (the SDK does not cancel it, and calls queue on
the backend's one lock, each holding a worker thread): it keeps its place in the token's
in-flight limit until it ends, so a client that sends calls and disconnects cannot queue more
than its share, and the place is given back once the call ends.

A real server and raw sockets (`test_mcp_http_client_limit`'s fixture); the backend's `call`
waits for the test, so a call stays running after its client left.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import httpx2
import pytest

from agent.mcp_server.server import McpBackend
from tests.agent.test_mcp_http_client_limit import (
    BOUND,
    INITIALIZE,
    LIMIT,
    Served,
    answer_of,
    served,
)

__all__ = ["served"]

ACCEPT = "application/json, text/event-stream"


def open_session(served: Served, token: str) -> str:
    """An initialized session of `token`; its id."""
    headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
    first = httpx2.post(served.url, json=INITIALIZE, headers=headers, timeout=BOUND)
    assert first.status_code == 200, first.text
    session = first.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    assert httpx2.post(served.url, json=done, headers=headers, timeout=BOUND).status_code == 202
    return session


def call_on_socket(served: Served, token: str, session: str, number: int) -> socket.socket:
    """A whole tools/call POST on its own connection."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 100 + number, "method": "tools/call",
        "params": {"name": "countItems", "arguments": {"table": "orders"}},
    }).encode()  # fmt: skip
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=BOUND)
    sock.sendall(
        (
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Accept: {ACCEPT}\r\nAuthorization: Bearer {token}\r\n"
            f"mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    return sock


def wait_for(test: Any, what: Any) -> None:
    deadline = time.monotonic() + BOUND
    while not test():
        assert time.monotonic() < deadline, what()
        time.sleep(0.02)


def cancel(served: Served, token: str, session: str, number: int) -> None:
    """notifications/cancelled for call `number` (the SDK cancels its handler at once)."""
    note = {
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 100 + number, "reason": "gave up"},
    }  # fmt: skip
    headers = {
        "Authorization": f"Bearer {token}", "Accept": ACCEPT, "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
    }  # fmt: skip
    assert httpx2.post(served.url, json=note, headers=headers, timeout=BOUND).status_code == 202


@pytest.mark.parametrize("leaving", ["hangs up", "cancels, then hangs up"])
def test_a_call_whose_client_left_keeps_its_place_until_it_ends(
    served: Served, monkeypatch: pytest.MonkeyPatch, leaving: str
) -> None:
    release = threading.Event()
    entered: list[str] = []
    original = McpBackend.call

    def held_call(self: McpBackend, name: str, *args: Any, **kwargs: Any) -> Any:
        entered.append(name)
        release.wait(BOUND)
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(McpBackend, "call", held_call)
    token = served.tokens["other"]  # allowed before: no consent question
    session = open_session(served, token)
    try:
        for number in range(LIMIT):  # each call starts, then its client hangs up
            sock = call_on_socket(served, token, session, number)
            wait_for(lambda n=number: len(entered) > n, lambda: entered)
            if leaving.startswith("cancels"):  # at the limit too: a notification is uncounted
                cancel(served, token, session, number)
            sock.close()
        sock = call_on_socket(served, token, session, LIMIT)
        try:
            status = answer_of(sock).split(b"\r\n", 1)[0]
        finally:
            sock.close()
        assert status == b"HTTP/1.1 429 Too Many Requests", "the abandoned calls still run"
        assert len(entered) == LIMIT
    finally:
        release.set()
    wait_for(lambda: served.guard.in_flight.get("other", 0) == 0, lambda: served.guard.in_flight)
    sock = call_on_socket(served, token, session, LIMIT + 1)
    try:
        assert answer_of(sock).startswith(b"HTTP/1.1 200")
    finally:
        sock.close()
