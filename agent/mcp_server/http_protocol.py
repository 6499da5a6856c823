"""uvicorn's h11 protocol with deadlines for reading a request and a cap on open connections.

uvicorn bounds only the idle time between requests (and any received byte cancels even that),
so a client that trickles or never finishes its request headers or body would hold its
connection, and a file descriptor, forever (slowloris). Here each part of a request has a fixed
budget: the headers from the moment the server waits for them, the body from the end of the
headers. The clock runs only while the server is reading: not while the server holds the
request (it pauses reading until the application takes the body buffered so far, or the client
waits for the `100 Continue` the server sends when the application first reads the body: the
app's consent prompt comes first), and stops once the request is complete, so a response
streamed for as long as it likes (the Streamable HTTP transport's SSE streams) is never cut. At
the connection cap the connection that has been reading its request longest, the server not
holding it, makes room; when none is, the newcomer gets 503.

A response has no deadline, but its client must keep reading it: a connection whose client
leaves the server's writes unread (the transport's buffer over its high-water mark) for the
write budget is dropped, and at the cap such a connection makes room first (the longest
stalled). Otherwise a client pipelining requests, even refused ones, without reading the answers
would keep each connection "answering" forever and, at the cap, every newcomer out.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("agent.mcp_server.http")


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may take to send a request, and how many connections may be open."""

    header_seconds: float
    body_seconds: float
    max_connections: int
    write_seconds: float
    """How long the server's writes may wait on a client that does not read them."""


def _busy_response() -> bytes:
    body = json.dumps(
        {
            "error": "tabletalk's MCP server has too many open connections",
            "fix": "Retry in a few seconds; close connections your client no longer uses.",
        }
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\nretry-after: 1\r\n\r\n"
    )
    return head.encode() + body


BUSY_RESPONSE = _busy_response()


class _WatchedFlow(FlowControl):
    """uvicorn's read/write flow control, telling the protocol when reading pauses or resumes."""

    def __init__(self, transport: asyncio.Transport, changed: Callable[[], None]) -> None:
        super().__init__(transport)
        self._changed = changed

    def pause_reading(self) -> None:
        was_paused = self.read_paused
        super().pause_reading()
        if not was_paused:
            self._changed()

    def resume_reading(self) -> None:
        # Also when reading was not paused: uvicorn calls this as the application asks for
        # the body, after sending a client its `100 Continue`, which restarts the clock.
        super().resume_reading()
        self._changed()


class LimitedH11Protocol(H11Protocol):
    """H11Protocol whose request reading is bounded in time; use `protocol_with(limits)`."""

    limits: ConnectionLimits
    _phase: object = None
    _left: float | None = None
    _clock_started: float | None = None
    _timer: asyncio.TimerHandle | None = None
    reading_since: float | None = None
    """When this connection began waiting for the current request part (None: not reading)."""
    writing_stalled_since: float | None = None
    """When the client stopped taking the server's writes (None: it takes them)."""
    _write_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self._make_room():
            self.transport = transport  # connection_lost closes it again
            transport.write(BUSY_RESPONSE)
            transport.close()
            return
        super().connection_made(transport)
        self.flow = _WatchedFlow(transport, self._watch_reading)
        self._watch_reading()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_reading()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_reading()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.writing_stalled_since is None:
            self.writing_stalled_since = self.loop.time()
            self._write_timer = self.loop.call_later(
                self.limits.write_seconds, self._write_timed_out
            )

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stop_write_clock()

    def _stop_write_clock(self) -> None:
        self.writing_stalled_since = None
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _write_timed_out(self) -> None:
        self._write_timer = None
        log.info("dropping a connection whose client stopped reading the server's answers")
        self.transport.abort()  # close() would wait, forever, to flush what it does not read

    def stalled_since(self) -> float | None:
        """Since when the client has kept this connection from moving on: not reading the
        server's writes, or not sending its request while the server waits for it; None when
        the server is answering or holds the request."""
        if self.writing_stalled_since is not None:
            return self.writing_stalled_since
        if self.reading_since is not None and not self.server_holds():
            return self.reading_since
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        self._stop_write_clock()
        self._phase = self._left = self.reading_since = None
        super().connection_lost(exc)

    def _watch_reading(self) -> None:
        """Start a fresh budget when the request moves to a new part; (re)start or stop the clock."""
        phase = None if self.transport.is_closing() else self.conn.their_state
        if phase is not self._phase:
            self._stop_clock()
            self._phase = phase
            self._left = self._budget(phase)
            self.reading_since = self.loop.time() if self._left is not None else None
        if self._left is None or self.server_holds():
            self._stop_clock()
        elif self._timer is None:
            self._clock_started = self.loop.time()
            self._timer = self.loop.call_later(max(self._left, 0.0), self._read_timed_out)

    def server_holds(self) -> bool:
        """Whether the server, not the client, keeps the request from being read on: reading
        paused until the application takes the body so far, or the client waiting for the
        `100 Continue` that the application's first read of the body sends."""
        cycle = self.cycle
        return self.flow.read_paused or (cycle is not None and cycle.waiting_for_100_continue)

    def _budget(self, phase: object) -> float | None:
        """Seconds the client has for this part of its request (None: it is not sending one)."""
        if phase is h11.IDLE:
            return self.limits.header_seconds
        if phase is h11.SEND_BODY:
            return self.limits.body_seconds
        return None

    def _stop_clock(self) -> None:
        """Stop the running clock, keeping what is left of the budget."""
        if self._timer is None:
            return
        self._timer.cancel()
        self._timer = None
        if self._left is not None and self._clock_started is not None:
            self._left -= self.loop.time() - self._clock_started

    def _read_timed_out(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        part = "headers" if self._phase is h11.IDLE else "body"
        log.info("closing a connection that did not send its request %s in time", part)
        self.transport.close()
        # close() first sends what is buffered; a client that does not read it would keep the
        # connection (and its descriptor, no longer counted against the cap) forever.
        self.loop.call_later(self.limits.write_seconds, self.transport.abort)

    def _make_room(self) -> bool:
        """Whether this connection fits under the cap, after closing, if needed, the open
        connections that have been reading their request longest."""
        open_now = [
            other
            for other in self.connections
            if isinstance(other, LimitedH11Protocol) and not other.transport.is_closing()
        ]
        excess = len(open_now) + 1 - self.limits.max_connections
        if excess <= 0:
            return True
        stalled = sorted(
            (o for o in open_now if o.stalled_since() is not None),
            key=lambda other: other.stalled_since() or 0.0,
        )
        if len(stalled) < excess:
            return False
        log.info("connection cap reached: closing the connections stalled longest")
        for other in stalled[:excess]:
            other.transport.abort()  # nothing to flush to a stalled client
        return True


def protocol_with(limits: ConnectionLimits) -> type[LimitedH11Protocol]:
    """A protocol class for `uvicorn.Config(http=...)` that applies these limits."""
    chosen = limits

    class Limited(LimitedH11Protocol):
        limits = chosen

    return Limited
