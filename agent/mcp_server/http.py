"""`tabletalk mcp --http`: the MCP streamable HTTP transport on loopback, one token per client.

Every request passes the loopback guard (Host and Origin must name this machine: DNS-rebinding
protection) and the token guard (a valid bearer token, looked up on every request so a
revocation takes effect at once); the token's client and level then decide what the request may
see and call. The SDK's session manager serves the protocol; its sessions are bound to the
credential that opened them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agent.errors import TabletalkError
from agent.mcp_server.http_messages import answers_nothing, peek_body, replaying
from agent.mcp_server.server import Caller, CallRecord, McpBackend, build_server
from agent.mcp_server.tokens import McpClient, TokenBook, token_hash

log = logging.getLogger("agent.mcp_server.http")

PATH = "/mcp"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
MAX_REQUEST_BYTES = 4 * 1024 * 1024
HEADER_TIMEOUT = 10.0
"""Seconds a client has to send a request's headers (from connecting, or from the last response)."""
BODY_TIMEOUT = 30.0
"""Seconds a client has to send a request's body after its headers (4 MB at most, on loopback)."""
WRITE_TIMEOUT = 30.0
"""Seconds the server's writes may wait on a client that does not read them (a stream's client
reads as events come, so only a stalled one meets it)."""
MAX_CONNECTIONS = 128
"""Open connections at once; a few clients need a few each (a POST and a GET stream)."""
BACKLOG = 64
"""Connections waiting to be accepted; also how many the server accepts in one go."""
MAX_CLIENT_REQUESTS = 8
"""Requests one token may have in flight at once (waiting for the user's consent, a tool call
running, an open event stream): one client holding many cannot take the connections others
need. A client's next request over it is answered 429 at once; a notification or a response
it POSTs (a small one: it runs no tool and gets no result) is served uncounted, so a client at
its limit can still cancel a call."""
BUSY_CODE = -32000
"""The JSON-RPC error code of a request refused for its client's in-flight limit (a server error:
the request was well formed)."""
SCOPE_KEY = "tabletalk.client"
SLOT_KEY = "tabletalk.slot"

Consent = Callable[[McpClient], Awaitable[bool]]
"""Asks the user whether a client that never called before may go on (the app's prompt); the
guard asks it once per token, however many of the token's requests wait for the answer."""


def check_bind_host(host: str) -> str:
    """The host to bind, or a TabletalkError when it is not a loopback address."""
    name = host.strip("[]")
    if name == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise TabletalkError(
            f"Refusing to listen on {host}: the MCP server only binds to this machine "
            "(127.0.0.1 or ::1), so no other computer can reach your tables",
            fix="Leave --host out (127.0.0.1), or pass --host ::1.",
        )
    return str(address)


def _is_loopback_name(name: str | None) -> bool:
    if not name:
        return False
    name = name.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_is_loopback(host: str | None) -> bool:
    """Whether a Host header names this machine (with or without a port)."""
    if not host:
        return False
    try:
        return _is_loopback_name(urlsplit(f"//{host}").hostname)
    except ValueError:
        return False


def origin_is_loopback(origin: str) -> bool:
    """Whether an Origin header is a page served from this machine."""
    try:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and _is_loopback_name(parts.hostname)
    except ValueError:
        return False


