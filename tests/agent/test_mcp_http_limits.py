"""`tabletalk mcp --http` against slow and flooding clients: real sockets on 127.0.0.1.

Each server is a real `tabletalk mcp --http` process whose limits (module constants of
`agent.mcp_server.http`) are lowered before it starts, so a timeout of one second can be
watched. Waits are bounded generously (a loaded machine may be slow); what is asserted is
that the server closes a connection, never how fast.
"""

from __future__ import annotations

import errno
import json
import re
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from tests.agent.test_mcp_http import ROOT, TIMEOUT, cli, session, xdg_env

READ_TIMEOUT = 1.0
"""The lowered header and body timeouts, in seconds."""
CLOSE_BOUND = 30.0
"""How long a test waits for the server to close a connection it should close."""

LAUNCH = """
import json, resource, sys
import agent.mcp_server.http as http
for name, value in json.loads(sys.argv[1]).items():
    if name == "open_files":
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (value, hard))
    else:
        setattr(http, name, value)
from agent.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


class LimitedServer:
    """A `tabletalk mcp --http --port 0` process started with the given limits."""

    def __init__(self, home: Path, db: Path, limits: dict[str, float]) -> None:
        self.env = xdg_env(home)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                LAUNCH,
                json.dumps(limits),
                "mcp",
                "--http",
                "--port",
                "0",
                "--db",
                str(db),
            ],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", first)
        if not found:
            self.process.kill()
            raise RuntimeError(f"server did not start: {first!r} {self.process.stderr.read()}")  # type: ignore[union-attr]
        self.url, self.port = found.group(0), int(found.group(1))
        self.token = self.make_token("prober", "read")

    def make_token(self, name: str, level: str) -> str:
        done = cli(self.env, "mcp", "token", "create", name, "--level", level)
        assert done.returncode == 0, done.stderr
        return re.search(r"(tt_\S+)", done.stdout).group(1)  # type: ignore[union-attr]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(TIMEOUT)


def start_server(home: Path, template: Path, limits: dict[str, float]) -> LimitedServer:
    home.mkdir(parents=True, exist_ok=True)
    return LimitedServer(home, Path(shutil.copy(template, home / "shop.sqlite")), limits)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, demo_template: Path
) -> Iterator[LimitedServer]:
    served = start_server(
        tmp_path_factory.mktemp("mcp-slow"),
        demo_template,
        {
            "HEADER_TIMEOUT": READ_TIMEOUT,
            "BODY_TIMEOUT": READ_TIMEOUT,
            "WRITE_TIMEOUT": READ_TIMEOUT,
        },
    )
    yield served
    served.stop()


def closed_by_server(
    sock: socket.socket, trickle: bytes = b"", within: float = CLOSE_BOUND
) -> bool:
    """Whether the server closes the connection within the bound, while we send `trickle`
    one byte every 0.2 s (whatever the server answers first is read and dropped)."""
    deadline = time.monotonic() + within
    sent = 0
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], 0.2)
        try:
            if readable and not sock.recv(65536):
                return True
            if sent < len(trickle):
                sock.sendall(trickle[sent : sent + 1])
                sent += 1
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def request_head(server: LimitedServer, extra: str = "", token: bool = True) -> bytes:
    auth = f"Authorization: Bearer {server.token}\r\n" if token else ""
    return (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{auth}{extra}\r\n"
    ).encode()


@pytest.mark.parametrize(
    ("sent", "trickle"),
    [
        (b"", b""),
        (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", b""),
        (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ", b"a" * 1000),
    ],
    ids=["nothing", "half-the-headers", "headers-trickling"],
)
def test_a_request_whose_headers_do_not_arrive_in_time_is_disconnected(
    server: LimitedServer, sent: bytes, trickle: bytes
) -> None:
    with server.connect() as sock:
        sock.sendall(sent)
        assert closed_by_server(sock, trickle)


@pytest.mark.parametrize(
    ("extra", "sent", "token"),
    [
        ("Content-Length: 1000\r\n", b'{"jsonrpc": "2.0", ', True),
        ("Transfer-Encoding: chunked\r\n", b'3e8\r\n{"jsonrpc": "2.0", ', True),
        ("Content-Length: 1000\r\n", b'{"jsonrpc": "2.0", ', False),
    ],
    ids=["content-length", "chunked", "refused-401-then-trickling"],
)
def test_a_request_body_that_stalls_is_disconnected(
    server: LimitedServer, extra: str, sent: bytes, token: bool
) -> None:
    with server.connect() as sock:
        sock.sendall(request_head(server, extra, token) + sent)
        assert closed_by_server(sock, b" " * 1000)


def open_session(server: LimitedServer) -> dict[str, str]:
    """An initialised MCP session's headers (raw HTTP, as a client would send them)."""
    headers = {
        "Authorization": f"Bearer {server.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "streamer", "version": "0"},
        },
    }
    opened = httpx2.post(server.url, json=init, headers=headers, timeout=TIMEOUT)
    assert opened.status_code == 200, opened.text
    headers |= {
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-06-18",
    }
    done = httpx2.post(
        server.url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=headers,
        timeout=TIMEOUT,
    )
    assert done.status_code == 202, done.text
    return headers


