"""The app's key actions (bindings in tui/keys.py): layout, mode and model, pickers, chats.

A mixin of TabletalkApp, kept apart so the app module stays about wiring and state.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from agent.text_plural import counted, noun
from tui.key_hints import app_key
from tui.unsent_draft import UnsentDraft
from tui.widgets.tab_area import TabArea

if TYPE_CHECKING:
    from tui.widgets.chat import ChatPanel
    from tui.widgets.status_bar import StatusBar


QUIT_WAIT = 5.0
"""Seconds quit waits for a stopped turn to save (a stop ends its request or read at once)."""

if TYPE_CHECKING:
    _Base = App[int]
else:
    _Base = object


class AppActions(_Base):
    """`action_*` methods and the setters they share; `self` is the TabletalkApp."""

    session: Any
    settings: Any
    store: Any
    staging_watch: Any
    mcp_serving: Any
    _sidebar_width: Any

    if TYPE_CHECKING:  # provided by TabletalkApp

        @property
        def chat(self) -> ChatPanel: ...

        @property
        def status(self) -> StatusBar: ...

        def open_session(self, conversation_id: str | None) -> Any: ...

        def show_usage(self, usage: Any) -> None: ...

        def open_table(self, table: str) -> Awaitable[str]: ...

        def open_staging_panel(self) -> Awaitable[str]: ...

        async def run_action_safely(self, job: Any) -> None: ...

    async def action_quit(self) -> None:
        """Quit; a running turn is cancelled first so its thread ends with the app. Staged
        changes stay staged, and an unsent message is kept for the next start: the terminal
        is told so (and how to review the changes)."""
        if self.chat.stop():  # the stopped turn saves the message and what was shown first
            turns = [w for w in self.workers if w.group == "turn" and w.is_running]
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.workers.wait_for_complete(turns), QUIT_WAIT)
        said = []
        staged = self.status.staged
        if staged:
            from agent.store_hints import db_flag  # the command must reach this same store

            key = app_key(self, "staging", "ctrl+s")
            said.append(
                f"{counted(staged, 'staged change')} "
                f"{'are' if staged != 1 else 'is'} kept; review "
                f"{'them' if staged != 1 else 'it'} with {key} "
                f"or `tabletalk staged list{db_flag(self.store)}`."
            )
        chat = self.chat
        if UnsentDraft().keep(chat.composer.text, list(chat.attachments.paths)):
            said.append("Your unsent message is kept: it is back in the box next time.")
        self.exit(message="\n".join(said) or None)

    def restore_unsent(self) -> None:
        """The message left in the box at the last quit comes back (once), with its files."""
        draft = UnsentDraft().take()
        if draft is not None and not self.chat.composer.text:
            self.chat.fill(*draft)
            self.notify("Your unsent message from last time is back in the box.", markup=False)

    def action_help(self) -> None:
        from agent.paths import config_file
        from tui.screens.help import HelpScreen

        config = self.settings.source or config_file()
        self.push_screen(HelpScreen(dict(self.settings.keys), config))

    def action_stop(self) -> None:
        if not self.chat.stop() and self.screen.has_class("-chat-full"):
            self.action_toggle_chat()

    def action_help_quit(self) -> None:
        """ctrl+c (Textual's "how do I quit?" key): while an answer runs it stops it, as Esc
        does and as ctrl+c does in `tabletalk ask`; otherwise Textual says how to quit."""
        if self.chat.busy:
            self.chat.stop()
            return
        super().action_help_quit()

    def action_toggle_chat(self) -> None:
        """F2: the chat as a full-width tab and back to the sidebar (keeping its width)."""
        chat = self.chat
        if self.screen.has_class("-chat-full"):
            self.screen.remove_class("-chat-full")
            chat.styles.width = self._sidebar_width
        else:
            self._sidebar_width = chat.styles.width
            chat.styles.width = None
            self.screen.add_class("-chat-full")
            chat.composer.focus()

    def action_focus_latest(self, kind: str) -> None:
        """ctrl+g / alt+t: the keyboard to the newest chip (or tool row); again: the one before."""
        self.chat.focus_latest(kind)

    def action_focus_composer(self) -> None:
        """alt+m: the keyboard back to the message box (from a tool row, the chat, a table);
        nothing under a modal, whose keys are the ones that work then."""
        chat = self.chat
        if self.screen is chat.screen:
            self.set_focus(chat.composer)  # now, so keys typed right after land in the box

    def action_focus_filter(self) -> None:
        """The active table tab's filter box (palette; `/` in a table does the same)."""
        from tui.widgets.table_tab import TableTab

        pane = self.query_one("#tabs", TabArea).active_pane
        if isinstance(pane, TableTab):
            pane.action_focus_filter()
        else:
            self.notify(
                f"Open a table tab first ({app_key(self, 'open_table', 'ctrl+t')}).",
                severity="warning",
                timeout=2,
                markup=False,
            )

    def action_switch_focus(self) -> None:
        """F3: from the composer to the active tab's rows (or list), and back."""
        from tui.widgets.table_tab import TableTab

        composer = self.chat.composer
        if composer.has_focus:
            pane = self.query_one("#tabs", TabArea).active_pane
            if isinstance(pane, TableTab):
                pane.focus_table()
            elif pane is not None:
                target = next((w for w in pane.query("*") if w.focusable), None)
                if target is not None:
                    target.focus()
        else:
            composer.focus()

    def action_resize_chat(self, delta: int) -> None:
        self._set_chat_width(self.chat.outer_size.width + delta)

    def _set_chat_width(self, width: int) -> None:
        if self.screen.has_class("-chat-full"):
            return
        width = max(30, min(self.size.width - 20, width))
        self.chat.styles.width = width

    def action_cycle_mode(self) -> None:
        """F4: manual → auto → full-auto (asked first) → manual; declining full-auto skips
        it, so F4 always reaches manual again."""
        from agent.permissions import MODES

        current = self._mode
        mode = MODES[(MODES.index(current) + 1) % len(MODES)] if current in MODES else MODES[0]
        after = MODES[(MODES.index(mode) + 1) % len(MODES)]
        self.switch_permission_mode(mode, declined=after)

    def switch_permission_mode(self, mode: str, *, declined: str | None = None) -> None:
        """Switch to `mode` (F4, the command palette); into full-auto only after a yes, a no
        switching to `declined` (None: the mode stays)."""
        if mode != "full-auto" or self._mode == "full-auto":
            self.set_mode(mode)
            return
        from tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.set_mode("full-auto")
            elif declined is not None:
                self.set_mode(declined)

        self.push_screen(
            ConfirmScreen(
                "Full-auto mode",
                "Switch to full-auto? Every tool then runs without asking you first, including "
                "exports to files. Edits are still only staged for your review.",
                yes="Full-auto",
            ),
            answered,
        )

    def action_forget_grants(self) -> None:
        """Take back this chat's "Allow for this chat" answers: those tools ask again."""
        if self.session is None:
            return
        if self.chat.busy:  # the turn holds the session (and may be asking right now)
            self.notify(
                "An answer is running: stop it first (esc), then forget the permissions.",
                severity="warning",
                markup=False,
            )
            return
        tools = self.session.granted_tools
        self.session.forget_grants()
        self.notify(
            f"{', '.join(tools)} {noun(len(tools), 'asks', 'ask')} again before each call "
            "in this chat."
            if tools
            else "This chat has no “Allow for this chat” permissions to forget.",
            title="Permissions",
            markup=False,
        )

    @property
    def _mode(self) -> str:
        """The permission mode in force (the status bar's until the session is open)."""
        return str(self.session.mode if self.session is not None else self.status.mode)

    def set_mode(self, mode: str) -> None:
        """Switch the permission mode for this session and the ones opened after it (a new
        chat, a resumed one), as a model switch is kept."""
        if self.session is not None:
            self.session.mode = mode
        self.settings = self.settings.model_copy(update={"mode": mode})
        self.status.mode = mode
        self.notify(f"Permission mode: {mode}", markup=False, timeout=2)

    def _region(self) -> str | None:
        """The region the session calls Bedrock in (aliases resolve to its geography)."""
        from agent.bedrock.models import configured_region

        region = self.session.region if self.session is not None else None
        return region or configured_region(self.settings.profile, self.settings.region)

    def set_model(self, model: str) -> None:
        """Switch the Bedrock model for the next turn (an alias resolves for the region)."""
        from agent.bedrock.models import resolve_model
        from agent.session import model_label

        model_id = resolve_model(model, self._region())
        if self.session is not None:
            self.session.model_id = model_id
        self.settings = self.settings.model_copy(update={"model": model_id})
        self.status.model = model_id
        self.chat.refresh_intro()
        self.notify(f"Model: {model_label(model_id)}", markup=False, timeout=2)

    def action_pick_model(self) -> None:
        from agent.bedrock.client import MODELS
        from agent.bedrock.models import resolve_model
        from tui.screens.picker import PickerScreen

        current = self.session.model_id if self.session is not None else self.settings.model
        region = self._region()
        choices = {alias: resolve_model(alias, region) for alias in MODELS}
        if current and current not in choices.values():  # a model id from the config
            choices["(config)"] = current
        options = [
            (model_id, f"{'●' if model_id == current else ' '} {alias:14} {model_id}")
            for alias, model_id in choices.items()
        ]
        ids = [model_id for model_id, _ in options]

        def chosen(model: str | None) -> None:
            if model:
                self.set_model(model)

        self.push_screen(
            PickerScreen(
                "Model",
                options,
                help_text="● marks the model in use.",
                highlighted=ids.index(current) if current in ids else None,
            ),
            chosen,
        )

    def action_pick_table(self) -> None:
        from tui.screens.picker import PickerScreen

        options = [(t, t) for t in self.store.list_tables()]

        async def chosen(table: str | None) -> None:
            if table:
                await self.run_action_safely(self.open_table(table))

        self.push_screen(PickerScreen("Open table", options), chosen)

    def action_history(self) -> None:
        """Commit history (F9): pick a commit to revert (staged for review)."""
        from agent.errors import TabletalkError
        from tui.screens.confirm import ConfirmScreen
        from tui.screens.history import HistoryScreen

        area = self.staging_watch.area
        try:
            entries = area.history()
        except TabletalkError as exc:
            self.notify(exc.render(), title=exc.title, severity="error", markup=False)
            return

        def revert(commit_id: str | None) -> None:
            if commit_id is None:
                return
            entry = next(e for e in entries if e.id == commit_id)
            question = (
                f"Stage {counted(entry.changes, 'change')} that "
                f"{noun(entry.changes, 'undoes', 'undo')} commit {entry.id} "
                f"({', '.join(entry.tables)})? You review and commit them in the staging panel; "
                "rows changed since the commit show as conflicts."
            )
            if entry.reverted_by:  # undoing it again conflicts on every row the undo restored
                question = (
                    f"Commit {entry.id} was already undone by {', '.join(entry.reverted_by)}. "
                    + question
                )

            def staged(changes: list[Any]) -> None:
                self.notify(
                    f"Staged {counted(len(changes), 'change')} undoing commit {commit_id}; review "
                    "them, then Commit.",
                    markup=False,
                )
                self.run_worker(self.open_staging_panel())

            def confirmed(yes: bool | None) -> None:
                # On a worker: a large commit's revert takes seconds (a failure becomes a note).
                if yes:
                    self.staging_watch.run(
                        lambda area: area.revert(commit_id), done=staged, name="revert"
                    )

            self.push_screen(
                ConfirmScreen("Revert commit", question, yes="Stage revert"), confirmed
            )

        def read_commit(commit_id: str, done: Callable[[Any], None]) -> None:
            self.staging_watch.read(lambda area: area.commit_entry(commit_id), done=done)

        self.push_screen(HistoryScreen(entries, read_commit), revert)

    def action_mcp_panel(self) -> None:
        """The MCP server panel: serve this store to other agents, manage their tokens."""
        from tui.screens.mcp_panel import McpPanel

        self.push_screen(McpPanel(self.mcp_serving))

    async def action_open_staging_panel(self) -> None:
        await self.open_staging_panel()

    async def action_close_tab(self) -> None:
        """Close the active tab; the Tables tab stays, and says so instead of doing nothing."""
        tabs = self.query_one("#tabs", TabArea)
        if tabs.active == "home":
            close = app_key(self, "close_tab", "ctrl+w")
            self.notify(
                f"The Tables tab stays open; {close} closes the other tabs.",
                timeout=3,
                markup=False,
            )
        elif tabs.active:
            await tabs.remove_pane(tabs.active)

    def action_attach(self) -> None:
        from tui.screens.attach import AttachScreen

        def attached(path: str | None) -> None:
            if path is not None:  # the question about the file is what comes next
                self.chat.composer.focus()

        self.push_screen(AttachScreen(self.chat.add_attachment), attached)

    def action_new_chat(self) -> None:
        if self.chat.busy:
            self.notify("Stop the running answer first (Esc).", severity="warning")
            return
        self.session = None
        self.call_later(self.chat.show_items, [])
        self.show_usage(_ZERO_USAGE)
        self.open_session(None)

    def action_conversations(self) -> None:
        from tui.controllers.conversations import pick_conversation

        pick_conversation(self)

    def action_rewind(self) -> None:
        from tui.controllers.rewind import pick_rewind

        pick_rewind(self)


class _ZeroUsage:
    input = output = cache_read = estimated_output = 0


_ZERO_USAGE = _ZeroUsage()
