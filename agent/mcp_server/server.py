"""The MCP server: one backend (store, staging, audit) per process, calls run like chat's.

Every call goes through `agent.tools.registry.run_tool` with a ToolContext whose origin is
`mcp:<level>`, so staged writes land in the same staging area a person reviews. Tool calls
block (SQLite), so they run one at a time on a worker thread, keeping the protocol loop free.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

import catalog
from agent import paths
from agent.attachments import AttachmentSet
from agent.availability import offered_rows
from agent.errors import TabletalkError
from agent.mcp_server.commit import commit_staged
from agent.mcp_server.levels import LEVELS
from agent.mcp_server.offer import COMMIT_TOOL, refusal, tool_specs
from agent.mcp_server.threaded_call import call_on_thread
from agent.permissions import AuditLog, PermissionRequest, Verdict
from agent.specs import SpecBook
from agent.staging import StagingArea
from agent.stop import reads_stop_when
from agent.stores.base import Store
from agent.tools.base import ToolContext
from agent.tools.registry import run_tool
from agent.ui_port import HeadlessUi
from catalog.rows import McpLevel

log = logging.getLogger("agent.mcp_server")

CONVERSATION_ID = "mcp"
DECIDED_BY = "mcp-level"
RECENT_CALLS = 200


@dataclass(frozen=True)
class Caller:
    """Who a call comes from: the stdio client (the server's level) or an HTTP token's client."""

    name: str
    level: str
    origin: str
    via_token: bool = False


@dataclass(frozen=True)
class CallRecord:
    """One served call, for the app's panel."""

    time: str
    client: str
    level: str
    tool: str
    ok: bool


class McpBackend:
    """What the server's calls run against: the opened store at one access level."""

    def __init__(
        self,
        store: Store,
        level: str,
        *,
        staging: StagingArea | None = None,
        audit: AuditLog | None = None,
        export_dir: Path | None = None,
        aws_profile: str | None = None,
        aws_region: str | None = None,
        tell: Callable[[str], None] | None = None,
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"MCP level must be one of {', '.join(LEVELS)}, not {level!r}")
        self.store = store
        self.level = level
        self.staging = staging or StagingArea(store)
        self.audit = audit or AuditLog()
        self.context = ToolContext(
            store=store,
            staging=self.staging,
            ui=HeadlessUi(),
            attachments=AttachmentSet(),
            specs=SpecBook(paths.data_dir() / "specs.sqlite", store.identity),
            conversation_id=CONVERSATION_ID,
            origin=f"mcp:{level}",
            export_dir=export_dir or Path.cwd(),
            own_changes_only=level != McpLevel.FULL.value,
            aws_profile=aws_profile,
            aws_region=aws_region,
        )
        self._gated = catalog.gated_names()
        self._lock = threading.Lock()
        self._state = threading.Lock()
        """Guards `_running`, `_waiting` and `_given_up` (read by `interrupt` from any thread)."""
        self._running: object | None = None
        self._waiting: set[object] = set()
        """Tokens of the calls expected or waiting for `_lock`."""
        self._given_up: set[object] = set()
        """Tokens of calls whose client cancelled them: a waiting one returns without running,
        a running one's store reads stop (`reads_stop_when`)."""
        self._contexts: dict[tuple[str, str], ToolContext] = {
            (self.context.origin, level): self.context
        }
        self.recent: deque[CallRecord] = deque(maxlen=RECENT_CALLS)
        self.call_hooks: list[Callable[[CallRecord, Caller], None]] = []
        self._tell = tell or (lambda notice: log.warning("%s", notice))
        """Where the staging area's notices go (an interrupted commit settled, a damaged or
        replaced staging file recovered or reopened): the serving terminal or the app."""
        self.tell_notices()

    def tell_notices(self) -> None:
        """Pass on what the staging area has to say since it was last asked."""
        for notice in self.staging.take_notices():
            self._tell(notice)

    @property
    def own_caller(self) -> Caller:
        """The stdio client: the server's own level."""
        return Caller("stdio", self.level, f"mcp:{self.level}")

    def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        token: object | None = None,
        caller: Caller | None = None,
    ) -> types.CallToolResult:
        """Run one call (refused outside the caller's level); never raises for tool failures.

        `token` names the call for `interrupt`; `caller` defaults to the server's own level.
        A call interrupted while it waits for another to end returns, unrun, once that one has.
        """
        caller = caller or self.own_caller
        if token is not None:
            self.expect(token)
        with self._lock:
            with self._state:
                self._waiting.discard(token)
                given_up = token in self._given_up
                if given_up:
                    self._given_up.discard(token)
                else:
                    self._running = token
            if given_up:
                return error_result("The client cancelled this call before it ran.", None)
            try:
                with reads_stop_when(lambda: token in self._given_up):
                    result = self._call(name, arguments, caller)
            finally:
                with self._state:
                    self._running = None
                    self._given_up.discard(token)
            stamp = datetime.now(UTC).isoformat(timespec="seconds")
            record = CallRecord(stamp, caller.name, caller.level, name, not result.is_error)
            self.recent.append(record)
            self.tell_notices()
        for hook in self.call_hooks:
            try:
                hook(record, caller)
            except Exception:  # a watcher's failure must not fail the client's call
                log.exception("MCP call hook failed")
        return result

    def expect(self, token: object) -> None:
        """A call named `token` is on its way to `call` (on a thread still to start): from now
        on `interrupt` stops it before it runs."""
        with self._state:
            self._waiting.add(token)

    def forget(self, token: object) -> None:
        """The call named `token` will not reach `call` after all (given up before it ran)."""
        with self._state:
            self._waiting.discard(token)
            self._given_up.discard(token)

    def interrupt(self, token: object) -> None:
        """Stop the call named `token`: its store reads if it is the one running (a read under
        way ends, a later one does not start), or the whole call if it is still waiting for
        the one running (it will not run)."""
        if token is None:
            return
        with self._state:
            if token in self._waiting or self._running is token:
                self._given_up.add(token)

    def _context(self, caller: Caller) -> ToolContext:
        """The tool context whose origin marks what this caller stages."""
        key = (caller.origin, caller.level)
        if key not in self._contexts:
            self._contexts[key] = replace(
                self.context,
                origin=caller.origin,
                own_changes_only=caller.level != McpLevel.FULL.value,
            )
        return self._contexts[key]

    def _call(
        self, name: str, arguments: dict[str, Any] | None, caller: Caller
    ) -> types.CallToolResult:
        refused = refusal(name, caller.level, token=caller.via_token)
        if refused is not None:
            return error_result(*refused)
        try:
            if caller.via_token or name in self._gated or name == COMMIT_TOOL:
                self._audit(name, arguments if isinstance(arguments, dict) else {}, caller)
            if name == COMMIT_TOOL:
                status, result = commit_staged(self.staging, arguments, by=caller.origin)
            else:
                status, result = run_tool(self._context(caller), name, arguments)
        except TabletalkError as exc:  # the audit log cannot be written: the call stays blocked
            return error_result(exc.message, exc.fix)
        except Exception as exc:  # a bug must not end the session
            log.exception("MCP call %s failed", name)
            return error_result(f"internal error in {name}: {type(exc).__name__}: {exc}", None)
        if status == "error":
            return error_result(str(result.get("error")), result.get("fix"), result)
        return success_result(result)

    def _audit(self, name: str, arguments: dict[str, Any], caller: Caller) -> None:
        """The level is the user's explicit choice: the call runs, and the log says so."""
        row = catalog.row_by_name().get(name)
        request = PermissionRequest(
            tool=name,
            input=arguments,
            mode=caller.level,
            conversation_id=CONVERSATION_ID,
            access=row.access.value if row else "write",
            client=caller.name if caller.via_token else "",
        )
        self.audit.record(request, Verdict(True, "mcp-token" if caller.via_token else DECIDED_BY))

    def close(self) -> None:
        """Close the staging database (the store belongs to the caller)."""
        self.staging.close()