def open_event_stream(server: LimitedServer, headers: dict[str, str]) -> socket.socket:
    """The session's GET event stream on a raw socket, its response head read."""
    sock = server.connect()
    sent = {**headers, "Host": "127.0.0.1", "Accept": "text/event-stream"}
    del sent["Content-Type"]
    lines = "".join(f"{name}: {value}\r\n" for name, value in sent.items())
    sock.sendall(f"GET /mcp HTTP/1.1\r\n{lines}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, f"the event stream closed before its head: {head!r}"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head, head
    return sock


def still_open(sock: socket.socket, seconds: float = 0.0) -> bool:
    """Whether the server keeps the connection open for `seconds` (events are read and dropped)."""
    deadline = time.monotonic() + seconds
    while True:
        readable, _, _ = select.select([sock], [], [], max(deadline - time.monotonic(), 0.0))
        try:
            if readable and not sock.recv(65536):
                return False
        except ConnectionResetError:
            return False
        if time.monotonic() >= deadline:
            return True


def test_a_long_event_stream_outlives_the_read_timeouts(server: LimitedServer) -> None:
    headers = open_session(server)
    with open_event_stream(server, headers) as stream:
        with server.connect() as stalled:  # the timeouts are on: a stalled request is cut
            stalled.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert closed_by_server(stalled)
        assert still_open(stream, 3 * READ_TIMEOUT)
        ended = httpx2.delete(server.url, headers=headers, timeout=TIMEOUT)
        assert ended.status_code == 200
        stream.settimeout(TIMEOUT)
        tail = b""
        while not tail.endswith(b"0\r\n\r\n"):  # the stream's last chunk: it ended, not cut
            chunk = stream.recv(4096)
            assert chunk, f"the event stream was cut: {tail!r}"
            tail += chunk


def list_tool_names(url: str, token: str) -> list[str]:
    async def work(client: Client) -> list[str]:
        return [tool.name for tool in (await client.list_tools()).tools]

    names: list[str] = session(url, token, work)
    return names


def tool_names_once_let_in(url: str, token: str) -> list[str]:
    """`list_tool_names`, asked again while the server answers 503 (busy) for at most
    CLOSE_BOUND: a server still writing the answers a stalled client left unread (slow on a
    loaded machine) counts that connection as answering until its buffer fills; a locked-out
    client is refused for the whole of the 600 s timeouts."""
    deadline = time.monotonic() + CLOSE_BOUND
    while True:
        try:
            return list_tool_names(url, token)
        except Exception:  # the SDK's MCPError, inside anyio's exception groups
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_flood_of_stalled_connections_leaves_room_for_a_real_client(
    tmp_path: Path, demo_template: Path
) -> None:
    # Long timeouts, so only the connection cap can help; few open files, so that without a
    # cap the stalled connections use them all up and the server cannot accept another.
    flooded = start_server(
        tmp_path / "home",
        demo_template,
        {"HEADER_TIMEOUT": 600, "BODY_TIMEOUT": 600, "MAX_CONNECTIONS": 16, "open_files": 256},
    )
    stalled: list[socket.socket] = []
    try:
        for _ in range(400):
            try:
                sock = socket.create_connection(("127.0.0.1", flooded.port), timeout=5)
            except OSError:  # the server stopped accepting
                break
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            stalled.append(sock)
        assert "countItems" in list_tool_names(flooded.url, flooded.token)
        still = [sock for sock in stalled if still_open(sock)]
        assert len(still) <= 16
    finally:
        for sock in stalled:
            sock.close()
        flooded.stop()


def test_at_the_cap_of_busy_connections_a_newcomer_gets_503(
    tmp_path: Path, demo_template: Path
) -> None:
    busy = start_server(tmp_path / "home", demo_template, {"MAX_CONNECTIONS": 4})
    streams: list[socket.socket] = []
    try:
        sessions = [open_session(busy) for _ in range(4)]
        streams = [open_event_stream(busy, headers) for headers in sessions]
        with busy.connect() as newcomer:
            answer = b""
            while chunk := newcomer.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 503"), answer
        assert b"too many open connections" in answer
    finally:
        for sock in streams:
            sock.close()
        busy.stop()


def never_reading(port: int) -> tuple[socket.socket, bool]:
    """A client without a token pipelining requests and never reading the answers (refusals),
    until the server stops taking more because its unread answers fill the buffers. Also
    says whether the server already dropped it while it was still sending (a loaded machine
    can take long enough to fill the buffers for the write deadline to pass)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    sock.setblocking(False)
    requests = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n" * 2000
    deadline = time.monotonic() + CLOSE_BOUND
    refused = 0
    while time.monotonic() < deadline and refused < 50:
        try:
            sock.send(requests)
            refused = 0
        except BlockingIOError:
            refused += 1
            time.sleep(0.02)
        except (ConnectionResetError, BrokenPipeError):
            return sock, True
    return sock, False


def test_a_client_that_stops_reading_the_answers_is_dropped(server: LimitedServer) -> None:
    """Its connection was "answering" for ever (no deadline covers a response), holding a
    descriptor and a place under the cap."""
    sock, dropped = never_reading(server.port)
    with sock:
        deadline = time.monotonic() + CLOSE_BOUND
        while not dropped and time.monotonic() < deadline:
            dropped = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == errno.ECONNRESET
            time.sleep(0.2)
        assert dropped


def test_clients_that_never_read_their_answers_do_not_lock_others_out(
    tmp_path: Path, demo_template: Path
) -> None:
    """Long timeouts, so only the cap can help: at the cap, connections whose clients leave
    the answers unread make room (they were counted as busy answering, so every newcomer,
    a real client too, got 503 for as long as they stayed)."""
    locked = start_server(
        tmp_path / "home",
        demo_template,
        {"MAX_CONNECTIONS": 3, "HEADER_TIMEOUT": 600, "BODY_TIMEOUT": 600, "WRITE_TIMEOUT": 600},
    )
    stalled: list[socket.socket] = []
    try:
        stalled = [never_reading(locked.port)[0] for _ in range(3)]
        assert "countItems" in tool_names_once_let_in(locked.url, locked.token)
    finally:
        for sock in stalled:
            sock.close()
        locked.stop()
