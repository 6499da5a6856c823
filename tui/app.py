"""The tabletalk Textual app: tab area + chat sidebar, status bar, bindings, one error handler.

Blocking work (Bedrock turns, store reads, commits) runs in thread workers that only post
messages; every worker failure ends in `on_worker_state_changed` as a readable notice.
"""

from __future__ import annotations

import asyncio
import threading
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from agent import paths
from agent.config import Settings
from agent.errors import TabletalkError
from tui import deferred_imports, escape_keys, startup_code, startup_gc, terminal_text
from tui.actions import AppActions
from tui.bridge import AppBridge
from tui.keys import APP_BINDINGS
from tui.mcp_serving import McpServing
from tui.messages import SessionReady, StagingChanged
from tui.notices import clear_for_dialog, notice_seconds
from tui.staging_watch import StagingWatch
from tui.tab_actions import TabActions
from tui.widgets.chat import ChatPanel
from tui.widgets.footer import KeyFooter
from tui.widgets.home import HomeTab
from tui.widgets.splitter import Splitter
from tui.widgets.status_bar import StatusBar
from tui.widgets.tab_area import TabArea

if TYPE_CHECKING:  # the rest loads on first use, after the first screen
    from agent.mcp_server.tokens import McpClient
    from agent.permissions import Decision, PermissionRequest
    from tui.screens.permission import PermissionScreen
    from tui.widgets.table_tab import TableTab

SessionFactory = Callable[..., Any]

HIDDEN_SYSTEM_COMMANDS = frozenset({"Keys", "Maximize"})
"""Textual's built-in palette entries left out: a second key help besides F1, and maximize."""


class MainScreen(Screen[None]):
    """The app's first screen: the keyboard starts in the composer (Textual focuses it while
    styling the screen, instead of focusing the first focusable widget, the tab bar, and then
    moving focus, which restyled both and their containers)."""

    AUTO_FOCUS = "#composer"

    _shown = False

    def post_message(self, message: Message) -> bool:
        """The first ScreenResume does not style every widget again: each was styled as it
        was mounted, just before (the screen's later resumes, after a modal, still do)."""
        if isinstance(message, events.ScreenResume) and not self._shown:
            self._shown = True
            message.refresh_styles = False
        return super().post_message(message)


def default_session_factory(settings: Settings, store: Any, **kwargs: Any) -> Any:
    """Open a ChatSession (imported here: boto3 loads on the worker, after the first paint)."""
    from agent.session import ChatSession

    return ChatSession.open(settings, store, **kwargs)


