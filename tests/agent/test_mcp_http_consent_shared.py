"""A new token's concurrent requests share one consent question: the app asks the user once
per token however many requests wait, every waiting request gets that one answer (a denial
refuses them all; no later "yes" serves a request of the token the denial revoked), and a
token issued again under a name the user allowed before is asked about afresh.

A real server (`HttpServer` with a consent hook the test answers) and raw sockets as clients.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from agent.mcp_server.http import HttpServer, bind_sockets, build_app
from agent.mcp_server.server import McpBackend
from agent.mcp_server.tokens import McpClient, TokenBook
from agent.stores.sqlite import SQLiteStore
from tests.agent.test_mcp_http_client_limit import LIMIT, answer_of, initialize_on_socket

BOUND = 30.0
"""The most any single wait of the test takes."""


@dataclass
class Asking:
    """A running server whose consent hook records each question and, once `release` is
    set, answers it with the next of `answers` (True after they run out)."""

    port: int
    book: TokenBook
    answers: list[bool]
    release: threading.Event = field(default_factory=threading.Event)
    asked: list[str] = field(default_factory=list)
    prompted: threading.Condition = field(default_factory=threading.Condition)

    def wait_asked(self, count: int, seconds: float = BOUND) -> bool:
        with self.prompted:
            return self.prompted.wait_for(lambda: len(self.asked) >= count, seconds)


@pytest.fixture
def asking(tmp_path: Path, demo_template: Path) -> Iterator[Asking]:
    store = SQLiteStore.open(Path(shutil.copy(demo_template, tmp_path / "shop.sqlite")))
    book = TokenBook(tmp_path / "clients.sqlite")
    holder: list[Asking] = []

    def answer() -> bool:
        state = holder[0]
        state.release.wait(BOUND)
        with state.prompted:
            return state.answers.pop(0) if state.answers else True

    async def consent(client: McpClient) -> bool:
        with holder[0].prompted:
            holder[0].asked.append(client.name)
            holder[0].prompted.notify_all()
        return await anyio.to_thread.run_sync(answer)

    backend = McpBackend(store, "full")
    server = HttpServer(build_app(backend, book, consent), bind_sockets("127.0.0.1", 0))
    thread = threading.Thread(target=anyio.run, args=(server.serve,), daemon=True)
    thread.start()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    holder.append(Asking(port, book, []))
    try:
        yield holder[0]
    finally:
        holder[0].release.set()
        server.stop()
        thread.join(BOUND)
        backend.close()
        book.close()
        store.close()


def test_concurrent_requests_of_a_new_token_share_one_consent_question(asking: Asking) -> None:
    """Eight requests of one new token stacked eight confirmation prompts in the app; one
    question now stands for all of them, and its "yes" lets every one through."""
    token = asking.book.create("newcomer", "read")
    waiting = [initialize_on_socket(asking, token) for _ in range(LIMIT)]  # type: ignore[arg-type]
    try:
        assert asking.wait_asked(1)
        assert not asking.wait_asked(2, seconds=1.0), f"asked {len(asking.asked)} times"
        asking.release.set()
        for sock in waiting:
            assert answer_of(sock).startswith(b"HTTP/1.1 200")
    finally:
        for sock in waiting:
            sock.close()
    assert asking.asked == ["newcomer"]


def test_a_denial_refuses_every_request_waiting_on_it(asking: Asking) -> None:
    """Two prompts for one token could be answered apart: the first "no" revoked the token,
    and the second's "yes" then served a request of the revoked token anyway."""
    token = asking.book.create("newcomer", "read")
    asking.answers[:] = [False, True]
    waiting = [initialize_on_socket(asking, token) for _ in range(2)]  # type: ignore[arg-type]
    try:
        assert asking.wait_asked(1)
        asking.wait_asked(2, seconds=1.0)
        asking.release.set()
        statuses = sorted(answer_of(sock).split(b"\r\n", 1)[0] for sock in waiting)
    finally:
        for sock in waiting:
            sock.close()
    assert statuses == [b"HTTP/1.1 403 Forbidden"] * 2
    assert asking.book.verify(token) is None


def test_a_token_issued_again_under_an_allowed_name_is_asked_about(asking: Asking) -> None:
    """The user's "yes" was remembered by client name: revoking the token and issuing a new
    one under the same name let the new token in without a question."""
    asking.release.set()
    first = asking.book.create("desk", "read")
    with initialize_on_socket(asking, first) as sock:  # type: ignore[arg-type]
        assert answer_of(sock).startswith(b"HTTP/1.1 200")
    assert asking.asked == ["desk"]
    asking.book.revoke("desk")
    second = asking.book.create("desk", "read")
    with initialize_on_socket(asking, second) as sock:  # type: ignore[arg-type]
        assert answer_of(sock).startswith(b"HTTP/1.1 200")
    assert asking.asked == ["desk", "desk"], "the new token was let in unasked"
