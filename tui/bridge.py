"""What the agent's worker thread calls into the app: the UiPort and the permission Prompter.

Every method runs on the loop's worker thread and hops to the app's thread with
`call_from_thread`; nothing here touches a widget directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # annotations only: the permissions module loads with the session
    from agent.permissions import Decision, PermissionRequest
    from tui.app import TabletalkApp


class AppBridge:
    """Implements agent.ui_port.UiPort and agent.permissions.Prompter for the Textual app."""

    def __init__(self, app: TabletalkApp) -> None:
        self.app = app

    def open_table(self, table: str, query: str | None = None) -> str:
        return self._on_app(partial(self.app.open_table, table, query, focus=False))

    def open_joined_view(self, spec: dict[str, Any]) -> str:
        return self._on_app(partial(self.app.open_joined_view, spec, focus=False))

    def open_saved_spec(self, spec: dict[str, Any]) -> str:
        return self._on_app(partial(self.app.open_saved_spec, spec, focus=False))

    def open_staging_panel(self) -> str:
        return self._on_app(partial(self.app.open_staging_panel, focus=False))

    def _on_app(self, opener: Callable[[], Awaitable[str]]) -> str:
        """Run an async opener on the app's thread and wait for the tab's answer."""
        # mypy cannot solve Textual's `T | Awaitable[T]` parameter for a coroutine function.
        return cast(str, self.app.call_from_thread(opener))  # type: ignore[arg-type]

    def list_open_tabs(self) -> list[dict[str, Any]]:
        return self.app.call_from_thread(self.app.list_open_tabs)

    def prompt(self, request: PermissionRequest) -> Decision:
        """Show the permission modal and block this worker thread until the user decides."""
        try:
            return self.app.call_from_thread(self.app.ask_permission, request)
        except RuntimeError:  # the app is shutting down: nobody can answer
            return "deny"
