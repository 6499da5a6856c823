"""A tool call on a worker thread that a client's cancel can stop at any point: before a
thread takes it (it never runs and gives its place back), while it waits for the backend's
lock (it returns unrun), or while its query runs (the store's read is interrupted)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

if TYPE_CHECKING:
    from agent.mcp_server.server import Caller, McpBackend


class _Launch:
    """Which came first: a worker thread starting the call, or its client giving it up.
    Either may: anyio drops a job cancelled before a worker thread takes it, so the thread's
    `finally` never runs for it and the cancelling side has to give its place back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: str | None = None

    def _claim(self, event: str) -> bool:
        with self._lock:
            if self._first is None:
                self._first = event
            return self._first == event

    def start(self) -> bool:
        """On the thread: whether the call may run (it was not given up first)."""
        return self._claim("start")

    def abandon(self) -> bool:
        """On the event loop: whether no thread has started the call, nor ever will."""
        return self._claim("abandon")


async def call_on_thread(
    backend: McpBackend,
    name: str,
    arguments: dict[str, Any] | None,
    caller: Caller,
    release: Callable[[], None] | None = None,
) -> types.CallToolResult:
    """Run `backend.call` on a worker thread; `release` (the caller's in-flight place) is
    called once, when the call has ended or when it is given up before it started."""
    token = object()
    launch = _Launch()
    backend.expect(token)  # from now on `interrupt` can stop it, wherever it has got to

    def run() -> types.CallToolResult:
        if not launch.start():  # given up first (whoever gave it up gave its place back)
            return types.CallToolResult(content=[], is_error=True)  # nobody reads it
        try:
            return backend.call(name, arguments, token, caller)
        finally:
            if release is not None:
                release()

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except BaseException:
        if launch.abandon():  # no thread took it: it never runs
            backend.forget(token)
            if release is not None:
                release()
        else:
            backend.interrupt(token)  # stop a running query or a waiting call (none once ended)
        raise
