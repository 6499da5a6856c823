"""Connections to the user's external MCP servers, and their tools as ExternalTools.

The `mcp` client is async and our loop is synchronous, so one background thread runs an
asyncio event loop owned by `McpSources`. Each server lives in one task of that loop (the
SDK's `Client` must be entered and exited by the same task); tool calls from the loop's
worker thread cross over with `asyncio.run_coroutine_threadsafe(...).result(timeout)`.
A server that fails to start gives a warning and no tools; one that dies later answers
every call with an error result naming it. The rest of the app keeps working either way.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

import catalog
from agent import paths
from agent.config import McpServerSettings
from agent.mcp_client.names import (
    bedrock_tool_name,
    clean_input_schema,
    external_row,
    server_fingerprint,
    tool_identity,
)
from agent.mcp_client.results import convert_result
from agent.tools.base import ToolContext
from agent.toolset import ExternalTool, Runner, RunResult

logging.getLogger("mcp").addHandler(logging.NullHandler())  # never print SDK tracebacks

START_TIMEOUT = 10.0
MAX_SCHEMA_CHARS = 32_000
"""A tool whose input schema is longer (as JSON) is left out: once discovered, its schema
goes with every request of the turn, so a server could make each one slow and costly."""
CALL_TIMEOUT = 120.0
CLOSE_TIMEOUT = 8.0
DEAD_FIX = (
    "Do not call tools of this server again in this session; tell the user the MCP server "
    "stopped (they can check its command in the config file and restart tabletalk)."
)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def shown_url(url: str) -> str:
    """A server URL as any message shows it: scheme, host and port only. Hosted servers carry
    their key in the path, the query or the user info, and messages reach the terminal, the
    log, the model and the saved conversation."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "?", parts.port
    except ValueError:
        return "(the configured url)"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


