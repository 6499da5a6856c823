"""What the agent's worker thread calls into the app: the UiPort and the permission Prompter.

Every method runs on the loop's worker thread and hops to the app's thread with
`call_from_thread`; nothing here touches a widget directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.permissions import Decision, PermissionRequest

if TYPE_CHECKING:
    from tui.app import TabletalkApp


class AppBridge:
    """Implements agent.ui_port.UiPort and agent.permissions.Prompter for the Textual app."""

    def __init__(self, app: TabletalkApp) -> None:
        self.app = app

    def open_table(self, table: str, query: str | None = None) -> str:
        return self.app.call_from_thread(self.app.open_table, table, query, focus=False)

    def open_joined_view(self, spec: dict[str, Any]) -> str:
        return self.app.call_from_thread(self.app.open_joined_view, spec, focus=False)

    def open_saved_spec(self, spec: dict[str, Any]) -> str:
        return self.app.call_from_thread(self.app.open_saved_spec, spec, focus=False)

    def open_staging_panel(self) -> str:
        return self.app.call_from_thread(self.app.open_staging_panel, focus=False)

    def list_open_tabs(self) -> list[dict[str, Any]]:
        return self.app.call_from_thread(self.app.list_open_tabs)

    def prompt(self, request: PermissionRequest) -> Decision:
        """Show the permission modal and block this worker thread until the user decides."""
        try:
            return self.app.call_from_thread(self.app.ask_permission, request)
        except RuntimeError:  # the app is shutting down: nobody can answer
            return "deny"
