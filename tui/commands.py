"""The app's actions for the command palette (ctrl+p): new chat, open table, staging, model, mode…"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.markup import escape
from textual.widgets import Button

if TYPE_CHECKING:
    from textual.screen import Screen

    from tui.app import TabletalkApp

PANEL_BUTTONS = {
    "commit-clean": "Commit the changes not in conflict; the conflicts stay staged (asks first)",
    "commit-all": "Commit every staged change (asks first)",
    "take-current": "Re-stage the changes in conflict on top of the items as they are now",
    "reject-all": "Discard every staged change (asks first)",
    "refresh": "Read the staging area again",
    "commit-matching": "Commit the staged changes the panel's filter matches (asks first)",
    "reject-matching": "Discard the staged changes the panel's filter matches (asks first)",
}
"""The staging panel's buttons the palette offers, with what each does."""


def app_commands(app: TabletalkApp) -> Iterator[SystemCommand]:
    """One SystemCommand per action, plus one per table, model and mode."""
    from agent.bedrock.client import MODELS
    from agent.permissions import MODES

    yield SystemCommand("New chat", "Start a new conversation", app.action_new_chat)
    yield SystemCommand("Resume chat…", "Pick a saved conversation", app.action_conversations)
    yield SystemCommand(
        "Rewind…", "Roll back to one of your earlier messages and edit it", app.action_rewind
    )
    yield SystemCommand("Attach file…", "Attach a file to the next message", app.action_attach)
    yield SystemCommand(
        "Staging panel: review, commit or reject changes",
        "Staged changes waiting for review (ctrl+s)",
        app.action_open_staging_panel,
    )
    yield SystemCommand("Open table…", "Pick a table to open", app.action_pick_table)
    yield SystemCommand(
        "Commit history…",
        "Past commits; revert one (staged for review) (F9)",
        app.action_history,
    )
    yield SystemCommand(
        "MCP server…",
        "Serve this store to other agents over loopback HTTP; client tokens (F8)",
        app.action_mcp_panel,
    )
    yield SystemCommand(
        "Filter the table", "Focus the filter box of the table tab (/)", app.action_focus_filter
    )
    yield SystemCommand(
        "Latest chip",
        "Focus the newest chip or answer choice (ctrl+g)",
        partial(app.action_focus_latest, "chip"),
    )
    yield SystemCommand(
        "Latest tool row",
        "Focus the newest tool row (alt+t)",
        partial(app.action_focus_latest, "tool"),
    )
    yield SystemCommand(
        "Message box",
        "Focus the message box, from wherever the keyboard is (alt+m)",
        app.action_focus_composer,
    )
    yield SystemCommand(
        "Full-width chat", "Toggle the chat between sidebar and full width", app.action_toggle_chat
    )
    try:
        tables = app.store.list_tables()
    except Exception:
        tables = []
    for table in tables:
        shown = escape(table)  # the palette reads each name and help text as markup
        yield SystemCommand(
            f"Open table: {shown}",
            f"Open {shown} in a tab",
            partial(app.run_action_safely_open, table),
        )
    for alias, model_id in MODELS.items():
        yield SystemCommand(f"Switch model: {alias}", model_id, partial(app.set_model, alias))
    yield SystemCommand(
        "Forget this chat's permissions",
        "Ask again before each gated call that “Allow for this chat” let run",
        app.action_forget_grants,
    )
    for mode in MODES:
        yield SystemCommand(
            f"Switch mode: {mode}",
            "Permission mode for gated tools" + (" (asks first)" if mode == "full-auto" else ""),
            partial(app.switch_permission_mode, mode),
        )


def staging_commands(app: TabletalkApp, screen: Screen[Any]) -> Iterator[SystemCommand]:
    """The open staging panel's buttons as it shows them now ("Commit the 85 without
    conflict", "Take current for 2", "Reject these"…), so the palette reaches them from any
    tab; each does what a click does (the confirmations included)."""
    from tui.widgets.staging_panel import StagingPanel

    for panel in screen.query(StagingPanel):
        for button in panel.query(Button):
            help_text = PANEL_BUTTONS.get(button.id or "")
            if help_text and button.display and not button.disabled:
                yield SystemCommand(
                    f"Staging: {escape(str(button.label))}",
                    help_text,
                    partial(_press, app, button),
                )


def _press(app: TabletalkApp, button: Button) -> None:
    """Show the staging panel, then press its button."""
    from tui.widgets.tab_area import TabArea

    app.query_one("#tabs", TabArea).active = "staging"
    button.press()