def success_result(result: dict[str, Any]) -> types.CallToolResult:
    """A tool's result as JSON text, and as structured content for clients that read it."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=json.loads(text)
    )


def error_result(
    message: str, fix: str | None, data: dict[str, Any] | None = None
) -> types.CallToolResult:
    """A tool error (isError) whose text says what went wrong and what to do instead."""
    text = f"{message}\nfix: {fix}" if fix else message
    payload = (
        data
        if data is not None
        else ({"error": message, "fix": fix} if fix else {"error": message})
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=json.loads(json.dumps(payload, ensure_ascii=False, default=str)),
        is_error=True,
    )


CallerOf = Callable[[Any], Caller]
"""Finds who sent a request from its handler context (HTTP: the request's token)."""
HoldOf = Callable[[Any], Callable[[], None] | None]
"""Takes a place for a request's tool call (the HTTP guard's in-flight count), returning what
gives it back, callable from any thread, once the call's thread ends; None: no place to hold."""


def build_server(
    backend: McpBackend, caller_of: CallerOf | None = None, hold_of: HoldOf | None = None
) -> Server[Any]:
    """A low-level MCP server offering each caller its level's tools.

    Without `caller_of` every request is the backend's own (stdio) caller. `hold_of` keeps a
    tool call's place until its thread ends: a call whose client left or cancelled it still
    runs (or waits for the backend's lock), so it still counts; one cancelled before it ran
    never runs (`call_on_thread`).
    """
    specs = {level: tool_specs(level) for level in LEVELS}

    def who(ctx: Any) -> Caller:
        return caller_of(ctx) if caller_of is not None else backend.own_caller

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        offered = {row.name for row in offered_rows(backend.store)} | {COMMIT_TOOL}
        return types.ListToolsResult(
            tools=[tool for tool in specs[who(ctx).level] if tool.name in offered]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        release = hold_of(ctx) if hold_of is not None else None
        return await call_on_thread(backend, params.name, params.arguments, who(ctx), release)

    return Server(
        "tabletalk",
        version=_version(),
        instructions=(
            f"tabletalk on {backend.store.label}. Writes are staged "
            "for a person to review (`tabletalk staged list`); nothing changes the store until "
            "it is committed."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(backend: McpBackend) -> None:
    """Serve the backend over stdin/stdout until the client closes the connection."""
    server = build_server(backend)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tabletalk")
    except PackageNotFoundError:
        return "0"