def describe_exception(exc: BaseException) -> str:
    """A one-line reason from an exception, unwrapping task-group exception groups; any URL in
    it is cut to its origin (`shown_url`)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return "it did not answer in time"
    if getattr(exc, "code", None) == types.CONNECTION_CLOSED:
        return "it closed the connection before answering (it exited, or it is not an MCP server)"
    text = _URL.sub(lambda found: shown_url(found.group()), str(exc).strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class _Server:
    """One configured server: its connection (while alive) and the tools it listed."""

    name: str
    settings: McpServerSettings
    client: Client | None = None
    tools: list[types.Tool] = field(default_factory=list)
    dead_reason: str | None = None
    stop: asyncio.Event | None = None
    task: asyncio.Task[None] | None = None
    errlog: IO[str] | None = None


class McpSources:
    """The external MCP servers of one app run: connect, list tools, proxy calls, close."""

    def __init__(self, *, call_timeout: float = CALL_TIMEOUT) -> None:
        self.call_timeout = call_timeout
        self.warnings: list[str] = []
        self._servers: dict[str, _Server] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tools: list[ExternalTool] = []

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        servers: Mapping[str, McpServerSettings],
        warn: Callable[[str], None] = lambda message: None,
        *,
        timeout: float = START_TIMEOUT,
        call_timeout: float = CALL_TIMEOUT,
    ) -> McpSources:
        """Connect to every server concurrently (each within `timeout` s) and list its tools.

        Never raises for a server's failure: it is reported through `warn` and `.warnings`.
        """
        sources = cls(call_timeout=call_timeout)
        if not servers:
            return sources
        sources._loop = asyncio.new_event_loop()
        sources._thread = threading.Thread(
            target=sources._loop.run_forever, name="mcp-sources", daemon=True
        )
        sources._thread.start()
        for name, settings in servers.items():
            sources._servers[name] = _Server(name, settings)
        future = asyncio.run_coroutine_threadsafe(sources._start_all(timeout), sources._loop)
        failures = future.result()
        for name, reason in failures.items():
            sources._warn(warn, _start_warning(name, servers[name], reason))
        sources._tools = sources._build_tools(lambda message: sources._warn(warn, message))
        return sources

    def _warn(self, warn: Callable[[str], None], message: str) -> None:
        self.warnings.append(message)
        warn(message)

    async def _start_all(self, timeout: float) -> dict[str, str]:
        ready: dict[str, asyncio.Future[str | None]] = {}
        failures: dict[str, str] = {}
        for server in self._servers.values():
            if not server.settings.command and not server.settings.url:
                failures[server.name] = "its settings have neither `command` nor `url`"
                server.dead_reason = failures[server.name]
                continue
            if server.settings.command and server.settings.url:  # which one was meant?
                failures[server.name] = (
                    "its settings have both `command` and `url`; keep the one to use"
                )
                server.dead_reason = failures[server.name]
                continue
            server.stop = asyncio.Event()
            ready[server.name] = asyncio.get_running_loop().create_future()
            server.task = asyncio.create_task(self._serve(server, ready[server.name]))
        if ready:
            await asyncio.wait(ready.values(), timeout=timeout)
        for name, future in ready.items():
            server = self._servers[name]
            if not future.done():
                failures[name] = f"it did not start within {timeout:g} s"
                server.dead_reason = failures[name]
                if server.task is not None:
                    server.task.cancel()
            elif (reason := future.result()) is not None:
                failures[name] = reason
        return failures

    async def _serve(self, server: _Server, ready: asyncio.Future[str | None]) -> None:
        """Hold one server's connection open until close(); report readiness or failure."""
        try:
            async with Client(self._transport(server), mode="legacy") as client:
                server.tools = await _list_tools(client)
                server.client = client
                if not ready.done():
                    ready.set_result(None)
                assert server.stop is not None
                await server.stop.wait()
        except BaseException as exc:  # noqa: BLE001 - a server's failure must not escape
            reason = describe_exception(exc)
            server.dead_reason = server.dead_reason or reason
            if not ready.done():
                ready.set_result(reason)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            server.client = None
            if server.errlog is not None:
                server.errlog.close()

    def _transport(self, server: _Server) -> Any:
        settings = server.settings
        if settings.url:
            return streamable_http_client(settings.url)
        assert settings.command, "checked in _start_all"
        server.errlog = server_log_path(server.name).open("a", encoding="utf-8")
        params = StdioServerParameters(
            command=settings.command, args=list(settings.args), env=dict(settings.env) or None
        )
        return stdio_client(params, errlog=server.errlog)

    def close(self) -> None:
        """Close every connection (stopping stdio servers) and the background loop."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._stop_all(), loop).result(CLOSE_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(CLOSE_TIMEOUT)
        if not loop.is_running():
            loop.close()

    async def _stop_all(self) -> None:
        tasks = []
        for server in self._servers.values():
            server.dead_reason = server.dead_reason or "tabletalk closed the connection"
            if server.stop is not None:
                server.stop.set()
            if server.task is not None:
                tasks.append(server.task)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT - 1)
            for task in pending:
                task.cancel()

    def __enter__(self) -> McpSources:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tools -----------------------------------------------------------------------------

    def external_tools(self) -> list[ExternalTool]:
        """Every listed tool of every server that started, as catalog rows with proxies."""
        return list(self._tools)

    def status(self) -> list[dict[str, Any]]:
        """One entry per configured server: name, transport, state, tool count, reason."""
        entries = []
        for server in self._servers.values():
            running = server.client is not None and server.dead_reason is None
            entries.append(
                {
                    "name": server.name,
                    "transport": "http" if server.settings.url else "stdio",
                    "state": "running" if running else "stopped",
                    "tools": len(server.tools) if running else 0,
                    "reason": server.dead_reason,
                }
            )
        return entries

    def _build_tools(self, warn: Callable[[str], None]) -> list[ExternalTool]:
        taken = set(catalog.names(catalog.ROWS))
        tools: list[ExternalTool] = []
        for server in self._servers.values():
            settings = server.settings
            fingerprint = server_fingerprint(
                settings.command, settings.args, settings.env, settings.url
            )
            for tool in server.tools:
                schema = clean_input_schema(tool.input_schema)
                if (size := len(json.dumps(schema))) > MAX_SCHEMA_CHARS:
                    warn(
                        f"MCP server {server.name}: tool {tool.name!r} is left out; its input "
                        f"schema is {size:,} characters (at most {MAX_SCHEMA_CHARS:,}), too "
                        "long to send with every request. Ask its maintainers for a smaller one."
                    )
                    continue
                name = bedrock_tool_name(server.name, tool.name, taken)
                taken.add(name)
                annotations = tool.annotations
                row = external_row(
                    name,
                    server.name,
                    tool.name,
                    tool.description,
                    read_only=bool(annotations and annotations.read_only_hint),
                    trusted=server.settings.trusted,
                    title=tool.title or (annotations.title if annotations else None),
                )
                tools.append(
                    ExternalTool(
                        row,
                        schema,
                        self._runner(server, tool.name),
                        tool_identity(server.name, tool.name, fingerprint),
                        server.name,
                        tool.name,
                    )
                )
        return tools

    def _runner(self, server: _Server, tool: str) -> Runner:
        def run(ctx: ToolContext, raw_input: dict[str, Any] | None) -> RunResult:
            return self.call(server.name, tool, raw_input)

        return run

    def call(self, server_name: str, tool: str, arguments: dict[str, Any] | None) -> RunResult:
        """Call one tool on its server and wait (at most `call_timeout`); never raises."""
        server = self._servers.get(server_name)
        if server is None:
            return "error", {"error": f"no MCP server named {server_name}", "fix": DEAD_FIX}
        if arguments is not None and not isinstance(arguments, dict):
            return "error", {
                "error": f"the input of {tool} must be a JSON object",
                "fix": "Call it again with an object matching its input schema.",
            }
        client, loop = server.client, self._loop
        if server.dead_reason or client is None or loop is None:
            return _dead_result(server)
        future = asyncio.run_coroutine_threadsafe(client.call_tool(tool, arguments or {}), loop)
        try:
            result = future.result(self.call_timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return "error", {
                "error": f"{tool} (MCP server {server.name}) did not answer within "
                f"{self.call_timeout:g} s",
                "fix": "Try again later or with a smaller request, or tell the user.",
            }
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error result
            if getattr(exc, "code", None) == types.CONNECTION_CLOSED:
                server.dead_reason = (
                    f"the connection to {shown_url(server.settings.url)} closed"
                    if server.settings.url
                    else "the connection closed (the server process exited)"
                )
                return _dead_result(server)
            return "error", {
                "error": f"{tool} (MCP server {server.name}) failed: {describe_exception(exc)}",
                "fix": "Check the arguments against the tool's input schema, or tell the user.",
            }
        return convert_result(server.name, tool, result)


async def _list_tools(client: Client) -> list[types.Tool]:
    """Every page of the server's tools/list."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _dead_result(server: _Server) -> RunResult:
    reason = server.dead_reason or "it is not connected"
    return "error", {"error": f"server {server.name} is not running: {reason}", "fix": DEAD_FIX}


def server_log_path(name: str) -> Path:
    """Where a stdio server's stderr goes (never onto the terminal)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name) or "server"
    return paths.ensure_dir(paths.log_dir()) / f"mcp-{safe}.log"


def _start_warning(name: str, settings: McpServerSettings, reason: str) -> str:
    what = shown_url(settings.url) if settings.url else settings.command  # args may hold keys
    output = f" Its error output is in {server_log_path(name)}." if settings.command else ""
    return (
        f"MCP server {name} ({what or 'no command'}) could not start: {reason}. Its tools are "
        f"unavailable; check [mcp_servers.{name}] in your config file (command/args/env or "
        f"url).{output}"
    )
