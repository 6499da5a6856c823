"""The app's key actions (bindings in tui/keys.py): layout, mode and model, pickers, chats.

A mixin of TabletalkApp, kept apart so the app module stays about wiring and state.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import TabbedContent

from agent.permissions import MODES
from tui.widgets.table_tab import TableTab


class AppActions:
    """`action_*` methods and the setters they share; `self` is the TabletalkApp."""

    chat: Any
    screen: Any
    session: Any
    settings: Any
    status: Any
    store: Any
    size: Any
    mcp_serving: Any
    _sidebar_width: Any

    async def action_quit(self) -> None:
        """Quit; a running turn is cancelled first so its thread ends with the app."""
        self.chat.stop()
        self.exit()  # type: ignore[attr-defined]

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(dict(self.settings.keys)))

    def action_stop(self) -> None:
        if not self.chat.stop() and self.screen.has_class("-chat-full"):
            self.action_toggle_chat()

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

    def action_switch_focus(self) -> None:
        """F3: from the composer to the active tab's rows (or list), and back."""
        composer = self.chat.composer
        if composer.has_focus:
            pane = self.query_one("#tabs", TabbedContent).active_pane
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
        current = self.session.mode if self.session is not None else self.status.mode
        mode = MODES[(MODES.index(current) + 1) % len(MODES)] if current in MODES else MODES[0]
        if mode != "full-auto":
            self.set_mode(mode)
            return
        from tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            self.set_mode("full-auto" if yes else current)

        self.push_screen(
            ConfirmScreen(
                "Full-auto mode",
                "Switch to full-auto? Every tool then runs without asking you first, including "
                "exports to files. Edits are still only staged for your review.",
                yes="Full-auto",
            ),
            answered,
        )

    def set_mode(self, mode: str) -> None:
        """Switch the permission mode for this session."""
        if self.session is not None:
            self.session.mode = mode
        self.status.mode = mode
        self.notify(f"Permission mode: {mode}", markup=False, timeout=2)

    def set_model(self, model: str) -> None:
        """Switch the Bedrock model for the next turn."""
        from agent.bedrock.client import resolve_model

        model_id = resolve_model(model)
        if self.session is not None:
            self.session.model_id = model_id
        self.settings = self.settings.model_copy(update={"model": model_id})
        self.status.model = model_id
        self.notify(f"Model: {model_id}", markup=False, timeout=2)

    def action_pick_model(self) -> None:
        from agent.bedrock.client import MODELS
        from tui.screens.picker import PickerScreen

        options = [(model_id, f"{alias:14} {model_id}") for alias, model_id in MODELS.items()]
        self.push_screen(
            PickerScreen("Model", options), lambda chosen: chosen and self.set_model(chosen)
        )

    def action_pick_table(self) -> None:
        from tui.screens.picker import PickerScreen

        options = [(t, t) for t in self.store.list_tables()]

        async def chosen(table: str | None) -> None:
            if table:
                await self.run_action_safely(self.open_table(table))

        self.push_screen(PickerScreen("Open table", options), chosen)

    def action_mcp_panel(self) -> None:
        """The MCP server panel: serve this store to other agents, manage their tokens."""
        from tui.screens.mcp_panel import McpPanel

        self.push_screen(McpPanel(self.mcp_serving))

    async def action_open_staging_panel(self) -> None:
        await self.open_staging_panel()

    async def action_close_tab(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active and tabs.active != "home":
            await tabs.remove_pane(tabs.active)

    def action_attach(self) -> None:
        from tui.screens.attach import AttachScreen

        self.push_screen(AttachScreen(), lambda path: path and self.chat.attach(path))

    def action_new_chat(self) -> None:
        if self.chat.busy:
            self.notify("Stop the running answer first (Esc).", severity="warning")
            return
        self.session = None
        self.call_later(self.chat.show_items, [])
        self.show_usage(_ZERO_USAGE)
        self.open_session(None)

    def action_conversations(self) -> None:
        from tui.screens.conversations import pick_conversation

        pick_conversation(self)

    def action_rewind(self) -> None:
        from tui.screens.rewind import pick_rewind

        pick_rewind(self)


class _ZeroUsage:
    input = output = cache_read = 0


_ZERO_USAGE = _ZeroUsage()
