"""The app's key bindings: each has an id that `keys` in config.toml can remap (set_keymap).

The footer shows the ones a user needs most; the rest are in the palette (ctrl+p) and F1.
"""

from __future__ import annotations

from textual.binding import Binding

APP_BINDINGS: list[Binding] = [
    Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
    Binding("f1", "help", "Help", id="help"),
    Binding("escape", "stop", "Stop", id="stop", show=False),
    Binding("ctrl+n", "new_chat", "New chat", id="new_chat", show=False),
    Binding("ctrl+l", "conversations", "Chats", id="conversations", show=False),
    Binding("ctrl+r", "rewind", "Rewind", id="rewind", show=False),
    Binding("ctrl+o", "attach", "Attach", id="attach"),
    Binding("ctrl+t", "pick_table", "Table", id="open_table", tooltip="Open a table"),
    Binding("ctrl+s", "open_staging_panel", "Staged", id="staging"),
    Binding("ctrl+w", "close_tab", "Close tab", id="close_tab", show=False),
    Binding("f2", "toggle_chat", "Full chat", id="toggle_chat"),
    Binding("f3", "switch_focus", "Chat ⇄ tabs", id="switch_focus", show=False),
    Binding("f4", "cycle_mode", "Mode", id="mode"),
    Binding("f5", "pick_model", "Model", id="model"),
    Binding(
        "ctrl+g",
        "focus_latest('chip')",
        "Latest chip",
        id="focus_chip",
        show=False,
        tooltip="Focus the newest chip or answer choice in the chat (again: the one before)",
    ),
    Binding(
        "alt+t",
        "focus_latest('tool')",
        "Latest tool row",
        id="focus_tool",
        show=False,
        # A terminal sends ESC t, read as alt+t with the character "t": without priority the
        # composer (or any input) takes it as typing and the binding never runs.
        priority=True,
        tooltip="Focus the newest tool row in the chat (Enter expands it; again: the one before)",
    ),
    Binding(
        "alt+m",
        "focus_composer",
        "Message box",
        id="focus_composer",
        show=False,
        # ESC m, like alt+t: priority, or a focused input would take it as typing "m".
        priority=True,
        tooltip="Focus the message box from anywhere on the main screen (the chat keeps going)",
    ),
    Binding("f8", "mcp_panel", "MCP server", id="mcp_panel", show=False),
    Binding("f9", "history", "History", id="history", show=False),
    Binding("alt+left", "resize_chat(4)", "Wider chat", id="chat_wider", show=False),
    Binding("alt+right", "resize_chat(-4)", "Narrower chat", id="chat_narrower", show=False),
]

HELP_EXTRA: list[tuple[str, str, str]] = [
    ("send", "enter", "Send the message (in the composer)"),
    (
        "newline",
        "ctrl+j, shift+enter",
        "New line in the composer (ctrl+j works in every terminal and tmux)",
    ),
    ("complete", "tab", "Complete an @table or @column name in the composer"),
    (
        "chat.*",
        "pgup/pgdn, ctrl+home/end",
        "In the composer: page the chat up / down, its top / end (ids chat.page_up, "
        "chat.page_down, chat.top, chat.end); scrolled up, the chat stays put while the answer "
        "streams, until you are back at the end; a message taller than the box pages itself",
    ),
    ("—", "ctrl+p", "Command palette: every action of the app"),
    ("table.row_detail", "enter", "Row detail (in a table)"),
    ("table.filter", "/", "Filter box of a table tab (Enter applies and stays there)"),
    (
        "table.revert",
        "escape",
        "In a table's filter box: back to the filter the rows show, after a rejected or "
        "unapplied edit (the info line says when the box differs)",
    ),
    (
        "staging.filter",
        "/",
        "Filter box of the staging panel: table:NAME op:create|update|delete attr:COLUMN, "
        "other words: text, is:conflict",
    ),
    ("—", "escape", "In the staging panel's filter box: back to the list of changes"),
    (
        "staging.commit",
        "c",
        "Staging panel: commit what is staged (asks first; changes in conflict stay staged)",
    ),
    (
        "—",
        "down/pgdn, up/pgup",
        "Staging panel: past the last (first) change of a page, the next (previous) page",
    ),
    (
        "—",
        "tab, shift+tab",
        "Next / previous button: staging panel (ctrl+s focuses it), chips, choices",
    ),
    ("table.*", "arrows, pgup/pgdn, home/end", "Move in a table (ids table.up … table.last)"),
    ("—", "/attach PATH", "Attach a file by typing its path; pasting a file path also attaches it"),
    (
        "permission.*",
        "1 / 2 / 3, esc",
        "Permission prompt: allow once / allow for this chat / deny (letters go to the message box)",
    ),
    ("—", "ctrl+u", "Delete to the start of the line in the composer (clears a one-line message)"),
]


def clashing_keys(remaps: dict[str, str]) -> dict[str, list[str]]:
    """Keys that `[keys]` gives to more than one of the bindings active together (the app's
    and the composer's), each with the ids that share it: only one of them can run. The
    composer's editing keys (TextArea's: ctrl+y redo, ctrl+c copy, f6, f7, …) count too: while
    it has the focus they win over a binding of the app without priority."""
    from textual.widgets import TextArea

    from tui.widgets.composer import Composer

    bindings = list(APP_BINDINGS) + [b for b in Composer.BINDINGS if isinstance(b, Binding)]
    holders: dict[str, list[str]] = {}
    outranks_editing: set[str] = set()
    for binding in bindings:
        if not binding.id:
            continue
        if binding.priority:
            outranks_editing.add(binding.id)
        for key in remaps.get(binding.id, binding.key).split(","):
            ids = holders.setdefault(key.strip(), [])
            if binding.id not in ids:
                ids.append(binding.id)
    for editing in TextArea.BINDINGS:
        if not isinstance(editing, Binding):
            continue
        for key in editing.key.split(","):
            ids = holders.get(key.strip(), [])
            if any(i in remaps and i not in outranks_editing for i in ids):
                ids.append(f"the composer's {editing.action.split('(')[0]}")
    return {
        key: ids for key, ids in holders.items() if len(ids) > 1 and any(i in remaps for i in ids)
    }


def known_binding_ids() -> set[str]:
    """Every binding id that `[keys]` in config.toml may remap (the app's, widgets', screens')."""
    from tui.screens.attach import AttachScreen
    from tui.screens.commit_detail import CommitDetailScreen
    from tui.screens.confirm import ConfirmScreen
    from tui.screens.error import ErrorScreen
    from tui.screens.help import HelpScreen
    from tui.screens.history import HistoryScreen
    from tui.screens.mcp_panel import McpPanel
    from tui.screens.permission import PermissionScreen
    from tui.screens.picker import PickerScreen
    from tui.screens.row_detail import RowDetailScreen
    from tui.widgets.composer import Composer
    from tui.widgets.staging_panel import StagingPanel
    from tui.widgets.table_tab import TableTab
    from tui.widgets.table_view import TableView

    owners = (
        AttachScreen,
        CommitDetailScreen,
        ConfirmScreen,
        ErrorScreen,
        HelpScreen,
        HistoryScreen,
        McpPanel,
        PermissionScreen,
        PickerScreen,
        RowDetailScreen,
        Composer,
        StagingPanel,
        TableTab,
        TableView,
    )
    bindings = list(APP_BINDINGS)
    for owner in owners:
        bindings += [b for b in owner.BINDINGS if isinstance(b, Binding)]
    return {b.id for b in bindings if b.id}
