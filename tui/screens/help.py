"""The help screen: every key binding with its id (the name to remap it in config.toml)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.keys import APP_BINDINGS, HELP_EXTRA

KEYS_WIDTH = 18
"""Cells of the keys column; longer key lists (`arrows, pgup/pgdn, home/end`) wrap."""


class HelpScreen(ModalScreen[None]):
    """Lists the bindings (with any remapping from config applied); Esc closes."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96; max-width: 95%; height: 85%; border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, keymap: dict[str, str] | None = None, config: Path | None = None) -> None:
        super().__init__()
        self.keymap = keymap or {}
        self.config = config
        """The config file the keys are remapped in (named in full, so it can be found)."""
        self.rows: list[tuple[str, str, str]] = []  # (keys, what they do, binding id)

    def compose(self) -> ComposeResult:
        # keys wrap after KEYS_WIDTH so "does" keeps most of an 80-column terminal
        table = Table(
            box=None,
            padding=(0, 1),
            pad_edge=False,
            expand=True,
            show_header=True,
            header_style="bold",
        )
        table.add_column("keys", max_width=KEYS_WIDTH, overflow="fold")
        table.add_column("does", ratio=1)
        table.add_column("id", style="dim", no_wrap=True)
        for binding in APP_BINDINGS:
            keys = self.keymap.get(binding.id or "", binding.key)
            self.rows.append((keys, binding.tooltip or binding.description, binding.id or ""))
        for binding_id, keys, does in HELP_EXTRA:
            self.rows.append((self.keymap.get(binding_id, keys), does, binding_id))
        for keys, does, binding_id in self.rows:
            spaced = ", ".join(k.strip() for k in keys.split(",")) if "," in keys else keys
            table.add_row(Text(spaced), Text(does), Text(binding_id))
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys"
            yield Static(table)
            yield Static(
                Text(
                    f"Remap any key in {self.config or 'config.toml'} under [keys], by id:  "
                    'stop = "escape,f12"\nEsc closes this screen.',
                    style="dim",
                )
            )