async def _refuse(send: Send, status: int, message: str, fix: str, **headers: str) -> None:
    body = json.dumps({"error": message, "fix": fix}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(key.encode(), value.encode()) for key, value in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _refuse_busy(send: Send, client: McpClient, limit: int) -> None:
    """429 for a client over its in-flight limit, as a JSON-RPC error (the SDK's clients show
    its message) that says what to do."""
    fix = (
        f"Wait for one of them to finish before sending another (at most {limit} at once per "
        "token), or give each client its own token (`tabletalk mcp token create NAME`)."
    )
    message = f"Too many requests at once from MCP client {client.name!r}. {fix}"
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": BUSY_CODE, "message": message, "data": {"fix": fix}},
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass
class _Slot:
    """One request's place in its client's in-flight count: held by the HTTP exchange and by
    each tool call it started (`hold`), given back when the last of them ends, so a call
    still running after its client hung up or cancelled it keeps counting."""

    counts: dict[str, int]
    name: str
    loop: asyncio.AbstractEventLoop
    holders: int = 1

    def hold(self) -> Callable[[], None]:
        """Another holder (on the event loop); what it returns gives it back from any thread."""
        self.holders += 1

        def release() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the server has ended
                self.loop.call_soon_threadsafe(self.drop)

        return release

    def drop(self) -> None:
        """One holder is done (on the event loop); the last gives the client's place back."""
        self.holders -= 1
        if self.holders:
            return
        left = self.counts.pop(self.name) - 1
        if left:
            self.counts[self.name] = left


def hold_of(ctx: Any) -> Callable[[], None] | None:
    """Keep the place of the request of `ctx` for its tool call (`_Slot.hold`)."""
    request = getattr(ctx, "request", None)
    slot = request.scope.get(SLOT_KEY) if request is not None else None
    return slot.hold() if isinstance(slot, _Slot) else None


@dataclass
class Guard:
    """ASGI middleware: loopback Host/Origin (403), then a valid bearer token (401), then at
    most `client_limit` requests in flight per token (429), counted from before the consent
    prompt to the end of the response; at the limit a POSTed notification or response is
    served uncounted (`_past_limit`). A new token's requests share one consent question."""

    app: ASGIApp
    tokens: TokenBook
    consent: Consent | None = None
    consented: set[str] = field(default_factory=set)
    """Hashes of the tokens the user allowed while this server runs (not names: a token issued
    again under an allowed name is a new token, asked about again)."""
    client_limit: int = MAX_CLIENT_REQUESTS
    in_flight: dict[str, int] = field(default_factory=dict)
    """Requests being served per client name, a tool call counting until its thread ends
    (`_Slot`; changed on the event loop only: no lock needed)."""
    asking: dict[str, asyncio.Future[bool]] = field(default_factory=dict)
    """Token hash → the consent question open for it, which each of its requests awaits."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not host_is_loopback(headers.get("host")):
            await _refuse(
                send,
                403,
                "Host is not this machine",
                "Connect to http://127.0.0.1:PORT/mcp (DNS-rebinding protection).",
            )
            return
        origin = headers.get("origin")
        if origin is not None and not origin_is_loopback(origin):
            await _refuse(
                send,
                403,
                "Origin is not this machine",
                "Only clients on this machine may call tabletalk (DNS-rebinding protection).",
            )
            return
        found = await self._client(headers.get("authorization", ""))
        if found is None:
            await _refuse(
                send,
                401,
                "A valid tabletalk token is required",
                "Create one with `tabletalk mcp token create NAME --level read` and send it "
                "as `Authorization: Bearer TOKEN`.",
                **{"www-authenticate": 'Bearer realm="tabletalk"'},
            )
            return
        client, key = found
        held = self.in_flight.get(client.name, 0)
        if held >= self.client_limit:
            replay = await self._past_limit(client, key, scope, receive)
            if replay is None:
                await _refuse_busy(send, client, self.client_limit)
            else:
                await self._serve(client, key, scope, replay, send)
            return
        self.in_flight[client.name] = held + 1
        slot = _Slot(self.in_flight, client.name, asyncio.get_running_loop())
        scope[SLOT_KEY] = slot
        try:
            await self._serve(client, key, scope, receive, send)
        finally:
            slot.drop()

    async def _past_limit(
        self, client: McpClient, key: str, scope: Scope, receive: Receive
    ) -> Receive | None:
        """The `receive` replaying the body of a request its client sends at its limit, when
        that request is a POST of one JSON-RPC notification or response (cancelling a call,
        answering the server): the SDK acknowledges it (202) and runs no tool for it, so it
        takes no place. None: refuse it (429), as any request of a token still to be asked
        about (it would wait for the consent prompt, holding its connection uncounted)."""
        if scope.get("method") != "POST" or self._asks(client, key):
            return None
        peeked = await peek_body(scope, receive)
        if peeked.body is None or not answers_nothing(peeked.body):
            return None
        return replaying(peeked, receive)

    async def _serve(
        self, client: McpClient, key: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A verified client's request: asked about (a first call), then served."""
        if not await self._allowed(client, key):
            await _refuse(
                send,
                403,
                f"The user denied client {client.name!r}; its token is revoked",
                "Ask the user for a new token.",
            )
            return
        scope[SCOPE_KEY] = client
        scope["user"] = AuthenticatedUser(
            AccessToken(token="", client_id=client.name, scopes=[client.level])
        )
        await self.app(scope, receive, send)

    async def _client(self, authorization: str) -> tuple[McpClient, str] | None:
        """The client a bearer token names and the token's hash (what consent is keyed by)."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        client = await anyio.to_thread.run_sync(self.tokens.verify, token.strip())
        return None if client is None else (client, token_hash(token.strip()))

    async def _allowed(self, client: McpClient, key: str) -> bool:
        """A token that never called before is asked about once (in the app): its concurrent
        requests all await the one question (`_ask`), so the app shows one prompt per token
        and a denial refuses every one of them."""
        if self.consent is None or not self._asks(client, key):
            return True
        question = self.asking.get(key)
        if question is None:
            question = asyncio.ensure_future(self._ask(self.consent, client, key))
            self.asking[key] = question
        # A request that ends while waiting (its client left) leaves the question to the rest.
        return await asyncio.shield(question)

    def _asks(self, client: McpClient, key: str) -> bool:
        """Whether the client's requests wait for the user's consent (a token never used)."""
        return not (self.consent is None or client.last_used is not None or key in self.consented)

    async def _ask(self, consent: Consent, client: McpClient, key: str) -> bool:
        """The one consent question for token `key`: allowed, or denied and revoked."""
        try:
            if await consent(client):
                self.consented.add(key)
                return True
            await anyio.to_thread.run_sync(self.tokens.revoke, client.name)
            return False
        finally:
            self.asking.pop(key, None)


def caller_of(ctx: Any) -> Caller:
    """The caller of a request, from the client the guard put into its HTTP scope."""
    request = getattr(ctx, "request", None)
    client = request.scope.get(SCOPE_KEY) if request is not None else None
    if not isinstance(client, McpClient):  # the guard runs first, so this is a bug
        raise RuntimeError("an MCP request reached a handler without a verified client")
    return Caller(client.name, client.level, client.origin, via_token=True)


def build_app(backend: McpBackend, tokens: TokenBook, consent: Consent | None = None) -> ASGIApp:
    """The whole ASGI app: guard → Starlette → the SDK's streamable HTTP session manager."""
    server = build_server(backend, caller_of, hold_of)

    def count_call(record: CallRecord, caller: Caller) -> None:
        if caller.via_token:
            tokens.record_call(caller.name)

    backend.call_hooks.append(count_call)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in ("localhost", "127.0.0.1", "[::1]")]
        + ["localhost", "127.0.0.1", "[::1]"],
        allowed_origins=[
            f"{scheme}://{name}{port}"
            for scheme in ("http", "https")
            for name in ("localhost", "127.0.0.1", "[::1]")
            for port in ("", ":*")
        ],
    )
    manager = StreamableHTTPSessionManager(
        server, security_settings=security, max_request_body_size=MAX_REQUEST_BYTES
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(
        routes=[Route(PATH, endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan
    )
    return Guard(app, tokens, consent, client_limit=MAX_CLIENT_REQUESTS)


CLI_PORT_FIX = "Pick another port with --port N (or --port 0 for any free one)."


def bind_sockets(host: str, port: int, fix: str = CLI_PORT_FIX) -> list[socket.socket]:
    """Listening sockets on the loopback host (and ::1 beside 127.0.0.1 when it exists).
    `fix` says how to choose another port where the caller asked for this one."""
    host = check_bind_host(host)
    if not 0 <= port <= 65535:  # socket.bind raises OverflowError, not OSError, for these
        raise TabletalkError(f"{port} is not a port number (0 to 65535)", fix=fix)
    sockets: list[socket.socket] = []
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    first = socket.socket(family, socket.SOCK_STREAM)
    first.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        first.bind((host, port))
    except OSError as exc:
        first.close()
        raise TabletalkError(
            f"Cannot listen on {host}:{port}: {exc.strerror or exc}", fix=fix
        ) from exc
    sockets.append(first)
    if host == "127.0.0.1" and socket.has_ipv6:
        chosen = first.getsockname()[1]
        second = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        second.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        second.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            second.bind(("::1", chosen))
            sockets.append(second)
        except OSError:  # no IPv6 loopback here: 127.0.0.1 is enough
            second.close()
    for sock in sockets:
        sock.listen(BACKLOG)
        sock.setblocking(False)
    return sockets


def url_of(sockets: list[socket.socket]) -> str:
    """The URL a client connects to."""
    host, port = sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATH}"


def client_snippet(url: str, token: str = "TOKEN", name: str = "tabletalk") -> str:
    """An `mcpServers` block for clients that take one."""
    block = {
        "mcpServers": {
            name: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
        }
    }
    return json.dumps(block, indent=2)


class HttpServer:
    """A uvicorn server for the app on already-bound sockets; `stop()` ends it cleanly.

    Its HTTP/1.1 protocol (`http_protocol.py`) bounds the time a client may take to send a
    request and the number of open connections, so slow or stalled clients cannot hold
    connections (and file descriptors) forever; WebSocket upgrades are off (MCP needs none).
    """

    def __init__(self, app: ASGIApp, sockets: list[socket.socket]) -> None:
        import uvicorn

        from agent.mcp_server.http_protocol import ConnectionLimits, protocol_with

        self.sockets = sockets
        self.url = url_of(sockets)
        limits = ConnectionLimits(HEADER_TIMEOUT, BODY_TIMEOUT, MAX_CONNECTIONS, WRITE_TIMEOUT)
        config = uvicorn.Config(
            app,
            http=protocol_with(limits),
            ws="none",
            backlog=BACKLOG,
            log_level="warning",
            lifespan="on",
            access_log=False,
        )
        self._server = uvicorn.Server(config)

    async def serve(self) -> None:
        """Serve until `stop()` (or Ctrl+C in a terminal)."""
        await self._server.serve(sockets=self.sockets)

    def stop(self) -> None:
        """Ask the server to finish its requests and exit."""
        self._server.should_exit = True
