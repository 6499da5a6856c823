"""The app's MCP HTTP server: started and stopped from the MCP panel, serving the open store.

The server runs on its own thread with its own event loop; what it tells the app (a new
client's first call to consent to, a staged change to show, a commit) hops over with
`call_from_thread`, like the agent's bridge.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from agent.errors import TabletalkError

if TYPE_CHECKING:
    from agent.mcp_server.server import Caller, CallRecord, McpBackend
    from agent.mcp_server.tokens import McpClient, TokenBook
    from tui.app import TabletalkApp

STAGING_TOOLS = frozenset({"stageItem", "bulkEdit", "discardStagedChanges", "commitStagedChanges"})


class McpServing:
    """Start/stop the loopback HTTP server for the app's store; tokens and recent calls."""

    def __init__(self, app: TabletalkApp) -> None:
        self.app = app
        self.url: str | None = None
        self._book: TokenBook | None = None
        self._backend: McpBackend | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def book(self) -> TokenBook:
        """The clients file (opened on first use)."""
        if self._book is None:
            from agent.mcp_server.tokens import TokenBook

            self._book = TokenBook()
        return self._book

    def start(self, port: int = 8765, host: str = "127.0.0.1") -> str:
        """Bind and serve on a thread; returns the URL. Raises TabletalkError to show."""
        if self.running and self.url:
            return self.url
        from agent.mcp_server.http import HttpServer, bind_sockets, build_app
        from agent.mcp_server.server import McpBackend

        sockets = bind_sockets(
            host, port, fix="Type another port in the port box (0 picks any free one)."
        )
        backend = McpBackend(self.app.store, "full", tell=self._tell)
        backend.call_hooks.append(self._after_call)
        server = HttpServer(build_app(backend, self.book, consent=self._consent), sockets)
        self._backend, self._server, self.url = backend, server, server.url
        self._thread = threading.Thread(
            target=self._serve, args=(server,), name="mcp-http", daemon=True
        )
        self._thread.start()
        return server.url

    def _serve(self, server: Any) -> None:
        try:
            import anyio  # with the server, not at app start

            anyio.run(server.serve)
        except Exception as exc:  # shown in the app; the panel then says it stopped
            self._post(
                self.app.notify, f"MCP server stopped: {exc}", severity="error", markup=False
            )

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (requests in flight finish) and close the backend."""
        if self._server is not None:
            self._server.stop()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._backend is not None:
            self._backend.close()
        self._server = self._thread = self._backend = None
        self.url = None

    def close(self) -> None:
        """On app exit: stop and close the clients file."""
        self.stop()
        if self._book is not None:
            self._book.close()
            self._book = None

    def clients(self) -> list[McpClient]:
        return self.book.list()

    def recent_calls(self) -> list[CallRecord]:
        return list(self._backend.recent) if self._backend is not None else []

    def create_token(self, name: str, level: str) -> str:
        return self.book.create(name, level)

    def revoke(self, name: str) -> bool:
        return self.book.revoke(name)

    # ----- hooks from the server thread ------------------------------------------------------

    async def _consent(self, client: McpClient) -> bool:
        """A token's first call: ask the user in the app (on the app's thread)."""
        import anyio

        return await anyio.to_thread.run_sync(self._ask_consent, client)

    def _ask_consent(self, client: McpClient) -> bool:
        try:
            # mypy cannot solve Textual's `T | Awaitable[T]` parameter for a coroutine function.
            return bool(self.app.call_from_thread(self.app.ask_mcp_consent, client))  # type: ignore[arg-type]
        except RuntimeError:  # the app is closing: nobody can answer
            return False

    def _after_call(self, record: CallRecord, caller: Caller) -> None:
        if record.tool in STAGING_TOOLS and record.ok:
            self._post(self.app.refresh_staging)
        if record.tool == "commitStagedChanges" and record.ok:
            self._post(
                self.app.notify,
                f"MCP client {record.client} committed staged changes.",
                title="MCP commit",
            )

    def _tell(self, notice: str) -> None:
        """A notice of the server's staging area, shown as the app's own are."""

        def show() -> None:
            self.app.notify(notice, title="Staging", severity="warning", markup=False)

        try:
            self.app.call_from_thread(show)
        except RuntimeError:  # already on the app's thread (the backend opens in `start`)
            show()

    def _post(self, callback: Any, *args: Any, **kwargs: Any) -> None:
        try:
            self.app.call_from_thread(callback, *args, **kwargs)
        except (RuntimeError, TabletalkError):  # the app is closing
            pass
