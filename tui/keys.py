"""The app's key bindings: each has an id that `keys` in config.toml can remap (set_keymap).

The footer shows the ones a user needs most; the rest are in the palette (ctrl+p) and F1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


QUIT_ID = "quit"
"""The app's own quit binding: a remap of another binding never takes its keys."""

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


@dataclass(frozen=True)
class Holder:
    """One binding that a key is given to: its id, where it is bound (`app`, or `composer`
    for the composer's own bindings and TextArea's editing keys), and how Textual ranks it."""

    id: str
    layer: str
    priority: bool
    remapped: bool


@dataclass
class KeymapCheck:
    """`[keys]` as the app applies it: `keymap` (without bad key names and remaps that would
    take quit's key; an unknown id binds nothing) and one line per problem, for one toast."""

    keymap: dict[str, str]
    problems: list[str] = field(default_factory=list)


def _holders(remaps: dict[str, str]) -> dict[str, list[Holder]]:
    """Every key of the bindings active together on the main screen (the app's and the
    composer's, with `remaps` applied) and the bindings holding it, in Textual's order. The
    composer's editing keys (TextArea's: ctrl+y redo, ctrl+c copy, f6, …) count for a key a
    remap gives to a binding without priority: while it has the focus they win over it."""
    from textual.widgets import TextArea

    from tui.widgets.composer import Composer

    layers = [(b, "app") for b in APP_BINDINGS] + [
        (b, "composer") for b in Composer.BINDINGS if isinstance(b, Binding)
    ]
    holders: dict[str, list[Holder]] = {}
    for binding, layer in layers:
        if not binding.id:
            continue
        remapped = binding.id in remaps
        holder = Holder(binding.id, layer, binding.priority, remapped)
        for key in remaps.get(binding.id, binding.key).split(","):
            held = holders.setdefault(key.strip(), [])
            if all(h.id != binding.id for h in held):
                held.append(holder)
    for editing in TextArea.BINDINGS:
        if not isinstance(editing, Binding):
            continue
        for key in editing.key.split(","):
            held = holders.get(key.strip(), [])
            if any(h.remapped and not h.priority for h in held):
                name = f"the composer's {editing.action.split('(')[0]}"
                held.append(Holder(name, "composer", False, False))
    return holders


def _clashes(remaps: dict[str, str]) -> dict[str, list[Holder]]:
    return {
        key: held
        for key, held in _holders(remaps).items()
        if len(held) > 1 and any(h.remapped for h in held)
    }


def _first(layer: list[Holder]) -> list[Holder]:
    """The holders of one layer in the order Textual tries them: a remap replaces the
    bindings that had the key by default (apply_keymap), and priority ones go first."""
    kept = [h for h in layer if h.remapped] or layer
    return [h for h in kept if h.priority] + [h for h in kept if not h.priority]


def key_winners(held: list[Holder]) -> tuple[str, str | None]:
    """Which binding runs the key: while the composer has the focus (the app's priority
    bindings, then the composer's, then the app's others), and elsewhere on the main screen
    (the app's; None when only the composer binds the key)."""
    app = _first([h for h in held if h.layer == "app"])
    composer = _first([h for h in held if h.layer == "composer"])
    typing = [h for h in app if h.priority] + composer + [h for h in app if not h.priority]
    return typing[0].id, app[0].id if app else None


def describe_clash(key: str, held: list[Holder]) -> str:
    """`ctrl+s goes to stop, not staging: pick another key for stop.` (or, when focus decides,
    which one runs while typing in the message box and which elsewhere)."""
    typing, elsewhere = key_winners(held)
    if elsewhere is None or elsewhere == typing:
        losers = [h.id for h in held if h.id != typing]
        said = f"{key} goes to {typing}, not {' or '.join(losers)}"
    else:
        losers = [h.id for h in held if h.id not in (typing, elsewhere)]
        said = f"{key} goes to {typing} while typing in the message box, to {elsewhere} elsewhere"
        if losers:
            said += f", never to {' or '.join(losers)}"
    winners = {typing, elsewhere}
    fix = [h.id for h in held if h.remapped and (h.id not in winners or len(winners) > 1)]
    fix = fix or [h.id for h in held if h.remapped]  # the remap took a default's key
    return f"{said}: pick another key for {' and '.join(fix)}."


