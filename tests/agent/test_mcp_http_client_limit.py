"""The MCP HTTP server's per-token limit on requests in flight: one client cannot hold the
connections every client shares (here with requests waiting for the user's consent, as the
app's MCP panel asks about a new client), and another token is served meanwhile.

A real server (`HttpServer` with a consent hook the test answers), the official SDK client.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from agent.mcp_server.http import Guard, HttpServer, bind_sockets, build_app
from agent.mcp_server.server import McpBackend
from agent.mcp_server.tokens import McpClient, TokenBook
from agent.stores.sqlite import SQLiteStore

LIMIT = 8
"""The documented default: requests one token may have in flight."""
BOUND = 30.0
"""The most any single wait of the test takes."""
PROMPT = 10.0
"""Long enough for a refused request to be answered; a request the server holds instead
(waiting for the consent prompt like the others) fails the test at this point."""


@dataclass
class Served:
    """A running server whose consent prompt waits for `answer`; `asked` counts prompts."""

    url: str
    port: int
    tokens: dict[str, str]
    answer: threading.Event
    guard: Guard
    asked: list[str] = field(default_factory=list)
    prompted: threading.Condition = field(default_factory=threading.Condition)

    def wait_asked(self, count: int) -> None:
        with self.prompted:
            assert self.prompted.wait_for(lambda: len(self.asked) >= count, BOUND), self.asked

    def wait_in_flight(self, name: str, count: int) -> None:
        """Until the server holds `count` requests of client `name` (read across threads)."""
        deadline = time.monotonic() + BOUND
        while self.guard.in_flight.get(name, 0) != count:
            assert time.monotonic() < deadline, self.guard.in_flight
            time.sleep(0.02)


@pytest.fixture
def served(tmp_path: Path, demo_template: Path) -> Iterator[Served]:
    store = SQLiteStore.open(Path(shutil.copy(demo_template, tmp_path / "shop.sqlite")))
    book = TokenBook(tmp_path / "clients.sqlite")
    tokens = {name: book.create(name, "read") for name in ("flood", "other")}
    book.record_call("other")  # a client the user allowed before: not asked about again
    answer = threading.Event()
    holder: list[Served] = []

    async def consent(client: McpClient) -> bool:
        with holder[0].prompted:
            holder[0].asked.append(client.name)
            holder[0].prompted.notify_all()
        return await anyio.to_thread.run_sync(lambda: answer.wait(BOUND))

    backend = McpBackend(store, "full")
    app = build_app(backend, book, consent)
    assert isinstance(app, Guard)
    server = HttpServer(app, bind_sockets("127.0.0.1", 0))
    thread = threading.Thread(target=anyio.run, args=(server.serve,), daemon=True)
    thread.start()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    holder.append(Served(server.url, port, tokens, answer, app))
    try:
        yield holder[0]
    finally:
        answer.set()
        server.stop()
        thread.join(BOUND)
        backend.close()
        book.close()
        store.close()


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "flood", "version": "0"}},
}  # fmt: skip


def initialize_on_socket(served: Served, token: str) -> socket.socket:
    """A whole initialize POST on its own connection, its answer left unread."""
    body = json.dumps(INITIALIZE).encode()
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=BOUND)
    sock.sendall(
        (
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    return sock


def answer_of(sock: socket.socket) -> bytes:
    """The status line and headers the server sends on `sock`."""
    seen = b""
    while b"\r\n\r\n" not in seen:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection: {seen!r}"
        seen += chunk
    return seen


def leaves(error: BaseException) -> list[BaseException]:
    """The errors inside `error`, unwrapping task groups' exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


async def tool_names(served: Served, token: str) -> list[str]:
    """tools/list through the SDK client with `token`."""
    headers = {"Authorization": f"Bearer {token}"}
    with anyio.fail_after(PROMPT):
        async with httpx2.AsyncClient(headers=headers, timeout=BOUND) as http:
            async with Client(streamable_http_client(served.url, http_client=http)) as client:
                return [tool.name for tool in (await client.list_tools()).tools]


def test_one_token_cannot_hold_more_than_its_share_and_others_are_served(
    served: Served,
) -> None:
    """A new client's requests all wait for the user's consent, and the connection cap never
    closes a request the server holds: so one token could take all 128 connections, each
    waiting, and lock every other client out. Past its limit a token's request is refused at
    once (429, saying what to do); another token is served meanwhile, and the refused client
    is served once its requests finish."""
    waiting = [initialize_on_socket(served, served.tokens["flood"]) for _ in range(LIMIT)]
    try:
        served.wait_asked(1)
        served.wait_in_flight("flood", LIMIT)  # all waiting for the one question

        refused = httpx2.post(
            served.url,
            json=INITIALIZE,
            headers={
                "Authorization": f"Bearer {served.tokens['flood']}",
                "Accept": "application/json, text/event-stream",
            },
            timeout=PROMPT,
        )
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "1"
        error = refused.json()["error"]
        assert refused.json()["jsonrpc"] == "2.0"
        assert "Too many requests at once" in error["message"] and "'flood'" in error["message"]
        assert f"at most {LIMIT} at once" in error["data"]["fix"]

        with pytest.raises(BaseException) as failed:  # what an SDK client shows
            anyio.run(tool_names, served, served.tokens["flood"])
        found = [e for e in leaves(failed.value) if isinstance(e, MCPError)]
        assert found and "Too many requests at once" in str(found[0]), leaves(failed.value)

        assert "countItems" in anyio.run(tool_names, served, served.tokens["other"])
        assert served.asked == ["flood"], "one question; refused requests never reach it"

        served.answer.set()
        for sock in waiting:
            assert answer_of(sock).startswith(b"HTTP/1.1 200")
    finally:
        for sock in waiting:
            sock.close()
    assert "countItems" in anyio.run(tool_names, served, served.tokens["flood"])
