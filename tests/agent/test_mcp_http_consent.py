"""The MCP HTTP server's read deadlines and connection cap while the app asks the user about a
new client: the server, not the client, holds such a request, so neither cuts it.

A real server (`HttpServer`, as the app's MCP panel runs it, with a consent hook that waits
for the test to answer) on 127.0.0.1 with lowered limits, and raw sockets as clients.
"""

from __future__ import annotations

import json
import select
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

import agent.mcp_server.http as http
from agent.mcp_server.http import HttpServer, bind_sockets, build_app
from agent.mcp_server.server import McpBackend
from agent.mcp_server.tokens import McpClient, TokenBook
from agent.stores.sqlite import SQLiteStore

READ_TIMEOUT = 1.0
"""The lowered header and body timeouts, in seconds."""
THINKING = 3 * READ_TIMEOUT
"""How long the user takes to answer the consent prompt."""
BOUND = 30.0
"""The most any single wait of the test takes."""


@dataclass
class ConsentServer:
    """A running server whose consent prompt is answered by `answer.set()`."""

    port: int
    token: str
    asked: threading.Event
    answer: threading.Event

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=BOUND)


@pytest.fixture
def consent_server(
    tmp_path: Path, demo_template: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ConsentServer]:
    monkeypatch.setattr(http, "HEADER_TIMEOUT", READ_TIMEOUT)
    monkeypatch.setattr(http, "BODY_TIMEOUT", READ_TIMEOUT)
    monkeypatch.setattr(http, "MAX_CONNECTIONS", 4)
    store = SQLiteStore.open(Path(shutil.copy(demo_template, tmp_path / "shop.sqlite")))
    book = TokenBook(tmp_path / "clients.sqlite")
    token = book.create("newcomer", "read")
    asked, answer = threading.Event(), threading.Event()

    async def consent(client: McpClient) -> bool:
        asked.set()
        return await anyio.to_thread.run_sync(lambda: answer.wait(BOUND))

    backend = McpBackend(store, "full")
    server = HttpServer(build_app(backend, book, consent), bind_sockets("127.0.0.1", 0))
    thread = threading.Thread(target=anyio.run, args=(server.serve,), daemon=True)
    thread.start()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    try:
        yield ConsentServer(port, token, asked, answer)
    finally:
        answer.set()
        server.stop()
        thread.join(BOUND)
        backend.close()
        book.close()
        store.close()


def initialize_body(padding: int = 0) -> bytes:
    """An MCP initialize request, padded with spaces to at least `padding` bytes."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "newcomer", "version": "0"},
            },
        }
    ).encode()
    return body + b" " * max(padding - len(body), 0)


def head(server: ConsentServer, length: int, extra: str = "") -> bytes:
    return (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {server.token}\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode()


def open_for(sock: socket.socket, seconds: float) -> bool:
    """Whether the server leaves the connection open (and silent) for `seconds`."""
    readable, _, _ = select.select([sock], [], [], seconds)
    if not readable:
        return True
    try:
        return bool(sock.recv(1, socket.MSG_PEEK))
    except ConnectionResetError:
        return False


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    """What the server sends up to and including `marker` (fails if it closes first)."""
    seen = b""
    deadline = time.monotonic() + BOUND
    while marker not in seen and time.monotonic() < deadline:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection: {seen!r}"
        seen += chunk
    return seen


def send_while_taken(sock: socket.socket, data: bytes) -> int:
    """Send what the connection takes until it stops taking more for half a second (the
    server paused reading and the buffers are full) or all is sent; how much was sent."""
    sock.setblocking(False)
    sent, refused = 0, 0
    while sent < len(data) and refused < 25:
        try:
            sent += sock.send(data[sent:])
            refused = 0
        except BlockingIOError:
            refused += 1
            time.sleep(0.02)
    return sent


def test_a_client_awaiting_100_continue_is_not_cut_while_the_user_decides(
    consent_server: ConsentServer,
) -> None:
    """`Expect: 100-continue` (curl's habit for larger bodies): the client sends its body only
    when the server asks for it, which the server does after the consent prompt. The body's
    deadline counted the user's thinking time and closed the connection."""
    body = initialize_body()
    with consent_server.connect() as sock:
        sock.sendall(head(consent_server, len(body), "Expect: 100-continue\r\n"))
        assert consent_server.asked.wait(BOUND)
        assert open_for(sock, THINKING), "cut while the consent prompt was open"
        consent_server.answer.set()
        assert read_until(sock, b"\r\n\r\n").startswith(b"HTTP/1.1 100")
        sock.sendall(body)
        assert b"HTTP/1.1 200" in read_until(sock, b"HTTP/1.1 200")


def test_the_connection_cap_does_not_evict_a_request_waiting_for_consent(
    consent_server: ConsentServer,
) -> None:
    """A body larger than uvicorn's buffer is read only when the app asks for it (after the
    prompt), so the request looked like the slowest reader and was the first to be closed
    when stalled connections filled the cap."""
    body = initialize_body(padding=1_000_000)  # more than uvicorn reads before it pauses
    stalled: list[socket.socket] = []
    with consent_server.connect() as sock:
        sock.sendall(head(consent_server, len(body)))
        assert consent_server.asked.wait(BOUND)
        sent = send_while_taken(sock, body)
        try:
            for _ in range(4):  # the cap is 4: each newcomer makes room by closing a reader
                stalled.append(consent_server.connect())
                stalled[-1].sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                time.sleep(0.1)
            assert open_for(sock, 0.5), "the request waiting for consent was closed"
            consent_server.answer.set()
            sock.setblocking(True)
            sock.sendall(body[sent:])
            assert b"HTTP/1.1 200" in read_until(sock, b"HTTP/1.1 200")
        finally:
            for other in stalled:
                other.close()
