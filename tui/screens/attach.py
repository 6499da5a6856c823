"""Pick a file to attach: type a path, or browse with a directory tree."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Static


class AttachScreen(ModalScreen[str | None]):
    """Dismisses with the chosen path (validated by the caller), or None on Esc."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="attach.cancel")]

    DEFAULT_CSS = """
    AttachScreen { align: center middle; }
    AttachScreen > Vertical {
        width: 90; max-width: 95%; height: 80%; border: round $accent; background: $surface; padding: 0 1;
    }
    AttachScreen DirectoryTree { height: 1fr; }
    AttachScreen .attach-help { color: $text-muted; }
    """

    def __init__(self, start: Path | None = None) -> None:
        super().__init__()
        self.start = start or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Attach a file"
            yield Input(placeholder="path to a file (Enter attaches)", id="path")
            yield DirectoryTree(self.start)
            yield Static(
                Text(
                    "text, CSV/TSV, JSON/JSON Lines or PDF, up to 20 MB · enter attach · esc cancel"
                ),
                classes="attach-help",
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """The typed or pasted path; quoted or backslash-escaped as a terminal pastes a dropped
        file, it is read as the shell would (the caller checks what it names)."""
        from tui.widgets.composer import pasted_files

        event.stop()
        value = event.value.strip()
        found = pasted_files(value)
        if len(found) == 1:
            self.dismiss(str(found[0]))
        elif value:
            self.dismiss(value)

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(str(event.path))

    def action_cancel(self) -> None:
        self.dismiss(None)