def is_key_name(key: str) -> bool:
    """True for a key Textual can bind (`ctrl+k`, `f12`, `escape`, `question_mark`, `x`)."""
    from textual.keys import REPLACED_KEYS, Keys, key_to_character

    *modifiers, base = key.split("+")
    if not base or any(m not in MODIFIERS for m in modifiers):
        return False
    if len(base) == 1 or re.fullmatch(r"f([1-9]|1[0-9]|2[0-4])", base):
        return True
    named = {k.value.rpartition("+")[2] for k in Keys} | set(REPLACED_KEYS) | {"newline"}
    return base in named or key_to_character(base) is not None


def check_keymap(remaps: dict[str, str]) -> KeymapCheck:
    """What `[keys]` does once the app applies it, and what it says about it: an unknown id
    and a bad key name are ignored; a remap of another binding onto quit's key is refused (it
    keeps its own key, so the app can always be quit); keys still shared are named with the
    binding that gets them."""
    known, defaults = known_binding_ids(), default_keys()
    problems: list[str] = []
    keymap: dict[str, str] = {}
    unknown: dict[str, str] = {}
    for binding_id, keys in remaps.items():
        if binding_id not in known:  # left in the keymap, where it binds nothing
            problems.append(f"unknown id {binding_id!r}, ignored (F1 lists the ids).")
            unknown[binding_id] = keys
            continue
        listed = [k.strip() for k in keys.split(",")]
        bad = [k for k in listed if not is_key_name(k)]
        good = [k for k in listed if is_key_name(k)]
        if bad:
            names = ", ".join(map(repr, bad))
            left = f"gets {', '.join(good)}" if good else f"keeps {defaults[binding_id]}"
            problems.append(
                f"{binding_id}: {names} {'is' if len(bad) == 1 else 'are'} not a key name "
                f"(e.g. ctrl+k, f12, escape); {binding_id} {left}."
            )
        if good:
            keymap[binding_id] = ",".join(good)
    quit_keys = [k.strip() for k in keymap.get(QUIT_ID, defaults[QUIT_ID]).split(",")]
    for binding_id, keys in list(keymap.items()):
        taken = [k for k in keys.split(",") if k in quit_keys]
        if binding_id == QUIT_ID or not taken:
            continue
        del keymap[binding_id]
        problems.append(
            f"{', '.join(taken)} stays Quit; {binding_id} keeps {defaults[binding_id]}. "
            f"Pick another key for {binding_id}."
        )
    problems += [describe_clash(key, held) for key, held in _clashes(keymap).items()]
    return KeymapCheck(keymap | unknown, problems)


def known_binding_ids() -> set[str]:
    """Every binding id that `[keys]` in config.toml may remap (the app's, widgets', screens')."""
    return {b.id for b in _remappable_bindings() if b.id}


def default_keys() -> dict[str, str]:
    """Each remappable binding id's own key (the first binding with that id)."""
    keys: dict[str, str] = {}
    for binding in _remappable_bindings():
        if binding.id:
            keys.setdefault(binding.id, binding.key)
    return keys


def _remappable_bindings() -> list[Binding]:
    """The bindings with ids: the app's, then its widgets' and screens'."""
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
    from tui.widgets.filter_box import FilterBox
    from tui.widgets.staged_change import ChangeDetailScreen
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
        ChangeDetailScreen,
        Composer,
        FilterBox,
        StagingPanel,
        TableTab,
        TableView,
    )
    bindings = list(APP_BINDINGS)
    for owner in owners:
        bindings += [b for b in owner.BINDINGS if isinstance(b, Binding)]
    return bindings