class TabletalkApp(TabActions, AppActions, App[int]):
    """The terminal app for one store and one conversation at a time."""

    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "tabletalk"
    BINDINGS = APP_BINDINGS  # type: ignore[assignment]

    def __init__(
        self,
        store: Any,
        settings: Settings | None = None,
        *,
        conversation_id: str | None = None,
        session_factory: SessionFactory | None = None,
        staging_poll_seconds: float = 2.0,
        model_given: bool = False,
    ) -> None:
        """`model_given`: a `--model` on the command line, which the conversation opened at
        start runs on (else a resumed chat continues on the model it used)."""
        super().__init__()
        terminal_text.install()
        escape_keys.install()  # alt+m with text right behind it is alt+m, not `^m` typed
        self.store = store
        self.settings = settings or Settings()
        self.conversation_id = conversation_id
        self._model_given = model_given
        self.session_factory = session_factory or default_session_factory
        self._mcp_sources: Any = None
        self.session: Any | None = None
        self.bridge = AppBridge(self)
        self.staging_watch = StagingWatch(
            self,
            store,
            poll_seconds=staging_poll_seconds,
            keep=self.settings.history.retention,
        )
        self.mcp_serving = McpServing(self)
        self.staged_changes: list[Any] = []
        self.staged_conflicts: dict[str, Any] = {}
        """The conflicts commits of any process recorded among them (shown by the panel)."""
        self._permission: PermissionScreen | None = None
        self._names: list[str] | None = None
        self._sidebar_width: Any = None
        self._units_before: float | None = store.read_units_total
        self._key_problems: list[str] = []
        if self.settings.keys:  # as the app applies them: every text naming a key follows
            from tui.keys import check_keymap

            checked = check_keymap(dict(self.settings.keys))
            self._key_problems = checked.problems
            self.settings = self.settings.model_copy(update={"keys": checked.keymap})

    # ----- layout ---------------------------------------------------------------------------

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast that stays long enough to be read: errors and warnings, which name a fix,
        stay longer, and every toast at least the time to read its words (click one to close);
        a toast already shown is replaced by its repeat (pressing Enter twice on a bad filter
        stacked two), which then stays its full time."""
        if timeout is None:
            timeout = notice_seconds(f"{title} {message}", severity)
        for shown in list(self._notifications):  # the same toast again replaces it, not stacks
            if shown.message == message and shown.title == title:
                self._unnotify(shown, refresh=False)
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            with TabArea(id="tabs"):
                yield HomeTab(self.store, dict(self.settings.keys))
            yield Splitter(id="splitter")
            yield ChatPanel(id="chat")
        yield KeyFooter()

    def on_mount(self) -> None:
        if self.settings.keys:
            self.set_keymap(dict(self.settings.keys))
        self._warn_about_keys()
        status = self.status
        status.store_label = self.store.label
        status.model = self.settings.model
        status.mode = self.settings.mode
        self._show_read_units()
        self.store.watch_retries(self._store_retrying)
        self.screen_change_signal.subscribe(self, lambda screen: clear_for_dialog(self, screen))
        self.restore_unsent()

    @on(events.Ready)
    def _start_after_first_frame(self) -> None:
        """Once the first screen is shown: the garbage collector resumes (tui/startup_gc.py),
        start-up's compile cache is put away (tui/startup_code.py), imports are no longer
        deferred (tui/deferred_imports.py), staging and the chat session open on a worker."""
        startup_gc.resume()
        startup_code.uninstall()
        deferred_imports.uninstall()
        self._open_staging_then_session()

    def _warn_about_keys(self) -> None:
        """What `[keys]` could not do (an unknown id, a bad key name, a remap refused to keep
        quit's key, a key shared by two bindings, with the one that gets it), in one toast:
        one toast each stacked past the bottom of an 80x24 screen."""
        if not self._key_problems:
            return
        from agent.paths import config_file
        from agent.text_plural import noun

        where = self.settings.source or config_file()
        lines = "\n".join(f"• {problem}" for problem in self._key_problems)
        self.notify(
            f"{lines}\nFix {noun(len(self._key_problems), 'it', 'them')} in [keys] in {where}.",
            title="Key remaps",
            severity="warning",
            markup=False,
        )

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def chat(self) -> ChatPanel:
        return self.query_one(ChatPanel)

    # ----- session ----------------------------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="session", exclusive=True)
    def _open_staging_then_session(self) -> None:
        """The staging database first (the session then opens its own), then the session."""
        self.staging_watch.start_on_worker()
        self._open_session_now(self.conversation_id, use_saved_model=not self._model_given)

    @work(thread=True, exit_on_error=False, group="session", exclusive=True)
    def open_session(self, conversation_id: str | None) -> None:
        """Open (or resume) a conversation on a worker; posts SessionReady. A resumed one
        continues on the model it used (the session's `model_notice` says so)."""
        self._open_session_now(conversation_id)

    def _open_session_now(
        self, conversation_id: str | None, *, use_saved_model: bool = True
    ) -> None:
        extra: dict[str, Any] = {"use_saved_model": use_saved_model}
        if self.settings.mcp_servers:
            extra["toolset"] = self.external_toolset()
        session = self.session_factory(
            self.settings,
            self.store,
            conversation_id=conversation_id,
            ui=self.bridge,
            prompter=self.bridge.prompt,
            **extra,
        )
        self.post_message(SessionReady(session))

    def external_toolset(self) -> Any:
        """Connect the configured MCP servers once (worker thread); warnings become notices."""
        from agent.session import build_toolset, start_mcp_sources

        if self._mcp_sources is None:
            self._mcp_sources = start_mcp_sources(
                self.settings,
                lambda text: self.call_from_thread(
                    self.notify, text, title="MCP server", severity="warning", markup=False
                ),
            )
        return build_toolset(self.settings, self._mcp_sources)

    def on_unmount(self) -> None:
        self.store.watch_retries(None)
        if self._mcp_sources is not None:
            self._mcp_sources.close()
        self.mcp_serving.close()

    async def on_session_ready(self, message: SessionReady) -> None:
        self.session = message.session
        self.status.model = self.session.model_id
        self.status.mode = self.session.mode
        notice = getattr(self.session, "model_notice", None)
        if notice:
            self.notify(notice, title="Model", markup=False)
        granted = getattr(self.session, "granted_tools", [])
        if granted and self.session.mode != "full-auto":  # in full-auto nothing asks anyway
            self.notify(
                f"Earlier in this chat you allowed {', '.join(granted)} without asking; that "
                "still holds. To be asked again: ctrl+p, “Forget this chat's permissions”.",
                title="Permissions",
                markup=False,
            )
        self.show_usage(self.session.usage)
        items = self.session.display_items()
        if items or not self.chat.has_queued:
            await self.chat.show_items(items)
        self.chat.session_ready(self.session)

    def show_usage(self, usage: Any) -> None:
        """Conversation token totals into the header (and the turn's read units so far); the
        estimated output of stopped steps counts in the out total, which is then marked `~`."""
        self.status.tokens = (usage.input, usage.output + usage.estimated_output, usage.cache_read)
        self.status.estimated = usage.estimated_output > 0
        self.status.streaming = 0
        self._show_read_units()

    def show_streaming(self, characters: int) -> None:
        """The answer streaming in: its output tokens estimated (about four characters each)
        until the model reports the step's usage."""
        from agent.events import estimated_tokens

        self.status.streaming = estimated_tokens(characters)

    def _store_retrying(self, text: str, state: str) -> None:
        """From any thread: the store's retry status into the header; giving up is also a
        notification (the read that failed reports its own error too)."""

        def show() -> None:
            self.status.notice = text if state == "retrying" else ""
            if state == "gave-up":
                self.notify(text, title="DynamoDB throttling", severity="error", markup=False)

        if threading.get_ident() == self._thread_id:
            show()
            return
        try:
            self.call_from_thread(show)
        except RuntimeError:  # the app is closing: nothing to show it on
            pass

    def set_busy(self, busy: bool) -> None:
        """A turn starts (the read-unit count restarts from zero) or ends."""
        if busy:
            self._units_before = self.store.read_units_total
        self._show_read_units()
        self.status.busy = busy

    def _show_read_units(self) -> None:
        """The read units tools consumed since the turn started (stores that count them)."""
        total = self.store.read_units_total
        if total is not None:
            self.status.read_units = max(0.0, total - (self._units_before or 0.0))

    def completion_names(self) -> list[str]:
        """Table and column names, and `table.column`, for `@` completion (read once)."""
        if self._names is None:
            names: list[str] = []
            qualified: list[str] = []
            try:
                for table in self.store.list_tables():
                    names.append(table)
                    info = self.store.describe_table(table)
                    names.extend(c.name for c in info.columns if c.name not in names)
                    qualified.extend(f"{table}.{c.name}" for c in info.columns)
            except TabletalkError:
                pass
            self._names = names + qualified
        return self._names

    # ----- permission prompts (called through the bridge from the worker) ----------------------

    async def ask_permission(self, request: PermissionRequest) -> Decision:
        """Show the permission modal, ring the bell, and wait for the decision."""
        from tui.screens.permission import PermissionScreen

        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def decided(decision: Decision | None) -> None:
            self._permission = None
            if not future.done():
                future.set_result(decision or "deny")

        self._permission = PermissionScreen(request)
        self.bell()
        await self.push_screen(self._permission, callback=decided)
        return await future

    async def ask_mcp_consent(self, client: McpClient) -> bool:
        """A token's first call while the app serves: allow it, or deny (which revokes it)."""
        from tui.screens.confirm import ConfirmScreen

        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def decided(answer: bool | None) -> None:
            if not future.done():
                future.set_result(bool(answer))

        question = (
            f"MCP client '{client.name}' (level {client.level}) is calling tabletalk for the "
            "first time. Allow it? Denying revokes its token."
        )
        self.bell()
        await self.push_screen(
            ConfirmScreen("New MCP client", question, yes="Allow"), callback=decided
        )
        return await future

    def cancel_permission_prompt(self) -> None:
        """Stop pressed while a prompt is open: deny it."""
        if self._permission is not None and self._permission.is_attached:
            self._permission.dismiss("deny")

    # ----- staging ---------------------------------------------------------------------------

    def refresh_staging(self) -> None:
        self.staging_watch.refresh_now()

    def on_staging_changed(self, message: StagingChanged) -> None:
        if not self.screen_stack or not self.query(StatusBar):  # closing: widgets are gone
            return
        now = {c.id for c in message.changes}
        gone_tables = {c.table for c in self.staged_changes if c.id not in now}
        self.staged_changes = message.changes
        if message.conflicts is not None:
            self.staged_conflicts = message.conflicts
        tabs: list[TableTab] = list(self.query("TableTab"))  # type: ignore[arg-type]
        for tab in tabs:
            if tab.table in gone_tables and tab.kind == "table":  # committed or rejected
                tab.reload()
        self.status.staged = len(message.changes)
        for tab in tabs:
            tab.set_staged(message.changes)
        for panel in self.query("StagingPanel"):  # by name: the module loads with the panel
            panel.show(  # type: ignore[attr-defined]
                message.changes, signed=message.signature, conflicts=message.conflicts
            )

    # ----- errors ------------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures land: a notification or modal, never a crash."""
        if event.state == WorkerState.SUCCESS and event.worker.group == "turn":
            self._turn_worker_done()
        if event.state != WorkerState.ERROR:
            return
        from agent.stores.paging import TabClosed

        error = event.worker.error
        if isinstance(error, TabClosed):
            return
        if event.worker.name == "commit":
            for panel in self.query("StagingPanel"):
                panel.committing_failed()  # type: ignore[attr-defined]
        if event.worker.group == "turn":
            self.chat.turn_failed(error)
            if isinstance(error, TabletalkError):  # the chat shows it, with its fix
                return
        if event.worker.group == "session":
            self.notify(
                "The chat could not start; tables and staged changes still work.",
                severity="warning",
            )
        self.show_error(error)

    def show_stopped(self, characters: int) -> None:
        """Stop pressed after `characters` of the answer were shown: the session's usage when
        the turn's worker is done (its late events are not shown), else the shown text's
        estimate (billed) until the worker ends and `_turn_worker_done` replaces it."""
        if self.session is not None and not any(
            w.group == "turn" and w.is_running for w in self.workers
        ):
            self.show_usage(self.session.usage)
        else:
            self.show_streaming(characters)

    def _turn_worker_done(self) -> None:
        """A stopped turn's worker ended: the chat dropped its late events, so the header
        takes the conversation's usage from the session (with the stopped step's estimate the
        loop added). A turn still being shown (or a newer one) updates it through its events."""
        if self.session is not None and not self.chat.busy:
            self.show_usage(self.session.usage)

    def show_error(self, error: BaseException | None) -> None:
        """A TabletalkError as title, message and fix; anything else as an unexpected error."""
        from tui.screens.error import ErrorScreen

        if isinstance(error, TabletalkError):
            self.push_screen(ErrorScreen(error.title, error.message, error.fix))
            return
        log_path = self._log_traceback(error)
        self.push_screen(
            ErrorScreen(
                "Unexpected error",
                f"{type(error).__name__}: {error}",
                f"This is a bug in tabletalk. The details are in {log_path}; "
                "the app keeps running.",
            )
        )

    def _log_traceback(self, error: BaseException | None) -> str:
        path = paths.log_dir() / "tui-errors.log"
        try:
            paths.ensure_dir(path.parent)
            with path.open("a", encoding="utf-8") as handle:
                handle.write("".join(traceback.format_exception(error)) if error else "unknown\n")
        except OSError:
            return "(the log could not be written)"
        return str(path)

    # ----- palette --------------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        from tui.commands import app_commands, staging_commands

        for command in super().get_system_commands(screen):
            if command.title not in HIDDEN_SYSTEM_COMMANDS:  # F1 is the one key help
                yield command
        yield from app_commands(self)
        yield from staging_commands(self, screen)

    @on(Splitter.Dragged)
    def _splitter_dragged(self, message: Splitter.Dragged) -> None:
        self._set_chat_width(self.size.width - message.screen_x - 1)
